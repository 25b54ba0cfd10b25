"""LBR's exact preflop equity table (strategies.measure.preflop_equity): the bundled file
equals the hole-by-hole kernel over every board, every pair adds to all boards, the loader
refuses anything else, and sampled LBR reads it preflop (and only with ``exact``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.holdem_spec import preflop_class
from agent.acpc.errors import UsageError
from agent.acpc.gamefiles import load_game
from strategies.measure import preflop_equity as pe
from strategies.measure import sampled_lbr
from strategies.measure.lbr_cards import all_holes, equities, index_combinations
from strategies.measure.sampled_lbr import ChunkPlayer, LbrConfig

HOLDEM = "holdem.nolimit.2p.reverse_blinds.game"


def card(text: str) -> int:
    return "23456789TJQKA".index(text[0]) * 4 + "cdhs".index(text[1])


def test_holes_are_lbrs_range_order() -> None:
    np.testing.assert_array_equal(pe.holes(), all_holes(load_game(HOLDEM)))
    reps = pe.representatives()
    assert sorted(preflop_class(tuple(r)) for r in reps.tolist()) == list(range(169))


@pytest.mark.parametrize("hole", [("Kh", "Kd"), ("7s", "6s"), ("Ah", "2c")])
def test_table_equals_hole_by_hole_over_every_board(hole: tuple[str, str]) -> None:
    """Not the representative's suits: the permutation is exercised too. Agents' holes
    sharing a rank or a suit with LBR's, and pairs, suited and offsuit ones."""
    game = load_game(HOLDEM)
    h = tuple(sorted(card(c) for c in hole))
    hs = pe.holes()
    ok = np.flatnonzero(~np.isin(hs, h).any(axis=1))
    rng = np.random.default_rng(sum(h))
    which = np.sort(rng.choice(ok, 24, replace=False))
    same_rank = [i for i in ok if {hs[i, 0] // 4, hs[i, 1] // 4} & {h[0] // 4, h[1] // 4}]
    which = np.unique(np.concatenate([which, same_rank[:6]]))
    live = np.array([c for c in range(52) if c not in h], np.int64)
    boards = live[index_combinations(50, 5)]
    expected = equities(game, h, (), hs[which], boards)  # one evaluation per hole and board
    np.testing.assert_array_equal(pe.preflop_equities(h, which), expected)


def test_a_row_built_again_equals_the_bundled_one() -> None:
    k = preflop_class((card("9d"), card("8d")))
    np.testing.assert_array_equal(pe._counts_for(k, load_game(HOLDEM)), pe.load()[k])


def test_every_pair_adds_to_all_boards() -> None:
    table = pe.load()
    cls, perm, moved = pe._maps()
    full = np.stack([table[cls[j]][moved[perm[j]]] for j in range(pe.HOLES)]).astype(np.int64)
    hs = pe.holes()
    shared = (hs[:, None, :, None] == hs[None, :, None, :]).any(axis=(2, 3))
    assert (full[shared] == -1).all()
    assert ((full + full.T)[~shared] == 2 * pe.BOARDS).all()  # win/tie/loss seen from both


def test_loader_refuses_another_file(tmp_path: Path) -> None:
    table = pe.load().copy()
    table[0, 5] += 1
    path = tmp_path / "t.npz"
    digest = pe.save(table, path)
    with pytest.raises(UsageError, match=r"expected LBR's preflop equity table .* SHA-256"):
        pe.load(path)
    assert pe.load(path, sha256=digest)[0, 5] == table[0, 5]
    with pytest.raises(UsageError, match="expected LBR's preflop equity table at"):
        pe.load(tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    np.savez(bad, scores=np.zeros((3, 3), np.int32), representatives=pe.representatives(),
             boards=np.int64(pe.BOARDS))
    with pytest.raises(UsageError, match=r"expected int32 scores of shape \(169, 1326\)"):
        pe.load(bad, sha256=None)
    high = tmp_path / "high.npz"
    big = pe.load().copy()
    big[3, 3] = 2 * pe.BOARDS + 1
    np.savez(high, scores=big, representatives=pe.representatives(),
             boards=np.int64(pe.BOARDS))
    with pytest.raises(UsageError, match=r"expected scores in -1\.\.3424608"):
        pe.load(high, sha256=None)


def test_lbr_reads_the_table_preflop_and_sampled_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ``fc`` LBR decides preflop: with ``exact`` it never draws preflop boards, and
    its preflop equities are the table's; ``sampled`` draws them (the earlier rule)."""
    drawn: list[int] = []
    real = sampled_lbr.completions

    def counting(game, dead, board, rng, fast=False):  # type: ignore[no-untyped-def]
        if not board:
            drawn.append(1)
        return real(game, dead, board, rng, fast)

    monkeypatch.setattr(sampled_lbr, "completions", counting)
    seen: list[tuple[tuple[int, ...], np.ndarray, np.ndarray]] = []
    original = sampled_lbr.LbrPlayer.equity

    def watching(self, round_, which):  # type: ignore[no-untyped-def]
        out = original(self, round_, which)
        if round_ == 0:
            seen.append((self.view.lbr_hole, which.copy(), out.copy()))
        return out

    monkeypatch.setattr(sampled_lbr.LbrPlayer, "equity", watching)
    exact = ChunkPlayer(LbrConfig("holdem.nolimit.2p.strat", HOLDEM, setting="fc"))
    rows = exact.play(0, deals=3)
    assert not drawn and seen
    for hole, which, eq in seen:
        np.testing.assert_array_equal(eq, pe.preflop_equities(hole, which))
    sampled = ChunkPlayer(LbrConfig("holdem.nolimit.2p.strat", HOLDEM, setting="fc",
                                    preflop_equity="sampled"))
    assert len(sampled.play(0, deals=3)) == len(rows)
    assert drawn
    with pytest.raises(UsageError, match="expected preflop equities among exact, sampled"):
        LbrConfig("holdem.nolimit.2p.strat", HOLDEM, preflop_equity="draws").settings()

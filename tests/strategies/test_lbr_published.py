"""Sampled LBR as published (issue 31, item 3): the named settings, imaginary observations,
and the fast path (every hole's buckets per board) against the hole-by-hole one.

Checks: the batched buckets of every hole equal :func:`hole_buckets` (the agent's own
estimator, hole by hole) on flops, turns and rivers, and through a flop table, and a
potential-aware abstraction's through the suit-canonical cache; the fast and
slow paths play the very same hands with the very same values (hold'em and no-limit
Leduc, with the 56-size menu); each named setting bets only where and what it says;
an imaginary observation equals the range-weighted mean of the showdown against every hole
(brute force), equals the played chips when someone folded, and over the same Leduc deals
agrees with the played mean within the paired interval while its spread is smaller.
"""

from __future__ import annotations

import json
import math
import signal
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.holdem_buckets import HoldemCards, ehs2
from agent.abstraction.isomorphism import holdem_indexer
from agent.acpc.betting import CALL, FOLD, Action, ActionKind, BettingState, parse_betting
from agent.acpc.dealing import deal_hands
from agent.acpc.errors import UsageError
from agent.acpc.gamefiles import load_game
from agent.agents import make_policy
from strategies.measure.lbr_cards import (
    all_holes,
    board_buckets,
    completions,
    equities,
    hole_buckets,
)
from strategies.measure.sampled_lbr import (
    PUBLISHED_FRACTIONS,
    SETTINGS,
    BucketCache,
    ChunkPlayer,
    HandView,
    LbrConfig,
    LbrSettings,
    StrategyModel,
    agent_model,
    candidate_raises,
    imaginary_value,
    play_hand,
    showdown_values,
    total,
)
from tests.agent.abstraction.test_holdem_pa import make_cards

HOLDEM = "holdem.nolimit.2p.reverse_blinds.game"
LEDUC = "leduc.nolimit.2p.game"


@cache
def player(spec: str, game: str, setting: str | None, fast: bool,
           values: str = "played") -> ChunkPlayer:
    return ChunkPlayer(LbrConfig(spec, game, setting=setting, fast=fast, values=values))


@cache
def holdem_cards() -> HoldemCards:
    cards = player("holdem.nolimit.2p.strat", HOLDEM, None, True).model.loaded.cards  # type: ignore[attr-defined]
    assert isinstance(cards, HoldemCards)
    return cards


# --------------------------------------------------------------------------- buckets


@pytest.mark.parametrize("seed", [5])
def test_board_buckets_equal_the_agents_hole_by_hole(seed: int) -> None:
    cards = holdem_cards()
    holes = all_holes(load_game(HOLDEM))
    board = [int(c) for c in np.random.default_rng(seed).choice(52, 5, replace=False)]
    for round_, n in ((0, 0), (1, 3), (2, 4), (3, 5)):
        visible = board[:n]
        live = ~np.isin(holes, visible).any(axis=1)
        fast = board_buckets(cards, round_, holes, visible)
        assert (fast[~live] == -1).all()
        np.testing.assert_array_equal(fast[live],
                                      hole_buckets(cards, round_, holes[live], visible))


@pytest.mark.parametrize("recall", ["imperfect", "perfect"])
def test_potential_aware_buckets_through_the_cache_equal_the_agents(recall: str) -> None:
    """The fast path with a potential-aware file: every hole's bucket per board
    (:meth:`PotentialAwareCards.board_buckets`), kept by suit-canonical board and read back
    for a suit-relabelled board, equals the agent's ``bucket`` hole by hole."""
    cards = make_cards(recall)
    holes = all_holes(load_game(HOLDEM))
    cache = BucketCache(holes, fast=True)
    rng = np.random.default_rng(6)
    for round_, n_board in ((0, 0), (1, 3), (2, 4), (3, 5)):
        board = [int(c) for c in rng.choice(52, n_board, replace=False)]
        perm = rng.permutation(4)
        for b in (board, [int((c // 4) * 4 + perm[c % 4]) for c in board]):
            live = np.flatnonzero(~np.isin(holes, b).any(axis=1))
            which = np.sort(rng.choice(live, 30, replace=False))
            got = cache.buckets(cards, round_, tuple(b), holes, which)
            assert got.tolist() == [cards.bucket(round_, holes[i].tolist(), b)
                                    for i in which.tolist()]
    assert len(cache._boards) == 4


def test_flop_read_from_a_table_of_classes_equals_the_kernel() -> None:
    cards = holdem_cards()
    holes = all_holes(load_game(HOLDEM))
    flop = [3, 22, 40]
    live = np.flatnonzero(~np.isin(holes, flop).any(axis=1))
    values = np.array([ehs2(tuple(h), flop, flop_rivers_per_turn=cards.flop_rivers_per_turn)
                       for h in holes[live].tolist()])
    indexer = holdem_indexer("board", 1)
    table = np.full(indexer.size(1), np.nan)
    index = indexer.index_batch(np.concatenate([holes[live], np.tile(flop, (live.size, 1))],
                                               axis=1))
    table[index] = values
    np.testing.assert_array_equal(board_buckets(cards, 1, holes, flop, table),
                                  board_buckets(cards, 1, holes, flop))


def test_equities_by_rank_class_equal_hole_by_hole() -> None:
    """The fast path's equities (one evaluation per rank class and board, blocked boards
    and flushes corrected per card) are the hole-by-hole kernel's, bit for bit, against
    every hole: preflop (the same sampled boards from the same draws), flop, turn and
    river, on boards with three, four and five cards of a suit."""
    game = load_game(HOLDEM)
    holes = all_holes(game)
    rng = np.random.default_rng(8)
    hearts = [c for c in range(52) if c % 4 == 2]
    for board in ([], [0, 17, 42], [6, 10, 14, 30], hearts[:3] + [5], hearts[4:8],
                  hearts[8:13], hearts[:3] + [1, 4]):
        hole = [c for c in (51, 50, 49, 47, 44) if c not in board][:2]
        live = holes[~np.isin(holes, [*hole, *board]).any(axis=1)]
        seed = int(rng.integers(1 << 30))
        boards = completions(game, hole, board, np.random.default_rng(seed))
        np.testing.assert_array_equal(
            completions(game, hole, board, np.random.default_rng(seed), fast=True), boards)
        np.testing.assert_array_equal(equities(game, hole, board, live, boards, fast=True),
                                      equities(game, hole, board, live, boards))


# --------------------------------------------------------------------------- same hands


@pytest.mark.parametrize(("spec", "game", "setting", "chunks"), [
    ("holdem.nolimit.2p.strat", HOLDEM, "56-tr", 1),
    ("leduc.nolimit.2p.fcpa.strat", LEDUC, "56-all", 5),
])
def test_fast_path_plays_the_same_hands_as_the_slow_one(spec: str, game: str,
                                                        setting: str | None,
                                                        chunks: int) -> None:
    slow = player(spec, game, setting, False)
    fast = player(spec, game, setting, True)
    for c in range(chunks):
        assert fast.play(c, deals=4) == slow.play(c, deals=4)


@pytest.mark.parametrize("sizes_in", ["abstract", "real"])
def test_every_raise_at_once_equals_size_by_size(sizes_in: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path's batch of candidate raises (one reading per size and hypothesis, array
    work per reading structure) gives, bit for bit, the fold weights of the two updates
    and the total computed size by size, at every LBR decision of 56-size Leduc hands
    (randomized mapping: hypotheses split and merge), in both size conventions, also where
    the decision reuses the plan a previous hand's same betting made."""
    config = LbrConfig("leduc.nolimit.2p.fcpa.strat", LEDUC, setting="56-all", fast=True,
                       sizes_in=sizes_in, seed=3)
    chunk = ChunkPlayer(config)
    model = chunk.model
    assert isinstance(model, StrategyModel)
    batch = StrategyModel.raise_fold_weights
    seen = {"sizes": 0, "many": 0, "calls": 0}

    def checked(self: StrategyModel, view: HandView, hyps: dict[int, np.ndarray],
                state: BettingState, tos: list[int], which: np.ndarray) -> np.ndarray:
        out = batch(self, view, hyps, state, tos, which)
        for j, to in enumerate(tos):
            act = Action(ActionKind.RAISE, to)
            after = state.apply(act)
            moved = self.update(view, hyps, state, act)
            one = total(self.update(view, moved, after, FOLD), view.holes.shape[0])[which]
            assert out[j].tobytes() == one.tobytes()
        seen["sizes"] += len(tos)
        seen["many"] += len(hyps) > 1
        seen["calls"] += 1
        return out

    monkeypatch.setattr(StrategyModel, "raise_fold_weights", checked)
    for c in range(4):
        chunk.play(c)
    assert seen["sizes"] > 500 and seen["many"] > 0
    assert 0 < len(model._plans) < seen["calls"] / 2  # most decisions reused a plan


# --------------------------------------------------------------------------- settings


def test_published_settings_menus() -> None:
    assert set(SETTINGS) == {"fc", "fcpa-tr", "56-tr", "56-all"}
    assert len(PUBLISHED_FRACTIONS) == 55
    assert math.isclose(PUBLISHED_FRACTIONS[0], 0.05)
    assert math.isclose(PUBLISHED_FRACTIONS[-1], 0.05 * 1.15**54)
    fc = LbrSettings.named("fc")
    assert all(m.bets and not m.fractions and not m.all_in for m in fc.menus)
    tr = LbrSettings.named("fcpa-tr")
    assert [m.bets for m in tr.menus] == [False, False, True, True]
    assert tr.menu(3).fractions == (1.0,) and tr.menu(3).all_in
    # the 56 bets at the river of a limped pot: the 55 nearest raises and the all-in
    game = load_game(HOLDEM)
    state = BettingState.initial(game)
    while state.round < 3:  # call and check to the river
        state = state.apply(CALL)
    raises = candidate_raises(state, PUBLISHED_FRACTIONS, True)
    bounds = state.raise_bounds()
    assert bounds is not None and raises[-1] == bounds[1] and raises[0] == bounds[0]
    assert 2 < len(raises) <= 56
    assert candidate_raises(state, (), False) == []
    with pytest.raises(UsageError, match="expected an LBR setting"):
        LbrSettings.named("fcpa")


@pytest.mark.parametrize("setting", ["fc", "fcpa-tr"])
def test_settings_bet_only_where_they_say(setting: str) -> None:
    chunk = player("holdem.nolimit.2p.strat", HOLDEM, setting, True)
    game = chunk.game
    settings = LbrSettings.named(setting)
    dealer = deal_hands(game, 7)
    rng = np.random.default_rng(0)
    policy = chunk.policy(3)
    for i in range(3):
        deal = next(dealer)
        for position in (0, 1):
            record = play_hand(game, deal, position, 2 * i + position, policy, chunk.model,
                               settings, rng, chunk.holes, cache=chunk.cache, fast=True)
            state = BettingState.initial(game)
            final = parse_betting(game, record.betting)
            for action in [a for r in final.actions for a in r]:
                if state.player == position:  # LBR's action
                    menu = settings.menu(state.round)
                    if not menu.bets:
                        assert action.kind.name == "CALL", (record.betting, state.round)
                    elif not menu.fractions and not menu.all_in:
                        assert action.kind.name != "RAISE", record.betting
                state = state.apply(action)


# --------------------------------------------------------------------------- imaginary


def test_imaginary_value_is_the_range_weighted_showdown() -> None:
    game = load_game(HOLDEM)
    holes = all_holes(game)
    policy = make_policy("builtin:random", game, seed=4)
    model = agent_model(policy)
    dealer = deal_hands(game, 21)
    settings = LbrSettings.named("fc", "imaginary")
    rng = np.random.default_rng(1)
    seen = {"showdown": 0, "fold": 0}
    for i in range(12):
        deal = next(dealer)
        record = play_hand(game, deal, 0, i, policy, model, settings, rng, holes)
        final = parse_betting(game, record.betting)
        if not final.is_showdown:
            seen["fold"] += 1
            assert record.value == record.played
            continue
        seen["showdown"] += 1
        view = HandView(game, holes, 1, i, tuple(deal.hole[0]), tuple(deal.board))
        # builtin:random ignores its cards: the range is uniform over the possible holes
        w = view.possible(final.round).astype(float)
        brute = [showdown_values(final, [deal.hole[0], tuple(h)], deal.board)[0]
                 for h in holes[w > 0].tolist()]
        assert math.isclose(record.value, sum(brute) / len(brute), rel_tol=1e-12,
                            abs_tol=1e-9)
        assert math.isclose(imaginary_value(view, final, {0: w}), record.value,
                            rel_tol=1e-12, abs_tol=1e-9)
        assert total({0: w}, w.size).sum() == len(brute)
    assert seen["showdown"] and seen["fold"], seen


def test_imaginary_observations_agree_with_played_and_spread_less() -> None:
    played = player("leduc.nolimit.2p.fcpa.strat", LEDUC, "fcpa-tr", True, "played")
    imag = player("leduc.nolimit.2p.fcpa.strat", LEDUC, "fcpa-tr", True, "imaginary")
    a = np.array([r[2] for c in range(30) for r in played.play(c)])
    b = np.array([r[2] for c in range(30) for r in imag.play(c)])
    diff = b - a
    se = diff.std(ddof=1) / math.sqrt(diff.size)
    assert abs(diff.mean()) <= 3 * se, (diff.mean(), se)
    assert b.std() < a.std(), (b.std(), a.std())


def test_command_setting_and_its_conflicts(capsys: pytest.CaptureFixture[str]) -> None:
    from strategies.cli import main

    assert main(["lbr", "builtin:fold", "--setting", "fcpa-tr", "--hands", "20"]) == 0
    out = capsys.readouterr().out
    assert "setting fcpa-tr (C, C, FCPA, FCPA); values imaginary" in out
    assert "LBR wins 750.0 +- 0.0 mbb/h" in out
    assert main(["lbr", "builtin:fold", "--setting", "fc", "--fractions", "1"]) != 0
    err = capsys.readouterr().err
    assert "expected either --setting or --fractions/--preflop" in err
    assert len(err.strip().splitlines()) == 1


def test_sigterm_keeps_the_hands_done(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from strategies.cli import main
    from strategies.measure.sampled_lbr import ChunkPlayer

    play = ChunkPlayer.play
    started: list[int] = []

    def play_then_stop(self: ChunkPlayer, chunk: int) -> list[list[float]]:
        started.append(chunk)
        if len(started) == 2:  # SIGTERM as the second chunk starts: the first one's are done
            signal.raise_signal(signal.SIGTERM)
        return play(self, chunk)

    monkeypatch.setattr(ChunkPlayer, "play", play_then_stop)
    out = tmp_path / "lbr.json"
    status = main(["lbr", "builtin:fold", "--setting", "fc", "--hands", "1000000",
                   "--out", str(out)])
    assert status == 130 and started == [0, 1]
    data = json.loads(out.read_text())
    assert data["interrupted"] and 0 < data["hands"] < 1_000_000
    assert data["scoring"] == "imaginary" and data["setting"] == "fc"
    assert "interrupted; keeping the" in capsys.readouterr().err

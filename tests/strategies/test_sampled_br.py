"""The sampled abstract-game best response (strategies/measure/sampled_br.py) against a pure-Python
oracle of the same walks, brute force on a perfect-recall instance, and end to end on small
hold'em strategy files (acpc-strategy exploit / inspect)."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from agent.abstraction.actions import build_tree, parse_betting_abstraction
from agent.abstraction.holdem_buckets import HoldemCards
from agent.acpc.betting import ActionKind
from agent.acpc.gamefiles import load_game
from agent.strategy.fileformat import dump_strategy, table_layout
from agent.strategy.purification import parse_purification
from strategies.cli import main as cli_main
from strategies.games.abstract import TIE, FlatTree, flatten_tree
from strategies.measure.best_response import purify_table
from strategies.measure.sampled_br import FOLLOW, NO_RESPONDER, walk
from strategies.recipes import get_recipe, load_manifest

HOLDEM = "holdem.nolimit.2p.reverse_blinds.game"
F64 = npt.NDArray[np.float64]


def small_flat(max_raises: list[int], buckets: tuple[int, ...]) -> FlatTree:
    game = load_game(HOLDEM)
    betting = parse_betting_abstraction({"name": "t", "fold": True, "all_in": True,
                                         "fractions": [[[1.0]]], "max_raises": max_raises})
    return flatten_tree(build_tree(game, betting), buckets)


def random_table(flat: FlatTree, rng: np.random.Generator, *, zeros: bool) -> F64:
    table = np.zeros(flat.table_size)
    for node in range(len(flat.player)):
        k = int(flat.num_actions[node])
        if k == 0:
            continue
        for b in range(int(flat.layout.rows[node])):
            row = rng.random(k) + 0.05
            if zeros and k > 1 and rng.random() < 0.3:
                row[rng.integers(k)] = 0.0
            start = int(flat.offset[node]) + b * k
            table[start : start + k] = row / row.sum()
    return table


def random_deals(flat: FlatTree, n: int, rng: np.random.Generator
                 ) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.int8]]:
    limits = np.asarray(flat.layout.buckets)
    buckets = rng.integers(0, limits, size=(n, 2, 4)).astype(np.uint16)
    result = rng.integers(0, TIE + 1, size=n).astype(np.int8)
    return buckets, result


def oracle_walk(flat: FlatTree, strategy: F64, buckets: Any, result: Any, responder: int,
                learn: bool, z: float, choice: npt.NDArray[np.int8]) -> list[float]:
    """The kernel's walk, recursively, in plain Python (same operation order)."""
    if learn:
        choice[:] = FOLLOW
    sign = -1.0 if responder == 1 else 1.0

    def sigma(node: int, p: int, r: int, d: int, a: int) -> float:
        k = int(flat.num_actions[node])
        return float(strategy[int(flat.offset[node]) + int(buckets[d, p, r]) * k + a])

    def rec(node: int, deals: list[int], reach: list[float], own: list[float]) -> list[float]:
        k = int(flat.num_actions[node])
        if k == 0:
            return [sign * reach[j] * float(flat.term_value[node, int(result[d])])
                    for j, d in enumerate(deals)]
        p, r = int(flat.player[node]), int(flat.round[node])
        s = int(flat.child_start[node])
        kids = [int(c) for c in flat.children[s : s + k]]
        if p == responder and learn:
            cvs = [rec(kids[a], deals, reach,
                       [own[j] * sigma(node, p, r, d, a) for j, d in enumerate(deals)])
                   for a in range(k)]
            out = [0.0] * len(deals)
            for b in range(choice.shape[1]):
                js = [j for j, d in enumerate(deals) if int(buckets[d, p, r]) == b]
                sums = [0.0] * k
                for j in js:
                    for a in range(k):
                        sums[a] += own[j] * cvs[a][j]
                top = 0
                for a in range(1, k):
                    if sums[a] > sums[top]:
                        top = a
                gain = gain2 = 0.0
                for j in js:
                    mixed = 0.0
                    for a in range(k):
                        mixed += sigma(node, p, r, deals[j], a) * cvs[a][j]
                    dv = own[j] * (cvs[top][j] - mixed)
                    gain += dv
                    gain2 += dv * dv
                nb = len(js)
                keep = False
                if nb >= 2 and gain > 0.0:
                    var = (gain2 - gain * gain / nb) * nb / (nb - 1.0)
                    keep = gain > z * math.sqrt(max(var, 0.0))
                choice[node, b] = top if keep else FOLLOW
                for j in js:
                    if keep:
                        out[j] = cvs[top][j]
                    else:
                        mixed = 0.0
                        for a in range(k):
                            mixed += sigma(node, p, r, deals[j], a) * cvs[a][j]
                        out[j] = mixed
            return out
        out = [0.0] * len(deals)
        for a in range(k):
            sub: list[int] = []
            sub_reach: list[float] = []
            sub_own: list[float] = []
            where: list[int] = []
            for j, d in enumerate(deals):
                b = int(buckets[d, p, r])
                if p == responder and choice[node, b] != FOLLOW:
                    q = reach[j] if choice[node, b] == a else 0.0
                else:
                    q = reach[j] * sigma(node, p, r, d, a)
                if q > 0.0:
                    sub.append(d)
                    sub_reach.append(q)
                    sub_own.append(own[j])
                    where.append(j)
            if sub:
                for w, v in zip(where, rec(kids[a], sub, sub_reach, sub_own), strict=True):
                    out[w] += v
        return out

    n = len(result)
    return rec(0, list(range(n)), [1.0] * n, [1.0] * n)


def new_choice(flat: FlatTree) -> npt.NDArray[np.int8]:
    return np.zeros((len(flat.player), max(flat.layout.buckets)), dtype=np.int8)


@pytest.mark.parametrize(("seed", "zeros", "z"), [(1, False, 0.0), (2, True, 0.0),
                                                  (3, True, 1.0), (4, False, 2.5)])
def test_kernel_equals_oracle(seed: int, zeros: bool, z: float) -> None:
    flat = small_flat([1, 1, 1, 1], (3, 2, 2, 2))
    rng = np.random.default_rng(seed)
    table = random_table(flat, rng, zeros=zeros)
    train_b, train_r = random_deals(flat, 60, rng)
    test_b, test_r = random_deals(flat, 40, rng)
    for responder in (0, 1):
        got_choice, want_choice = new_choice(flat), new_choice(flat)
        got = walk(flat, table, train_b, train_r, responder, learn=True, choice=got_choice,
                   z=z)
        want = oracle_walk(flat, table, train_b, train_r, responder, True, z, want_choice)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
        assert (got_choice == want_choice).all()
        deviations = int((got_choice != FOLLOW).sum())
        if z == 0.0:
            assert deviations > 0
        got = walk(flat, table, test_b, test_r, responder, learn=False, choice=got_choice)
        want = oracle_walk(flat, table, test_b, test_r, responder, False, z, want_choice)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    profile = walk(flat, table, test_b, test_r, NO_RESPONDER, learn=False,
                   choice=new_choice(flat))
    want = oracle_walk(flat, table, test_b, test_r, NO_RESPONDER, False, 0.0, new_choice(flat))
    np.testing.assert_allclose(profile, want, rtol=0, atol=1e-9)


def test_following_everywhere_is_the_profile_value() -> None:
    """A responder that never deviates (z huge) has exactly the profile's value."""
    flat = small_flat([1, 1, 1, 1], (3, 2, 2, 2))
    rng = np.random.default_rng(9)
    table = random_table(flat, rng, zeros=True)
    b, r = random_deals(flat, 80, rng)
    profile = walk(flat, table, b, r, NO_RESPONDER, learn=False, choice=new_choice(flat))
    for responder, sign in ((0, 1.0), (1, -1.0)):
        choice = new_choice(flat)
        values = walk(flat, table, b, r, responder, learn=True, choice=choice, z=1e9)
        assert (choice == FOLLOW).all()
        np.testing.assert_allclose(values, sign * profile, atol=1e-12)


def _pure_value(flat: FlatTree, table: F64, buckets: Any, result: Any, responder: int,
                assignment: dict[tuple[int, int], int]) -> float:
    choice = new_choice(flat)
    choice[:] = FOLLOW
    for (node, b), a in assignment.items():
        choice[node, b] = a
    return float(walk(flat, table, buckets, result, responder, learn=False,
                      choice=choice).mean())


@pytest.mark.parametrize("responder", [0, 1])
def test_perfect_recall_learning_is_the_best_response(responder: int) -> None:
    """Buckets only in the first round (perfect recall), every probability positive and
    z = 0: the learned strategy is a best response, equal to the best of every pure one."""
    flat = small_flat([1, 0, 0, 0], (3, 1, 1, 1))
    rng = np.random.default_rng(20 + responder)
    table = random_table(flat, rng, zeros=False)
    buckets, result = random_deals(flat, 50, rng)
    infosets = [(node, b) for node in range(len(flat.player))
                if flat.player[node] == responder and flat.num_actions[node] > 1
                for b in range(int(flat.layout.rows[node]))]
    assert all(flat.round[node] == 0 for node, _ in infosets)  # later rounds: checks only
    options = [range(int(flat.num_actions[node])) for node, _ in infosets]
    assert 0 < math.prod(len(o) for o in options) <= 20_000
    choice = new_choice(flat)
    learned = float(walk(flat, table, buckets, result, responder, learn=True, choice=choice,
                         z=0.0).mean())
    best = max(_pure_value(flat, table, buckets, result, responder,
                           dict(zip(infosets, combo, strict=True)))
               for combo in itertools.product(*options))
    assert learned == pytest.approx(best, abs=1e-9)
    profile = float(walk(flat, table, buckets, result, NO_RESPONDER, learn=False,
                         choice=new_choice(flat)).mean())
    assert learned > (profile if responder == 0 else -profile)


# --------------------------------------------------------------------------- purification


def test_purify_table_is_the_agents_purification() -> None:
    flat = small_flat([1, 1, 1, 1], (3, 2, 2, 2))
    rng = np.random.default_rng(5)
    table = random_table(flat, rng, zeros=True)
    # ties and exact zeros in some rows
    for node in range(0, len(flat.player), 7):
        k = int(flat.num_actions[node])
        if k > 1:
            start = int(flat.offset[node])
            table[start : start + k] = 1.0 / k
    layout = flat.layout
    for spec in ("none", "full", "threshold:0.3", "threshold:0.9"):
        purification = parse_purification(spec)
        got = purify_table(layout, table, purification)
        for node in range(len(flat.player)):
            k = int(flat.num_actions[node])
            for b in range(int(layout.rows[node])):
                start = int(flat.offset[node]) + b * k
                row = [float(v) for v in table[start : start + k]]
                want = purification.apply(row)
                total = sum(want)
                np.testing.assert_allclose(got[start : start + k],
                                           [w / total for w in want], atol=1e-15)


# --------------------------------------------------------------------------- end to end


def _holdem_file(tmp_path: Path, fold_to_bets: float, purification: str) -> Path:
    """A small hold'em strategy file: folds to a bet with probability ``fold_to_bets``,
    else spreads over the other actions."""
    game = load_game(HOLDEM)
    betting = parse_betting_abstraction({"name": "t", "fold": True, "all_in": True,
                                         "fractions": [[[1.0]]], "max_raises": [1, 1, 1, 1]})
    tree = build_tree(game, betting)
    cards = HoldemCards.build((169, 3, 3, 3), samples=300, seed=4)
    layout = table_layout(tree, cards.buckets)
    table = np.zeros(layout.total)
    for node in tree.decision_nodes:
        k = len(node.actions)
        folds = [a for a, act in enumerate(node.actions) if act.kind is ActionKind.FOLD]
        row = np.full(k, 1.0 / k)
        if folds and k > 1:
            row = np.full(k, (1.0 - fold_to_bets) / (k - 1))
            row[folds[0]] = fold_to_bets
        start = int(layout.offsets[node.id])
        table[start : start + int(layout.rows[node.id]) * k] = np.tile(row, int(
            layout.rows[node.id]))
    return dump_strategy(tmp_path / "small.strat", game, betting, cards.spec, table,
                         tree=tree, default_purification=purification)


def _bound(text: str) -> tuple[float, float]:
    found = re.findall(r"exploitability >= ([0-9.e+-]+) \+- ([0-9.e+-]+) chips/hand", text)
    assert found, text
    return float(found[-1][0]), float(found[-1][1])


def test_exploit_measures_a_holdem_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A strategy that folds to 90% of bets is exploitable: the lower bound is significantly
    positive; the file's default purification is measured too; inspect says how."""
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))
    path = _holdem_file(tmp_path, 0.9, "full")
    args = ["exploit", str(path), "--train-deals", "1500", "--test-deals", "1500",
            "--workers", "2"]
    assert cli_main(args) == 0
    captured = capsys.readouterr()
    blocks = captured.out.split("sampled abstract-game figures")
    assert len(blocks) == 3 and "[none purification" in blocks[1]
    assert "[full purification" in blocks[2]
    value, ci = _bound(blocks[1])
    assert value - ci > 10.0  # raising into a 90% fold wins the blinds again and again
    assert "lower bound" in captured.err
    assert len(list((tmp_path / "cache").glob("holdem-pool-*.npz"))) == 2
    # the same command again: the same figures from the cached pools
    assert cli_main(args) == 0
    assert _bound(capsys.readouterr().out.split("sampled abstract-game figures")[1]) == (
        value, ci)
    # never folding, shoving a third of the time with any cards: exploitable by folding
    # the weak hands and calling with the strong ones; --purify measures one strategy only
    shover = _holdem_file(tmp_path / "h", 0.0, "full")
    assert cli_main(["exploit", str(shover), "--train-deals", "1500", "--test-deals", "1500",
                     "--purify", "none"]) == 0
    out = capsys.readouterr().out
    assert out.count("sampled abstract-game figures") == 1 and "[none purification" in out
    shove_value, shove_ci = _bound(out)
    assert shove_value - shove_ci > 100.0
    assert cli_main(["inspect", str(path)]) == 0
    assert "acpc-strategy exploit" in capsys.readouterr().out
    assert cli_main(["exploit", str(path), "--train-deals", "50", "--test-deals", "50",
                     "--record"]) == 1
    assert "expected a bundled strategy file" in capsys.readouterr().err
    # too few deals: a bound whose interval reaches 0 is flagged, not left to be misread
    assert cli_main(["exploit", str(path), "--train-deals", "20", "--test-deals", "20",
                     "--purify", "none"]) == 0
    out = capsys.readouterr().out
    value, ci = _bound(out)
    assert value - ci <= 0, (value, ci)  # 20 deals: the interval is wide
    assert "warning: this bound is not significantly above 0" in out
    assert cli_main(["exploit", str(path), "--purify", "full", "--record"]) == 1
    assert "expected --record without --purify" in capsys.readouterr().err


def test_exploit_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    leduc = get_recipe("leduc.limit.2p").bundled_path
    with pytest.raises(SystemExit):
        cli_main(["exploit", str(leduc), "--train-deals", "0"])
    assert "expected a positive integer, got '0'" in capsys.readouterr().err
    assert cli_main(["exploit", str(leduc), "--purify", "most"]) == 1
    assert "expected a purification" in capsys.readouterr().err
    assert cli_main(["exploit", str(leduc), "--record"]) == 1
    assert "expected a file measured by sampling" in capsys.readouterr().err
    assert cli_main(["exploit", str(leduc), "--train-deals", "10", "--z", "3"]) == 1
    assert "--train-deals, --z apply to hold'em files measured by sampling" in \
        capsys.readouterr().err


def test_purified_leduc_is_more_exploitable(capsys: pytest.CaptureFixture[str]) -> None:
    """exploit --purify on an enumerated file: the exact figures of the purified table."""
    path = get_recipe("leduc.limit.2p").bundled_path
    assert cli_main(["exploit", str(path)]) == 0
    plain = capsys.readouterr().out
    assert cli_main(["exploit", str(path), "--purify", "full"]) == 0
    full = capsys.readouterr().out
    assert "full purification" in full
    pattern = r"exploitability ([0-9.e+-]+) chips/hand"
    assert float(re.findall(pattern, full)[0]) > 100 * float(re.findall(pattern, plain)[0])


# --------------------------------------------------------------------------- bundled file

HOLDEM_RECIPE = get_recipe("holdem.nolimit.2p")


@pytest.mark.skipif(not HOLDEM_RECIPE.bundled_path.exists(), reason="not built")
def test_bundled_holdem_figures_are_recorded(capsys: pytest.CaptureFixture[str]) -> None:
    entry = load_manifest()["files"][HOLDEM_RECIPE.name]
    assert entry["exploitability_kind"] == "sampled_lower_bound"
    recorded = entry["sampled_best_response"]
    assert set(recorded) == {"none", "full"}
    for figures in recorded.values():
        assert figures["test_deals"] >= 200_000 and figures["train_deals"] >= 1_000_000
        assert figures["train_seed"] != figures["test_seed"]
        assert figures["exploitability_ci95"] > 0.0
    assert entry["exploitability"] == recorded["none"]["exploitability"]
    # the played (purified) strategy is measurably exploitable
    full = recorded["full"]
    assert full["exploitability"] - full["exploitability_ci95"] > 0.0
    assert cli_main(["inspect", str(HOLDEM_RECIPE.bundled_path)]) == 0
    out = capsys.readouterr().out
    assert "sampled lower bound recorded in the manifest" in out
    assert "full purification: exploitability >=" in out
    assert cli_main(["list"]) == 0
    assert "expl >= " in capsys.readouterr().out


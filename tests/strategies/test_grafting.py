"""Strategy grafting on Leduc: forced-base rows, graft equilibria, the guarantee, files.

Oracles here are slow pure Python, one deal at a time: CFR with frozen rows
(:func:`oracle_frozen_cfr`) and a best response that may be frozen at some rows and see its
own bucketing (:func:`oracle_best_response`).
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from agent.abstraction.actions import PRESETS
from agent.abstraction.buckets import LosslessCards, card_abstraction_from_spec
from agent.abstraction.graft_cards import GraftCards
from agent.abstraction.rank_cards import RankGroupCards
from agent.abstraction.translation import get_mapping
from agent.acpc.betting import BettingState
from agent.acpc.dealing import deal_hands
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from agent.acpc.matchstate import view_of
from agent.policy import LoadedStrategy, StrategyPolicy
from agent.strategy.fileformat import dump_strategy, load_strategy
from agent.strategy.purification import parse_purification
from strategies import cli
from strategies.games.abstract import AbstractGame, build_abstract_game
from strategies.grafting.exact import (
    Grafted,
    GraftGames,
    build_graft_games,
    expand_base,
    frozen_mask,
    graft_cards,
    graft_game,
    graft_mask,
    graft_nash_conv,
    graft_strategy,
    parse_partition,
    partition_from_json,
    rows_outside_grafts,
)
from strategies.measure.best_response import best_response, expected_values, exploitability
from strategies.measure.crossplay import best_response_value, cross_value, real_exploitability
from strategies.solvers.cfr import FrozenRows, Solver
from tests.support import random_playout

F64 = npt.NDArray[np.float64]
TARGET = 2e-3
"""The NashConv (chips per hand) every graft game is solved to in these tests."""
ITERATIONS = 4000
PARTS = ("preflop:KA", "flop")
"""Preflop grafts for K and A (Q's hands stay with the base), flop grafts for every rank."""


# --------------------------------------------------------------------------- oracles


def _children(g: AbstractGame, node: int) -> list[int]:
    s = int(g.child_start[node])
    return [int(c) for c in g.children[s : s + int(g.num_actions[node])]]


def _payoff(g: AbstractGame, node: int, deal: int, q: int) -> float:
    t = int(g.terminal[node])
    s = int(g.term_set[t])
    return float(g.term_payoff[t, 0 if s < 0 else int(g.deal_pattern[deal, s]), q])


def _row(g: AbstractGame, node: int, deal: int, p: int) -> int:
    return int(g.offset[node]) + int(g.deal_bucket[deal, p, int(g.round[node])]) \
        * int(g.num_actions[node])


def oracle_frozen_cfr(g: AbstractGame, frozen: npt.NDArray[np.bool_], values: F64,
                      iterations: int, plus: bool) -> tuple[F64, F64]:
    """Alternating CFR (CFR+ with ``plus``: RM+ and linear averaging), one deal at a time,
    the ``frozen`` entries playing ``values``: ``(regrets, strategy_sum)``."""
    regrets = np.zeros(g.table_size)
    sums = np.zeros(g.table_size)

    def current() -> F64:
        out = np.empty(g.table_size)
        for node in range(g.num_nodes):
            if g.offset[node] < 0:
                continue
            k = int(g.num_actions[node])
            for b in range(int(g.rows[node])):
                start = int(g.offset[node]) + b * k
                pos = np.maximum(regrets[start : start + k], 0.0)
                out[start : start + k] = pos / pos.sum() if pos.sum() > 0 else 1.0 / k
        out[frozen] = values[frozen]
        return out

    def walk(node: int, deal: int, reach: list[float], sigma: F64, upd: int,
             weight: float) -> list[float]:
        if g.terminal[node] >= 0:
            return [_payoff(g, node, deal, q) for q in (0, 1)]
        p = int(g.player[node])
        row = _row(g, node, deal, p)
        kids = _children(g, node)
        value = [0.0, 0.0]
        action_values = []
        for a, child in enumerate(kids):
            r = list(reach)
            r[p] *= sigma[row + a]
            v = walk(child, deal, r, sigma, upd, weight)
            action_values.append(v[p])
            for q in (0, 1):
                value[q] += sigma[row + a] * v[q]
        if p == upd:
            cf = float(g.deal_prob[deal]) * reach[1 - p]
            for a in range(len(kids)):
                regrets[row + a] += cf * (action_values[a] - value[p])
                sums[row + a] += weight * reach[p] * sigma[row + a]
        return value

    for t in range(1, iterations + 1):
        for upd in (0, 1):
            sigma = current()
            for deal in range(g.num_deals):
                walk(0, deal, [1.0, 1.0], sigma, upd, float(t) if plus else 1.0)
            if plus:
                for node in np.flatnonzero((g.offset >= 0) & (g.player == upd)):
                    k, start = int(g.num_actions[node]), int(g.offset[node])
                    block = slice(start, start + int(g.rows[node]) * k)
                    regrets[block] = np.maximum(regrets[block], 0.0)
    return regrets, sums


def oracle_best_response(g: AbstractGame, table: F64, responder: int,
                         buckets: npt.NDArray[np.int32] | None = None,
                         frozen: npt.NDArray[np.bool_] | None = None) -> float:
    """Best response by information sets: the responder's choices are made deepest
    information set first, each maximising its counterfactual value summed over deals."""
    own = g.deal_bucket[:, responder, :] if buckets is None else buckets
    choice: dict[tuple[int, int], int] = {}
    nodes = [n for n in range(g.num_nodes) if g.player[n] == responder]
    depth = {0: 0}
    for n in range(g.num_nodes):
        for c in _children(g, n):
            depth[c] = depth[n] + 1
    for node in sorted(nodes, key=lambda n: -depth[n]):
        totals: dict[int, list[float]] = {}
        for deal in range(g.num_deals):
            b = int(own[deal, int(g.round[node])])
            cf = reach_to(g, table, node, deal, responder)
            if cf == 0.0:
                continue
            vals = totals.setdefault(b, [0.0] * int(g.num_actions[node]))
            for a, child in enumerate(_children(g, node)):
                vals[a] += cf * value_below(g, table, child, deal, responder, own, choice,
                                            frozen)
        for b, vals in totals.items():
            choice[(node, b)] = int(np.argmax(vals))
    return sum(float(g.deal_prob[d]) * value_below(g, table, 0, d, responder, own, choice,
                                                   frozen) for d in range(g.num_deals))


_PARENTS: dict[int, dict[int, int]] = {}


def reach_to(g: AbstractGame, table: F64, target: int, deal: int, responder: int) -> float:
    """Chance times the other player's reach of ``target`` in ``deal``."""
    path = [target]
    parent = _PARENTS.get(id(g))
    if parent is None:
        parent = _PARENTS[id(g)] = {c: n for n in range(g.num_nodes) for c in _children(g, n)}
    while path[-1] != 0:
        path.append(parent[path[-1]])
    path.reverse()
    reach = float(g.deal_prob[deal])
    for node, child in itertools.pairwise(path):
        p = int(g.player[node])
        if p != responder:
            reach *= table[_row(g, node, deal, p) + _children(g, node).index(child)]
    return reach


def value_below(g: AbstractGame, table: F64, node: int, deal: int, responder: int,
                own: npt.NDArray[np.int32], choice: dict[tuple[int, int], int],
                frozen: npt.NDArray[np.bool_] | None) -> float:
    if g.terminal[node] >= 0:
        return _payoff(g, node, deal, responder)
    p = int(g.player[node])
    kids = _children(g, node)
    if p != responder or (frozen is not None and frozen[_row(g, node, deal, p)]):
        row = _row(g, node, deal, p)
        return sum(table[row + a] * value_below(g, table, c, deal, responder, own, choice,
                                                frozen)
                   for a, c in enumerate(kids) if table[row + a] > 0)
    a = choice.get((node, int(own[deal, int(g.round[node])])), 0)
    return value_below(g, table, kids[a], deal, responder, own, choice, frozen)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def base(leduc: Game) -> tuple[AbstractGame, F64]:
    cards = RankGroupCards(leduc, ["QK", "A"])
    g = build_abstract_game(leduc, PRESETS["fcpa"], cards)
    solver = Solver(g, "cfr+")
    solver.iterate(300)
    return g, solver.average_strategy()


@pytest.fixture(scope="module")
def leduc(request: pytest.FixtureRequest) -> Game:
    from agent.acpc.gamefiles import load_game

    return load_game("leduc.limit.2p.game")


def games_for(leduc: Game, base_game: AbstractGame, preset: str) -> GraftGames:
    partition = parse_partition(leduc, preset)
    cards = graft_cards(leduc, base_game.cards, partition)
    return build_graft_games(leduc, PRESETS["fcpa"], base_game.cards, cards)


@pytest.fixture(scope="module")
def grafted(leduc: Game, base: tuple[AbstractGame, F64]) -> dict[str, Grafted]:
    g, table = base
    return {preset: graft_strategy(leduc, PRESETS["fcpa"], g.cards, table,
                                   parse_partition(leduc, preset), iterations=ITERATIONS,
                                   target=TARGET, check_every=200)
            for preset in PARTS}


# --------------------------------------------------------------------------- evaluation


def test_best_response_value_matches_oracles(base: tuple[AbstractGame, F64]) -> None:
    g, table = base
    lossless = build_abstract_game(g.game, g.betting)
    for p in (0, 1):
        fast = best_response_value(g, table, p)
        assert fast == pytest.approx(best_response(g, table, p).value, abs=1e-12)
        assert fast == pytest.approx(oracle_best_response(g, table, p), abs=1e-12)
        own = lossless.deal_bucket[:, p, :]
        assert best_response_value(g, table, p, buckets=own) == pytest.approx(
            oracle_best_response(g, table, p, buckets=own), abs=1e-12)


def test_frozen_best_response(leduc: Game, base: tuple[AbstractGame, F64]) -> None:
    g, table = base
    games = games_for(leduc, g, "flop")
    gg = graft_game(games, 0)
    expanded = expand_base(games, table)
    rng = np.random.default_rng(3)
    for p in (0, 1):
        everything = np.zeros(gg.table_size, dtype=bool)
        for node in np.flatnonzero((gg.offset >= 0) & (gg.player == p)):
            k = int(gg.num_actions[node])
            everything[int(gg.offset[node]) : int(gg.offset[node]) + int(gg.rows[node]) * k] = 1
        # frozen everywhere: no choice left, the value of the table
        assert best_response_value(gg, expanded, p, frozen=everything) == pytest.approx(
            expected_values(gg, expanded)[p], abs=1e-12)
        # frozen at random rows: as the oracle
        frozen = everything & (rng.random(gg.table_size) < 0.5)
        for node in np.flatnonzero(gg.offset >= 0):  # whole rows
            k = int(gg.num_actions[node])
            for b in range(int(gg.rows[node])):
                start = int(gg.offset[node]) + b * k
                frozen[start : start + k] = frozen[start]
        assert best_response_value(gg, expanded, p, frozen=frozen) == pytest.approx(
            oracle_best_response(gg, expanded, p, frozen=frozen), abs=1e-12)


def test_cross_value_and_real_exploitability(leduc: Game, base: tuple[AbstractGame, F64]
                                             ) -> None:
    g, table = base
    assert cross_value([g, g], [table, table]) == pytest.approx(expected_values(g, table)[0])
    lossless = build_abstract_game(leduc, PRESETS["fcpa"])
    # the base lifted to lossless cards plays the same
    lifted = np.empty(lossless.table_size)
    for node in np.flatnonzero(lossless.offset >= 0):
        k, r = int(lossless.num_actions[node]), int(lossless.round[node])
        for d in range(lossless.num_deals):
            for p in (0, 1):
                dst = int(lossless.offset[node]) + int(lossless.deal_bucket[d, p, r]) * k
                src = int(g.offset[node]) + int(g.deal_bucket[d, p, r]) * k
                lifted[dst : dst + k] = table[src : src + k]
    assert cross_value([lossless, g], [lifted, table]) == pytest.approx(
        expected_values(g, table)[0], abs=1e-12)
    assert real_exploitability(g, table, lossless) == pytest.approx(
        exploitability(lossless, lifted).exploitability, abs=1e-12)


# --------------------------------------------------------------------------- solving


def test_frozen_solver_matches_the_oracle(leduc: Game, base: tuple[AbstractGame, F64]) -> None:
    g, table = base
    games = games_for(leduc, g, "flop")
    gg = graft_game(games, 1)
    frozen = frozen_mask(games, 1, 2)
    expanded = expand_base(games, table)
    for variant, plus in (("cfr", False), ("cfr+", True)):
        solver = Solver(gg, variant, frozen=FrozenRows(frozen, expanded))
        solver.iterate(3)
        regrets, sums = oracle_frozen_cfr(gg, frozen, expanded, 3, plus)
        np.testing.assert_allclose(solver.regrets[~frozen], regrets[~frozen], atol=1e-12)
        np.testing.assert_allclose(solver.strategy_sum[~frozen], sums[~frozen], atol=1e-12)
        avg = solver.average_strategy()
        assert np.array_equal(avg[frozen], expanded[frozen])


def test_expanded_base_plays_like_the_base(leduc: Game, base: tuple[AbstractGame, F64]) -> None:
    g, table = base
    for preset in ("preflop", "flop"):
        games = games_for(leduc, g, preset)
        expanded = expand_base(games, table)
        assert expected_values(games.grafted, expanded) == pytest.approx(
            expected_values(g, table), abs=1e-12)


@pytest.mark.parametrize("preset", PARTS)
def test_grafted_equals_base_outside_every_graft(
    leduc: Game, base: tuple[AbstractGame, F64], grafted: dict[str, Grafted], preset: str,
    tmp_path: Path,
) -> None:
    g, table = base
    result = grafted[preset]
    path = dump_strategy(tmp_path / "g.strat", leduc, PRESETS["fcpa"], result.cards,
                         result.table)
    file = load_strategy(path, leduc)
    cards = card_abstraction_from_spec(leduc, file.cards)
    assert isinstance(cards, GraftCards)
    checked = inside = 0
    for node in np.flatnonzero(g.offset >= 0):
        k, r, p = int(g.num_actions[node]), int(g.round[node]), int(g.player[node])
        for d in range(g.num_deals):
            holes, board = g.deal_groups(d)
            visible = board[: leduc.board_cards_through(r)]
            row = file.row(int(node), cards.bucket(r, holes[p], visible))
            if cards.graft_of(r, holes[p]) >= 0:
                inside += 1
                continue
            src = int(g.offset[node]) + int(g.deal_bucket[d, p, r]) * k
            np.testing.assert_allclose(row, table[src : src + k], atol=1e-6)
            checked += 1
    assert checked > 0 and inside > 0
    games = games_for(leduc, g, preset)
    outside = rows_outside_grafts(games, (0, 1))
    assert np.array_equal(result.table[outside], expand_base(games, table)[outside])


@pytest.mark.parametrize("preset", PARTS)
def test_each_graft_is_an_equilibrium_of_its_graft_game(
    leduc: Game, base: tuple[AbstractGame, F64], grafted: dict[str, Grafted], preset: str
) -> None:
    g, table = base
    result = grafted[preset]
    games = games_for(leduc, g, preset)
    assert len(result.results) == 2 * len(result.partition.parts)
    for r in result.results:
        # the graft's rows in its own graft game (the base elsewhere for its player; the
        # opponent's rows are the graft game's own and are not part of the grafted file, so
        # the graft game is re-solved for them: the graft rows must be an equilibrium part)
        gg = graft_game(games, r.player)
        frozen = frozen_mask(games, r.player, r.graft)
        solver = Solver(gg, "cfr+", frozen=FrozenRows(frozen, expand_base(games, table)))
        solver.iterate(r.iterations)
        avg = solver.average_strategy()
        mine = graft_mask(games, r.player, r.graft)
        np.testing.assert_allclose(avg[mine], result.table[mine], atol=1e-12)
        nash_conv = graft_nash_conv(gg, avg, r.player, frozen)
        assert nash_conv == pytest.approx(r.nash_conv, abs=1e-12)
        assert nash_conv <= TARGET
        if r is not result.results[-1]:
            continue
        # the last one also measured by the slow oracles
        v = expected_values(gg, avg)
        slow = (oracle_best_response(gg, avg, 1 - r.player) - v[1 - r.player]
                + oracle_best_response(gg, avg, r.player, frozen=frozen) - v[r.player])
        assert slow == pytest.approx(nash_conv, abs=1e-9)


@pytest.mark.parametrize("preset", PARTS)
def test_grafted_beats_the_best_response_to_the_base(
    base: tuple[AbstractGame, F64], grafted: dict[str, Grafted], preset: str, leduc: Game
) -> None:
    g, table = base
    result = grafted[preset]
    gg = build_abstract_game(leduc, PRESETS["fcpa"],
                             card_abstraction_from_spec(leduc, result.cards))
    for p in (0, 1):
        opp = 1 - p
        br = best_response(g, table, opp).strategy
        epsilon = sum(r.nash_conv for r in result.results if r.player == p)
        sign = 1.0 if p == 0 else -1.0
        games = [gg, g] if p == 0 else [g, gg]
        mine = sign * cross_value(games, [result.table, br] if p == 0 else [br, result.table])
        theirs = sign * cross_value([g, g], [table, br] if p == 0 else [br, table])
        assert mine >= theirs - epsilon
        assert mine > theirs  # and here it strictly gains


def test_workers_give_the_same_grafts(leduc: Game, base: tuple[AbstractGame, F64]) -> None:
    g, table = base
    partition = parse_partition(leduc, "flop:KA")
    one = graft_strategy(leduc, PRESETS["fcpa"], g.cards, table, partition, iterations=200,
                         target=1e-9, check_every=100)
    two = graft_strategy(leduc, PRESETS["fcpa"], g.cards, table, partition, iterations=200,
                         target=1e-9, check_every=100, workers=2)
    assert len(two.results) == 4
    np.testing.assert_array_equal(one.table, two.table)


# --------------------------------------------------------------------------- specs, files


def test_partition_specs(leduc: Game) -> None:
    flop = parse_partition(leduc, "flop")
    assert [(p.ranks, p.from_round) for p in flop.parts] == [("Q", 1), ("K", 1), ("A", 1)]
    assert parse_partition(leduc, "preflop:KA").to_json()["grafts"] == [
        {"ranks": "K", "from_round": 0}, {"ranks": "A", "from_round": 0}]
    spec = {"grafts": [{"ranks": "QK", "from_round": 1}], "cards": {"kind": "lossless"},
            "players": [1]}
    part = parse_partition(leduc, json.dumps(spec))
    assert part.to_json() == spec
    assert partition_from_json(leduc, part.to_json()) == part


def test_partition_file(leduc: Game, tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"grafts": [{"ranks": "A", "from_round": 0}]}))
    assert parse_partition(leduc, str(path)).parts[0].ranks == "A"


@pytest.mark.parametrize(("text", "words"), [
    ("turn", "preset"),
    ("flop:J", "deck"),
    ("{not json", "expected JSON"),
    ('{"grafts": [{"ranks": "A"}, {"ranks": "KA"}]}', "already in graft"),
    ('{"grafts": [{"ranks": "A", "from_round": 3}]}', "from_round"),
    ('{"grafts": [{"ranks": "A"}], "players": [2]}', "players"),
    ('{"grafts": [{"ranks": "A"}], "cards": {"kind": "graft"}}', "cards"),
    ('{"grafts": [{"ranks": "A"}], "extra": 1}', "keys"),
    ('{"grafts": []}', "non-empty"),
    ("missing.json", "cannot read"),
])
def test_bad_partitions_are_one_line_errors(leduc: Game, text: str, words: str) -> None:
    with pytest.raises(UsageError, match=words) as info:
        parse_partition(leduc, text)
    assert "\n" not in str(info.value)


def test_cards_that_do_not_refine_the_base(leduc: Game, base: tuple[AbstractGame, F64]) -> None:
    g, table = base
    partition = partition_from_json(leduc, {"grafts": [{"ranks": "QK"}],
                                            "cards": {"kind": "blind", "buckets": [1, 1]}})
    with pytest.raises(UsageError, match="refine"):
        graft_strategy(leduc, PRESETS["fcpa"], g.cards, table, partition, iterations=1)


def _write_base(tmp_path: Path, leduc: Game, base: tuple[AbstractGame, F64]) -> Path:
    g, table = base
    return dump_strategy(tmp_path / "base.strat", leduc, PRESETS["fcpa"], g.cards.spec, table,
                         meta={"solver": "cfr+", "iterations": 300})


def test_cli_graft_inspect_and_play(
    tmp_path: Path, leduc: Game, base: tuple[AbstractGame, F64],
    capsys: pytest.CaptureFixture[str],
) -> None:
    base_path = _write_base(tmp_path, leduc, base)
    out = tmp_path / "grafted.strat"
    code = cli.main(["graft", "--base", str(base_path), "--partition", "flop", "--out",
                     str(out), "--iterations", "300", "--target", "0.01"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "graft 6/6" in captured.err and "wrote" in captured.out
    file = load_strategy(out, leduc)
    assert file.cards["kind"] == "graft"
    assert len(file.meta["grafting"]["grafts"]) == 6
    assert cli.main(["inspect", str(out), "--samples", "2"]) == 0
    text = capsys.readouterr().out
    assert "grafts: base" in text and "graft 2: hands with A from round 1" in text
    assert "position 1 graft 2:" in text

    # the agent plays it, and swaps to it from the base
    cards = card_abstraction_from_spec(leduc, file.cards)
    loaded = LoadedStrategy(file, cards)
    base_file = load_strategy(base_path, leduc)
    policy = StrategyPolicy(LoadedStrategy(base_file, base[0].cards),
                            get_mapping("rand-pshar"), parse_purification("none"), seed=1)
    policy.swap(loaded)
    rng = random.Random(2)
    acted = 0
    for hand in range(60):
        final, _ = random_playout(leduc, rng)
        deal = next(deal_hands(leduc, hand))
        s = BettingState.initial(leduc)
        for a in [a for rnd in final.actions for a in rnd]:
            action = policy.act(view_of(s.player, hand, s, deal.hole, deal.board))
            assert s.is_legal(action)
            acted += 1
            s = s.apply(a)
    assert acted > 0 and not policy.swap_pending


@pytest.mark.parametrize(("argv", "words", "status"), [
    (["--partition", "flop:J"], "deck", 1),
    (["--partition", "flop", "--iterations", "-1"], "--iterations", 2),  # a bad flag value
    (["--partition", "flop", "--workers", "0"], "--workers", 2),
    (["--partition", "flop", "--target", "0"], "--target", 2),
])
def test_cli_graft_errors(tmp_path: Path, leduc: Game, base: tuple[AbstractGame, F64],
                          capsys: pytest.CaptureFixture[str], argv: list[str],
                          words: str, status: int) -> None:
    base_path = _write_base(tmp_path, leduc, base)
    try:
        code = cli.main(["graft", "--base", str(base_path), "--out",
                         str(tmp_path / "o.strat"), *argv])
    except SystemExit as exc:  # argparse: the usage line, then one error line
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == status and words in err.splitlines()[-1]
    if status == 1:
        assert err.count("\n") == 1 and err.startswith("acpc-strategy: error:")
    else:
        assert err.splitlines()[-1].startswith("acpc-strategy graft: error: argument")


def test_cli_graft_refuses_a_grafted_base(tmp_path: Path, leduc: Game,
                                          grafted: dict[str, Grafted],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    result = grafted["flop"]
    path = dump_strategy(tmp_path / "g.strat", leduc, PRESETS["fcpa"], result.cards,
                         result.table)
    code = cli.main(["graft", "--base", str(path), "--partition", "flop", "--out",
                     str(tmp_path / "o.strat")])
    err = capsys.readouterr().err
    assert code == 1 and "already grafted" in err and err.count("\n") == 1


def test_lossless_partition_cards_are_sized_for_the_game(leduc: Game) -> None:
    cards = graft_cards(leduc, RankGroupCards(leduc, ["Q", "K", "A"]),
                        parse_partition(leduc, "flop:A"))
    assert cards.inner[0].buckets == LosslessCards(leduc).buckets
    assert cards.buckets == (3, 6 + 15)

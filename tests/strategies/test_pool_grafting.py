"""Hold'em grafting over a deal pool: the frozen-row MCCFR kernel against a plain-Python
oracle, refinement of the cards, the assembled table against the base, the file, the CLI.

The oracle (:class:`FrozenOracle`) is the pool's external-sampling MCCFR written recursively
in plain Python with the frozen rows as chance nodes (one action drawn from the fixed
probabilities, nothing updated), drawing from the same generator in the same order.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent.abstraction.actions import build_tree, parse_betting_abstraction
from agent.abstraction.buckets import card_abstraction_from_spec
from agent.abstraction.graft_cards import GraftCards, GraftPart, check_parts
from agent.abstraction.holdem_buckets import HoldemCards, preflop_class
from agent.abstraction.translation import get_mapping
from agent.acpc.betting import CALL, FOLD, Action, ActionKind, BettingState
from agent.acpc.dealing import deal_hands
from agent.acpc.errors import AbstractionError, UsageError
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import view_of
from agent.policy import StrategyPolicy
from agent.strategy.fileformat import dump_strategy, load_strategy
from agent.strategy.hotswap import load_for_game
from agent.strategy.purification import parse_purification
from agent.strategy.sampled_deals import deal_cards
from strategies import cli
from strategies.games.abstract import FlatTree, flatten_tree
from strategies.grafting import pool as P
from strategies.grafting.exact import parse_partition
from strategies.solvers import dealpool as H
from strategies.solvers import rng
from strategies.solvers.cfr import POOL_SOLVER, FrozenRows, Solver, SolverConfig
from strategies.solvers.dealpool import PoolGame

GAME = "holdem.nolimit.2p.reverse_blinds.game"
SMALL_BETTING = json.dumps({"name": "t", "fractions": [[[1.0]]], "max_raises": [2, 1, 1, 1]})
TOL = 1e-12


def config(interval: int = 0, until: int = 0) -> SolverConfig:
    return SolverConfig(POOL_SOLVER, sampling="external", discount_interval=interval,
                        discount_until=until)


# --------------------------------------------------------------------------- the oracle


class FrozenOracle:
    """External-sampling MCCFR over a pool with frozen rows, recursively, in plain Python."""

    def __init__(self, flat: FlatTree, pool: H.DealPool, frozen: np.ndarray, fixed: np.ndarray,
                 interval: int, until: int, seed: int) -> None:
        self.player = [int(x) for x in flat.player]
        self.rnd = [int(x) for x in flat.round]
        self.k = [int(x) for x in flat.num_actions]
        self.start = [int(x) for x in flat.child_start]
        self.children = [int(x) for x in flat.children]
        self.offset = [int(x) for x in flat.offset]
        self.term = [[float(v) for v in row] for row in flat.term_value]
        self.buckets = pool.buckets.astype(int).tolist()
        self.result = [int(r) for r in pool.result]
        self.frozen = [bool(x) for x in frozen]
        self.fixed = [float(x) for x in fixed]
        self.interval, self.until = interval, until
        self.regrets = [0.0] * flat.table_size
        self.ssum = [0.0] * flat.table_size
        self.state = [int(x) for x in rng.seed_state(seed)]
        self.t = 0

    def sigma(self, row: int, k: int) -> list[float]:
        pos = sum(r for r in self.regrets[row : row + k] if r > 0.0)
        if pos > 0.0:
            return [r / pos if r > 0.0 else 0.0 for r in self.regrets[row : row + k]]
        return [1.0 / k] * k

    def draw(self, sigma: list[float]) -> int:
        u = rng.uniform_py(self.state)
        c = 0.0
        for b, s in enumerate(sigma):
            c += s
            if u < c:
                return b
        return len(sigma) - 1

    def walk(self, node: int, trav: int, deal: int) -> float:
        k = self.k[node]
        if k == 0:
            v = self.term[node][self.result[deal]]
            return v if trav == 0 else -v
        p = self.player[node]
        row = self.offset[node] + self.buckets[deal][p][self.rnd[node]] * k
        kids = self.children[self.start[node] : self.start[node] + k]
        if self.frozen[row]:  # a chance node with the fixed probabilities
            return self.walk(kids[self.draw(self.fixed[row : row + k])], trav, deal)
        sigma = self.sigma(row, k)
        if p != trav:
            for b in range(k):
                self.ssum[row + b] += sigma[b]
            return self.walk(kids[self.draw(sigma)], trav, deal)
        util = [self.walk(child, trav, deal) for child in kids]
        v = sum(s * u for s, u in zip(sigma, util, strict=True))
        for b in range(k):
            self.regrets[row + b] += util[b] - v
        return v

    def run(self, iterations: int) -> None:
        n = len(self.result)
        for _ in range(iterations):
            self.t += 1
            for p in (0, 1):
                deal = min(int(rng.uniform_py(self.state) * n), n - 1)
                self.walk(0, p, deal)
            if self.interval and self.t % self.interval == 0 and self.t <= self.until:
                f = (self.t // self.interval) / (self.t // self.interval + 1.0)
                self.regrets = [r * f for r in self.regrets]
                self.ssum = [s * f for s in self.ssum]


def small_flat(buckets: tuple[int, ...] = (169, 3, 3, 3)) -> FlatTree:
    tree = build_tree(load_game(GAME), parse_betting_abstraction(SMALL_BETTING))
    return flatten_tree(tree, buckets)


def synthetic_pool(n: int, buckets: tuple[int, ...], seed: int) -> H.DealPool:
    g = np.random.default_rng(seed)
    b = np.stack([g.integers(0, m, size=(n, 2)) for m in buckets], axis=2).astype(np.uint16)
    return H.DealPool(np.ascontiguousarray(b), g.integers(0, 3, size=n).astype(np.int8), seed,
                      {"kind": "synthetic"})


def random_table(flat: FlatTree, seed: int) -> np.ndarray:
    g = np.random.default_rng(seed)
    out = np.empty(flat.table_size)
    for node in np.flatnonzero(flat.num_actions > 0):
        k, o = int(flat.num_actions[node]), int(flat.offset[node])
        block = g.random((int(flat.layout.rows[node]), k)) ** 3
        block[g.random(block.shape[0]) < 0.3, 0] = 0.0  # some zero probabilities
        block += 1e-9
        out[o : o + block.size] = (block / block.sum(axis=1, keepdims=True)).ravel()
    return out


def test_small_frozen_kernel_equals_the_oracle() -> None:
    flat = small_flat()
    pool = synthetic_pool(30, (169, 3, 3, 3), seed=4)
    frozen = P.frozen_rows(PoolGame(flat, pool), 0, (169, 2, 1, 2))  # position 0's low rows
    fixed = random_table(flat, 3)
    solver = Solver(PoolGame(flat, pool), config(7, 30), seed=9,
                    frozen=FrozenRows(frozen, fixed))
    oracle = FrozenOracle(flat, pool, frozen, fixed, 7, 30, seed=9)
    for chunk in (1, 12, 27):
        solver.iterate(chunk)
        oracle.run(chunk)
        np.testing.assert_allclose(solver.regrets, oracle.regrets, rtol=0, atol=TOL)
        np.testing.assert_allclose(solver.strategy_sum, oracle.ssum, rtol=0, atol=TOL)
        assert solver.rng_state.tolist() == oracle.state
    assert not solver.regrets[frozen].any() and not solver.strategy_sum[frozen].any()
    assert np.abs(solver.regrets[~frozen]).sum() > 0 and solver.strategy_sum.sum() > 0
    avg = solver.average_strategy()
    np.testing.assert_array_equal(avg[frozen], fixed[frozen])


def test_small_warm_start_plays_the_fixed_rows_first() -> None:
    flat = small_flat()
    pool = synthetic_pool(30, (169, 3, 3, 3), seed=5)
    frozen = np.zeros(flat.table_size, dtype=bool)
    fixed = random_table(flat, 8)
    solver = Solver(PoolGame(flat, pool), config(), frozen=FrozenRows(frozen, fixed, 5.0))
    np.testing.assert_allclose(solver.average_strategy(), fixed, atol=1e-12)
    np.testing.assert_allclose(solver.regrets, 5.0 * fixed)
    with pytest.raises(UsageError, match="external sampling"):
        Solver(PoolGame(flat, pool), "cfr+", frozen=FrozenRows(frozen, fixed))


# --------------------------------------------------------------------------- real cards


@pytest.fixture(scope="module")
def setup() -> dict[str, Any]:
    game = load_game(GAME)
    base = HoldemCards.build((169, 2, 3, 2), samples=300, seed=4)
    fine = P.fine_cards(base, {"kind": "holdem", "buckets": [169, 4, 6, 4]})
    tree = build_tree(game, parse_betting_abstraction(SMALL_BETTING))
    base_flat = flatten_tree(tree, base.buckets)
    return {"game": game, "base": base, "fine": fine, "tree": tree,
            "table": random_table(base_flat, 1)}


def parts_of() -> tuple[GraftPart, ...]:
    strong = set(P.class_group("equity:1/2")) - set(P.class_group("pairs"))
    return (GraftPart("", 1, tuple(sorted(strong))), GraftPart("", 0, P.class_group("pairs")))


def test_class_groups() -> None:
    pairs, suited, offsuit = (P.class_group(n) for n in ("pairs", "suited", "offsuit"))
    assert (len(pairs), len(suited), len(offsuit)) == (13, 78, 78)
    assert sorted(pairs + suited + offsuit) == list(range(169))
    halves = P.equity_groups(2)
    assert sorted(halves[0] + halves[1]) == list(range(169))
    hands = [sum(6 if c // 13 == c % 13 else 4 if c // 13 > c % 13 else 12 for c in g)
             for g in halves]
    assert sum(hands) == 1326 and abs(hands[0] - hands[1]) <= 24
    assert 168 in halves[1] and 1 in halves[0]  # AA strong, 32o weak
    for bad in ("equity:2/2", "equity:x", "kings"):
        with pytest.raises(UsageError, match="preflop class group"):
            P.class_group(bad)


def test_refinement(setup: dict[str, Any]) -> None:
    base, fine = setup["base"], setup["fine"]
    maps = P.refinement(base, fine)
    assert list(maps[0]) == list(range(169))
    rnd = random.Random(3)
    for _ in range(200):
        cards = rnd.sample(range(52), 7)
        for r, n in ((1, 3), (2, 4), (3, 5)):
            hole, board = cards[:2], cards[2 : 2 + n]
            assert maps[r][fine.bucket(r, hole, board)] == base.bucket(r, hole, board)
    other = HoldemCards.build((169, 4, 6, 4), samples=300, seed=5)
    with pytest.raises(UsageError, match="refine"):
        P.refinement(base, other)


def test_assembled_table_equals_the_base_outside_every_graft(setup: dict[str, Any]) -> None:
    game, base, tree, table = setup["game"], setup["base"], setup["tree"], setup["table"]
    parts = parts_of()
    grafted = P.pool_graft_strategy(
        game, tree, base, table, parts, {"kind": "holdem", "buckets": [169, 4, 6, 4]}, (0, 1),
        pool_deals=300, pool_seed=3, iterations=3000, config=config(500, 2000), warm=0.0)
    fine = setup["fine"]
    pool = H.cached_pool(fine, 300, seed=3)
    pg = P.make_pool_grafts(game, tree, base, fine, parts, pool)
    expanded = P.expand_base(pg, table)
    outside = P.rows_outside(pg, (0, 1))
    np.testing.assert_array_equal(grafted.table[outside], expanded[outside])
    assert not np.allclose(grafted.table[~outside], expanded[~outside])
    # the base's own rows of the grafted layout are the base table, row for row
    flat, bflat = pg.grafted_flat, pg.base_flat
    for node in np.flatnonzero(flat.num_actions > 0):
        k, r = int(flat.num_actions[node]), int(flat.round[node])
        n = int(base.buckets[r]) * k
        np.testing.assert_array_equal(
            grafted.table[int(flat.offset[node]) : int(flat.offset[node]) + n],
            table[int(bflat.offset[node]) : int(bflat.offset[node]) + n])
    # every row is a distribution
    for node in np.flatnonzero(flat.num_actions > 0):
        k, o = int(flat.num_actions[node]), int(flat.offset[node])
        rows = grafted.table[o : o + int(flat.layout.rows[node]) * k].reshape(-1, k)
        np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-9)
    # the graft card abstraction buckets hands as the graft games did
    cards = card_abstraction_from_spec(game, grafted.cards)
    assert isinstance(cards, GraftCards)
    assert cards.buckets == (169 + 169, 2 + 4 + 4, 3 + 6 + 6, 2 + 4 + 4)
    for i in range(pool.size):
        dealt = deal_cards(3, i)
        for p in range(2):
            hole = list(dealt[2 * p : 2 * p + 2])
            j = {c: g for g, part in enumerate(parts) for c in part.classes}.get(
                preflop_class(hole), -1)
            for r, n in enumerate((0, 3, 4, 5)):
                want = int(pool.buckets[i, p, r]) if j < 0 or r < parts[j].from_round else -1
                got = cards.bucket(r, hole, list(dealt[4 : 4 + n]))
                if want >= 0:
                    assert got == int(pg.base_of[r][want])
                else:
                    assert got == cards.graft_range(r, j)[0] + int(pool.buckets[i, p, r])
    # two worker processes give the very same table
    again = P.pool_graft_strategy(
        game, tree, base, table, parts, {"kind": "holdem", "buckets": [169, 4, 6, 4]}, (0, 1),
        pool_deals=300, pool_seed=3, iterations=3000, config=config(500, 2000), workers=2)
    np.testing.assert_array_equal(again.table, grafted.table)


def test_graft_game_freezes_only_the_grafting_players_base_rows(setup: dict[str, Any]) -> None:
    game, base, fine, tree = setup["game"], setup["base"], setup["fine"], setup["tree"]
    pool = H.cached_pool(fine, 300, seed=3)
    pg = P.make_pool_grafts(game, tree, base, fine, parts_of(), pool)
    g = P.graft_pool_game(pg, 1, 0)
    assert g.flat.layout.buckets == (169, 2 + 4, 3 + 6, 2 + 4)
    frozen = P.frozen_rows(g, 1, base.buckets)
    b = g.pool.buckets
    assert (b[:, 0, :] < np.asarray(base.buckets)).all()  # the opponent: base buckets
    assert (b[:, 1, 1:] >= np.asarray(base.buckets[1:])).any()  # position 1 in graft 0
    for node in np.flatnonzero(g.flat.num_actions > 0):
        k, o, r = int(g.flat.num_actions[node]), int(g.flat.offset[node]), int(g.flat.round[node])
        rows = frozen[o : o + int(g.flat.layout.rows[node]) * k].reshape(-1, k)
        if int(g.flat.player[node]) == 0:
            assert not rows.any()
        else:
            assert rows[: base.buckets[r]].all() and not rows[base.buckets[r] :].any()


def test_spec_validation() -> None:
    game = load_game(GAME)
    leduc = load_game("leduc.limit.2p.game")
    with pytest.raises(AbstractionError, match="hold'em game"):
        check_parts(leduc, [{"classes": [1, 2], "from_round": 1}])
    for bad, match in (
        ([{"classes": [1, 1]}], "distinct"),
        ([{"classes": [169]}], "0..168"),
        ([{"classes": []}], "non-empty"),
        ([{"classes": [1], "ranks": "A"}], "exactly one"),
        ([{"classes": [1], "from_round": 4}], "from_round"),
        ([{"classes": [1, 2]}, {"classes": [2]}], "already in graft"),
        ([{"classes": [1], "colour": 2}], "expected keys"),
    ):
        with pytest.raises(AbstractionError, match=match):
            check_parts(game, bad)
    parts = check_parts(game, [{"classes": [168, 155], "from_round": 1}])
    assert parts[0].classes == (155, 168) and parts[0].label.startswith("2 preflop classes (AA")
    partition = parse_partition(game, '{"grafts": [{"classes": "pairs", "from_round": 1}]}')
    assert partition.cards == {"kind": "holdem", "buckets": [169, 100, 100, 100]}
    assert len(partition.parts[0].classes) == 13
    assert len(parse_partition(game, "holdem-flop:3").parts) == 3
    with pytest.raises(UsageError, match="holdem-flop:N"):
        parse_partition(game, "holdem-flop:0")
    base = HoldemCards.build((169, 2, 3, 2), samples=300, seed=4)
    with pytest.raises(UsageError, match="hold'em graft cards"):
        P.fine_cards(base, {"kind": "lossless"})


# --------------------------------------------------------------------------- files and CLI


@pytest.fixture(scope="module")
def base_file(setup: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hgraft") / "base.strat"
    dump_strategy(path, setup["game"], setup["tree"].abstraction, setup["base"].spec,
                  setup["table"], tree=setup["tree"], meta={"solver": POOL_SOLVER})
    return path


def test_cli_grafts_a_holdem_file_the_agent_plays(base_file: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "g.strat"
    spec = json.dumps({"grafts": [{"classes": "pairs", "from_round": 1},
                                  {"classes": [168 - 13, 167], "from_round": 0}],
                       "cards": {"kind": "holdem", "buckets": [169, 4, 6, 4]}})
    argv = ["graft", "--base", str(base_file), "--partition", spec, "--out", str(out),
            "--iterations", "2000", "--pool-deals", "200", "--warm", "10", "--discount",
            "500,1000", "--quiet"]
    assert cli.main(argv) == 0
    loaded = load_strategy(out)
    assert loaded.cards["kind"] == "graft" and loaded.cards["base"]["buckets"] == [169, 2, 3, 2]
    assert loaded.meta["grafting"]["warm"] == 10
    assert len(loaded.meta["grafting"]["grafts"]) == 4
    assert not Path(f"{out}.grafts").exists()
    assert cli.main(["inspect", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "graft 0: hands with 13 preflop classes (AA, KK" in shown
    # the agent plays it
    game = setup_game()
    strat = load_for_game(out, game)
    policies = [StrategyPolicy(strat, get_mapping("rand-pshar"), parse_purification("none"),
                               seed=p) for p in range(2)]
    play(policies, game, hands=30)
    # bad input: one-line errors
    for bad, match in ((["--discount", "x"], "INTERVAL,UNTIL"),
                       (["--backend", "local", "--address", "1.2.3.4:1"], "address")):
        assert cli.main([*argv[:-1], *bad, "--quiet"]) == 1
        assert match in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:  # a bad flag value: argparse's line, status 2
        cli.main([*argv[:-1], "--pool-deals", "0", "--quiet"])
    assert info.value.code == 2 and "--pool-deals" in capsys.readouterr().err


def setup_game() -> Any:
    return load_game(GAME)


def play(policies: list[StrategyPolicy], game: Any, hands: int) -> None:
    """Hands of each policy against random legal actions (the actions must be legal)."""
    rng_ = random.Random(1)
    deals = deal_hands(game, 5)
    for hand in range(hands):
        deal = next(deals)
        state = BettingState.initial(game)
        while not state.finished:
            p = state.player
            if p == hand % 2:
                action = policies[p].act(view_of(p, hand, state, deal.hole, deal.board))
            else:
                kind = rng_.choice(state.legal_actions())
                bounds = state.raise_bounds()
                if kind is ActionKind.RAISE and bounds is not None:
                    action = Action(ActionKind.RAISE, rng_.randint(*bounds))
                else:
                    action = FOLD if kind is ActionKind.FOLD else CALL
            state = state.apply(action)
    assert sum(pol.stats.decisions for pol in policies) > 0


def test_grafted_pool_and_sampled_best_response(setup: dict[str, Any], base_file: Path,
                                                tmp_path: Path) -> None:
    from strategies.measure.sampled_br import sampled_exploitability

    out = tmp_path / "g.strat"
    spec = json.dumps({"grafts": [{"classes": "equity:1/2", "from_round": 1}],
                       "cards": {"kind": "holdem", "buckets": [169, 4, 6, 4]}})
    assert cli.main(["graft", "--base", str(base_file), "--partition", spec, "--out", str(out),
                     "--iterations", "500", "--pool-deals", "100", "--quiet"]) == 0
    loaded = load_strategy(out)
    cards = card_abstraction_from_spec(loaded.game, loaded.cards)
    assert isinstance(cards, GraftCards)
    fine = P.pool_cards_of(cards)
    pool = H.build_pool(fine, 60, seed=2)
    grafted = P.grafted_pool(cards, pool)
    for i in range(pool.size):
        dealt = deal_cards(2, i)
        for p in range(2):
            for r, n in enumerate((0, 3, 4, 5)):
                assert grafted.buckets[i, p, r] == cards.bucket(
                    r, list(dealt[2 * p : 2 * p + 2]), list(dealt[4 : 4 + n]))
    result = sampled_exploitability(loaded, train_deals=300, test_deals=200, train_seed=5,
                                    test_seed=6, workers=1)
    assert np.isfinite(result.exploitability)
    assert cli.main(["exploit", str(out), "--train-deals", "300", "--test-deals", "200",
                     "--train-seed", "5", "--test-seed", "6", "--workers", "1"]) == 0


def test_kept_grafts_are_not_solved_again(setup: dict[str, Any],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    game, base, tree, table = setup["game"], setup["base"], setup["tree"], setup["table"]
    stored: dict[tuple[int, int], P.PoolGraftResult] = {}
    args = (game, tree, base, table, parts_of(), {"kind": "holdem", "buckets": [169, 4, 6, 4]},
            (0, 1))
    kw: dict[str, Any] = {"pool_deals": 300, "pool_seed": 3, "iterations": 500,
                          "config": config()}
    first = P.pool_graft_strategy(
        *args, **kw, save=lambda job, r: stored.__setitem__((job.player, job.graft), r))
    assert len(stored) == 4
    del stored[(1, 0)]  # as if interrupted before this one finished
    solved: list[tuple[int, int]] = []
    real = P.solve_pool_graft

    def spy(job: P.PoolGraftJob, *a: Any, **k: Any) -> P.PoolGraftResult:
        solved.append((job.player, job.graft))
        return real(job, *a, **k)

    monkeypatch.setattr(P, "solve_pool_graft", spy)
    again = P.pool_graft_strategy(
        *args, **kw, keep=lambda job: stored.get((job.player, job.graft)))
    assert solved == [(1, 0)]
    np.testing.assert_array_equal(again.table, first.table)

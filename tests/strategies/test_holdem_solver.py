"""External-sampling MCCFR over a deal pool (:mod:`strategies.solvers.cfr` on a
:class:`strategies.solvers.dealpool.PoolGame`), the pool itself, and the bundled hold'em file.

* The deal pool's buckets are the agent's (:meth:`HoldemCards.bucket`) and its showdown
  results :func:`agent.handeval.evaluate`'s, for any number of workers; pools
  round-trip through the cache.
* The flat tree's terminal payoffs are :meth:`BettingState.payoffs`.
* The MCCFR kernel equals a slow pure-Python oracle (same MRG32k3a stream, discounts
  included) to 1e-12; a sampled traversal value is an unbiased estimate of the exact
  expected value; resuming from a checkpoint is bitwise the same as not stopping; foreign
  or corrupt checkpoints raise :class:`CheckpointError`.
* A solved file loads with :func:`agent.strategy.hotswap.load_for_game` and plays legal
  actions through :class:`StrategyPolicy`; the bundled file (if built) matches its manifest
  entry and the manifest's duplicate-match figures are significant wins.
* Tests whose names contain ``small`` run again in a subprocess with ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent.abstraction.actions import build_tree, parse_betting_abstraction
from agent.abstraction.holdem_buckets import HoldemCards
from agent.abstraction.translation import get_mapping
from agent.acpc.betting import CALL, FOLD, Action, ActionKind, BettingState
from agent.acpc.dealing import deal_hands
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import view_of
from agent.handeval import evaluate
from agent.policy import StrategyPolicy
from agent.strategy.fileformat import dump_strategy, load_strategy
from agent.strategy.hotswap import load_for_game
from agent.strategy.purification import parse_purification
from agent.strategy.sampled_deals import deal_cards
from strategies.games.abstract import TIE, WIN0, WIN1, FlatTree, flatten_tree
from strategies.recipes import HOLDEM_BETTING, RECIPES, Recipe, get_recipe, load_manifest
from strategies.solvers import dealpool as H
from strategies.solvers import rng
from strategies.solvers.cfr import (
    POOL_SOLVER,
    CheckpointError,
    Solver,
    SolverConfig,
)
from strategies.solvers.dealpool import PoolGame
from strategies.solvers.kernels import NO_FROZEN, NO_VALUES, es_pass
from tests.support import NO_JIT, rewrite_checkpoint_header, run_without_jit

GAME = "holdem.nolimit.2p.reverse_blinds.game"
SMALL_BETTING = json.dumps({"name": "t", "fractions": [[[1.0]]], "max_raises": [2, 1, 1, 1]})
TOL = 1e-12


def pool_config(interval: int, until: int) -> SolverConfig:
    """The pool solver with a discount schedule (as a hold'em recipe sets it)."""
    return SolverConfig(POOL_SOLVER, sampling="external", discount_interval=interval,
                        discount_until=until)


def small_flat(buckets: tuple[int, ...] = (169, 3, 3, 3)) -> FlatTree:
    tree = build_tree(load_game(GAME), parse_betting_abstraction(SMALL_BETTING))
    return flatten_tree(tree, buckets)


def synthetic_pool(n: int, buckets: tuple[int, ...], seed: int) -> H.DealPool:
    """Random buckets and results: the kernels only see these arrays."""
    g = np.random.default_rng(seed)
    b = np.stack([g.integers(0, m, size=(n, 2)) for m in buckets], axis=2).astype(np.uint16)
    result = g.integers(0, 3, size=n).astype(np.int8)
    return H.DealPool(np.ascontiguousarray(b), result, seed, {"kind": "synthetic"})


# --------------------------------------------------------------------------- the oracle


class Oracle:
    """External-sampling MCCFR over a pool, recursively, in plain Python."""

    def __init__(self, flat: FlatTree, pool: H.DealPool, interval: int, until: int,
                 seed: int, pure: bool = False) -> None:
        self.pure = pure
        self.player = [int(x) for x in flat.player]
        self.rnd = [int(x) for x in flat.round]
        self.k = [int(x) for x in flat.num_actions]
        self.start = [int(x) for x in flat.child_start]
        self.children = [int(x) for x in flat.children]
        self.offset = [int(x) for x in flat.offset]
        self.term = [[float(v) for v in row] for row in flat.term_value]
        self.buckets = pool.buckets.astype(int).tolist()
        self.result = [int(r) for r in pool.result]
        self.interval, self.until = interval, until
        self.regrets = [0.0] * flat.table_size
        self.ssum = [0.0] * flat.table_size
        self.state = [int(x) for x in rng.seed_state(seed)]
        self.t = 0

    def sigma(self, row: int, k: int) -> list[float]:
        pos = 0.0
        for r in self.regrets[row : row + k]:
            if r > 0.0:
                pos += r
        if pos > 0.0:
            return [r / pos if r > 0.0 else 0.0 for r in self.regrets[row : row + k]]
        return [1.0 / k] * k

    def walk(self, node: int, trav: int, deal: int) -> float:
        k = self.k[node]
        if k == 0:
            v = self.term[node][self.result[deal]]
            return v if trav == 0 else -v
        p = self.player[node]
        row = self.offset[node] + self.buckets[deal][p][self.rnd[node]] * k
        sigma = self.sigma(row, k)
        kids = self.children[self.start[node] : self.start[node] + k]
        if self.pure:
            return self.pure_walk(row, sigma, kids, p, trav, deal)
        if p != trav:
            for b in range(k):
                self.ssum[row + b] += sigma[b]
            u = rng.uniform_py(self.state)
            choice, c = k - 1, 0.0
            for b in range(k):
                c += sigma[b]
                if u < c:
                    choice = b
                    break
            return self.walk(kids[choice], trav, deal)
        util = [self.walk(child, trav, deal) for child in kids]
        v = 0.0
        for b in range(k):
            v += sigma[b] * util[b]
        for b in range(k):
            self.regrets[row + b] += util[b] - v
        return v

    def pure_walk(self, row: int, sigma: list[float], kids: list[int], p: int, trav: int,
                  deal: int) -> float:
        """Pure CFR: every row entered samples its action on entry."""
        k = len(kids)
        u = rng.uniform_py(self.state)
        choice, c = k - 1, 0.0
        for b in range(k):
            c += sigma[b]
            if u < c:
                choice = b
                break
        if p != trav:
            self.ssum[row + choice] += 1.0
            return self.walk(kids[choice], trav, deal)
        util = [self.walk(child, trav, deal) for child in kids]
        for b in range(k):
            self.regrets[row + b] += util[b] - util[choice]
        return util[choice]

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


def exact_value(flat: FlatTree, pool: H.DealPool) -> float:
    """Position 0's expected payoff when both play uniformly, over the pool's deals."""
    total = 0.0
    for d in range(pool.size):
        res = int(pool.result[d])
        stack = [(0, 1.0)]
        while stack:
            node, prob = stack.pop()
            k = int(flat.num_actions[node])
            if k == 0:
                total += prob * flat.term_value[node, res]
                continue
            s = int(flat.child_start[node])
            for c in flat.children[s : s + k]:
                stack.append((int(c), prob / k))
    return total / pool.size


# --------------------------------------------------------------------------- kernels


def test_small_kernel_equals_the_oracle() -> None:
    flat = small_flat()
    pool = synthetic_pool(25, (169, 3, 3, 3), seed=4)
    solver = Solver(PoolGame(flat, pool), pool_config(7, 30), seed=9)
    oracle = Oracle(flat, pool, 7, 30, seed=9)
    for chunk in (1, 12, 27):
        solver.iterate(chunk)
        oracle.run(chunk)
        np.testing.assert_allclose(solver.regrets, oracle.regrets, rtol=0, atol=TOL)
        np.testing.assert_allclose(solver.strategy_sum, oracle.ssum, rtol=0, atol=TOL)
        assert solver.rng_state.tolist() == oracle.state
    assert np.abs(solver.regrets).sum() > 0 and solver.strategy_sum.sum() > 0
    avg = solver.average_strategy()
    for node in np.flatnonzero(flat.num_actions > 0):
        k = int(flat.num_actions[node])
        rows = avg[flat.offset[node] : flat.offset[node] + flat.layout.rows[node] * k]
        np.testing.assert_allclose(rows.reshape(-1, k).sum(axis=1), 1.0, atol=1e-12)


def test_small_pure_cfr_on_a_pool_equals_the_oracle() -> None:
    flat = small_flat()
    pool = synthetic_pool(25, (169, 3, 3, 3), seed=4)
    solver = Solver(PoolGame(flat, pool), "pure-cfr", seed=9)
    oracle = Oracle(flat, pool, 0, 0, seed=9, pure=True)
    for chunk in (1, 12, 27):
        solver.iterate(chunk)
        oracle.run(chunk)
        np.testing.assert_allclose(solver.regrets, oracle.regrets, rtol=0, atol=TOL)
        np.testing.assert_allclose(solver.strategy_sum, oracle.ssum, rtol=0, atol=TOL)
        assert solver.rng_state.tolist() == oracle.state
    assert np.array_equal(solver.regrets, np.round(solver.regrets))
    assert np.abs(solver.regrets).sum() > 0 and solver.strategy_sum.sum() > 0
    with pytest.raises(ValueError, match="Pure CFR for a deal pool"):
        Solver(PoolGame(flat, pool), "cfr-cs")


def test_small_resume_is_the_same_as_not_stopping(tmp_path: Path) -> None:
    flat = small_flat()
    pool = synthetic_pool(25, (169, 3, 3, 3), seed=5)
    config = pool_config(5, 20)
    straight = Solver(PoolGame(flat, pool), config, seed=3)
    straight.iterate(40)
    first = Solver(PoolGame(flat, pool), config, seed=3)
    first.iterate(17)
    path = first.save_checkpoint(tmp_path / "h.ckpt.npz", {"recipe": "test"})
    resumed = Solver.load_checkpoint(path, PoolGame(flat, pool))
    assert resumed.iteration == 17 and resumed.config == config
    resumed.iterate(23)
    assert np.array_equal(resumed.regrets, straight.regrets)
    assert np.array_equal(resumed.strategy_sum, straight.strategy_sum)
    assert resumed.value_sum == straight.value_sum
    other = synthetic_pool(25, (169, 3, 3, 3), seed=6)
    other = H.DealPool(other.buckets, other.result, 99, other.cards)
    with pytest.raises(CheckpointError, match="another pool"):
        Solver.load_checkpoint(path, PoolGame(flat, other))
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(CheckpointError, match="cannot read checkpoint"):
        Solver.load_checkpoint(bad, PoolGame(flat, pool))


def test_small_old_holdem_checkpoints_still_load(tmp_path: Path) -> None:
    """A checkpoint of the former hold'em solver (its own format, version 1, no pool game
    in the config) resumes exactly like the current format."""
    flat = small_flat()
    pool = synthetic_pool(25, (169, 3, 3, 3), seed=5)
    straight = Solver(PoolGame(flat, pool), pool_config(5, 20), seed=3)
    straight.iterate(30)
    first = Solver(PoolGame(flat, pool), pool_config(5, 20), seed=3)
    first.iterate(11)
    path = first.save_checkpoint(tmp_path / "new.npz", {"recipe": "test"})
    old = rewrite_checkpoint_header(
        path, tmp_path / "old.npz", format="acpc-arena-holdem-checkpoint", version=1,
        config={"name": "mccfr-es-pool", "discount_interval": 5, "discount_until": 20})
    resumed = Solver.load_checkpoint(old, PoolGame(flat, pool))
    assert resumed.config == pool_config(5, 20) and resumed.iteration == 11
    resumed.iterate(19)
    assert np.array_equal(resumed.regrets, straight.regrets)
    assert np.array_equal(resumed.strategy_sum, straight.strategy_sum)
    future = rewrite_checkpoint_header(path, tmp_path / "v9.npz", version=9)
    with pytest.raises(CheckpointError, match="version 9"):
        Solver.load_checkpoint(future, PoolGame(flat, pool))


def test_sampled_values_are_unbiased() -> None:
    flat = small_flat((169, 2, 2, 2))
    pool = synthetic_pool(12, (169, 2, 2, 2), seed=8)
    want = exact_value(flat, pool)
    size = flat.table_size
    depth = flat.max_depth + 2
    width = int(flat.num_actions.max())
    state = rng.seed_state(1)
    pick = np.random.default_rng(2)
    g = PoolGame(flat, pool).kernel_args()
    samples = []
    for _ in range(4000):
        deal = int(pick.integers(pool.size))
        samples.append(es_pass(
            g, deal, 0, 1.0, np.zeros(size), np.zeros(size), NO_FROZEN, NO_VALUES, state,
            np.zeros((depth, width)),
            np.zeros((depth, width)), np.zeros(depth), np.zeros(depth, np.int64),
            np.zeros(depth, np.int64)))
    values = np.asarray(samples)
    se = values.std(ddof=1) / np.sqrt(len(values))
    assert abs(values.mean() - want) < 4.5 * se, (values.mean(), want, se)


def test_flat_tree_payoffs() -> None:
    flat = small_flat()
    tree = flat.tree
    seen_fold = seen_showdown = False
    for node in tree.nodes:
        if not node.is_terminal:
            assert flat.player[node.id] == node.player
            assert flat.offset[node.id] >= 0
            continue
        state = node.state
        assert flat.num_actions[node.id] == 0 and flat.offset[node.id] == -1
        win, lose, tie = flat.term_value[node.id]
        if any(state.folded):
            seen_fold = True
            assert win == lose == tie
            folder = state.folded.index(True)
            assert win == (-state.spent[0] if folder == 0 else state.spent[1])
        else:
            seen_showdown = True
            assert (win, lose, tie) == (state.spent[1], -state.spent[0], 0.0)
    assert seen_fold and seen_showdown


def test_recipe_betting_tree_size() -> None:
    tree = build_tree(load_game(GAME), parse_betting_abstraction(HOLDEM_BETTING))
    assert len(tree.decision_nodes) == 13_464
    actions = {a.fraction for n in tree.decision_nodes for a in n.actions}
    assert {-2.0, 0.0, 0.5, 1.0, -1.0} <= actions  # fold, call, half pot, pot, all-in


# --------------------------------------------------------------------------- the pool


@pytest.fixture(scope="module")
def cards() -> HoldemCards:
    return HoldemCards.build((169, 6, 5, 4), samples=400, seed=2)


def test_pool_buckets_are_the_agents(cards: HoldemCards, tmp_path: Path) -> None:
    pool = H.build_pool(cards, 40, seed=11, workers=1)
    again = H.build_pool(cards, 40, seed=11, workers=3)
    assert np.array_equal(pool.buckets, again.buckets)
    assert np.array_equal(pool.result, again.result)
    for i in range(pool.size):
        dealt = deal_cards(11, i)
        assert len(set(dealt)) == 9
        holes, board = (dealt[0:2], dealt[2:4]), dealt[4:9]
        for p in range(2):
            for r, n in enumerate((0, 3, 4, 5)):
                assert pool.buckets[i, p, r] == cards.bucket(r, list(holes[p]), list(board[:n]))
        v0, v1 = evaluate([*holes[0], *board]), evaluate([*holes[1], *board])
        assert pool.result[i] == (WIN0 if v0 > v1 else WIN1 if v1 > v0 else TIE)
    path = H.save_pool(pool, tmp_path / "p.npz")
    loaded = H.load_pool(path, cards, 40, 11)
    assert loaded is not None and np.array_equal(loaded.buckets, pool.buckets)
    assert H.load_pool(path, cards, 40, 12) is None  # another seed: not this pool
    cached = H.cached_pool(cards, 40, seed=11, directory=tmp_path)
    assert (tmp_path / f"holdem-pool-{pool.key}.npz").exists()
    assert np.array_equal(cached.result, pool.result)


class _SlowBucketer:
    """A generic pool abstraction: ``cards``' buckets one deal at a time, a binary table in
    its spec (as a table-backed abstraction has)."""

    def __init__(self, cards: HoldemCards, blob: bytes) -> None:
        self.cards, self.blob = cards, blob

    @property
    def buckets(self) -> tuple[int, ...]:
        return self.cards.buckets

    @property
    def spec(self) -> dict[str, Any]:
        return {**self.cards.spec, "kind": "slow", "table": self.blob}

    def bucket_deals(self, holes: Any, boards: Any) -> Any:
        out = np.zeros((len(holes), 4), dtype=np.uint16)
        for i, (hole, board) in enumerate(zip(holes.tolist(), boards.tolist(), strict=True)):
            for r, n in enumerate((0, 3, 4, 5)):
                out[i, r] = self.cards.bucket(r, hole, board[:n])
        return out


def test_generic_pool_path_draws_the_same_deals(cards: HoldemCards, tmp_path: Path) -> None:
    kernel_pool = H.build_pool(cards, 30, seed=5)
    slow = _SlowBucketer(cards, b"\x00\x01")
    pool = H.build_pool(slow, 30, seed=5, workers=2)
    assert np.array_equal(pool.buckets, kernel_pool.buckets)
    assert np.array_equal(pool.result, kernel_pool.result)
    # binary tables are keyed by their hash: another table is another pool
    other = _SlowBucketer(cards, b"\x00\x02")
    assert H.pool_key(slow, 30, 5) == pool.key != H.pool_key(other, 30, 5)
    cached = H.cached_pool(slow, 30, seed=5, directory=tmp_path)
    assert (tmp_path / f"holdem-pool-{pool.key}.npz").exists()
    assert H.load_pool(tmp_path / f"holdem-pool-{pool.key}.npz", other, 30, 5) is None
    assert np.array_equal(cached.buckets, pool.buckets)


def test_solved_file_loads_and_plays_legal_actions(cards: HoldemCards, tmp_path: Path) -> None:
    game = load_game(GAME)
    betting = parse_betting_abstraction(SMALL_BETTING)
    tree = build_tree(game, betting)
    flat = flatten_tree(tree, cards.buckets)
    pool = H.build_pool(cards, 300, seed=1)
    solver = Solver(PoolGame(flat, pool), pool_config(100, 1000), seed=1)
    solver.iterate(2000)
    path = dump_strategy(tmp_path / "h.strat", game, betting, cards.spec,
                         solver.average_strategy(), dtype="uint16", tree=tree,
                         meta={"solver": POOL_SOLVER, "iterations": solver.iteration})
    loaded = load_for_game(path, game)
    assert loaded.cards.buckets == cards.buckets
    policies = [StrategyPolicy(loaded, get_mapping("rand-pshar"), parse_purification("none"),
                               seed=p) for p in range(2)]
    _play(policies, game, hands=30)


def _play(policies: list[StrategyPolicy], game: Any, hands: int) -> None:
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
            state = state.apply(action)  # raises if the policy's action were illegal
    assert sum(pol.stats.decisions for pol in policies) > 0


# --------------------------------------------------------------------------- bundled file

RECIPE = get_recipe("holdem.nolimit.2p")
BUILT = RECIPE.bundled_path.exists()


@pytest.mark.skipif(not BUILT, reason="the hold'em file is not built")
def test_bundled_holdem_file_matches_its_manifest_entry() -> None:
    entry = load_manifest()["files"][RECIPE.name]
    path = RECIPE.bundled_path
    strategy = load_strategy(path, RECIPE.load_game())
    assert strategy.checksum == entry["checksum"]
    assert path.stat().st_size == entry["bytes"] <= 50_000_000
    assert strategy.meta["iterations"] == entry["iterations"] == RECIPE.iterations
    assert strategy.cards == entry["cards"] and strategy.cards["kind"] == "holdem"
    assert strategy.cards["buckets"] == list(RECIPE.buckets)
    assert strategy.betting == RECIPE.betting_abstraction()
    assert strategy.default_purification == entry["default_purification"] == "full"
    matches = entry["matches"]
    for opponent in ("builtin:call", "builtin:equity"):
        m = matches[opponent]
        assert m["hands_per_seat"] >= 20_000
        assert m["mbb_per_hand"] - m["ci95"] > 0  # a significant win


@pytest.mark.skipif(not BUILT, reason="the hold'em file is not built")
def test_bundled_holdem_file_plays_through_the_strategy_policy() -> None:
    game = RECIPE.load_game()
    loaded = load_for_game(RECIPE.bundled_path, game)
    policies = [StrategyPolicy(loaded, get_mapping("rand-pshar"), parse_purification("none"),
                               seed=p) for p in range(2)]
    _play(policies, game, hands=20)


PA_BUNDLED = [r for r in RECIPES.values() if r.cards == "holdem-pa" and r.bundled]
"""Every bundled potential-aware hold'em file's recipe."""


@pytest.mark.parametrize("recipe", PA_BUNDLED, ids=lambda r: r.name)
def test_bundled_potential_aware_file_matches_its_manifest_entry(recipe: Recipe) -> None:
    from strategies.solvers.recipe import manifest_cards

    entry = load_manifest()["files"][recipe.name]
    path = recipe.bundled_path
    strategy = load_strategy(path, recipe.load_game())
    assert strategy.checksum == entry["checksum"]
    assert path.stat().st_size == entry["bytes"] <= 50_000_000
    assert strategy.meta["iterations"] == entry["iterations"] == recipe.iterations
    assert strategy.cards["kind"] == "holdem-pa" and strategy.cards["recall"] == recipe.recall
    assert strategy.cards["clusters"] == list(recipe.buckets)
    assert manifest_cards(strategy.cards) == entry["cards"]
    assert "zlib_b64" not in json.dumps(entry["cards"])  # the manifest keeps tables' sha256
    assert strategy.betting == recipe.betting_abstraction()
    assert strategy.default_purification == entry["default_purification"] == "full"


@pytest.mark.parametrize("recipe", PA_BUNDLED, ids=lambda r: r.name)
def test_bundled_potential_aware_file_plays_through_the_strategy_policy(recipe: Recipe) -> None:
    game = recipe.load_game()
    loaded = load_for_game(recipe.bundled_path, game)
    policies = [StrategyPolicy(loaded, get_mapping(m), parse_purification(p), seed=i)
                for i, (m, p) in enumerate((("rand-pshar", "full"), ("det-arith", "none")))]
    _play(policies, game, hands=20)


# --------------------------------------------------------------------------- no-JIT run


@pytest.mark.skipif(NO_JIT, reason="already running without the JIT")
def test_kernels_as_plain_python() -> None:
    """The ``small`` tests of this file with NUMBA_DISABLE_JIT=1."""
    run_without_jit(__file__)

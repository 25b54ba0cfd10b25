"""The abstract game builder and the CFR solvers, against slow pure-Python oracles.

* The builder (:mod:`strategies.games.abstract`): deals, buckets and every terminal's payoff for
  every deal equal a direct computation (``BettingState.payoffs`` with ``rank_hand_fast``,
  ``LosslessCards.bucket``); the arrays describe the canonical tree and table layout.
* Solver kernels equal the oracles below (written over the ``BettingTree`` with dicts and
  Python floats, per deal, recursively) to 1e-12 after the same iterations: every flag
  combination on 2- and 3-player Kuhn, the named variants on limit and no-limit Leduc;
  external-sampling MCCFR, chance-sampled CFR and Pure CFR with the same MRG32k3a stream
  (:mod:`strategies.solvers.rng`); Pure CFR's regrets and counts stay integers.
* Convergence: every variant on Kuhn, the sampled ones on Leduc (exploitability bounds).
* Known values: 2-player Kuhn -1/18, limit Leduc -0.0856 for the first player.
* Checkpoints: resuming is bitwise the same as not stopping; corrupt or foreign files raise
  :class:`~strategies.solvers.cfr.CheckpointError`.
* Tests whose names contain ``small`` (here and in ``test_best_response.py``) run again in a
  subprocess with ``NUMBA_DISABLE_JIT=1``, checking the kernels' plain-Python semantics.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.actions import PRESETS
from agent.acpc.cards import deck_for
from agent.acpc.gamedef import Game
from strategies.games.abstract import build_abstract_game
from strategies.measure.best_response import exploitability
from strategies.solvers import rng
from strategies.solvers.cfr import (
    VARIANTS,
    CFRPlusSolver,
    CFRSolver,
    ChanceSampledSolver,
    CheckpointError,
    DCFRSolver,
    ExternalSamplingSolver,
    LinearCFRSolver,
    PureCFRSolver,
    Solver,
    SolverConfig,
)
from tests.support import NO_JIT, rewrite_checkpoint_header, run_without_jit
from tests.support.cfr_oracle import Oracle, abstract, kuhn2, make_oracle

TOL = 1e-12


def oracle_matching(values: list[float]) -> list[float]:
    total = 0.0
    for r in values:
        if r > 0.0:
            total += r
    if total > 0.0:
        return [r / total if r > 0.0 else 0.0 for r in values]
    return [1.0 / len(values)] * len(values)


def oracle_current(o: Oracle, regrets: list[float]) -> list[float]:
    current = [0.0] * len(regrets)
    for nd in o.tree.decision_nodes:
        k = len(nd.actions)
        for b in range(int(o.layout.rows[nd.id])):
            start = int(o.layout.offsets[nd.id]) + b * k
            current[start : start + k] = oracle_matching(regrets[start : start + k])
    return current


def oracle_post_update(o: Oracle, regrets: list[float], player: int | None, t: int,
                       c: SolverConfig) -> None:
    ta, tb = float(t) ** c.alpha, float(t) ** c.beta
    pos, neg = ta / (ta + 1.0), tb / (tb + 1.0)
    for i in o.player_rows(player):
        r = regrets[i]
        if c.discount:
            r = r * pos if r > 0.0 else r * neg
        if c.regret_plus and r < 0.0:
            r = 0.0
        regrets[i] = r


def oracle_walk(o: Oracle, node: int, deal: int, reach: list[float], update: int | None,
                weight: float, current: list[float], regrets: list[float],
                sums: list[float]) -> list[float]:
    """Vanilla CFR on one deal below ``node``: the players' expected payoffs."""
    nd = o.tree.nodes[node]
    if nd.is_terminal:
        return list(o.payoff(node, deal))
    if all(r == 0.0 for r in reach):
        return [0.0] * o.n
    p = nd.player
    row = o.row(node, deal)
    values = [0.0] * o.n
    child_values = []
    for a, child in enumerate(nd.children):
        child_reach = list(reach)
        child_reach[p] *= current[row + a]
        cv = oracle_walk(o, child, deal, child_reach, update, weight, current, regrets, sums)
        child_values.append(cv)
        for q in range(o.n):
            values[q] += current[row + a] * cv[q]
    if update is None or update == p:
        cf = o.probs[deal]
        for q in range(o.n):
            if q != p:
                cf *= reach[q]
        for a in range(len(nd.children)):
            regrets[row + a] += cf * (child_values[a][p] - values[p])
            sums[row + a] += weight * reach[p] * current[row + a]
    return values


def oracle_cfr(o: Oracle, c: SolverConfig, iterations: int) -> tuple[list[float], list[float]]:
    regrets = [0.0] * o.layout.total
    sums = [0.0] * o.layout.total
    for t in range(1, iterations + 1):
        weight = float(t) ** c.gamma
        for update in (list(range(o.n)) if c.alternating else [None]):
            current = oracle_current(o, regrets)
            for deal in range(len(o.deals)):
                oracle_walk(o, 0, deal, [1.0] * o.n, update, weight, current, regrets, sums)
            oracle_post_update(o, regrets, update, t, c)
    return regrets, sums


def oracle_es_walk(o: Oracle, node: int, deal: int, traverser: int, weight: float,
                   regrets: list[float], sums: list[float], state: list[int]) -> float:
    """External-sampling MCCFR below ``node`` (recursive, Python floats and integers)."""
    nd = o.tree.nodes[node]
    if nd.is_terminal:
        return o.payoff(node, deal)[traverser]
    k = len(nd.actions)
    row = o.row(node, deal)
    sigma = oracle_matching(regrets[row : row + k])
    if nd.player == traverser:
        utils = [oracle_es_walk(o, c, deal, traverser, weight, regrets, sums, state)
                 for c in nd.children]
        v = 0.0
        for a in range(k):
            v += sigma[a] * utils[a]
        for a in range(k):
            regrets[row + a] += utils[a] - v
        return v
    for a in range(k):
        sums[row + a] += weight * sigma[a]
    u = rng.uniform_py(state)
    choice, acc = k - 1, 0.0
    for a in range(k):
        acc += sigma[a]
        if u < acc:
            choice = a
            break
    return oracle_es_walk(o, nd.children[choice], deal, traverser, weight, regrets, sums, state)


def oracle_es(o: Oracle, c: SolverConfig, iterations: int,
              seed: int) -> tuple[list[float], list[float], list[int]]:
    regrets = [0.0] * o.layout.total
    sums = [0.0] * o.layout.total
    state = [int(x) for x in rng.seed_state(seed)]
    cumulative, acc = [], 0.0
    for p in o.probs:
        acc += p
        cumulative.append(acc)
    cumulative[-1] = 1.0
    for t in range(1, iterations + 1):
        weight = float(t) ** c.gamma
        for traverser in range(o.n):
            u = rng.uniform_py(state)
            deal = next((i for i, x in enumerate(cumulative) if u < x), len(cumulative) - 1)
            oracle_es_walk(o, 0, deal, traverser, weight, regrets, sums, state)
            oracle_post_update(o, regrets, traverser, t, c)
    return regrets, sums, state


def oracle_draw(cumulative: list[float], state: list[int]) -> int:
    u = rng.uniform_py(state)
    return next((i for i, x in enumerate(cumulative) if u < x), len(cumulative) - 1)


def oracle_cumulative(o: Oracle) -> list[float]:
    cumulative, acc = [], 0.0
    for p in o.probs:
        acc += p
        cumulative.append(acc)
    cumulative[-1] = 1.0
    return cumulative


def oracle_cs(o: Oracle, c: SolverConfig, iterations: int,
              seed: int) -> tuple[list[float], list[float], list[int]]:
    """Chance-sampled CFR: vanilla CFR (:func:`oracle_walk`) on one drawn deal per pass, with
    that deal's chance weight 1 (the game with every probability replaced by 1)."""
    ones = dataclasses.replace(o, probs=[1.0] * len(o.deals), _payoff={})
    regrets = [0.0] * o.layout.total
    sums = [0.0] * o.layout.total
    state = [int(x) for x in rng.seed_state(seed)]
    cumulative = oracle_cumulative(o)
    for t in range(1, iterations + 1):
        weight = float(t) ** c.gamma
        for update in (list(range(o.n)) if c.alternating else [None]):
            deal = oracle_draw(cumulative, state)
            current = oracle_current(o, regrets)
            oracle_walk(ones, 0, deal, [1.0] * o.n, update, weight, current, regrets, sums)
            oracle_post_update(o, regrets, update, t, c)
    return regrets, sums, state


def oracle_pure_walk(o: Oracle, node: int, deal: int, traverser: int, weight: float,
                     regrets: list[float], sums: list[float], state: list[int]) -> float:
    """Pure CFR below ``node``: every row entered samples its action on entry."""
    nd = o.tree.nodes[node]
    if nd.is_terminal:
        return o.payoff(node, deal)[traverser]
    k = len(nd.actions)
    row = o.row(node, deal)
    sigma = oracle_matching(regrets[row : row + k])
    u = rng.uniform_py(state)
    choice, acc = k - 1, 0.0
    for a in range(k):
        acc += sigma[a]
        if u < acc:
            choice = a
            break
    if nd.player != traverser:
        sums[row + choice] += weight
        return oracle_pure_walk(o, nd.children[choice], deal, traverser, weight, regrets,
                                sums, state)
    utils = [oracle_pure_walk(o, ch, deal, traverser, weight, regrets, sums, state)
             for ch in nd.children]
    for a in range(k):
        regrets[row + a] += utils[a] - utils[choice]
    return utils[choice]


def oracle_pure(o: Oracle, c: SolverConfig, iterations: int,
                seed: int) -> tuple[list[float], list[float], list[int]]:
    regrets = [0.0] * o.layout.total
    sums = [0.0] * o.layout.total
    state = [int(x) for x in rng.seed_state(seed)]
    cumulative = oracle_cumulative(o)
    for t in range(1, iterations + 1):
        weight = float(t) ** c.gamma
        for traverser in range(o.n):
            deal = oracle_draw(cumulative, state)
            oracle_pure_walk(o, 0, deal, traverser, weight, regrets, sums, state)
            oracle_post_update(o, regrets, traverser, t, c)
    return regrets, sums, state


SAMPLED_ORACLES = {"external": oracle_es, "chance": oracle_cs, "pure": oracle_pure}


def assert_solver_equals_oracle(name: str, config: SolverConfig, iterations: int,
                                betting: str = "fcpa", seed: int = 3) -> None:
    g = abstract(name, betting)
    o = make_oracle(g.game, betting)
    solver = Solver(g, config, seed=seed)
    solver.iterate(iterations)
    if config.sampling == "full":
        regrets, sums = oracle_cfr(o, config, iterations)
    else:
        regrets, sums, state = SAMPLED_ORACLES[config.sampling](o, config, iterations, seed)
        assert [int(x) for x in solver.rng_state] == state
    np.testing.assert_allclose(solver.regrets, regrets, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(solver.strategy_sum, sums, rtol=TOL, atol=TOL)
    assert solver.iteration == iterations


# --------------------------------------------------------------------------- builder


@pytest.mark.parametrize("name,betting", [
    ("kuhn2", "fcpa"), ("kuhn.limit.3p.game", "fcpa"), ("leduc.limit.2p.game", "fcpa"),
    ("leduc.nolimit.2p.game", "fchpa"),
])
def test_builder_equals_direct_computation(name: str, betting: str) -> None:
    g = abstract(name, betting)
    o = make_oracle(g.game, betting)
    assert g.num_deals == len(o.deals)
    assert abs(g.deal_prob.sum() - 1.0) < 1e-12
    for d, (holes, board) in enumerate(o.deals):
        assert g.deal_groups(d) == (holes, board)
        for p in range(g.num_players):
            for r in range(g.game.num_rounds):
                assert g.deal_bucket[d, p, r] == o.bucket(d, p, r)
    tree = o.tree
    assert g.num_nodes == len(tree.nodes)
    np.testing.assert_array_equal(g.offset, o.layout.offsets)
    for nd in tree.nodes:
        first = g.child_start[nd.id]
        assert tuple(g.children[first : first + len(nd.children)]) == nd.children
        if nd.is_terminal:
            t = g.terminal[nd.id]
            assert t >= 0 and g.player[nd.id] == -1
            s = g.term_set[t]
            for d in range(g.num_deals):
                pattern = 0 if s < 0 else g.deal_pattern[d, s]
                assert tuple(g.term_payoff[t, pattern]) == o.payoff(nd.id, d)
        else:
            assert g.player[nd.id] == nd.player and g.num_actions[nd.id] == len(nd.actions)
            assert g.round[nd.id] == nd.round and g.terminal[nd.id] == -1
    assert np.abs(g.term_payoff.sum(axis=2)).max() < 1e-12  # zero-sum


def test_builder_sizes_and_limits(nl2: Game) -> None:
    k2, k3, leduc = abstract("kuhn2"), abstract("kuhn.limit.3p.game"), abstract(
        "leduc.limit.2p.game")
    assert (k2.num_deals, k3.num_deals, leduc.num_deals) == (6, 24, 120)
    assert (k2.num_nodes, k3.num_nodes, leduc.num_nodes) == (9, 25, 85)
    assert leduc.layout.buckets == (3, 15) and leduc.num_infosets == 468
    assert k3.showdown_sets == ((0, 1, 2), (1, 2), (0, 2), (0, 1))
    assert k3.describe_bucket(0, 3) == "As" and leduc.describe_bucket(1, 0) == "Qh | Qs"
    with pytest.raises(ValueError, match="deals to enumerate"):
        build_abstract_game(nl2, PRESETS["fcpa3"])  # before any card or tree work


def test_kuhn2_game_file_is_the_reference_kuhn() -> None:
    game = kuhn2()
    deck = deck_for(game)  # Q K A of spades stand for J Q K
    assert [c % 4 for c in deck] == [3, 3, 3] and [c // 4 for c in deck] == [10, 11, 12]
    assert game.first_player == (0,) and game.blind == (1, 1) and game.raise_size == (1,)
    assert game.max_raises == (1,) and game.num_players == 2


# --------------------------------------------------------------------------- rng


def test_small_rng_matches_published_values_and_python_twin() -> None:
    state = np.full(6, 12345, dtype=np.int64)
    first = [rng.uniform(state) for _ in range(5)]
    # L'Ecuyer's RngStreams: the first draws from the default seed (12345 in every word).
    assert first == [0.12701112204657714, 0.3185275653967945, 0.3091860155832701,
                     0.8258468629271136, 0.2216299157820229]
    kernel = rng.seed_state(99)
    twin = [int(x) for x in kernel]
    for _ in range(2000):
        assert rng.uniform(kernel) == rng.uniform_py(twin)
    assert [int(x) for x in kernel] == twin
    for bad in ([0, 0, 0, 1, 1, 1], [1, 2, 3], [rng.M1, 1, 1, 1, 1, 1]):
        with pytest.raises(ValueError):
            rng.check_state(np.array(bad))


# --------------------------------------------------------------------------- kernels = oracle

SMALL_CASES = [(name, v) for name in ("kuhn2", "kuhn.limit.3p.game") for v in VARIANTS]


@pytest.mark.parametrize("name,variant", SMALL_CASES)
def test_small_named_variants_equal_oracle(name: str, variant: str) -> None:
    iterations = 6 if VARIANTS[variant].sampling == "full" else 60
    assert_solver_equals_oracle(name, VARIANTS[variant], iterations)


FLAG_GRID = [
    SolverConfig("grid", alternating=alt, regret_plus=plus, discount=disc, alpha=1.5, beta=0.5,
                 gamma=gamma)
    for alt, plus, disc, gamma in itertools.product((True, False), (False, True),
                                                    (False, True), (0.0, 1.0, 2.0))
] + [
    SolverConfig(f"grid-{sampling}", sampling=sampling, regret_plus=plus, discount=disc,
                 alpha=1.0, beta=0.0, gamma=gamma)
    for sampling, plus, disc, gamma in itertools.product(
        ("external", "chance", "pure"), (False, True), (False, True), (0.0, 1.0, 2.0))
] + [
    SolverConfig("grid-chance-sim", sampling="chance", alternating=False, regret_plus=plus,
                 gamma=gamma)
    for plus, gamma in itertools.product((False, True), (0.0, 1.0))
]


@pytest.mark.skipif(NO_JIT, reason="the whole grid is for the compiled kernels")
@pytest.mark.parametrize("name", ["kuhn2", "kuhn.limit.3p.game"])
@pytest.mark.parametrize("config", FLAG_GRID, ids=lambda c: (
    f"{c.sampling}-alt{int(c.alternating)}-plus{int(c.regret_plus)}-disc{int(c.discount)}"
    f"-g{c.gamma:g}"))
def test_every_flag_combination_equals_oracle(name: str, config: SolverConfig) -> None:
    assert_solver_equals_oracle(name, config, 12 if config.sampling == "full" else 150)


@pytest.mark.skipif(NO_JIT, reason="Leduc is slow without the JIT")
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_named_variants_equal_oracle_on_leduc(variant: str) -> None:
    iterations = 2 if VARIANTS[variant].sampling == "full" else 40
    assert_solver_equals_oracle("leduc.limit.2p.game", VARIANTS[variant], iterations)


@pytest.mark.skipif(NO_JIT, reason="Leduc is slow without the JIT")
@pytest.mark.parametrize("config", [
    SolverConfig("simultaneous-cfr+", alternating=False, regret_plus=True, gamma=1.0),
    VARIANTS["mccfr-es"],
], ids=["simultaneous-cfr+", "mccfr-es"])
def test_nolimit_leduc_equals_oracle(config: SolverConfig) -> None:
    iterations = 40 if config.sampling == "external" else 1
    assert_solver_equals_oracle("leduc.nolimit.2p.game", config, iterations)


# --------------------------------------------------------------------------- known values


def test_small_kuhn_value_is_minus_one_eighteenth() -> None:
    g = abstract("kuhn2")
    solver = CFRPlusSolver(g)
    solver.iterate(300 if NO_JIT else 3000)
    result = exploitability(g, solver.average_strategy())
    assert abs(result.values[0] + 1 / 18) < 1e-3
    assert result.values[0] + result.values[1] == pytest.approx(0.0, abs=1e-12)
    assert result.exploitability < 1e-3


@pytest.mark.skipif(NO_JIT, reason="slow without the JIT")
@pytest.mark.parametrize("cls,iterations,bound", [
    (CFRSolver, 4000, 3e-3), (CFRPlusSolver, 2000, 1e-3), (LinearCFRSolver, 2000, 3e-3),
    (DCFRSolver, 2000, 1e-3), (ExternalSamplingSolver, 200_000, 2e-2),
    (ChanceSampledSolver, 200_000, 5e-3), (PureCFRSolver, 200_000, 5e-3),
])
def test_every_variant_converges_on_kuhn(cls: type[Solver], iterations: int,
                                         bound: float) -> None:
    g = abstract("kuhn2")
    solver = cls(g, seed=5)
    solver.iterate(iterations)
    result = exploitability(g, solver.average_strategy())
    assert result.exploitability < bound
    assert abs(result.values[0] + 1 / 18) < 1e-2


@pytest.mark.skipif(NO_JIT, reason="slow without the JIT")
@pytest.mark.parametrize("variant", ["cfr-cs", "pure-cfr"])
def test_sampled_variants_converge_on_leduc(variant: str) -> None:
    g = abstract("leduc.limit.2p.game")
    solver = Solver(g, variant, seed=2)
    solver.iterate(20_000)
    first = exploitability(g, solver.average_strategy()).exploitability
    solver.iterate(400_000)
    result = exploitability(g, solver.average_strategy())
    assert result.exploitability < 0.03 and result.exploitability < first / 2
    assert abs(result.values[0] - (-0.0856)) < 0.01


def test_small_pure_cfr_regrets_and_counts_are_integers() -> None:
    g = abstract("leduc.limit.2p.game")
    solver = PureCFRSolver(g, seed=4)
    solver.iterate(300)
    assert np.array_equal(solver.regrets, np.round(solver.regrets))
    assert np.array_equal(solver.strategy_sum, np.round(solver.strategy_sum))
    assert solver.strategy_sum.sum() > 0 and np.abs(solver.regrets).max() > 0


@pytest.mark.skipif(NO_JIT, reason="slow without the JIT")
def test_leduc_value_and_exploitability() -> None:
    g = abstract("leduc.limit.2p.game")
    solver = CFRPlusSolver(g)
    solver.iterate(2000)
    result = exploitability(g, solver.average_strategy())
    assert result.exploitability <= 1e-3
    assert abs(result.values[0] - (-0.0856)) < 1e-3


@pytest.mark.skipif(NO_JIT, reason="slow without the JIT")
def test_three_player_kuhn_nash_conv_is_low() -> None:
    g = abstract("kuhn.limit.3p.game")
    solver = DCFRSolver(g)
    solver.iterate(3000)
    result = exploitability(g, solver.average_strategy())
    assert result.headline[0] == "nash_conv" and result.headline[1] < 1e-3
    assert sum(result.values) == pytest.approx(0.0, abs=1e-12)


def test_small_average_strategy_rows_and_current_strategy() -> None:
    g = abstract("kuhn.limit.3p.game")
    solver = Solver(g, "cfr")
    uniform = solver.average_strategy()  # nothing accumulated yet: uniform rows
    assert np.allclose(uniform, 0.5)
    solver.iterate(5)
    for table in (solver.average_strategy(), solver.current_strategy()):
        for node in np.flatnonzero(g.offset >= 0):
            k = int(g.num_actions[node])
            block = table[g.offset[node] : g.offset[node] + g.rows[node] * k].reshape(-1, k)
            assert np.allclose(block.sum(axis=1), 1.0) and (block >= 0).all()


# --------------------------------------------------------------------------- API and checkpoints


def test_config_validation_and_names() -> None:
    with pytest.raises(ValueError, match="always alternates"):
        SolverConfig(sampling="external", alternating=False)
    with pytest.raises(ValueError, match="always alternates"):
        SolverConfig(sampling="pure", alternating=False)
    with pytest.raises(ValueError, match="sampling"):
        SolverConfig(sampling="outcome")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="gamma"):
        SolverConfig(gamma=-1.0)
    with pytest.raises(ValueError, match="expected a solver"):
        Solver(abstract("kuhn2"), "cfr++")
    with pytest.raises(ValueError, match="keys"):
        SolverConfig.from_json({"name": "x", "bogus": 1})
    for config in VARIANTS.values():
        assert SolverConfig.from_json(config.to_json()) == config
    with pytest.raises(ValueError, match="non-negative"):
        Solver(abstract("kuhn2")).iterate(-1)


@pytest.mark.parametrize("variant", ["cfr+", "mccfr-es", "cfr-cs", "pure-cfr"])
def test_small_resume_is_the_same_as_not_stopping(tmp_path: Path, variant: str) -> None:
    g = abstract("kuhn.limit.3p.game")
    straight = Solver(g, variant, seed=11)
    straight.iterate(30)
    first = Solver(g, variant, seed=11)
    first.iterate(12)
    path = first.save_checkpoint(tmp_path / "run.ckpt.npz", {"recipe": "test"})
    resumed = Solver.load_checkpoint(path, g)
    assert resumed.iteration == 12 and resumed.config == straight.config
    resumed.iterate(18)
    np.testing.assert_array_equal(resumed.regrets, straight.regrets)
    np.testing.assert_array_equal(resumed.strategy_sum, straight.strategy_sum)
    np.testing.assert_array_equal(resumed.rng_state, straight.rng_state)


def test_small_version_1_checkpoints_still_load(tmp_path: Path) -> None:
    """Checkpoints written before the pool games joined this solver (version 1: no
    ``value_sum``) resume exactly."""
    g = abstract("kuhn.limit.3p.game")
    straight = Solver(g, "mccfr-es", seed=5)
    straight.iterate(20)
    first = Solver(g, "mccfr-es", seed=5)
    first.iterate(8)
    path = first.save_checkpoint(tmp_path / "new.npz")
    old = rewrite_checkpoint_header(path, tmp_path / "v1.npz", version=1, value_sum=None)
    resumed = Solver.load_checkpoint(old, g)
    assert resumed.iteration == 8 and resumed.value_sum == 0.0
    resumed.iterate(12)
    np.testing.assert_array_equal(resumed.regrets, straight.regrets)
    np.testing.assert_array_equal(resumed.strategy_sum, straight.strategy_sum)


def test_bad_checkpoints_raise_checkpoint_error(tmp_path: Path) -> None:
    g = abstract("kuhn.limit.3p.game")
    solver = Solver(g, "cfr")
    solver.iterate(2)
    path = solver.save_checkpoint(tmp_path / "a.npz")
    with pytest.raises(CheckpointError, match="another game"):
        Solver.load_checkpoint(path, abstract("kuhn2"))
    truncated = tmp_path / "t.npz"
    truncated.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="cannot read"):
        Solver.load_checkpoint(truncated, g)
    with pytest.raises(CheckpointError, match="cannot read"):
        Solver.load_checkpoint(tmp_path / "missing.npz", g)
    np.savez(tmp_path / "b.npz", regrets=np.zeros(3))
    with pytest.raises(CheckpointError, match="missing 'header'"):
        Solver.load_checkpoint(tmp_path / "b.npz", g)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["regrets"] = np.zeros(5)
    np.savez(tmp_path / "c.npz", **arrays)
    with pytest.raises(CheckpointError, match="float64 values"):
        Solver.load_checkpoint(tmp_path / "c.npz", g)
    arrays["regrets"] = np.zeros(g.table_size, dtype=object)
    np.savez(tmp_path / "d.npz", **arrays)  # an object array needs pickle: refused
    with pytest.raises(CheckpointError):
        Solver.load_checkpoint(tmp_path / "d.npz", g)
    assert isinstance(CheckpointError("x"), ValueError)


# --------------------------------------------------------------------------- no-JIT run


@pytest.mark.skipif(NO_JIT, reason="already running without the JIT")
def test_kernels_as_plain_python() -> None:
    """The ``small`` tests of this file and test_best_response.py with NUMBA_DISABLE_JIT=1."""
    run_without_jit(__file__)  # and test_best_response.py's small tests

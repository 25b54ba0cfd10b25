"""The excessive gap technique (strategies.solvers.egt, its kernels in
strategies.solvers.kernels).

* The kernels against slow pure-Python oracles on Kuhn and Leduc: the dilated-entropy prox
  mapping (the oracle recurses over the treeplex; its maximum is also checked against the
  objective evaluated directly at the maximiser and at random other strategies), the best
  response and ``A y``, and one excessive gap step.
* The theorem the method rests on: while the excessive gap condition holds, the NashConv of
  the iterates is at most ``mu_x D_x + mu_y D_y``; it holds after every step.
* Agreement: on Kuhn, Leduc and 100-card Kuhn, EGT's NashConv from the sequence form equals
  the exact best response's; its exploitability is below the stated tolerance; its value is
  within its NashConv of the LP's value and agrees with CFR+'s within both solvers' NashConv.
* Checkpoints resume to the same iterates; the command writes a strategy file.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from agent.strategy.fileformat import load_strategy
from strategies.cli import main
from strategies.games.abstract import AbstractGame
from strategies.games.kuhn100 import build_kuhn
from strategies.measure.best_response import exploitability
from strategies.solvers.cfr import CheckpointError, Solver
from strategies.solvers.egt import EGTConfig, EGTGame, EGTSolver, Treeplex
from strategies.solvers.kernels import (
    EGT_G,
    EGT_IN,
    EGT_ROWS,
    csr_matvec,
    egt_advance,
    egt_gap_values,
    treeplex_best_response,
    treeplex_prox,
    treeplex_realise,
)
from strategies.solvers.sequence_form import solve_lp
from tests.support import NO_JIT, run_without_jit
from tests.support.cfr_oracle import abstract

F = list[float]


# --------------------------------------------------------------------------- oracles


def children(tp: Treeplex) -> dict[int, list[int]]:
    """Information sets (indices into the treeplex arrays) under each sequence."""
    below: dict[int, list[int]] = {}
    for j in range(len(tp.seq0)):
        below.setdefault(int(tp.parent[j]), []).append(j)
    return below


def oracle_prox(tp: Treeplex, g: F, mu: float, prior: F | None) -> tuple[float, F]:
    """``max <g, x> - mu d(x) + mu <grad d(c), x>`` by recursion from the empty sequence;
    the maximiser's behaviour probabilities per sequence."""
    below = children(tp)
    behaviour = [1.0] * len(g)

    def value_of_sequence(s: int) -> float:
        return g[s] + sum(value_of_infoset(j) for j in below.get(s, []))

    def value_of_infoset(j: int) -> float:
        s0, k, c = int(tp.seq0[j]), int(tp.k[j]), mu * float(tp.weight[j])
        u = [value_of_sequence(s0 + a) / c + (prior[s0 + a] if prior else 0.0)
             for a in range(k)]
        top = max(u)
        lse = top + math.log(sum(math.exp(v - top) for v in u))
        for a in range(k):
            behaviour[s0 + a] = math.exp(u[a] - lse)
        return c * lse

    return value_of_sequence(0), behaviour


def realise(tp: Treeplex, behaviour: F) -> F:
    """The realisation plan of per-sequence behaviour probabilities."""
    plan = [0.0] * len(behaviour)
    plan[0] = 1.0
    below = children(tp)
    stack = [0]
    while stack:
        s = stack.pop()
        for j in below.get(s, []):
            for a in range(int(tp.k[j])):
                plan[int(tp.seq0[j]) + a] = plan[s] * behaviour[int(tp.seq0[j]) + a]
                stack.append(int(tp.seq0[j]) + a)
    return plan


def objective(tp: Treeplex, g: F, mu: float, prior: F | None, plan: F) -> float:
    """``<g, x> - mu d(x) + mu <grad d(c), x>`` evaluated from the definitions (``<grad d(c),
    x> = sum_j w_j sum_a x_ja log c_ja`` for the dilated entropy)."""
    total = sum(gi * xi for gi, xi in zip(g, plan, strict=True))
    for j in range(len(tp.seq0)):
        s0, par, w = int(tp.seq0[j]), int(tp.parent[j]), float(tp.weight[j])
        for a in range(int(tp.k[j])):
            x = plan[s0 + a]
            if x > 0:
                total -= mu * w * x * math.log(x / plan[par])
            if prior:
                total += mu * w * x * prior[s0 + a]
    return total


def random_behaviour(tp: Treeplex, rng: np.random.Generator) -> F:
    out = [1.0] * tp.size
    for j in range(len(tp.seq0)):
        b = rng.dirichlet(np.ones(int(tp.k[j])))
        for a in range(int(tp.k[j])):
            out[int(tp.seq0[j]) + a] = float(b[a])
    return out


def oracle_step(egt: EGTGame, own: int, x: F, y: F, mu: tuple[float, float],
                tau: float) -> tuple[F, F]:
    """One excessive gap step shrinking ``own``'s smoothing (0: x, 1: y), in plain Python."""
    a = np.zeros((egt.x.size, egt.y.size))
    for i in range(egt.x.size):
        for e in range(int(egt.a.indptr[i]), int(egt.a.indptr[i + 1])):
            a[i, int(egt.a.indices[e])] = egt.a.data[e]
    tps = (egt.x, egt.y)

    def gain(player: int, other: F) -> F:  # minus the loss gradient
        return list(a @ np.array(other)) if player == 0 else list(-(a.T @ np.array(other)))

    def response(player: int, g: F, m: float, prior: F | None) -> tuple[F, F]:
        _, b = oracle_prox(tps[player], g, m, prior)
        return realise(tps[player], b), [math.log(v) for v in b]

    p, o = (x, y) if own == 0 else (y, x)
    other = 1 - own
    p1, log_p1 = response(own, gain(own, o), mu[own], None)
    ph = [(1 - tau) * u + tau * v for u, v in zip(p, p1, strict=True)]
    oh, _ = response(other, gain(other, ph), mu[other], None)
    p2, _ = response(own, [tau / (1 - tau) * v for v in gain(own, oh)], mu[own], log_p1)
    p_new = [(1 - tau) * u + tau * v for u, v in zip(p, p2, strict=True)]
    o_new = [(1 - tau) * u + tau * v for u, v in zip(o, oh, strict=True)]
    return (p_new, o_new) if own == 0 else (o_new, p_new)


# --------------------------------------------------------------------------- kernels


@pytest.mark.parametrize("name", ["kuhn2", "leduc.limit.2p.game"])
def test_small_prox_equals_oracle_and_is_the_maximum(name: str) -> None:
    egt = EGTGame(abstract(name))
    rng = np.random.default_rng(3)
    for tp in (egt.x, egt.y):
        for mu, with_prior in ((1.0, False), (0.05, True), (3.0, True)):
            g = rng.normal(0.0, 2.0, tp.size)
            prior = [math.log(v) for v in random_behaviour(tp, rng)] if with_prior else None
            logb, acc = np.empty(tp.size), np.empty(tp.size)
            value = treeplex_prox(*tp.arrays(), g, mu,
                                  np.array(prior) if prior else logb, with_prior, logb, acc)
            want, behaviour = oracle_prox(tp, list(g), mu, prior)
            assert value == pytest.approx(want, rel=1e-12, abs=1e-12)
            np.testing.assert_allclose(np.exp(logb[1:]), behaviour[1:], rtol=1e-10)
            plan = np.empty(tp.size)
            treeplex_realise(tp.seq0, tp.k, tp.parent, logb, plan)
            np.testing.assert_allclose(plan, realise(tp, behaviour), rtol=1e-10, atol=1e-15)
            assert objective(tp, list(g), mu, prior, list(plan)) == pytest.approx(value,
                                                                                  rel=1e-9)
            for _ in range(5):
                other = realise(tp, random_behaviour(tp, rng))
                assert objective(tp, list(g), mu, prior, other) <= value + 1e-9


def test_small_best_response_products_and_nash_conv() -> None:
    """``A y`` equals the dense product, and ``f(y) - phi(x)`` of random strategies equals
    the NashConv of the exact best response (strategies.measure.best_response)."""
    g = abstract("leduc.limit.2p.game")
    egt = EGTGame(g)
    rng = np.random.default_rng(7)
    x = np.array(realise(egt.x, random_behaviour(egt.x, rng)))
    y = np.array(realise(egt.y, random_behaviour(egt.y, rng)))
    dense = np.zeros((egt.x.size, egt.y.size))
    for i in range(egt.x.size):
        lo, hi = int(egt.a.indptr[i]), int(egt.a.indptr[i + 1])
        dense[i, egt.a.indices[lo:hi]] = egt.a.data[lo:hi]
    out = np.empty(egt.x.size)
    csr_matvec(*egt.a.arrays(), y, 2.0, out)
    np.testing.assert_allclose(out, 2.0 * dense @ y, rtol=1e-12, atol=1e-15)
    out = np.empty(egt.y.size)
    csr_matvec(*egt.at.arrays(), x, 1.0, out)
    np.testing.assert_allclose(out, dense.T @ x, rtol=1e-12, atol=1e-15)
    f, phi = egt.best_responses(x, y)
    result = exploitability(g, egt.table(x, y))
    assert f == pytest.approx(result.best_responses[0], abs=1e-12)
    assert -phi == pytest.approx(result.best_responses[1], abs=1e-12)
    assert float(x @ dense @ y) == pytest.approx(result.values[0], abs=1e-12)
    # the best response is the smoothed response's limit as mu -> 0
    acc = np.empty(egt.x.size)
    br = treeplex_best_response(egt.x.seq0, egt.x.k, egt.x.parent, dense @ y, acc)
    smooth = treeplex_prox(*egt.x.arrays(), dense @ y, 1e-6, acc, False, np.empty(egt.x.size),
                           acc)
    assert br == pytest.approx(f) and br <= smooth <= br + 1e-6 * egt.d_x + 1e-12


def advance_one_try(egt: EGTGame, x: F, y: F, mu: tuple[float, float],
                    tau: float) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Drive :func:`egt_advance` through one try of a step with dense products; the new
    iterates it proposes (before the excessive gap condition decides) and its requests."""
    dense = np.zeros((egt.x.size, egt.y.size))
    for i in range(egt.x.size):
        lo, hi = int(egt.a.indptr[i]), int(egt.a.indptr[i + 1])
        dense[i, egt.a.indices[lo:hi]] = egt.a.data[lo:hi]
    state = np.array([mu[0], mu[1], tau, egt.d_x, egt.d_y, 1e-14])
    counts, control = np.zeros(4, dtype=np.int64), np.zeros(3, dtype=np.int64)
    work_x, work_y = np.empty((EGT_ROWS, egt.x.size)), np.empty((EGT_ROWS, egt.y.size))
    xs, ys = np.array(x), np.array(y)
    requests = []
    while control[0] != 4:  # phase 4: the step is proposed, the condition comes next
        request = egt_advance(1, *egt.x.arrays(), *egt.y.arrays(), xs, ys, state, counts,
                              control, work_x, work_y)
        requests.append(int(request))
        if request == 0:
            work_x[EGT_G] = dense @ work_y[EGT_IN]
        else:
            work_y[EGT_G] = dense.T @ work_x[EGT_IN]
    np.testing.assert_array_equal(xs, x)  # nothing accepted yet
    return work_x[2].copy(), work_y[2].copy(), requests


@pytest.mark.parametrize("own", [0, 1])
def test_small_step_equals_oracle(own: int) -> None:
    """One step of :func:`egt_advance` shrinks the larger ``mu`` (``own``'s) as the oracle
    does, with three products, then asks for ``A y'``."""
    g = abstract("kuhn2")
    egt = EGTGame(g)
    rng = np.random.default_rng(11)
    x = realise(egt.x, random_behaviour(egt.x, rng))
    y = realise(egt.y, random_behaviour(egt.y, rng))
    mu, tau = ((0.7, 0.4) if own == 0 else (0.4, 0.7)), 0.3
    want_x, want_y = oracle_step(egt, own, x, y, mu, tau)
    xn, yn, requests = advance_one_try(egt, x, y, mu, tau)
    assert requests == [own, 1 - own, own, 0]
    np.testing.assert_allclose(xn, want_x, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(yn, want_y, rtol=1e-10, atol=1e-14)


def test_small_excessive_gap_condition_bounds_the_nash_conv() -> None:
    solver = EGTSolver(abstract("kuhn2"))
    egt = solver.egt
    previous = math.inf
    for _ in range(40):
        f, phi = egt_gap_values(*egt.kernel_args(), solver.x, solver.y, *solver.mu, egt.d_x,
                                egt.d_y)
        assert f <= phi + 1e-12
        assert 0.0 <= solver.nash_conv() <= solver.gap_bound() + 1e-12
        assert solver.gap_bound() < previous  # every accepted step shrinks a mu
        previous = solver.gap_bound()
        solver.iterate(5)
    assert solver.iteration == 200 and solver.counts[2] + solver.counts[3] == 200
    assert solver.backtracks == int(solver.counts[1]) and solver.tau < 0.5


def test_small_checkpoint_resumes_to_the_same_iterates(tmp_path: Path) -> None:
    g = abstract("kuhn2")
    straight = EGTSolver(g, EGTConfig(tau=0.4))
    straight.iterate(60)
    first = EGTSolver(g, EGTConfig(tau=0.4))
    first.iterate(25)
    path = first.save_checkpoint(tmp_path / "e.npz", {"recipe": "t"})
    resumed = EGTSolver.load_checkpoint(path, g)
    resumed.iterate(35)
    assert resumed.iteration == 60 and resumed.config == straight.config
    np.testing.assert_array_equal(resumed.x, straight.x)
    np.testing.assert_array_equal(resumed.y, straight.y)
    np.testing.assert_array_equal(resumed.counts, straight.counts)
    cfr = Solver(g, "cfr+")
    cfr.save_checkpoint(tmp_path / "c.npz")
    with pytest.raises(CheckpointError, match="expected a acpc-arena-egt-checkpoint"):
        EGTSolver.load_checkpoint(tmp_path / "c.npz", g)
    with pytest.raises(CheckpointError, match="another game"):
        EGTSolver.load_checkpoint(path, abstract("leduc.limit.2p.game"))
    with pytest.raises(CheckpointError, match="got 'acpc-arena-egt-checkpoint' version 1"):
        Solver.load_checkpoint(path, g)  # resuming EGT's checkpoint with a CFR solver
    with pytest.raises(ValueError, match=r"expected 0 < tau < 1, got 1\.5"):
        EGTConfig(tau=1.5)


# --------------------------------------------------------------------------- agreement


def agreement(game: AbstractGame, egt_iterations: int, cfr_iterations: int,
              tolerance: float) -> None:
    """EGT's exploitability is below ``tolerance`` and its NashConv is the exact best
    response's; its value is within its NashConv of the LP's, and within both NashConvs of
    CFR+'s (``|x'Ay - v*| <= f(y) - phi(x)`` for any profile), CFR+ below ``tolerance`` too."""
    lp = solve_lp(game).value
    solver = EGTSolver(game)
    solver.iterate(egt_iterations)
    result = exploitability(game, solver.average_strategy())
    assert solver.nash_conv() == pytest.approx(result.nash_conv, abs=1e-12)
    assert result.exploitability < tolerance
    assert abs(solver.value() - lp) <= result.nash_conv + 1e-12
    assert result.values[0] == pytest.approx(solver.value(), abs=1e-12)
    cfr = Solver(game, "cfr+")
    cfr.iterate(cfr_iterations)
    other = exploitability(game, cfr.average_strategy())
    assert other.exploitability < tolerance
    assert abs(result.values[0] - other.values[0]) <= result.nash_conv + other.nash_conv


def test_kuhn_agrees_with_the_lp_and_cfr_plus() -> None:
    agreement(abstract("kuhn2"), 2000, 2000, 2e-4)


@pytest.mark.skipif(NO_JIT, reason="slow without the JIT")
def test_leduc_agrees_with_the_lp_and_cfr_plus() -> None:
    agreement(abstract("leduc.limit.2p.game"), 3000, 1000, 1.5e-3)


@pytest.mark.skipif(NO_JIT, reason="slow without the JIT")
def test_100_card_kuhn_agrees_with_the_lp_and_cfr_plus() -> None:
    agreement(build_kuhn(100), 1000, 300, 2e-4)


# --------------------------------------------------------------------------- the command


def test_solve_command_writes_an_egt_strategy(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "k.strat"
    assert main(["solve", "--game", "leduc.limit.2p.game", "--solver", "egt", "--iterations",
                 "300", "--no-progress", "--out", str(out), "--checkpoint",
                 str(tmp_path / "k.npz")]) == 0
    text = capsys.readouterr().out
    loaded = load_strategy(out)
    assert loaded.meta["solver"] == "egt" and loaded.meta["iterations"] == 300
    assert loaded.meta["egt"]["backtracks"] >= 0 and loaded.meta["egt"]["gap_bound"] > 0
    assert f"exploitability {loaded.meta['exploitability']:.6g} chips/hand" in text
    assert main(["solve", "--game", "kuhn.limit.3p.game", "--solver", "egt", "--out",
                 str(tmp_path / "x.strat")]) == 1
    assert "expected a 2-player game, got 3 players" in capsys.readouterr().err


def test_kernels_as_plain_python() -> None:
    run_without_jit(__file__)

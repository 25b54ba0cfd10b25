"""Best response, expected values and exploitability in the abstract game.

* The vectorised kernels equal a slow pure-Python oracle (OpenSpiel-style: the responder's
  information sets collect their histories with the others' reach, each picks the action
  of largest reach-weighted value, memoised) on 2- and 3-player Kuhn, limit and no-limit
  Leduc, for random strategies; on 2-player Kuhn both equal brute force over every pure
  strategy of the responder.
* The returned best-response strategy, evaluated, earns the best-response value.
* The analytic Kuhn equilibria (the alpha family) have exploitability 0 and value -1/18.
* Conventions: exploitability = (br0 + br1) / 2 for two players, NashConv for more.
* ``small`` tests also run without the JIT (from ``test_cfr.py``).
"""

from __future__ import annotations

import itertools
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from agent.strategy.fileformat import dump_strategy, load_strategy
from strategies.games.abstract import AbstractGame, normalise_rows, uniform_table
from strategies.measure.best_response import (
    Exploitability,
    best_response,
    deal_values,
    expected_values,
    exploitability,
    node_values,
    strategy_table,
)
from tests.support import NO_JIT
from tests.support.cfr_oracle import Oracle, abstract, make_oracle

F64 = npt.NDArray[np.float64]


def random_table(g: AbstractGame, seed: int, sparse: bool = False) -> F64:
    """A random strategy; ``sparse`` zeroes about a third of the entries (pruned subtrees)."""
    r = np.random.default_rng(seed)
    values = r.random(g.table_size)
    if sparse:
        values[r.random(g.table_size) < 0.35] = 0.0
    return normalise_rows(g, values)


# --------------------------------------------------------------------------- oracles


def oracle_values(o: Oracle, table: list[float]) -> list[float]:
    """Expected payoff per position (per-deal recursion)."""

    def walk(node: int, deal: int) -> list[float]:
        nd = o.tree.nodes[node]
        if nd.is_terminal:
            return list(o.payoff(node, deal))
        row = o.row(node, deal)
        out = [0.0] * o.n
        for a, child in enumerate(nd.children):
            cv = walk(child, deal)
            for q in range(o.n):
                out[q] += table[row + a] * cv[q]
        return out

    total = [0.0] * o.n
    for d in range(len(o.deals)):
        v = walk(0, d)
        for q in range(o.n):
            total[q] += o.probs[d] * v[q]
    return total


def oracle_best_response(o: Oracle, table: list[float], responder: int) -> float:
    """Best-response value by information sets (histories with the others' reach)."""
    histories: dict[int, list[tuple[int, float]]] = {}  # row start -> (deal, reach)

    def collect(node: int, deal: int, reach: float) -> None:
        nd = o.tree.nodes[node]
        if nd.is_terminal:
            return
        row = o.row(node, deal)
        if nd.player == responder:
            histories.setdefault(row, []).append((deal, reach))
        for a, child in enumerate(nd.children):
            collect(child, deal, reach if nd.player == responder else reach * table[row + a])

    for d in range(len(o.deals)):
        collect(0, d, o.probs[d])

    @cache
    def choice(node: int, row: int) -> int:
        nd = o.tree.nodes[node]
        totals = [sum(reach * value(child, deal) for deal, reach in histories[row])
                  for child in nd.children]
        return max(range(len(totals)), key=lambda a: (totals[a], -a))

    @cache
    def value(node: int, deal: int) -> float:
        nd = o.tree.nodes[node]
        if nd.is_terminal:
            return o.payoff(node, deal)[responder]
        row = o.row(node, deal)
        if nd.player == responder:
            return value(nd.children[choice(node, row)], deal)
        return sum(table[row + a] * value(c, deal) for a, c in enumerate(nd.children))

    return sum(o.probs[d] * value(0, d) for d in range(len(o.deals)))


def brute_force_best_response(o: Oracle, table: list[float], responder: int) -> float:
    """Max over every pure strategy of the responder (tiny games only)."""
    rows = [(nd.id, b) for nd in o.tree.decision_nodes if nd.player == responder
            for b in range(int(o.layout.rows[nd.id]))]
    best = -np.inf
    for choices in itertools.product(*[range(len(o.tree.nodes[n].actions)) for n, _ in rows]):
        pure = list(table)
        for (node, b), a in zip(rows, choices, strict=True):
            k = len(o.tree.nodes[node].actions)
            start = int(o.layout.offsets[node]) + b * k
            pure[start : start + k] = [1.0 if i == a else 0.0 for i in range(k)]
        best = max(best, oracle_values(o, pure)[responder])
    return float(best)


# --------------------------------------------------------------------------- kernels = oracle


@pytest.mark.parametrize("name", ["kuhn2", "kuhn.limit.3p.game"])
@pytest.mark.parametrize("seed", [0, 1])
def test_small_best_response_equals_oracle(name: str, seed: int) -> None:
    g = abstract(name)
    o = make_oracle(g.game)
    for sparse in (False, True):
        table = random_table(g, seed, sparse)
        values = expected_values(g, table)
        np.testing.assert_allclose(values, oracle_values(o, list(table)), rtol=0, atol=1e-12)
        for p in range(g.num_players):
            br = best_response(g, table, p)
            want = oracle_best_response(o, list(table), p)
            assert br.value == pytest.approx(want, abs=1e-12)
            if name == "kuhn2":
                assert br.value == pytest.approx(brute_force_best_response(o, list(table), p),
                                                 abs=1e-12)


@pytest.mark.skipif(NO_JIT, reason="slow without the JIT")
@pytest.mark.parametrize("name,betting", [
    ("leduc.limit.2p.game", "fcpa"), ("leduc.nolimit.2p.game", "fcpa"),
])
def test_best_response_equals_oracle_on_leduc(name: str, betting: str) -> None:
    g = abstract(name, betting)
    o = make_oracle(g.game, betting)
    table = random_table(g, 7, sparse=True)
    np.testing.assert_allclose(expected_values(g, table), oracle_values(o, list(table)),
                               rtol=0, atol=1e-12)
    for p in range(2):
        assert best_response(g, table, p).value == pytest.approx(
            oracle_best_response(o, list(table), p), abs=1e-12)


def test_small_best_response_strategy_earns_its_value() -> None:
    for name in ("kuhn2", "kuhn.limit.3p.game"):
        g = abstract(name)
        table = random_table(g, 3)
        for p in range(g.num_players):
            br = best_response(g, table, p)
            assert expected_values(g, br.strategy)[p] == pytest.approx(br.value, abs=1e-12)
            mine = np.flatnonzero((g.offset >= 0) & (g.player == p))
            for node in np.flatnonzero(g.offset >= 0):
                k = int(g.num_actions[node])
                span = slice(int(g.offset[node]), int(g.offset[node]) + int(g.rows[node]) * k)
                if node in mine:
                    block = br.strategy[span].reshape(-1, k)
                    assert ((block == 0) | (block == 1)).all() and (block.sum(axis=1) == 1).all()
                else:
                    assert (br.strategy[span] == table[span]).all()


def test_small_deal_values_average_to_expected_values() -> None:
    g = abstract("kuhn.limit.3p.game")
    table = uniform_table(g)
    per_deal = deal_values(g, table)
    assert per_deal.shape == (3, g.num_deals)
    assert tuple(per_deal @ g.deal_prob) == expected_values(g, table)


@pytest.mark.parametrize("name", ["kuhn2", "kuhn.limit.3p.game"])
def test_small_node_values_equal_the_oracle_at_every_node(name: str) -> None:
    """Every node's per-deal values (the pass that keeps every node's frame) against the
    per-deal recursion from that node."""
    g = abstract(name)
    o = make_oracle(g.game)
    table = random_table(g, 4, sparse=True)
    values = node_values(g, table)
    listed = table.tolist()

    def walk(node: int, deal: int) -> list[float]:
        nd = o.tree.nodes[node]
        if nd.is_terminal:
            return list(o.payoff(node, deal))
        row = o.row(node, deal)
        out = [0.0] * o.n
        for a, child in enumerate(nd.children):
            for q, v in enumerate(walk(child, deal)):
                out[q] += listed[row + a] * v
        return out

    for node in range(g.num_nodes):
        for d in range(g.num_deals):
            np.testing.assert_allclose(values[node, :, d], walk(node, d), atol=1e-12)
    np.testing.assert_array_equal(values[0], deal_values(g, table))


# --------------------------------------------------------------------------- known values


def kuhn_equilibrium(g: AbstractGame, alpha: float) -> F64:
    """The analytic 2-player Kuhn equilibrium family (J, Q, K = the deck's three cards)."""
    table = uniform_table(g)
    by_betting = {n.state.betting: n.id for n in g.tree.decision_nodes}
    cards = [int(c) for c in sorted(set(g.deal_cards[:, 0]))]  # Q K A of spades = J Q K
    probs = {  # betting -> probability of the second action (bet or call) for J, Q, K
        "": (alpha, 0.0, 3 * alpha),        # first player: bet
        "cr": (0.0, alpha + 1 / 3, 1.0),     # first player, facing a bet: call
        "c": (1 / 3, 0.0, 1.0),              # second player after a check: bet
        "r": (0.0, 1 / 3, 1.0),              # second player facing a bet: call
    }
    for betting, second in probs.items():
        node = by_betting[betting]
        for card, p in zip(cards, second, strict=True):
            bucket = g.cards.bucket(0, (card,), ())
            g.table_row(table, node, bucket)[:] = (1.0 - p, p)
    return table


@pytest.mark.parametrize("alpha", [0.0, 0.2, 1 / 3])
def test_small_kuhn_equilibria_are_unexploitable(alpha: float) -> None:
    g = abstract("kuhn2")
    result = exploitability(g, kuhn_equilibrium(g, alpha))
    assert result.values[0] == pytest.approx(-1 / 18, abs=1e-12)
    assert abs(result.exploitability) < 1e-12
    assert result.best_responses[0] == pytest.approx(-1 / 18, abs=1e-12)
    assert result.best_responses[1] == pytest.approx(1 / 18, abs=1e-12)


def test_small_conventions() -> None:
    two = Exploitability(values=(-0.1, 0.1), best_responses=(0.2, 0.4))
    assert two.gains == pytest.approx((0.3, 0.3))
    assert two.nash_conv == pytest.approx(0.6)
    assert two.exploitability == pytest.approx((0.2 + 0.4) / 2)
    assert two.headline[0] == "exploitability" and two.headline[1] == pytest.approx(0.3)
    three = Exploitability(values=(0.0, 0.0, 0.0), best_responses=(0.1, 0.2, 0.0))
    assert three.headline[0] == "nash_conv" and three.headline[1] == pytest.approx(0.3)
    g = abstract("kuhn.limit.3p.game")
    result = exploitability(g, uniform_table(g))
    assert all(gain >= -1e-12 for gain in result.gains)
    assert sum(result.values) == pytest.approx(0.0, abs=1e-12)


def test_small_bad_input() -> None:
    g = abstract("kuhn2")
    with pytest.raises(ValueError, match="table of"):
        exploitability(g, np.zeros(3))
    with pytest.raises(ValueError, match="non-negative"):
        best_response(g, -uniform_table(g), 0)
    with pytest.raises(ValueError, match="position"):
        best_response(g, uniform_table(g), 2)


@pytest.mark.parametrize("dtype", ["float32", "uint16"])
def test_small_strategy_table_reads_files_as_distributions(tmp_path: Path, dtype: str) -> None:
    g = abstract("kuhn.limit.3p.game")
    table = random_table(g, 5)
    path = dump_strategy(tmp_path / "s.strat", g.game, g.betting, g.cards.spec, table,
                         dtype=dtype, tree=g.tree)
    read = strategy_table(g, load_strategy(path))
    for node in np.flatnonzero(g.offset >= 0):
        k = int(g.num_actions[node])
        block = read[g.offset[node] : g.offset[node] + g.rows[node] * k].reshape(-1, k)
        assert np.abs(block.sum(axis=1) - 1.0).max() < 1e-15
    assert np.abs(read - table).max() < (2e-5 if dtype == "uint16" else 1e-6)

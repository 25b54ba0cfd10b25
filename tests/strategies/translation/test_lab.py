"""Full-game exploitability of translating agents (:mod:`strategies.measure.translation`).

* Half-street games (clairvoyance, no-limit Kuhn): the CFR+ kernel equals a pure-Python
  oracle; P1's and P2's best responses equal brute force over their pure strategies, with
  the agent's translation draws and actions enumerated explicitly; the real Kuhn value
  equals a linear program; facts that follow from the definitions (Rand-psHar is
  unexploitable in the clairvoyance game for every stack and abstraction, every mapping is
  >= 0, an abstraction with every bet size is an exact equilibrium, the geometric mappings
  read every bet below the pot as the pot when ``A = 0``, hand-derived values).
* ACPC games: the real tree's node counts (no-limit Leduc: 28,049 nodes); the agent's
  induced behaviour equals a pure-Python oracle (the policy's rules replayed action by
  action with dicts, under both size conventions, the ``real`` one written out with chip
  arithmetic); the best response equals brute force over the responder's pure
  strategies on a tiny one-round game; the count of misread all-ins equals brute force;
  an agent whose abstraction is the real game is measured exactly like the project's best
  response; with a deterministic mapping and full purification the induced behaviour is
  the one :class:`agent.policy.StrategyPolicy` actually plays on the bundled no-limit
  Leduc file, under both size conventions.
* The CLI group ``acpc-strategy translation`` and the best-size search.
* Tests whose names contain ``small`` run again with ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from agent.abstraction.actions import PRESETS, BettingTree
from agent.abstraction.buckets import BlindCards, LosslessCards
from agent.abstraction.convention import DEFAULT_SIZE_CONVENTION, SIZE_CONVENTIONS
from agent.abstraction.translation import BUILTIN_MAPPINGS, MappingFn, get_mapping, translate
from agent.acpc.betsize import pot_fraction
from agent.acpc.betting import CALL, Action, ActionKind, BettingState
from agent.acpc.gamedef import Game, parse_gamedef
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import view_of
from agent.data import strategy_path
from agent.decision import realise
from agent.policy import LoadedStrategy, StrategyPolicy
from agent.strategy.fileformat import load_strategy
from agent.strategy.purification import parse_purification
from strategies.cli import main
from strategies.games import halfstreet as hs
from strategies.games.abstract import AbstractGame, build_abstract_game, normalise_rows
from strategies.measure.best_response import best_response
from strategies.measure.translation import lab
from strategies.measure.translation.full_br import (
    AgentLab,
    all_in_misreads,
    build_agent_model,
    build_full_game,
    build_full_tree,
    full_best_response,
    induced_table,
    purify_table,
)
from tests.support import NO_JIT, run_without_jit

F64 = npt.NDArray[np.float64]
NONE = parse_purification("none")
FULL = parse_purification("full")


def tiny_game(rounds: int, stack: int) -> Game:
    """No-limit, ante 1 each: one round with a 3-card deck, or Leduc's two rounds."""
    board = "0" if rounds == 1 else "0 1"
    suits = 1 if rounds == 1 else 2
    first = " ".join(["1"] * rounds)
    text = (f"GAMEDEF\nnolimit\nnumPlayers = 2\nnumRounds = {rounds}\nstack = {stack} {stack}\n"
            f"blind = 1 1\nfirstPlayer = {first}\nnumSuits = {suits}\nnumRanks = 3\n"
            f"numHoleCards = 1\nnumBoardCards = {board}\nEND GAMEDEF\n")
    return parse_gamedef(text, f"tiny{rounds}r{stack}")


def random_agent(
    game: Game, betting: str, seed: int, blind: bool = False
) -> tuple[AbstractGame, F64]:
    cards = BlindCards(game) if blind else LosslessCards(game)
    g = build_abstract_game(game, PRESETS[betting], cards)
    values = np.random.default_rng(seed).random(g.table_size) ** 2
    return g, normalise_rows(g, values)


# --------------------------------------------------------------------------- half-street


def oracle_cfr_plus(game: hs.HalfStreetGame, sizes: list[float], iterations: int) -> tuple[
        list[list[float]], list[list[list[float]]]]:
    """The CFR+ of :func:`strategies.games.halfstreet.solve_abstract`, with lists."""
    n1, n2 = game.prob.shape
    m = len(sizes)
    prob = game.prob.tolist()
    out = game.outcome.tolist()
    r1 = [[0.0] * (1 + m) for _ in range(n1)]
    r2 = [[[0.0, 0.0] for _ in range(m)] for _ in range(n2)]
    s1 = [[0.0] * (1 + m) for _ in range(n1)]
    s2 = [[[0.0, 0.0] for _ in range(m)] for _ in range(n2)]

    def rm(r: list[float]) -> list[float]:
        pos = [max(v, 0.0) for v in r]
        total = sum(pos)
        return [v / total for v in pos] if total > 0 else [1.0 / len(r)] * len(r)

    for t in range(1, iterations + 1):
        sig2 = [[rm(r2[c][j]) for j in range(m)] for c in range(n2)]
        for c1 in range(n1):
            u = [sum(prob[c1][c2] * out[c1][c2] * 0.5 for c2 in range(n2))]
            for j in range(m):
                u.append(sum(prob[c1][c2] * (sig2[c2][j][0] * 0.5 + sig2[c2][j][1] * out[c1][c2]
                                             * (0.5 + sizes[j])) for c2 in range(n2)))
            sig = rm(r1[c1])
            ev = sum(a * b for a, b in zip(sig, u, strict=True))
            for a in range(1 + m):
                r1[c1][a] = max(r1[c1][a] + u[a] - ev, 0.0)
                s1[c1][a] += t * sig[a]
        sig1 = [rm(r1[c]) for c in range(n1)]
        for c2 in range(n2):
            for j in range(m):
                fold = -sum(prob[c1][c2] * sig1[c1][1 + j] * 0.5 for c1 in range(n1))
                call = -sum(prob[c1][c2] * sig1[c1][1 + j] * out[c1][c2] * (0.5 + sizes[j])
                            for c1 in range(n1))
                ev = sig2[c2][j][0] * fold + sig2[c2][j][1] * call
                r2[c2][j][0] = max(r2[c2][j][0] + fold - ev, 0.0)
                r2[c2][j][1] = max(r2[c2][j][1] + call - ev, 0.0)
                s2[c2][j][0] += t * sig2[c2][j][0]
                s2[c2][j][1] += t * sig2[c2][j][1]
    return ([[v / sum(row) for v in row] for row in s1],
            [[[v / sum(row) for v in row] for row in per] for per in s2])


@pytest.mark.parametrize("name,sizes", [("nl-kuhn", [0.4, 3.0]), ("clairvoyance", [1.0, 2.0])])
def test_small_half_street_cfr_equals_oracle(name: str, sizes: list[float]) -> None:
    game = hs.make_game(name, 3)
    got = hs.solve_abstract(game, np.array(sizes), 30)
    p1, p2 = oracle_cfr_plus(game, sizes, 30)
    assert np.allclose(got.p1, p1, atol=1e-12, rtol=0)
    assert np.allclose(got.p2, p2, atol=1e-12, rtol=0)


def brute_force_p1(
    game: hs.HalfStreetGame, strategy: hs.HalfStreetStrategy, mapping: MappingFn
) -> float:
    """The best of P1's pure strategies (a real bet per card, every combination), each
    evaluated by enumerating the deal, the agent's translation draw and its action."""
    choices = [0.0, *(float(x) for x in game.bets())]
    points = [0.0, *(float(s) for s in strategy.sizes)]
    n1, n2 = game.prob.shape

    def calls(c2: int, x: float) -> float:
        t = translate(points, x, mapping, 0.0)
        sides = [(t.low, 1.0)] if t.low == t.high else [(t.low, t.prob_low),
                                                          (t.high, 1.0 - t.prob_low)]
        # read as the check (index 0) the hand is over in the abstraction: the agent calls
        return sum(w * (1.0 if i == 0 else float(strategy.p2[c2, i - 1, 1])) for i, w in sides)

    best = -math.inf
    for profile in itertools.product(choices, repeat=n1):
        value = 0.0
        for c1, c2 in itertools.product(range(n1), range(n2)):
            p, o, x = game.prob[c1, c2], game.outcome[c1, c2], profile[c1]
            if x == 0.0:
                value += p * o * 0.5
            else:
                c = calls(c2, x)
                value += p * (c * o * (0.5 + x) + (1 - c) * 0.5)
        best = max(best, value)
    return best


@pytest.mark.parametrize("mapping", ["rand-pshar", "det-arith", "rand-geo-1", "det-pshar"])
@pytest.mark.parametrize("name", ["clairvoyance", "nl-kuhn"])
def test_p1_best_response_equals_brute_force(name: str, mapping: str) -> None:
    game = hs.make_game(name, 1)
    strategy = lab.half_street_strategy(game, (0.4,), 3000)
    if name == "nl-kuhn":  # an arbitrary mixed defender, not only the equilibrium
        rng = np.random.default_rng(5)
        call = rng.random(strategy.p2.shape[:2])
        strategy = hs.HalfStreetStrategy(strategy.sizes, strategy.p1,
                                         np.stack([1 - call, call], axis=-1))
    for pur in (NONE, FULL):
        played = strategy.purified(pur)
        value, _ = hs.best_response_p1(game, played, get_mapping(mapping))
        assert value == pytest.approx(brute_force_p1(game, played, get_mapping(mapping)),
                                      abs=1e-12)


def test_p2_best_response_equals_brute_force() -> None:
    game = hs.nl_kuhn(3)
    sizes = hs.abstract_sizes(game, [0.4, 1.0])
    rng = np.random.default_rng(2)
    p1 = rng.random((3, 1 + len(sizes)))
    p1 /= p1.sum(axis=1, keepdims=True)
    strategy = hs.HalfStreetStrategy(sizes, p1, np.full((3, len(sizes), 2), 0.5))
    best = -math.inf
    for calls in itertools.product((0, 1), repeat=3 * len(sizes)):
        call = np.array(calls).reshape(3, len(sizes))
        value = 0.0
        for c1, c2 in itertools.product(range(3), range(3)):
            p, o = game.prob[c1, c2], game.outcome[c1, c2]
            value -= p * p1[c1, 0] * o * 0.5
            for j, y in enumerate(sizes):
                pay = o * (0.5 + y) if call[c2, j] else 0.5
                value -= p * p1[c1, 1 + j] * pay
        best = max(best, value)
    assert hs.best_response_p2(game, strategy) == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("stack", [1, 3])
def test_kuhn_real_value_equals_linear_program(stack: int) -> None:
    """max over P1's mixed strategies of sum over (P2 card, bet) of min(fold, call)."""
    optimize = pytest.importorskip("scipy.optimize")
    game = hs.nl_kuhn(stack)
    bets = game.bets()
    n, k = 3, 1 + len(bets)
    nvar = n * k + n * len(bets)  # sigma1[c1, a], then t[c2, i]
    c = np.zeros(nvar)
    for c1 in range(n):  # the check terms are linear in sigma1
        c[c1 * k] = -sum(game.prob[c1, c2] * game.outcome[c1, c2] * 0.5 for c2 in range(n))
    c[n * k:] = -1.0
    rows, rhs = [], []
    for c2, i in itertools.product(range(n), range(len(bets))):
        for kind in ("fold", "call"):  # t <= P1's value of the bet if P2 folds / calls
            row = np.zeros(nvar)
            row[n * k + c2 * len(bets) + i] = 1.0
            for c1 in range(n):
                pay = 0.5 if kind == "fold" else game.outcome[c1, c2] * (0.5 + bets[i])
                row[c1 * k + 1 + i] = -game.prob[c1, c2] * pay
            rows.append(row)
            rhs.append(0.0)
    eq = np.zeros((n, nvar))
    for c1 in range(n):
        eq[c1, c1 * k:(c1 + 1) * k] = 1.0
    bounds = [(0, None)] * (n * k) + [(None, None)] * (n * len(bets))
    result = optimize.linprog(c, A_ub=np.array(rows), b_ub=rhs, A_eq=eq, b_eq=np.ones(n),
                              bounds=bounds, method="highs")
    assert result.status == 0
    assert hs.real_value(game) == pytest.approx(-result.fun, abs=1e-9)
    assert hs.real_value(game) == pytest.approx(1 / 35, abs=1e-15)


@pytest.mark.parametrize("stack", lab.STACKS)
def test_clairvoyance_facts(stack: float) -> None:
    game = hs.clairvoyance(stack)
    for sizes in ((1.0,), (0.3, 2.5), None):
        rows = lab.measure_half_street("clairvoyance", sizes, [stack], list(BUILTIN_MAPPINGS))
        for r in rows:
            assert r.seat(1) >= -1e-12, r
            assert r.seat(0) == pytest.approx(0.0, abs=1e-12)  # the analytic equilibrium
            if r.mapping == "rand-pshar" or sizes is None:
                assert r.seat(1) == pytest.approx(0.0, abs=1e-9), r
    assert hs.real_value(game) == stack / (2 * (1 + stack))


def test_clairvoyance_hand_derived_values() -> None:
    """n = 1, abstraction {check, pot}: the defender calls the pot half the time.

    Det-Arith reads x <= 0.5 as a check (always called): the winning hand bets 0.5
    (0.5 + 0.5), the losing hand bluffs 0.6 (0.5 - 0.5 * 1.6 = -0.3): 0.35 - 1/4 = 0.1.
    The geometric mappings read everything as the pot: the winner bets 1 (1.0), the loser
    bluffs 0.1 (0.5 - 0.5 * 1.1 = -0.05): 0.475 - 1/4 = 0.225.
    """
    rows = {r.mapping: r.seat(1) for r in lab.measure_half_street(
        "clairvoyance", (1.0,), [1], list(BUILTIN_MAPPINGS))}
    assert rows["det-arith"] == pytest.approx(0.1, abs=1e-12)
    for name in ("det-geo", "rand-geo-1", "rand-geo-2"):
        assert rows[name] == pytest.approx(0.225, abs=1e-12)


def test_geometric_mappings_read_small_bets_as_the_pot() -> None:
    game = hs.clairvoyance(3)
    strategy = lab.half_street_strategy(game, (1.0,))
    below = np.array([hs.grid_size(k) for k in range(1, 10)])
    for name in ("det-geo", "rand-geo-1", "rand-geo-2"):
        for x in below:
            assert BUILTIN_MAPPINGS[name](0.0, 1.0, float(x)) == 0.0
        calls = hs.defender_calls(game, strategy, get_mapping(name), below)
        assert np.all(calls == 0.5)  # the call frequency of the pot, 1 / (1 + 1)


def test_kuhn_abstract_equilibria_and_bounds() -> None:
    for stack in (1, 5, 100):
        game = hs.nl_kuhn(stack)
        for sizes in ((1.0,), (0.4,)):
            strategy = lab.half_street_strategy(game, sizes)
            assert hs.abstract_exploitability(game, strategy) < 1e-4
            for r in lab.measure_half_street("nl-kuhn", sizes, [stack], list(BUILTIN_MAPPINGS),
                                             list(lab.PURIFICATIONS)):
                assert r.seat(0) >= -1e-4 and r.seat(1) >= -1e-4, r
    # every grid size: the abstract equilibrium is one of the real game
    every = lab.measure_half_street("nl-kuhn", None, [1], ["rand-pshar"], iterations=20_000)
    assert abs(every[0].seat(1)) < 1e-4 and abs(every[0].seat(0)) < 1e-4


def test_best_size_search_equals_direct_loop() -> None:
    found = {r.mapping: r for r in lab.best_sizes([1], ["rand-pshar", "det-arith"])}
    for name, r in found.items():
        direct = []
        for k in range(1, 11):
            x = hs.grid_size(k)
            (m,) = lab.measure_half_street("nl-kuhn", (x,), [1], [name])
            direct.append((m.seat(1), x))
        best = min(e for e, _ in direct)
        smallest = min(x for e, x in direct if e <= best + lab.TIE)
        at = next(e for e, x in direct if x == smallest)
        assert r.size == smallest and r.exploitability == pytest.approx(at, abs=1e-15)
        pot = next(e for e, x in direct if x == 1.0)
        assert r.pot_exploitability == pytest.approx(pot, abs=1e-15)


# --------------------------------------------------------------------------- ACPC games


def test_full_tree_counts() -> None:
    tree = build_full_tree(load_game("leduc.nolimit.2p.game"))
    assert len(tree.nodes) == 28049
    assert sum(n.is_terminal for n in tree.nodes) == 18329
    for node in tree.nodes:  # pre-order ids, children in action order
        assert all(c > node.id for c in node.children)
        assert [tree.nodes[c].parent for c in node.children] == [node.id] * len(node.children)
    with pytest.raises(ValueError, match="no-limit"):
        build_full_tree(load_game("leduc.limit.2p.game"))


def paths(tree: BettingTree) -> list[list[Action]]:
    """The real actions from the root to every node."""
    out: list[list[Action]] = [[] for _ in tree.nodes]
    for node in tree.nodes:
        for act, child in zip(node.actions, node.children, strict=True):
            out[child] = [*out[node.id], act.action]
    return out


def oracle_real_sizes(
    state: BettingState, node: Any, targets: dict[int, Any]
) -> tuple[list[float], list[Any], Any]:
    """The ``real`` size convention written out with chip arithmetic: each abstract raise
    of ``node`` (action index -> target in ``targets``) as the raise-to it gets in the real
    ``state`` (its fraction of the real pot after the call, halves rounded up, clamped to
    the raise bounds, the all-in at the top), same raise-tos merged (the all-in, else the
    smallest fraction, stands for them); returns (sizes, targets, the all-in's target)."""
    bounds = state.raise_bounds()
    assert bounds is not None
    lo, hi = bounds
    base = state.pot + state.to_call(state.player)
    by_chips: dict[int, tuple[float, Any]] = {}
    all_in = None
    for i, target in targets.items():
        frac = node.actions[i].fraction
        if frac == -1.0:
            all_in = target
            to = hi
        else:
            to = min(max(math.floor(state.max_spent + frac * base + 0.5), lo), hi)
        rank = -math.inf if frac == -1.0 else frac  # the all-in wins, then the smallest
        if to not in by_chips or rank < by_chips[to][0]:
            by_chips[to] = (rank, target)
    chips = sorted(by_chips)
    return ([(to - state.max_spent) / base for to in chips],
            [by_chips[to][1] for to in chips], all_in)


def oracle_abstract_states(
    agent: AbstractGame, table: F64, seat: int, mapping: MappingFn,
    actions: list[Action], hole: tuple[int, ...], board: tuple[int, ...],
    sizes_in: str = "abstract",
) -> dict[Any, float]:
    """The policy's rules replayed: abstract node (or "off") -> probability, jointly with
    the agent's own actions, after the real ``actions``; ``sizes_in`` is the size
    convention (``real``: :func:`oracle_real_sizes`, a real all-in read as the abstract
    all-in)."""
    game = agent.game
    cards = agent.cards
    tree = agent.tree
    dist: dict[Any, float] = {0: 1.0}
    state = BettingState.initial(game)
    for action in actions:
        new: dict[Any, float] = defaultdict(float)
        actor = state.player
        for s, w in dist.items():
            node = None if s == "off" else tree.nodes[s]
            if node is None or node.is_terminal or node.player != actor or \
                    node.round != state.round:
                waiting = node is not None and not node.is_terminal and node.round > state.round
                if actor != seat or action == CALL:  # the agent checks or calls
                    new[s if waiting else "off"] += w
                continue
            if actor == seat:
                bucket = cards.bucket(state.round, hole,
                                      board[: game.board_cards_through(state.round)])
                row = agent.table_row(table, node.id, bucket)
                for i, act in enumerate(node.actions):
                    if realise(state, act.kind, act.fraction) == action:
                        new[node.children[i]] += w * float(row[i])
                continue
            kinds = [a.kind for a in node.actions]
            child = dict(zip(kinds, node.children, strict=False))  # fold and call
            raises = [i for i, k in enumerate(kinds) if k is ActionKind.RAISE]
            if action.kind is ActionKind.FOLD:
                new[child.get(ActionKind.FOLD, "off")] += w
            elif action.kind is ActionKind.CALL or not raises:
                new[child[ActionKind.CALL]] += w
            else:
                sizes = [0.0] + [node.actions[i].x for i in raises]
                targets = [child[ActionKind.CALL]] + [node.children[i] for i in raises]
                x = pot_fraction(state, action.raise_to)
                if sizes_in == "real":
                    real_sizes, real_targets, all_in = oracle_real_sizes(
                        state, node, {i: node.children[i] for i in raises})
                    if all_in is not None and action.raise_to == state.raise_bounds()[1]:
                        new[all_in] += w
                        continue
                    sizes = [0.0, *real_sizes]
                    targets = [child[ActionKind.CALL], *real_targets]
                low = translate(sizes, x, mapping, 0.0)
                if low.low == low.high:
                    new[targets[low.low]] += w
                else:
                    new[targets[low.low]] += w * low.prob_low
                    new[targets[low.high]] += w * (1.0 - low.prob_low)
        dist = dict(new)
        state = state.apply(action)
    return dist


def oracle_behaviour(
    real: AbstractGame, agent: AbstractGame, table: F64, seat: int, mapping: MappingFn,
    sizes_in: str = "abstract",
) -> dict[tuple[int, int], list[float]]:
    """(real node, real bucket) -> the agent's action probabilities, where it is reached."""
    out: dict[tuple[int, int], list[float]] = {}
    all_paths = paths(real.tree)
    for d in range(real.num_deals):
        holes, board = real.deal_groups(d)
        for node in real.tree.nodes:
            if node.is_terminal or node.player != seat:
                continue
            bucket = int(real.deal_bucket[d, seat, node.round])
            if (node.id, bucket) in out:
                continue
            here = sum(oracle_abstract_states(agent, table, seat, mapping, all_paths[node.id],
                                              holes[seat], board, sizes_in).values())
            if here <= 0.0:
                continue
            out[(node.id, bucket)] = [
                sum(oracle_abstract_states(agent, table, seat, mapping, all_paths[c],
                                           holes[seat], board, sizes_in).values()) / here
                for c in node.children]
    return out


@pytest.mark.parametrize("mapping,blind", [("rand-pshar", False), ("det-arith", False),
                                           ("rand-geo-1", False), ("rand-arith", True)])
@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("sizes_in", ["abstract", "real"])
def test_small_induced_behaviour_equals_oracle(
    sizes_in: str, seat: int, mapping: str, blind: bool
) -> None:
    game = tiny_game(2, 4)
    real = build_full_game(game)
    agent, table = random_agent(game, "fchpa", seed=seat, blind=blind)
    table = purify_table(agent, table, parse_purification("threshold:0.3"))
    model = build_agent_model(real, agent, seat, sizes_in)
    assert model.sizes_in == sizes_in
    got = induced_table(model, table, get_mapping(mapping))
    want = oracle_behaviour(real, agent, table, seat, get_mapping(mapping), sizes_in)
    assert len(want) > 40
    for (node, bucket), probs in want.items():
        assert np.allclose(real.table_row(got, node, bucket), probs, atol=1e-12, rtol=0)
    if mapping in ("rand-pshar", "det-arith"):  # the conventions differ here: both are
        other = "real" if sizes_in == "abstract" else "abstract"  # checked for real
        assert any(not np.allclose(real.table_row(got, node, bucket), probs, atol=1e-9)
                   for (node, bucket), probs in oracle_behaviour(
                       real, agent, table, seat, get_mapping(mapping), other).items())


def brute_force_responder(
    real: AbstractGame, agent: AbstractGame, table: F64, seat: int, mapping: MappingFn,
    sizes_in: str = "abstract",
) -> float:
    """Every pure strategy of the responder, one card at a time (the value is a sum over
    its cards, so the best strategy is the best one for each card), evaluated with the
    oracle's agent reach at every terminal."""
    tree = real.tree
    responder = 1 - seat
    all_paths = paths(tree)
    own = [n for n in tree.nodes if not n.is_terminal and n.player == responder]
    total = 0.0
    for card in sorted({real.deal_groups(d)[0][responder] for d in range(real.num_deals)}):
        deals = [d for d in range(real.num_deals) if real.deal_groups(d)[0][responder] == card]
        leaf_value: dict[int, float] = defaultdict(float)
        for d in deals:
            holes, board = real.deal_groups(d)
            pattern = int(real.deal_pattern[d, 0])
            for node in tree.nodes:
                if not node.is_terminal:
                    continue
                reach = sum(oracle_abstract_states(agent, table, seat, mapping,
                                                   all_paths[node.id], holes[seat],
                                                   board, sizes_in).values())
                t = int(real.terminal[node.id])
                p = 0 if real.term_set[t] < 0 else pattern
                leaf_value[node.id] += real.deal_prob[d] * reach * real.term_payoff[
                    t, p, responder]
        best = -math.inf
        for choice in itertools.product(*(range(len(n.actions)) for n in own)):
            pick = {n.id: c for n, c in zip(own, choice, strict=True)}
            value, stack = 0.0, [0]
            while stack:
                node = tree.nodes[stack.pop()]
                if node.is_terminal:
                    value += leaf_value[node.id]
                elif node.player == responder:
                    stack.append(node.children[pick[node.id]])
                else:
                    stack.extend(node.children)
            best = max(best, value)
        total += best
    return total


@pytest.mark.parametrize("mapping,sizes_in", [
    ("rand-pshar", "abstract"), ("det-pshar", "abstract"), ("rand-geo-2", "abstract"),
    ("rand-pshar", "real"), ("det-arith", "real")])
@pytest.mark.parametrize("seat", [0, 1])
def test_small_best_response_equals_brute_force(seat: int, mapping: str, sizes_in: str) -> None:
    game = tiny_game(1, 4)
    real = build_full_game(game)
    agent, table = random_agent(game, "fcpa", seed=10 + seat)
    model = build_agent_model(real, agent, seat, sizes_in)
    got = full_best_response(model, table, get_mapping(mapping))
    assert got == pytest.approx(brute_force_responder(real, agent, table, seat,
                                                      get_mapping(mapping), sizes_in),
                                abs=1e-12)


def oracle_misreads(
    real: AbstractGame, agent: AbstractGame, table: F64, seat: int, mapping: MappingFn,
    sizes_in: str,
) -> int:
    """Brute force of :func:`all_in_misreads`: over the real histories where the opponent
    may go all-in, the (real node, abstract node with an all-in, other abstract action)
    triples the oracle reaches with positive probability for some deal."""
    tree = real.tree
    all_paths = paths(tree)
    found: set[tuple[int, int, int]] = set()
    for node in tree.nodes:
        if node.is_terminal or node.player == seat or node.state.raise_bounds() is None:
            continue
        hi = node.state.raise_bounds()[1]
        path = [*all_paths[node.id], Action(ActionKind.RAISE, hi)]
        for d in range(real.num_deals):
            holes, board = real.deal_groups(d)
            before = oracle_abstract_states(agent, table, seat, mapping, path[:-1],
                                            holes[seat], board, sizes_in)
            after = oracle_abstract_states(agent, table, seat, mapping, path, holes[seat],
                                           board, sizes_in)
            for s, w in after.items():
                if s == "off" or w <= 0.0:
                    continue
                parent = agent.tree.nodes[agent.tree.nodes[s].parent]
                if before.get(parent.id, 0.0) <= 0.0 or parent.player == seat or \
                        parent.round != node.round or s not in parent.children:
                    continue
                all_in = [c for a, c in zip(parent.actions, parent.children, strict=True)
                          if a.fraction == -1.0]
                if all_in and s != all_in[0]:
                    found.add((node.id, parent.id, s))
    return len(found)


@pytest.mark.parametrize(("sizes_in", "mapping"), [
    ("abstract", "rand-pshar"), ("real", "det-arith"),
    # without the JIT, two of the four (each 1.5-2 s of plain Python, the same kernels)
    *([] if NO_JIT else [("abstract", "det-arith"), ("real", "rand-pshar")]),
])
def test_small_all_in_misreads_equal_brute_force(sizes_in: str, mapping: str) -> None:
    game = tiny_game(2, 4)
    real = build_full_game(game)
    counts = []
    for seat in (0, 1):
        agent, table = random_agent(game, "fchpa", seed=20 + seat)
        model = build_agent_model(real, agent, seat, sizes_in)
        got = all_in_misreads(model, table, get_mapping(mapping))
        assert got == oracle_misreads(real, agent, table, seat, get_mapping(mapping), sizes_in)
        counts.append(got)
    if sizes_in == "real":
        assert counts == [0, 0]  # the all-in rule
    else:
        assert sum(counts) > 0  # pots diverge in this game: all-ins are misread


def test_agent_with_the_real_game_as_abstraction() -> None:
    """No translation is ever needed: the induced behaviour is the table itself and the
    best response is the project's (abstract-game) best response."""
    game = tiny_game(2, 5)
    real = build_full_game(game)
    rng = np.random.default_rng(3)
    table = normalise_rows(real, rng.random(real.table_size))
    for seat in (0, 1):
        model = build_agent_model(real, real, seat)
        assert len(model.translations) == 0
        got = induced_table(model, table, get_mapping("det-geo"))
        for node in np.flatnonzero(real.player == seat):
            start = int(real.offset[node])
            stop = start + int(real.rows[node] * real.num_actions[node])
            assert np.allclose(got[start:stop], table[start:stop], atol=1e-12, rtol=0)
        want = best_response(real, table, 1 - seat).value
        assert full_best_response(model, table, get_mapping("det-geo")) == pytest.approx(
            want, abs=1e-12)


def test_agent_model_errors() -> None:
    game = tiny_game(1, 3)
    real = build_full_game(game)
    agent, _ = random_agent(game, "fcpa", 0)
    with pytest.raises(ValueError, match="seat"):
        build_agent_model(real, agent, 2)
    other, _ = random_agent(tiny_game(1, 4), "fcpa", 0)
    with pytest.raises(ValueError, match="another"):
        build_agent_model(real, other, 0)
    model = build_agent_model(real, agent, 0)
    with pytest.raises(ValueError, match="abstract table"):
        induced_table(model, np.ones(3), get_mapping("rand-pshar"))


def real_node_of(real: AbstractGame, actions: list[Action]) -> int:
    node = 0
    for action in actions:
        n = real.tree.nodes[node]
        node = n.children[[a.action for a in n.actions].index(action)]
    return node


@pytest.mark.skipif(NO_JIT, reason="no-limit Leduc is slow without the JIT")
@pytest.mark.parametrize("mapping", ["det-arith", "det-pshar"])
@pytest.mark.parametrize("sizes_in", ["abstract", "real"])
def test_induced_behaviour_is_what_the_policy_plays(sizes_in: str, mapping: str) -> None:
    """Deterministic mapping, full purification: wherever the induced behaviour is pure,
    StrategyPolicy plays exactly that action (random deals, random real bets of any size,
    all-ins a quarter of the time), under either size convention."""
    strategy = load_strategy(strategy_path("leduc.nolimit.2p.fcpa.strat"))
    lab_ = AgentLab(strategy)
    real = lab_.real
    fn = get_mapping(mapping)
    played = purify_table(lab_.agent, lab_.table, FULL)
    loaded = LoadedStrategy(strategy, LosslessCards(strategy.game))
    rng = random.Random(7)
    checked = 0
    waited = 0  # decisions where the abstract round had ended before the real one
    for seat in (0, 1):
        behaviour = induced_table(lab_.models_for(sizes_in)[seat], played, fn)
        for hand in range(400):
            d = rng.randrange(real.num_deals)
            holes, board = real.deal_groups(d)
            records: list[dict[str, Any]] = []
            policy = StrategyPolicy(loaded, fn, FULL, seed=hand, sizes_in=sizes_in,
                                    trace=records.append)
            state = BettingState.initial(strategy.game)
            history: list[Action] = []
            while not state.finished:
                if state.player == seat:
                    action = policy.act(view_of(seat, hand, state, holes, board))
                    node = real_node_of(real, history)
                    bucket = int(real.deal_bucket[d, seat, state.round])
                    row = real.table_row(behaviour, node, bucket)
                    if row.max() == 1.0:
                        assert row[[a.action for a in real.tree.nodes[node].actions].index(
                            action)] == 1.0, (state.betting, action, row)
                        checked += 1
                else:
                    kinds = state.legal_actions()
                    kind = rng.choice(kinds)
                    if kind is ActionKind.RAISE:  # small bets half the time: translations
                        bounds = state.raise_bounds()
                        assert bounds is not None
                        draw = rng.random()
                        to = bounds[0] + rng.randrange(2) if draw < 0.4 else \
                            bounds[1] if draw < 0.65 else rng.randint(*bounds)
                        action = Action(kind, min(to, bounds[1]))
                    else:
                        action = Action(kind)
                history.append(action)
                state = state.apply(action)
            waited += policy.stats.waiting_fallbacks
            translated = [t for r in records for t in r["translations"] if "x" in t]
            assert all(t["sizes_in"] == sizes_in for t in translated)
    assert checked > 800
    assert waited > 0


@pytest.mark.skipif(NO_JIT, reason="no-limit Leduc is slow without the JIT")
def test_leduc_conventions_in_the_lab() -> None:
    """Both conventions measured on the bundled fcpa file: the lab's default is the
    policy's, a convention changes the figures, ``real`` never misreads an all-in."""
    strategy = load_strategy(strategy_path("leduc.nolimit.2p.fcpa.strat"))
    value = lab.strategy_real_value(strategy.game)
    rows = lab.measure_strategy(strategy, ["det-arith", "rand-pshar"], ["none"], value=value,
                                conventions=SIZE_CONVENTIONS)
    by = {(r.mapping, r.sizes_in): r for r in rows}
    assert len(by) == 4
    lab_ = AgentLab(strategy)
    assert lab_.sizes_in == DEFAULT_SIZE_CONVENTION
    assert lab_.models[0].sizes_in == DEFAULT_SIZE_CONVENTION
    for m in ("det-arith", "rand-pshar"):
        fig = lab_.measure(get_mapping(m), NONE, value)
        assert fig.best_responses == by[(m, DEFAULT_SIZE_CONVENTION)].best_responses
        assert by[(m, "real")].extra["all_in_misreads"] == 0
        assert by[(m, "abstract")].extra["all_in_misreads"] > 0
        assert by[(m, "real")].average != by[(m, "abstract")].average
        for r in (by[(m, "real")], by[(m, "abstract")]):
            assert r.seat(0) >= -r.value_error and r.seat(1) >= -r.value_error
    assert lab.parse_conventions(None) == [DEFAULT_SIZE_CONVENTION]
    assert lab.parse_conventions("all") == list(SIZE_CONVENTIONS)
    with pytest.raises(ValueError, match="size convention"):
        lab.parse_conventions("abstract,chips")
    table = lab.format_convention_table(rows)
    assert table.count("sizes in real") == 1 and "det-arith" in table


@pytest.mark.skipif(NO_JIT, reason="no-limit Leduc is slow without the JIT")
def test_leduc_figures_are_consistent() -> None:
    strategy = load_strategy(strategy_path("leduc.nolimit.2p.fcpa.strat"))
    value = lab.strategy_real_value(strategy.game)
    assert value is not None and value.error < 1e-3
    manifest_value = strategy.meta["game_value"][0]  # the abstract game's, for scale
    assert abs(value.values[0] - manifest_value) < 0.01
    rows = lab.measure_strategy(strategy, list(BUILTIN_MAPPINGS), list(lab.PURIFICATIONS),
                                value=value)
    assert len(rows) == 21
    for r in rows:
        assert r.seat(0) >= -value.error and r.seat(1) >= -value.error, r
        assert r.average == pytest.approx((r.seat(0) + r.seat(1)) / 2, abs=1e-12)
    # the abstract best response is available to the real one: the real one is no worse
    none = {r.mapping: r for r in rows if r.purification == "none"}
    abstract_avg = sum(strategy.meta["best_responses"]) / 2
    assert all(r.average >= abstract_avg - 1e-6 for r in none.values())


# --------------------------------------------------------------------------- CLI


def test_cli_exploit_half_street(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["translation", "exploit", "--game", "clairvoyance", "--stacks", "1,3",
                 "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    assert "rand-pshar" in out and "n=3" in out
    lines = (tmp_path / "clairvoyance.csv").read_text().splitlines()
    assert len(lines) == 1 + 2 * 7 and lines[0].startswith("game,abstraction,mapping")
    code = main(["translation", "exploit", "--game", "nl-kuhn", "--stacks", "1",
                 "--abstraction", "0.4", "--mappings", "rand-pshar,det-geo", "--purify", "all"])
    assert code == 0
    out = capsys.readouterr().out
    assert out.count("nl-kuhn {fold, check, 0.4, all-in}") == 3
    assert main(["translation", "exploit", "--game", "nl-kuhn", "--mappings", "nope"]) == 1
    assert "expected a mapping name" in capsys.readouterr().err


@pytest.mark.skipif(NO_JIT, reason="no-limit Leduc is slow without the JIT")
def test_cli_exploit_leduc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["translation", "exploit", "--game", "nl-leduc", "--mappings", "rand-pshar",
                 "--purify", "none,full", "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "seat 0" in out and "average" in out and "rand-pshar" in out
    assert len((tmp_path / "nl-leduc.csv").read_text().splitlines()) == 3
    assert main(["translation", "exploit", "--game", "nl-leduc", "--stacks", "3"]) == 1
    code = main(["translation", "exploit", "--game", "nl-leduc", "--mappings", "det-arith",
                 "--sizes-in", "all", "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "sizes in abstract" in out and "sizes in real" in out and "lower" in out
    rows = json.loads((tmp_path / "nl-leduc.json").read_text())
    assert [r["sizes_in"] for r in rows] == ["abstract", "real"]
    assert rows[1]["all_in_misreads"] == 0 < rows[0]["all_in_misreads"]
    assert main(["translation", "exploit", "--game", "clairvoyance", "--sizes-in",
                 "real"]) == 1
    assert main(["translation", "exploit", "--game", "nl-leduc", "--sizes-in", "chips"]) == 1


def test_cli_best_size_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["translation", "best-size", "--stacks", "1", "--mappings", "rand-pshar",
                 "--iterations", "2000", "--out", str(tmp_path)])
    assert code == 0
    assert "best X" in capsys.readouterr().out
    assert (tmp_path / "best-size.json").exists()
    pytest.importorskip("matplotlib")
    code = main(["translation", "plot", "--out", str(tmp_path), "--stacks", "1,3",
                 "--iterations", "2000", "--ab", "0.01,1"])
    assert code == 0
    for name in ("mappings.png", "exploitability.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------- no JIT


@pytest.mark.skipif(NO_JIT, reason="already running without the JIT")
def test_kernels_as_plain_python() -> None:
    """The ``small`` tests of this file with NUMBA_DISABLE_JIT=1."""
    run_without_jit(__file__)


@pytest.mark.parametrize(
    ("game", "spec", "needle"),
    [
        # a 6 KB spec was echoed whole (nl-leduc: as an OSError about the file name)
        ("nl-leduc", "{" + "[" * 6000, "expected a bundled no-limit Leduc abstraction (fcpa, "
         "fchpa), got '{[[["),
        ("nl-kuhn", "{" + "[" * 6000, "or pot fractions like '0.4'), got '{[[["),
        ("nl-kuhn", "inf", "expected at most 64 positive finite pot fractions, got 'inf'"),
        ("nl-kuhn", ",".join(["0.5"] * 65), "expected at most 64 positive finite"),
    ],
)
def test_exploit_abstraction_errors_are_short(
        capsys: pytest.CaptureFixture[str], game: str, spec: str, needle: str) -> None:
    assert main(["translation", "exploit", "--game", game, "--abstraction", spec]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("acpc-strategy: error: ") and "\n" not in err
    assert needle in err and len(err) < 300, err[:300]

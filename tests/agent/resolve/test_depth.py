"""Depth-limited re-solving (:mod:`agent.resolve.depth`): the tiny no-limit Leduc's round-0
subgame stopped at the board (depth 1), its continuations held fixed for both players, solved
and measured against the slow oracles of ``oracle.py``; a leaf's value; the biased rows; the
re-solver with a depth that covers the game (the same numbers as without one) and nested
through a leaf (bundled no-limit Leduc ``fcpa``)."""

from __future__ import annotations

import numpy as np
import pytest

from agent.acpc.betting import CALL, Action, ActionKind, BettingState
from agent.acpc.cards import deck_for
from agent.acpc.errors import UsageError
from agent.data import strategy_path
from agent.resolve import ResolveConfig, Resolver
from agent.resolve.depth import CONTINUATIONS, biased, continuation_strategy
from agent.resolve.gadgets import GADGETS, Subgame, evaluate, solve
from agent.resolve.tree import DECISION, PublicTree, build_tree
from agent.strategy.fileformat import Strategy, load_strategy
from tests.agent.resolve import oracle
from tests.agent.resolve.test_gadgets import tiny


def random_rows(tree: PublicTree, rng: np.random.Generator) -> np.ndarray:
    """Random rows at every decision node."""
    rows = np.zeros((len(tree.hands), tree.num_edges))
    for n in np.flatnonzero(tree.kind == DECISION):
        s, m = int(tree.child_start[n]), int(tree.num_children[n])
        rows[:, s: s + m] = rng.dirichlet(np.ones(m), size=len(tree.hands))
    return rows


def limited(agent: int, seed: int, labels: tuple[str, ...] = CONTINUATIONS,
            freeze: bool = False) -> Subgame:
    """The tiny game's round-0 subgame at depth 1 with random ranges, values, gifts and
    continuation rows (the opponent's biased per continuation, bias 5)."""
    game = tiny()
    rng = np.random.default_rng(seed)
    path = ([] if BettingState.initial(game).player == agent else [CALL]) + (
        [CALL] if freeze else [])
    tree = build_tree(game, BettingState.initial(game), (), (1.0,), path, depth=1,
                      continuations=labels, leaf_player=1 - agent)
    assert tree.depth_limited and tree.continuations == labels
    n = len(tree.hands)
    frozen = {}
    if freeze:
        node = next(p for p in tree.path_nodes if tree.kind[p] == DECISION and
                    tree.player[p] == agent)
        frozen[node] = rng.dirichlet(np.ones(int(tree.num_children[node])), size=n)
    cont = continuation_strategy(tree, agent, random_rows(tree, rng),
                                 random_rows(tree, rng), 5.0)
    valid = tree.valid[0]
    return Subgame(tree, agent, rng.uniform(0.1, 1.0, n) * valid,
                   rng.uniform(0.0, 1.0, n) * valid, rng.normal(0.0, 0.05, n) * valid,
                   rng.uniform(0.0, 0.02, n) * valid, 1.0 / float(tree.compat[0].sum()),
                   frozen, cont)


@pytest.mark.parametrize("gadget", GADGETS)
@pytest.mark.parametrize(("agent", "seed", "labels", "freeze"), [
    (0, 1, ("blueprint",), False), (1, 2, CONTINUATIONS, True)])
def test_depth_limited_cfr_plus_matches_the_oracle(gadget: str, agent: int, seed: int,
                                                   labels: tuple[str, ...],
                                                   freeze: bool) -> None:
    """The vectorised CFR+ on a depth-limited subgame (single- and multi-valued leaves)
    gives the per-pair recursion's average strategies and gadget choice, and its
    exploitability estimate is the oracle's (continuations held by both players; the
    opponent's choice at the leaf is its own)."""
    sub = limited(agent, seed, labels, freeze)
    got = solve(sub, gadget, 4)
    want, want_root = oracle.cfr_plus(sub, gadget, 4)
    np.testing.assert_allclose(got.strategy, want, atol=1e-9)
    np.testing.assert_allclose(got.opp_root, want_root, atol=1e-9)
    expl = oracle.exploitability(sub, gadget, got.strategy, got.opp_root)
    assert got.exploitability == pytest.approx(expl, rel=1e-9, abs=1e-12)
    assert got.exploitability > 0


def test_a_multi_valued_leaf_is_worth_the_best_continuation_per_hand() -> None:
    """At a leaf the opponent's best-response value (continuations held) is, hand by hand,
    the largest of its continuations' values, each of which is the oracle's recursion."""
    sub = limited(0, 3)
    tree = sub.tree
    assert sub.continuation is not None
    above = ((tree.under < 0) & (tree.kind == DECISION))[tree.edge_nodes()]
    strategy = sub.continuation + random_rows(tree, np.random.default_rng(4)) * above
    ones = tree.valid[0]
    values = evaluate(tree, 1, True, strategy, (sub.agent_reach, ones), sub.scale,
                      sub.tree.continuation_nodes())
    both = set(oracle.held(sub))
    leaves = np.flatnonzero(tree.leaf)
    assert len(leaves) >= 1
    differ = 0
    for leaf in leaves:
        s = int(tree.child_start[leaf])
        kids = [int(c) for c in tree.children[s: s + int(tree.num_children[leaf])]]
        assert len(kids) == len(CONTINUATIONS)
        np.testing.assert_array_equal(values[leaf], values[kids].max(axis=0))
        differ += int(np.ptp(values[kids], axis=0).max() > 1e-9)
        for h in range(len(tree.hands)):
            weights = {a: float(sub.agent_reach[a]) *
                       _agent_reach_to(tree, strategy, leaf, a) for a in range(len(tree.hands))
                       if a != h}
            for c in kids:
                want = oracle.best_value(tree, c, 1, h, weights, strategy, both, sub.scale)
                assert values[c, h] == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert differ  # the continuations are worth different amounts


def _agent_reach_to(tree: PublicTree, strategy: np.ndarray, node: int, hand: int) -> float:
    """The agent's (seat 0) probability of its own actions to ``node`` with ``hand``."""
    out = 1.0
    n = node
    while tree.parent[n] >= 0:
        p = int(tree.parent[n])
        if tree.kind[p] == DECISION and tree.player[p] == 0:
            s = int(tree.child_start[p])
            e = s + [int(c) for c in tree.children[s: s + int(tree.num_children[p])]].index(n)
            out *= float(strategy[hand, e])
        n = p
    return out


def test_biased_rows() -> None:
    """A biased continuation multiplies the probability of its kind of action by the
    factor at the opponent's nodes and renormalises; the blueprint continuation, and the
    agent's rows in every continuation, are the rows given."""
    sub = limited(0, 5)
    tree = sub.tree
    rng = np.random.default_rng(6)
    opp = random_rows(tree, rng)
    mine = random_rows(tree, rng)
    cont = continuation_strategy(tree, 0, mine, opp, 5.0)
    checked = 0
    for n in np.flatnonzero(tree.continuation_nodes()):
        s, m = int(tree.child_start[n]), int(tree.num_children[n])
        label = tree.continuations[int(tree.under[n])]
        got = cont[:, s: s + m]
        if tree.player[n] == 0:
            np.testing.assert_array_equal(got, mine[:, s: s + m])
            continue
        kinds = [a.kind for a in tree.edge_actions(int(n))]
        want = opp[:, s: s + m].copy()
        pick = {"fold": ActionKind.FOLD, "call": ActionKind.CALL,
                "raise": ActionKind.RAISE}.get(label)
        for a, kind in enumerate(kinds):
            if kind is pick:
                want[:, a] *= 5.0
        want /= want.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        checked += pick in kinds
    assert checked > 10
    same = biased(tree, opp, "blueprint", 5.0, np.ones(tree.num_nodes, np.bool_))
    np.testing.assert_array_equal(same, opp)


@pytest.fixture(scope="module")
def fcpa() -> Strategy:
    return load_strategy(strategy_path("leduc.nolimit.2p.fcpa.strat"))


def _hand(fcpa: Strategy, config: ResolveConfig) -> list[tuple[np.ndarray, object]]:
    """The agent in seat 0 facing an off-tree half-pot bet, then the next round."""
    game = fcpa.game
    resolver = Resolver(fcpa, config)
    hand = resolver.new_hand(0)
    hand.decide(BettingState.initial(game), ())
    state = BettingState.initial(game).apply(CALL).apply(Action(ActionKind.RAISE, 2))
    first = hand.decide(state, ())
    nxt = state.apply(CALL)
    nxt = nxt if nxt.player == 0 else nxt.apply(CALL)
    second = hand.decide(nxt, (deck_for(game)[2],))
    return [(d.probs, d.stats) for d in (first, second)]


def test_a_depth_covering_the_game_changes_nothing(fcpa: Strategy) -> None:
    """Leduc has two rounds: depth 2 (and more) is the whole game, the same numbers as no
    depth limit; depth 1 stops the round-0 subgame at the board (multi-valued leaves:
    four continuations per leaf)."""
    base = _hand(fcpa, ResolveConfig(gadget="resolve", iterations=30))
    for depth in (2, 3):
        got = _hand(fcpa, ResolveConfig(gadget="resolve", iterations=30, depth=depth))
        for (p, s), (q, t) in zip(base, got, strict=True):
            np.testing.assert_array_equal(p, q)
            assert s.exploitability == t.exploitability  # type: ignore[attr-defined]
            assert t.leaf == "" and t.leaves == 0  # type: ignore[attr-defined]
    single = _hand(fcpa, ResolveConfig(gadget="resolve", iterations=30, depth=1,
                                       leaf="blueprint"))
    multi = _hand(fcpa, ResolveConfig(gadget="resolve", iterations=30, depth=1))
    s1, m1 = single[0][1], multi[0][1]
    assert (s1.depth, s1.leaf, m1.leaf) == (1, "blueprint", "multi")  # type: ignore
    assert s1.leaves == m1.leaves > 0  # type: ignore[attr-defined]
    assert m1.nodes > 3 * s1.nodes  # type: ignore[attr-defined]
    assert not np.allclose(single[0][0], base[0][0])
    # the next round is re-solved nested from the depth-limited plan (not from the
    # blueprint's history): the root's ranges are the plan's at the leaf
    assert multi[1][1].reason == "new round" and multi[1][1].leaf == ""  # type: ignore


def test_nested_root_through_a_leaf(fcpa: Strategy) -> None:
    """After a depth-limited re-solve, the next round's root comes from its plan: the
    agent's range is its reach at the leaf under the plan, the opponent's values are its
    best response against the agent's blueprint continuation (the first copy)."""
    game = fcpa.game
    resolver = Resolver(fcpa, ResolveConfig(gadget="resolve", iterations=30, depth=1))
    hand = resolver.new_hand(0)
    hand.decide(BettingState.initial(game), ())
    state = BettingState.initial(game).apply(CALL).apply(Action(ActionKind.RAISE, 2))
    hand.decide(state, ())
    plan = hand.plan
    assert plan is not None and plan.tree.depth_limited and plan.root is not None
    nxt = state.apply(CALL)
    board = (deck_for(game)[2],)
    from agent.resolve.gadgets import reaches
    from agent.resolve.resolver import round_start
    info = hand._nested_root(nxt, round_start(nxt), board)
    assert info is not None
    tree = plan.tree
    assert tree.follow([CALL, Action(ActionKind.RAISE, 2), CALL], board) < 0  # ends at leaf
    n = tree.child_for(tree.child_for(tree.child_for(0, CALL), Action(ActionKind.RAISE, 2)),
                       CALL)
    assert tree.leaf[n]
    chance = int(tree.children[tree.child_start[n]])
    root, perm = tree.dealt(chance, board)
    assert root >= 0 and perm is None
    valid = tree.valid[int(tree.board_of[root])]
    reach = reaches(tree, plan.strategy, (plan.root.agent_reach, plan.root.opp_reach))
    np.testing.assert_allclose(info.agent_reach, reach[n, 0] * valid, rtol=1e-12)
    np.testing.assert_allclose(info.opp_reach, reach[n, 1] * valid, rtol=1e-12)
    # the opponent's values: its best response in the first continuation (the agent's
    # blueprint there), with the leaf's whole reach
    walk = plan.strategy.copy()
    s = int(tree.child_start[n])
    walk[:, s: s + int(tree.num_children[n])] = 0.0
    walk[:, s] = 1.0
    ones = tree.valid[0]
    values = evaluate(tree, 1, True, walk, (plan.root.agent_reach, ones), plan.root.scale)
    mult = float(tree.chance_weight[chance])
    np.testing.assert_allclose(info.cbv, values[root] * valid * mult, rtol=1e-12)
    assert info.cbv.any()


def test_bad_depth_settings_get_one_line() -> None:
    for bad, message in [({"depth": 0}, "depth of at least 1"),
                         ({"depth": True}, "depth of at least 1"),
                         ({"leaf": "deep"}, "leaf kind"),
                         ({"continuations": ("fold",)}, "blueprint first"),
                         ({"continuations": ("blueprint", "blueprint")}, "distinct"),
                         ({"bias": 0.0}, "bias factor"),
                         ({"bias": float("inf")}, "bias factor")]:
        with pytest.raises(UsageError, match=message):
            ResolveConfig(**bad)  # type: ignore[arg-type]

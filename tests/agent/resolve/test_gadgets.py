"""The re-solver's gadgets and CFR+ kernels against the slow oracles of ``oracle.py``.

A tiny no-limit Leduc (stacks 3, so every tree is small) gives subgames with a chance node
(the round-0 subgame is the whole game) and without (a round-1 subgame with its board);
ranges, alternative values, gifts and a frozen agent node are random. The tests whose names
contain ``small`` run again with ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import numpy as np
import pytest

from agent.acpc.betting import CALL, Action, ActionKind, BettingState
from agent.acpc.cards import deck_for
from agent.acpc.gamedef import Game, parse_gamedef
from agent.resolve.gadgets import GADGETS, Subgame, gadget_exploitability, solve
from agent.resolve.tree import CHANCE, DECISION, build_tree
from tests.agent.resolve import oracle
from tests.support import NO_JIT, run_without_jit

TINY = """GAMEDEF
nolimit
numPlayers = 2
numRounds = 2
stack = 3 3
blind = 1 1
firstPlayer = 1 1
numSuits = 2
numRanks = 3
numHoleCards = 1
numBoardCards = 0 1
END GAMEDEF
"""


def tiny(hole: int = 1) -> Game:
    """The tiny game; ``hole=2``: two hole cards (15 hands of 6 cards, hold'em's card
    blocking: two hands may share one card)."""
    text = TINY.replace("numHoleCards = 1", f"numHoleCards = {hole}")
    return parse_gamedef(text, f"tiny-leduc-{hole}")


def subgame(round_: int, agent: int, seed: int, freeze: bool = False,
            hole: int = 1) -> Subgame:
    """A random subgame of the tiny game: round 0 (the whole game) or round 1 after
    ``r2c`` with the first card on the board."""
    game = tiny(hole)
    rng = np.random.default_rng(seed)
    state = BettingState.initial(game)
    board: tuple[int, ...] = ()
    path: list[Action] = []
    if round_ == 1:
        state = state.apply(Action(ActionKind.RAISE, 2)).apply(CALL)
        board = (deck_for(game)[0],)
    if freeze:  # the agent acted on the path: its first decision is held fixed
        first = state.player
        if first != agent:
            path.append(CALL)
        path.append(CALL)
    tree = build_tree(game, state, board, (1.0,), path)
    n = len(tree.hands)
    valid = tree.valid[int(tree.board_of[0])]
    frozen = {}
    if freeze:
        node = next(p for p in tree.path_nodes if tree.kind[p] == DECISION and
                    tree.player[p] == agent)
        k = int(tree.num_children[node])
        rows = rng.dirichlet(np.ones(k), size=n)
        frozen[node] = rows
    scale = 1.0 / float(tree.compat[int(tree.board_of[0])].sum())
    return Subgame(tree, agent, rng.uniform(0.1, 1.0, n) * valid,
                   rng.uniform(0.0, 1.0, n) * valid, rng.normal(0.0, 0.05, n) * valid,
                   rng.uniform(0.0, 0.02, n) * valid, scale, frozen)


CASES = [(0, 0, 1, False), (0, 1, 2, True), (1, 1, 3, False), (1, 0, 4, True)]


def check_cfr_plus(gadget: str, round_: int, agent: int, seed: int, freeze: bool,
                   hole: int = 1, iterations: int = 4) -> None:
    sub = subgame(round_, agent, seed, freeze, hole)
    got = solve(sub, gadget, iterations)
    want, want_root = oracle.cfr_plus(sub, gadget, iterations)
    np.testing.assert_allclose(got.strategy, want, atol=1e-9)
    np.testing.assert_allclose(got.opp_root, want_root, atol=1e-9)


@pytest.mark.parametrize("gadget", GADGETS)
def test_small_cfr_plus_matches_the_oracle(gadget: str) -> None:
    """The vectorised CFR+ with each gadget and the per-pair recursion over the explicit
    gadget game give the same average strategies and gadget choice (the whole tiny game,
    a frozen agent node, chance dealing the board and all-in showdowns)."""
    check_cfr_plus(gadget, *CASES[1])


@pytest.mark.parametrize("gadget", GADGETS)
def test_two_hole_cards_match_the_oracle(gadget: str) -> None:
    """With two hole cards (hands that share one card: the kernels' per-card sums and
    sorted showdowns): the gadget game's exploitability of random strategies equals the
    oracle's in every case (on the board and with a chance node), and two CFR+ iterations
    of the whole game give the oracle's rows. (Not more, nor on the board: this 6-card
    deck makes many exact ties between two actions' values, e.g. a fold and a call that
    both lose 1.5 chips; the oracle's sums leave rounding noise there that the kernels'
    do not, or the other way round, regret matching turns a noise-positive regret into
    another row, and the trajectories part, both right.)"""
    for case in CASES:
        check_exploitability(gadget, *case, hole=2)
    check_cfr_plus(gadget, *CASES[0], hole=2, iterations=2)


@pytest.mark.parametrize("gadget", GADGETS)
@pytest.mark.parametrize(("round_", "agent", "seed", "freeze"), [CASES[0], CASES[3]])
def test_cfr_plus_matches_the_oracle(gadget: str, round_: int, agent: int, seed: int,
                                     freeze: bool) -> None:
    """As above, in other seats and rounds."""
    check_cfr_plus(gadget, round_, agent, seed, freeze)


@pytest.mark.parametrize("gadget", GADGETS)
@pytest.mark.parametrize(("round_", "agent", "seed", "freeze"), CASES)
def test_exploitability_matches_the_oracle(gadget: str, round_: int, agent: int,
                                                 seed: int, freeze: bool) -> None:
    """The gadget game's exploitability of random strategies, vectorised and by explicit
    best responses."""
    check_exploitability(gadget, round_, agent, seed, freeze)


def check_exploitability(gadget: str, round_: int, agent: int, seed: int, freeze: bool,
                         hole: int = 1) -> None:
    sub = subgame(round_, agent, seed, freeze, hole)
    rng = np.random.default_rng(seed + 100)
    tree = sub.tree
    strategy = np.zeros((len(tree.hands), tree.num_edges))
    for n in np.flatnonzero(tree.kind == DECISION):
        s, m = int(tree.child_start[n]), int(tree.num_children[n])
        strategy[:, s: s + m] = sub.frozen[n] if n in sub.frozen else rng.dirichlet(
            np.ones(m), size=len(tree.hands))
    live = sub.live()
    if gadget == "unsafe":
        root = sub.opp_reach.copy()
    elif gadget == "resolve":
        root = rng.uniform(0, 1, len(live)) * live
    else:
        root = rng.uniform(0, 1, len(live)) * live
        root /= root.sum()
    frozen = np.zeros(tree.num_nodes, np.bool_)
    frozen[list(sub.frozen)] = True
    got, _, _ = gadget_exploitability(sub, gadget, strategy, root, frozen)
    want = oracle.exploitability(sub, gadget, strategy, root)
    assert got > 0
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("gadget", GADGETS)
def test_exploitability_falls_with_the_budget(gadget: str) -> None:
    """The re-solved subgame's exploitability (the accuracy estimate) falls with the
    iterations, towards 0."""
    for round_, agent, seed, freeze in CASES:
        sub = subgame(round_, agent, seed, freeze)
        figures = [solve(sub, gadget, it).exploitability for it in (4, 32, 256)]
        assert figures[0] > figures[1] > figures[2], (round_, figures)
        assert figures[2] < 0.05 * figures[0]


def test_safe_gadgets_keep_margins_when_the_blueprint_does() -> None:
    """When the alternative values are the best responses to a strategy the agent could
    play, the safe gadgets find a strategy with every margin >= 0 (up to convergence)."""
    sub = subgame(1, 0, 7)
    tree = sub.tree
    rng = np.random.default_rng(8)
    blue = np.zeros((len(tree.hands), tree.num_edges))
    for n in np.flatnonzero(tree.kind == DECISION):
        s, m = int(tree.child_start[n]), int(tree.num_children[n])
        blue[:, s: s + m] = rng.dirichlet(np.ones(m), size=len(tree.hands))
    from agent.resolve.gadgets import evaluate
    ones = tree.valid[0]
    cbv = evaluate(tree, 1, True, blue, (sub.agent_reach, ones), sub.scale)[0]
    sub = Subgame(tree, 0, sub.agent_reach, sub.opp_reach, cbv, np.zeros(len(cbv)),
                  sub.scale)
    for gadget in ("resolve", "maxmargin"):
        sol = solve(sub, gadget, 2000)
        assert sol.min_margin > -1e-4 * float(np.abs(cbv).max()), gadget


@pytest.mark.skipif(NO_JIT, reason="already running without the JIT")
def test_small_suit_classes_give_every_board() -> None:
    """A whole-game tree dealing one board per suit class (``suits``: the chance edge of a
    class adds its child's values once per board of the class, permuted) gives the values
    of the tree over every board, for both players, following a strategy and best
    responding, when the strategy above the chance node is the same under the suits (the
    rows below it: those of the class's board, permuted onto the others)."""
    from agent.resolve.gadgets import evaluate
    from agent.resolve.tree import suit_maps

    game = tiny(2)
    start = BettingState.initial(game)
    full = build_tree(game, start, (), (1.0,))
    merged = build_tree(game, start, (), (1.0,), hands=full.hands, suits=True)
    assert len(merged.boards) < len(full.boards)
    assert merged.perms.shape[0] == 6 * int((merged.kind == CHANCE).sum())  # every board
    maps = [fwd for _, fwd in suit_maps(game, full.hands)]
    rng = np.random.default_rng(5)
    rows = rng.uniform(0.1, 1.0, (len(full.hands), merged.num_edges))
    for n in np.flatnonzero(merged.kind == DECISION):
        s, m = int(merged.child_start[n]), int(merged.num_children[n])
        block = rows[:, s: s + m] / rows[:, s: s + m].sum(axis=1, keepdims=True)
        if merged.states[n].round == 0:  # the same for suit-isomorphic hands
            block = sum(block[f] for f in maps) / len(maps)
        rows[:, s: s + m] = block
    spread = np.zeros((len(full.hands), full.num_edges))

    def copy(f: int, g: int, perm: np.ndarray | None) -> None:
        s, m = int(full.child_start[f]), int(full.num_children[f])
        t = int(merged.child_start[g])
        if full.kind[f] == CHANCE:
            for e in range(s, s + m):
                child, p = merged.dealt(g, full.actions[e])  # type: ignore[arg-type]
                copy(int(full.children[e]), child, p)
        elif full.kind[f] == DECISION:
            block = rows[:, t: t + m]
            spread[:, s: s + m] = block if perm is None else block[perm]
            for a in range(m):
                copy(int(full.children[s + a]), int(merged.children[t + a]), perm)

    copy(0, 0, None)
    reach = rng.uniform(0.2, 1.0, len(full.hands))
    reach = sum(reach[f] for f in maps) / len(maps)
    for u in (0, 1):
        for best in (False, True):
            want = evaluate(full, u, best, spread, (reach, reach), 0.01)[0]
            got = evaluate(merged, u, best, rows, (reach, reach), 0.01)[0]
            np.testing.assert_allclose(got, want, atol=1e-12)


def test_kernels_as_plain_python() -> None:
    """The ``small`` tests again with NUMBA_DISABLE_JIT=1."""
    run_without_jit(__file__)

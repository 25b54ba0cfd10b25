"""The size convention of translation (:mod:`agent.abstraction.convention`).

Hand-built no-limit Leduc states (stacks 12, ante 1) where an earlier translation has made
the real pot differ from the abstract one and a real all-in arrives: what each convention
reads, with every size worked out by hand in chips. Then the merging of duplicates after
clamping, the ``abstract`` convention against the formula the policy used before the option
existed, and the ``real`` convention against chip arithmetic over random states.
"""

from __future__ import annotations

import math
import random

import pytest

from agent.abstraction.actions import (
    ALL_IN,
    PRESETS,
    BettingAbstraction,
    BettingTree,
    Node,
    build_tree,
)
from agent.abstraction.convention import (
    DEFAULT_SIZE_CONVENTION,
    SIZE_CONVENTIONS,
    bracket_sizes,
    parse_size_convention,
    read_bet,
)
from agent.abstraction.translation import bracket, get_mapping
from agent.acpc.betsize import pot_fraction
from agent.acpc.betting import ActionKind, BettingState, parse_betting
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from tests.support import random_playout


@pytest.fixture(scope="module")
def nl_leduc() -> Game:
    return load_game("leduc.nolimit.2p.game")


def node_at(tree: BettingTree, betting: str) -> Node:
    (node,) = [n for n in tree.nodes if n.state.betting == betting]
    return node


def action_of(node: Node, reading_index: int, options: tuple[int, ...]) -> str:
    return str(node.actions[options[reading_index]].action)


def test_parse_size_convention() -> None:
    assert parse_size_convention(None) == DEFAULT_SIZE_CONVENTION
    assert [parse_size_convention(c.upper()) for c in SIZE_CONVENTIONS] == ["abstract", "real"]
    with pytest.raises(AbstractionError, match=r"expected a size convention .*got 'chips'"):
        parse_size_convention("chips")


def test_real_all_in_after_diverged_pots_read_as_a_check(nl_leduc: Game) -> None:
    """P0 opens to 7 (x = 6/2 = 3), read by Det-Arith as the abstract pot bet to 3 (3 <=
    (1 + 5.5)/2); P1 calls. Real pot 14, abstract pot 6. P0 goes all-in to 12 in round 2:
    x = 5/14 in the real state."""
    tree = build_tree(nl_leduc, PRESETS["fcpa"])
    root = tree.nodes[0]
    first = read_bet(BettingState.initial(nl_leduc), root, 7, "abstract")
    assert (first.x, first.a, first.b) == (3.0, 1.0, 5.5)  # to 3 = 2/2, to 12 = 11/2
    assert first.choose(get_mapping("det-arith"), 0.999)[1] == \
        [str(a.action) for a in root.actions].index("r3")
    for convention in SIZE_CONVENTIONS:  # no divergence yet: both read the same
        assert read_bet(BettingState.initial(nl_leduc), root, 7, convention).sizes == \
            first.sizes
    node = node_at(tree, "r3c/")
    real = parse_betting(nl_leduc, "r7c/")
    # abstract: sizes in the abstract state (pot 6): pot to 9 = 6/6, all-in to 12 = 9/6
    a = read_bet(real, node, 12, "abstract")
    assert a.sizes == (0.0, 1.0, 1.5)
    assert a.x == 5 / 14 and (a.a, a.b) == (0.0, 1.0)
    f, chosen = a.choose(get_mapping("det-arith"), 0.999)
    assert f == 1.0 and node.actions[chosen].kind is ActionKind.CALL  # the all-in as a check
    f, _ = a.choose(get_mapping("rand-pshar"), 0.0)
    assert f == pytest.approx((1 - 5 / 14) / (1 + 5 / 14))  # (B - x)(1 + A)/((B - A)(1 + x))
    # real: the pot bet re-expressed in the real state (pot 14) is to 7 + 14 = 21, clamped
    # to the stack: merged into the all-in, whose size is the real all-in's, 5/14
    r = read_bet(real, node, 12, "real")
    assert r.sizes == (0.0, 5 / 14)
    assert r.all_in and r.certain and r.x == 5 / 14
    f, chosen = r.choose(get_mapping("det-arith"), 0.999)
    assert f == 1.0 and node.actions[chosen].fraction == ALL_IN
    assert str(node.actions[chosen].action) == "r12"


def test_real_all_in_after_diverged_pots_read_as_a_pot_bet(nl_leduc: Game) -> None:
    """P0 opens to 5 (x = 2, read as the pot bet to 3), P1 calls: real pot 10, abstract 6.
    The all-in to 12 measures 7/10 in the real state."""
    tree = build_tree(nl_leduc, PRESETS["fcpa"])
    node = node_at(tree, "r3c/")
    real = parse_betting(nl_leduc, "r5c/")
    a = read_bet(real, node, 12, "abstract")
    assert (a.x, a.a, a.b) == (0.7, 0.0, 1.0)
    _, chosen = a.choose(get_mapping("det-arith"), 0.0)  # 0.7 > (0 + 1) / 2
    assert str(node.actions[chosen].action) == "r9"  # the abstract pot bet
    r = read_bet(real, node, 12, "real")
    assert r.all_in and str(node.actions[r.choose(get_mapping("det-arith"), 0.0)[1]].action) \
        == "r12"
    # a smaller real bet (to 9: 2/10) is bracketed by the call and the real all-in's size
    # (the pot bet, to 5 + 10 = 15, is clamped to 12 and merged into the all-in)
    small = read_bet(real, node, 9, "real")
    assert small.sizes == (0.0, 0.7) and (small.x, small.a, small.b) == (0.4, 0.0, 0.7)
    assert not small.all_in


def test_real_all_in_when_the_pots_are_equal(nl_leduc: Game) -> None:
    """No divergence (the real bets were the abstract ones): the conventions agree, and the
    abstract convention reads the all-in as the all-in too (x equals its size)."""
    tree = build_tree(nl_leduc, PRESETS["fchpa"])
    node = node_at(tree, "r3c/")
    real = parse_betting(nl_leduc, "r3c/")
    readings = [read_bet(real, node, to, c) for c in SIZE_CONVENTIONS for to in (5, 8, 12)]
    for a, r in zip(readings[:3], readings[3:], strict=True):
        assert (a.sizes, a.options, a.low, a.high) == (r.sizes, r.options, r.low, r.high)
    assert readings[2].certain and readings[2].x == 1.5


def test_duplicates_after_clamping_merge_like_the_tree(nl_leduc: Game) -> None:
    """Fractions 0.1, 0.25 and 1 plus the all-in. At the abstract node r3c/ (pot 6, raise
    bounds 4..12) they are four raises: 0.6 -> to 4, 1.5 -> to 5 (4.5 rounded up), to 9
    and to 12."""
    tree = build_tree(nl_leduc, BettingAbstraction("tiny", (((0.1, 0.25, 1.0),),)))
    node = node_at(tree, "r3c/")
    assert [str(a.action) for a in node.actions if a.kind is ActionKind.RAISE] == \
        ["r4", "r5", "r9", "r12"]
    frac = {str(a.action): a.fraction for a in node.actions}
    # real cc/ (pot 2, bounds 2..12): 0.1 -> 1.2 -> to 1, 0.25 -> 1.5 -> to 2 (rounded up),
    # both clamped to the minimum 2: the smaller fraction, 0.1, stands for them
    sizes, options = bracket_sizes(parse_betting(nl_leduc, "cc/"), node, "real")
    assert sizes == (0.0, 0.5, 1.0, 5.5)
    assert [frac[str(node.actions[i].action)] for i in options[1:]] == [0.1, 1.0, ALL_IN]
    # a real bet to 2 is read as that one abstract action, with certainty
    reading = read_bet(parse_betting(nl_leduc, "cc/"), node, 2, "real")
    assert reading.certain and node.actions[reading.options[reading.low]].fraction == 0.1
    # real r7c/ (pot 14, bounds 8..12): 0.1 -> 1.4 -> to 8, 0.25 -> 3.5 -> to 11 (10.5 up),
    # the pot -> to 21, clamped to 12: the all-in stands for it
    sizes, options = bracket_sizes(parse_betting(nl_leduc, "r7c/"), node, "real")
    assert sizes == (0.0, 1 / 14, 4 / 14, 5 / 14)
    assert [frac[str(node.actions[i].action)] for i in options[1:]] == [0.1, 0.25, ALL_IN]


def test_without_an_abstract_all_in(nl_leduc: Game) -> None:
    """An abstraction without the all-in: the pot bet clamped to the real stack is the
    real all-in's size itself, so the real all-in reads as it (no all-in rule needed)."""
    tree = build_tree(nl_leduc, BettingAbstraction("fcp", (((1.0,),),), all_in=False))
    node = node_at(tree, "r3c/")
    real = parse_betting(nl_leduc, "r7c/")
    r = read_bet(real, node, 12, "real")
    assert r.sizes == (0.0, 5 / 14) and r.certain and not r.all_in
    assert str(node.actions[r.options[r.low]].action) == "r9"
    a = read_bet(real, node, 12, "abstract")
    assert (a.a, a.b) == (0.0, 1.0)  # 5/14 between the check and the pot (6/6)


def random_pairs(game: Game, tree: BettingTree, count: int, seed: int) -> list[
        tuple[BettingState, Node]]:
    """(real state, abstract node) with the same player and round, a real raise legal:
    the real state from a random playout, the node any of the tree's matching nodes."""
    rng = random.Random(seed)
    by_key: dict[tuple[int, int], list[Node]] = {}
    for n in tree.nodes:
        if not n.is_terminal and any(a.kind is ActionKind.RAISE for a in n.actions):
            by_key.setdefault((n.round, n.player), []).append(n)
    out: list[tuple[BettingState, Node]] = []
    for _ in range(20 * count):
        if len(out) >= count:
            break
        final, _ = random_playout(game, rng)
        s = BettingState.initial(game)
        states = []
        for a in [a for rnd in final.actions for a in rnd]:
            states.append(s)
            s = s.apply(a)
        s = rng.choice(states)
        if s.raise_bounds() is None or (s.round, s.player) not in by_key:
            continue
        out.append((s, rng.choice(by_key[(s.round, s.player)])))
    assert len(out) == count
    return out


@pytest.mark.parametrize("preset", ["fcpa", "fchpa"])
def test_abstract_convention_is_the_previous_formula(nl_leduc: Game, preset: str) -> None:
    tree = build_tree(nl_leduc, PRESETS[preset])
    for real, node in random_pairs(nl_leduc, tree, 300, seed=1):
        kinds = [a.kind for a in node.actions]
        raises = [i for i, k in enumerate(kinds) if k is ActionKind.RAISE]
        old_sizes = [0.0] + [node.actions[i].x for i in raises]
        old_options = [kinds.index(ActionKind.CALL), *raises]
        lo, hi = real.raise_bounds()  # type: ignore[misc]
        for to in range(lo, hi + 1):
            x = pot_fraction(real, to)
            r = read_bet(real, node, to, "abstract")
            assert (list(r.sizes), list(r.options), r.x) == (old_sizes, old_options, x)
            assert (r.low, r.high) == bracket(old_sizes, x) and not r.all_in


@pytest.mark.parametrize("preset", ["fcpa", "fchpa"])
def test_real_convention_is_chip_arithmetic(nl_leduc: Game, preset: str) -> None:
    """Every size is an abstract raise realised in the real state: its fraction of the
    real pot after the call, halves rounded up, clamped to the bounds."""
    tree = build_tree(nl_leduc, PRESETS[preset])
    for real, node in random_pairs(nl_leduc, tree, 300, seed=2):
        lo, hi = real.raise_bounds()  # type: ignore[misc]
        base = real.pot + real.to_call(real.player)
        chips = {}
        for i, a in enumerate(node.actions):
            if a.kind is ActionKind.RAISE:
                to = hi if a.fraction == ALL_IN else min(
                    max(math.floor(real.max_spent + a.fraction * base + 0.5), lo), hi)
                chips[i] = to
        sizes, options = bracket_sizes(real, node, "real")
        assert node.actions[options[0]].kind is ActionKind.CALL and sizes[0] == 0.0
        assert list(sizes) == sorted(set(sizes))  # distinct, ascending
        assert sorted({(to - real.max_spent) / base for to in chips.values()}) == \
            list(sizes[1:])
        for size, i in zip(sizes[1:], options[1:], strict=True):
            assert (chips[i] - real.max_spent) / base == size
            twins = [j for j, to in chips.items() if to == chips[i]]
            want = next((j for j in twins if node.actions[j].fraction == ALL_IN), min(twins))
            assert i == want
        has_all_in = any(a.fraction == ALL_IN for a in node.actions)
        for to in range(lo, hi + 1):
            r = read_bet(real, node, to, "real")
            assert r.x == (to - real.max_spent) / base
            if to == hi and has_all_in:
                assert r.all_in and r.certain
                assert node.actions[r.options[r.low]].fraction == ALL_IN
            else:
                assert (r.low, r.high) == bracket(sizes, r.x)

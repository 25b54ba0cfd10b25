from __future__ import annotations

import pytest

from agent.abstraction.actions import (
    ALL_IN,
    PRESETS,
    build_tree,
    node_actions,
    parse_betting_abstraction,
)
from agent.acpc.betsize import pot_fraction
from agent.acpc.betting import ActionKind, BettingState, parse_betting
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from tests.support import perft


def test_limit_trees_are_the_whole_game(leduc: Game, kuhn3: Game) -> None:
    for game in (leduc, kuhn3):
        tree = build_tree(game, PRESETS["fcpa"])
        decisions, ends = perft(BettingState.initial(game))
        assert len(tree.decision_nodes) == decisions
        assert len(tree.nodes) - len(tree.decision_nodes) == ends


def test_ids_are_preorder_and_children_consistent(nl2: Game) -> None:
    tree = build_tree(nl2, PRESETS["fcpa3"])
    assert len(tree.nodes) == 3122
    for node in tree.nodes:
        assert tree.nodes[node.id] is node
        for k, c in enumerate(node.children):
            child = tree.nodes[c]
            assert child.parent == node.id and c > node.id
            assert child.state == node.state.apply(node.actions[k].action)
        if node.children:
            assert node.children[0] == node.id + 1


def test_same_tree_every_time(nl2: Game) -> None:
    a = build_tree(nl2, PRESETS["fcpa3"])
    b = build_tree(nl2, parse_betting_abstraction(PRESETS["fcpa3"].to_json()))
    assert [n.state.betting for n in a.nodes] == [n.state.betting for n in b.nodes]


def test_fcpa_actions_in_chips(nl2: Game) -> None:
    root = node_actions(BettingState.initial(nl2), PRESETS["fcpa"], 0)
    # small blind facing the big blind: fold, call, pot (to 300), all-in
    assert [str(a.action) for a in root] == ["f", "c", "r300", "r20000"]
    assert root[2].x == pytest.approx(1.0)
    assert root[3].fraction == ALL_IN
    state = parse_betting(nl2, "r300r900r2700r8100")
    acts = node_actions(state, PRESETS["fcpa"], 4)
    # a pot raise would be 24300 > the stack: merged into the all-in
    assert [str(a.action) for a in acts] == ["f", "c", "r20000"]


def test_half_pot_rounding_and_clamp_to_min_raise(nl2: Game) -> None:
    state = parse_betting(nl2, "cc/")  # pot 200: half pot is 100 more, the minimum bet
    acts = node_actions(state, PRESETS["fchpa"], 0)
    assert [str(a.action) for a in acts] == ["c", "r200", "r300", "r20000"]
    assert [a.x for a in acts[1:3]] == [pytest.approx(0.5), pytest.approx(1.0)]
    assert pot_fraction(state, 200) == 0.5


def test_raise_cap(nl2: Game) -> None:
    tree = build_tree(nl2, PRESETS["fcpa3"])
    for node in tree.decision_nodes:
        raises = sum(1 for a in node.state.actions[node.round] if a.kind is ActionKind.RAISE)
        if raises >= 3:
            assert all(a.kind is not ActionKind.RAISE for a in node.actions)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope", "expected a betting abstraction"),
        ('{"fractions": [[[1, 0.5]]]}', "increasing positive pot fractions"),
        ('{"fold": true}', "expected betting abstraction fields"),
        ("{bad json", "expected a JSON betting abstraction"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_betting_abstraction(spec)


def test_tree_size_limit() -> None:
    game = load_game("holdem.nolimit.2p.reverse_blinds.game")
    with pytest.raises(ValueError, match="at most 1000 nodes"):
        build_tree(game, PRESETS["fchpa"], limit=1000)

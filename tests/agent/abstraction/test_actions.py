from __future__ import annotations

import pytest

from agent.abstraction.actions import (
    ALL_IN,
    PRESETS,
    BettingAbstraction,
    build_tree,
    find_node,
    node_actions,
    parse_betting_abstraction,
)
from agent.acpc.betsize import pot_fraction
from agent.acpc.betting import ActionKind, BettingState, parse_betting
from agent.acpc.errors import AbstractionError
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


# ------------------------------------------------------------- per player and per sequence

NL_LEDUC = "leduc.nolimit.2p.game"


def _spec(text: str) -> BettingAbstraction:
    return parse_betting_abstraction(text)


def test_sequence_keys_name_the_abstract_history() -> None:
    game = load_game(NL_LEDUC)
    tree = build_tree(game, PRESETS["fchpa3"])
    by_key = {n.history: n for n in tree.nodes}
    # position 0 opens (firstPlayer = 1 1, 1-based): check, half pot, pot, all-in
    assert [tree.nodes[c].history for c in tree.nodes[0].children] == ["c", "b0.5", "b1", "a"]
    assert by_key["cc/"].round == 1 and not by_key["cc/"].is_terminal
    assert by_key["b1r0.5"].state.betting == "r3r6"  # pot 2: to 3; then half of 6: to 6
    assert by_key["b1f"].is_terminal
    assert find_node(tree, "br").history == "b0.5r0.5"  # a bare key: the first such node
    assert find_node(tree, "b1r0.5") is by_key["b1r0.5"]
    for node in tree.nodes[1:]:
        assert node.history.startswith(tree.nodes[node.parent].history)


def test_per_player_sizes_are_each_players_own() -> None:
    game = load_game(NL_LEDUC)
    spec = _spec('{"fractions": [[[1.0]]], "players": [null, [[[0.5], [2.0]]]],'
                 ' "max_raises": [3]}')
    assert parse_betting_abstraction(spec.to_json()) == spec
    tree = build_tree(game, spec)
    for node in tree.decision_nodes:
        sized = [a.fraction for a in node.actions if a.kind is ActionKind.RAISE
                 and a.fraction != ALL_IN]
        if not sized:
            continue
        expected = (1.0,) if node.player == 0 else ((0.5,) if node.depth == 0 else (2.0,))
        assert tuple(sized) == expected, node.history


def test_sequence_overrides_win_sized_key_first() -> None:
    game = load_game(NL_LEDUC)
    spec = _spec('{"fractions": [[[0.5, 1.0, 2.0]]], "max_raises": [2],'
                 ' "sequences": {"c": [0.25, 3.0], "b1": [], "b0.5": [2.0], "b": [0.5]}}')
    assert parse_betting_abstraction(spec.to_json()) == spec
    assert spec.to_json()["sequences"]["c"] == [0.25, 3.0]
    tree = build_tree(game, spec)
    by_key = {n.history: n for n in tree.nodes}

    def sizes(key: str) -> list[float]:
        return [a.fraction for a in by_key[key].actions if a.kind is ActionKind.RAISE]

    assert sizes("") == [0.5, 1.0, 2.0, ALL_IN]  # the default at the root
    assert sizes("c") == [0.25, 3.0, ALL_IN]
    assert sizes("b1") == [ALL_IN]  # an empty override: only the all-in
    assert sizes("b0.5") == [2.0, ALL_IN]  # the sized key beats the bare 'b'
    assert sizes("b2") == [0.5, ALL_IN]  # ... which serves the other first bets
    assert sizes("cc/") == [0.5, 1.0, 2.0, ALL_IN]  # round 2 keeps the default
    # pot fractions are really the sizes asked for (x measured in the node's state)
    assert [round(a.x, 6) for a in by_key["c"].actions[1:3]] == [0.5, 3.0]  # 0.25 -> min bet


def test_plain_specs_keep_their_json_form() -> None:
    for preset in PRESETS.values():
        data = preset.to_json()
        assert "players" not in data and "sequences" not in data
        assert parse_betting_abstraction(data) == preset


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ('{"fractions": [[[1]]], "sequences": {"cx": [1]}}', "betting sequence key"),
        ('{"fractions": [[[1]]], "sequences": {"c": [1, 0.5]}}', "increasing positive"),
        ('{"fractions": [[[1]]], "sequences": {"c": 1}}', "list of pot fractions"),
        ('{"fractions": [[[1]]], "players": {"0": 1}}', "'players' to be a list"),
        ('{"fractions": [[[1]]], "players": [[]]}', "non-empty fractions table"),
        ('{"fractions": [[[1]]], "sizes": {}}', "unknown \\['sizes'\\]"),
    ],
)
def test_richer_spec_errors(spec: str, message: str) -> None:
    with pytest.raises(AbstractionError, match=message):
        parse_betting_abstraction(spec)


def test_unused_or_misplaced_overrides_are_errors(leduc: Game) -> None:
    game = load_game(NL_LEDUC)
    with pytest.raises(AbstractionError, match=r"do not: \['ccc'\]"):
        build_tree(game, _spec('{"fractions": [[[1]]], "sequences": {"ccc": [0.5]}}'))
    with pytest.raises(AbstractionError, match="do not"):  # past the raise cap
        build_tree(game, _spec('{"fractions": [[[1]]], "max_raises": [1],'
                               ' "sequences": {"b1": [0.5]}}'))
    with pytest.raises(AbstractionError, match="only for a no-limit game"):
        build_tree(leduc, _spec('{"fractions": [[[1]]], "sequences": {"c": [0.5]}}'))

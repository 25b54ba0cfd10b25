from __future__ import annotations

from pathlib import Path

import pytest

import agent.abstraction.actions as actions_module
from agent.abstraction.actions import (
    ALL_IN,
    MAX_SIZES,
    MAX_SPEC_CHARS,
    MAX_TREE_NODES,
    PRESETS,
    TREE_NODES_ENV,
    BettingAbstraction,
    build_tree,
    count_tree_nodes,
    find_node,
    max_tree_nodes,
    node_actions,
    parse_betting_abstraction,
)
from agent.acpc.betsize import pot_fraction
from agent.acpc.betting import ActionKind, BettingState, parse_betting
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game, parse_gamedef
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
        ("nope", "expected a preset"),
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
    with pytest.raises(ValueError, match="at most 1,000 nodes"):
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


# ------------------------------------------------------------------ bounds (issue 28, item 2)

DEEP = '{"fractions": ' + "[" * 3000 + "]" * 3000 + "}"


def test_deep_nesting_is_one_short_line_inline_and_in_a_file(tmp_path: Path) -> None:
    # 3,000 levels used to raise RecursionError from json.loads; inline, the error line
    # quoted the whole 6 KB input.
    with pytest.raises(AbstractionError) as info:
        parse_betting_abstraction(DEEP)
    message = str(info.value)
    assert "nested at most 32 levels deep" in message and "(6,015 characters)" in message
    assert len(message) < 300 and "\n" not in message
    path = tmp_path / "deep.json"
    path.write_text(DEEP)
    with pytest.raises(AbstractionError, match=rf"^{path}: expected a JSON betting "
                       r"abstraction nested at most 32 levels deep, got deeper at character "
                       r"45:"):
        parse_betting_abstraction(str(path))


def test_long_invalid_specs_are_quoted_as_an_excerpt() -> None:
    long = '{"fractions": [[[' + ", ".join(["0.5"] * 1500) + "]]]}"
    with pytest.raises(AbstractionError) as info:
        parse_betting_abstraction(long)  # too many sizes: a field error
    assert "expected at most 16 pot fractions at fractions[0][0], got 1,500: [0.5, " in str(
        info.value)
    assert len(str(info.value)) < 300
    with pytest.raises(AbstractionError) as info:
        parse_betting_abstraction(long[:-1])  # not JSON
    assert "expected a JSON betting abstraction" in str(info.value)
    assert len(str(info.value)) < 300


def test_oversized_specs_are_refused_before_parsing(tmp_path: Path) -> None:
    big = '{"name": "' + "x" * MAX_SPEC_CHARS + '", "fractions": [[[1]]]}'
    with pytest.raises(AbstractionError, match=r"of at most 1,048,576 characters, got "
                       r"1,048,6\d\d"):
        parse_betting_abstraction(big)
    path = tmp_path / "big.json"
    path.write_text(big)
    with pytest.raises(AbstractionError, match=r"big\.json: expected a betting abstraction "
                       r"file of at most 1,048,576 bytes, got more"):
        parse_betting_abstraction(str(path))
    path.write_bytes(b'{"fractions": [[[1]]], "name": "\xff"}')
    with pytest.raises(AbstractionError, match=r"expected a UTF-8 JSON betting abstraction, "
                       r"got byte 0xff at offset 32"):
        parse_betting_abstraction(str(path))


@pytest.mark.parametrize(
    "max_raises", ["[1e400]", "[" + "9" * 5000 + "]", "[256]", "[-1]", "[1.5]", "[true]",
                   "3"])
def test_max_raises_are_range_checked(max_raises: str) -> None:
    # inf and 5,000 digits used to escape as OverflowError and ValueError
    with pytest.raises(AbstractionError, match=r"expected 'max_raises' as a list of whole "
                       r"numbers in 0\.\.255|expected a JSON betting abstraction"):
        parse_betting_abstraction('{"fractions": [[[1]]], "max_raises": ' + max_raises + "}")


def test_huge_fractions_are_field_errors() -> None:
    with pytest.raises(AbstractionError, match=r"expected betting abstraction fields"):
        parse_betting_abstraction('{"fractions": [[[' + "9" * 400 + "]]]}")


@pytest.mark.parametrize(
    ("game_name", "spec"),
    [
        ("leduc.nolimit.2p.game", "fcpa"),
        ("leduc.nolimit.2p.game", "fchpa"),
        ("leduc.nolimit.2p.game", "fc2pa"),
        ("leduc.limit.2p.game", "fcpa"),
        ("kuhn.limit.3p.game", "fcpa"),
        ("royal.nolimit.2p.game", "fchpa"),
        ("holdem.nolimit.2p.reverse_blinds.game", "fcpa3"),
        ("leduc.nolimit.2p.game", '{"fractions": [[[0.5, 1.0, 2.0]]], "max_raises": [2], '
         '"players": [null, [[[0.75]]]], "sequences": {"c": [0.25, 3.0], "b1": [], '
         '"b0.5": [2.0], "b": [0.5]}}'),
    ],
)
def test_count_tree_nodes_is_the_size_build_tree_builds(game_name: str, spec: str) -> None:
    game = load_game(game_name)
    abstraction = parse_betting_abstraction(spec)
    assert count_tree_nodes(game, abstraction) == len(build_tree(game, abstraction).nodes)


def _hostile(n: int) -> BettingAbstraction:
    sizes = [round(0.1 * (i + 1), 3) for i in range(n)]
    return parse_betting_abstraction({"name": "h", "fractions": [[sizes]], "max_raises": [255]})


def test_a_huge_tree_is_refused_before_any_node_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # On main the tree was built node by node until the cap (5,000,000 nodes: over 60 s and
    # 2.6 GB for a 2,308-byte strategy file header); now it is counted first.
    game = load_game("holdem.nolimit.2p.reverse_blinds.game")
    built: list[int] = []
    real = actions_module.child_node
    monkeypatch.setattr(actions_module, "child_node",
                        lambda *a: built.append(1) or real(*a))  # type: ignore[func-returns-value]
    with pytest.raises(AbstractionError) as info:
        build_tree(game, _hostile(3), limit=20_000)
    assert built == []
    message = str(info.value)
    assert message.startswith("expected an abstract betting tree of at most 20,000 nodes (set "
                              "ACPC_ARENA_MAX_TREE_NODES to allow more), got ")
    assert "for 'h' on a 2-player nolimit game" in message
    with pytest.raises(AbstractionError, match="too large to count in 100 steps"):
        count_tree_nodes(game, _hostile(12), max_transitions=100)


def test_a_size_list_holds_at_most_16_sizes() -> None:
    assert MAX_SIZES == 16
    assert _hostile(16).fractions[0][0][-1] == 1.6
    with pytest.raises(AbstractionError, match=r"betting abstraction: expected at most 16 pot "
                       r"fractions at fractions\[0\]\[0\], got 17: \[0\.1, 0\.2, "):
        _hostile(17)
    spec = {"fractions": [[[1.0]]], "sequences": {"c": [0.5 + i for i in range(64)]}}
    with pytest.raises(AbstractionError, match=r"at most 16 pot fractions at sequences\['c'\], "
                       r"got 64"):
        parse_betting_abstraction(spec)


_DEEP_LEDUC = parse_gamedef("GAMEDEF\nnolimit\nnumPlayers = 2\nnumRounds = 2\n"
                            "stack = 400 400\nblind = 1 1\nnumSuits = 2\nnumRanks = 3\n"
                            "numHoleCards = 1\nnumBoardCards = 0 1\nEND GAMEDEF\n")


def test_a_hostile_tree_passes_the_cap_long_before_its_states_are_all_seen() -> None:
    # 16 sizes from 1/16 pot, 255 raises a round, 400 big blinds deep: counted forward, the
    # node total passes the cap within 80,000 steps; on main (counted depth first, subtrees
    # summed only once finished) it took the whole 250,000-step budget (fuzz betting:1:5).
    hostile = BettingAbstraction("h", ((tuple(i / 16 for i in range(1, 17)),),),
                                 max_raises=(255, 255))
    with pytest.raises(AbstractionError, match="got more than 1,000,000 for 'h'"):
        count_tree_nodes(_DEEP_LEDUC, hostile, max_transitions=80_000)
    # and a deep tree under the cap is still counted exactly
    wide = BettingAbstraction("w", ((tuple(i / 2 for i in range(1, 5)),),),
                              max_raises=(255, 255))
    assert count_tree_nodes(_DEEP_LEDUC, wide) == 176_017


def test_the_node_cap_is_overridable_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    game = load_game("leduc.nolimit.2p.game")  # fchpa: 441 nodes
    assert max_tree_nodes() == MAX_TREE_NODES == 1_000_000
    monkeypatch.setenv(TREE_NODES_ENV, "440")
    with pytest.raises(AbstractionError, match="at most 440 nodes"):
        build_tree(game, PRESETS["fchpa"])
    monkeypatch.setenv(TREE_NODES_ENV, "441")
    assert len(build_tree(game, PRESETS["fchpa"]).nodes) == 441
    for bad in ("0", "-5", "1e6", "9" * 13):
        monkeypatch.setenv(TREE_NODES_ENV, bad)
        with pytest.raises(AbstractionError, match="ACPC_ARENA_MAX_TREE_NODES to be a positive"):
            max_tree_nodes()

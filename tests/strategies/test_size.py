"""``strategies.games.size`` and ``acpc-strategy size``: game sizes against brute force.

* The memoised betting count equals an explicit walk of every betting sequence with
  :class:`BettingState` (full games and abstractions; the canonical abstract tree of
  :func:`build_tree` too), on the bundled small games, on random small games (hypothesis:
  2-4 players, folds, all-ins, uneven stacks, limit and no-limit) and on a limit game that
  reaches the 64-action cap.
* Information sets, infoset-actions and game states equal brute force over every deal of
  the cards: distinct ``(player, betting, observation)`` triples, raw and up to a
  relabelling of the suits (every suit permutation), on Kuhn, limit and no-limit Leduc
  (full and ``fcpa``) and two tiny games in ``tests/data`` (a Royal-like 8-card deck with
  2 hole cards and a flop of 3; a 3-player limit game with board cards in rounds 0 and 2).
* Royal's figures reproduce the published ones (1.55e8 information sets, 7 GB of CFR, a
  3.58 GB strategy, 5.5 / 10.2 / 160 / 471 MB for FCPA / FCHA / FCMHPA / FCMHQTPA).
* Heads-up no-limit hold'em's full game is refused at once with a one-line error.
* The CLI prints and writes JSON; bad input gives ``acpc-strategy: error: ...``, exit 1.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.abstraction.actions import (
    PRESETS,
    BettingAbstraction,
    build_tree,
    node_actions,
    parse_betting_abstraction,
)
from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.cards import deck_for, suit_of
from agent.acpc.gamedef import INT32_MAX, BettingType, Game
from agent.acpc.gamefiles import load_game
from strategies.cli import main
from strategies.games.size import (
    BettingCounts,
    GameTooLargeError,
    count_betting,
    format_size,
    game_size,
)
from tests.support import DATA

ROYAL = "royal.nolimit.2p.game"
HUNL = "holdem.nolimit.2p.reverse_blinds.game"
TINY_ROYAL = str(DATA / "royal_tiny.nolimit.2p.game")
TINY3 = str(DATA / "tiny3.limit.3p.game")
MIN = 1e-9
"""A pot fraction that rounds to the current bet, so the legal-range clamp makes it the
minimum raise: how today's spec says "min raise" (it has no word for it)."""


def royal_abstraction(name: str) -> BettingAbstraction:
    sizes = {"fcpa": [1.0], "fcha": [0.5], "fcmhpa": [MIN, 0.5, 1.0],
             "fcmhqtpa": [MIN, 0.25, 0.5, 0.75, 1.0]}[name]
    return parse_betting_abstraction({"name": name, "fractions": [[sizes]]})


# --------------------------------------------------------------------------- explicit walk


def every_action(state: BettingState) -> list[Action]:
    out = [FOLD] if ActionKind.FOLD in state.legal_actions() else []
    out.append(CALL)
    bounds = state.raise_bounds()
    if bounds is not None:
        if state.game.is_nolimit:
            out += [Action(ActionKind.RAISE, to) for to in range(bounds[0], bounds[1] + 1)]
        else:
            out.append(LIMIT_RAISE)
    return out


def walk(
    game: Game, abstraction: BettingAbstraction | None = None, limit: int = 300_000
) -> Iterator[tuple[BettingState, int, bool]]:
    """Every node of the betting tree: ``(state, actions, is_terminal)``; a terminal's state
    is its parent's (the round of the last action); depth tracked as :func:`build_tree`."""
    todo = [(BettingState.initial(game), 0)]
    seen = 0
    while todo:
        state, depth = todo.pop()
        seen += 1
        assert seen <= limit, "tree too large for an explicit walk"
        if abstraction is None:
            actions = every_action(state)
        else:
            actions = [a.action for a in node_actions(state, abstraction, depth)]
        yield state, len(actions), False
        for action in actions:
            child = state.apply(action)
            if child.finished:
                yield state, child.num_folded + 1 >= game.num_players, True
                continue
            same = child.round == state.round
            todo.append((child, (depth + (action.kind is ActionKind.RAISE)) if same else 0))


def explicit_counts(game: Game, abstraction: BettingAbstraction | None = None) -> BettingCounts:
    rounds, players = game.num_rounds, game.num_players
    decisions = [[0] * players for _ in range(rounds)]
    actions = [[0] * players for _ in range(rounds)]
    folds = [0] * rounds
    showdowns = [0] * rounds
    root = BettingState.initial(game)
    if root.finished:  # every blind all-in: one hand end, before any action (round 0)
        (folds if root.num_folded + 1 >= game.num_players else showdowns)[0] += 1
        return BettingCounts(tuple(map(tuple, decisions)), tuple(map(tuple, actions)),
                             tuple(folds), tuple(showdowns), 0, 0)
    for state, n, terminal in walk(game, abstraction):
        if terminal:
            (folds if n else showdowns)[state.round] += 1
        else:
            decisions[state.round][state.player] += 1
            actions[state.round][state.player] += n
    return BettingCounts(tuple(map(tuple, decisions)), tuple(map(tuple, actions)),
                         tuple(folds), tuple(showdowns), 0, 0)


def same_counts(a: BettingCounts, b: BettingCounts) -> bool:
    return (a.decisions, a.actions, a.folds, a.showdowns) == (
        b.decisions, b.actions, b.folds, b.showdowns)


# --------------------------------------------------------------------------- brute force


Cards = tuple[tuple[int, ...], ...]
"""Groups of cards: an observation (hole, board by round) or a deal."""


def brute_force(game: Game, abstraction: BettingAbstraction | None = None) -> dict[str, object]:
    """Distinct infosets, infoset-actions and histories over every deal of the cards."""
    nodes = [(state.betting, state.player, state.round, n)
             for state, n, terminal in walk(game, abstraction) if not terminal]
    deck = deck_for(game)
    suits = sorted({suit_of(c) for c in deck})
    relabel = [dict(zip(suits, perm, strict=True)) for perm in itertools.permutations(suits)]
    canon_cache: dict[Cards, Cards] = {}

    def canonical(obs: Cards) -> Cards:
        got = canon_cache.get(obs)
        if got is None:
            got = min(tuple(tuple(sorted(c - suit_of(c) + m[suit_of(c)] for c in group))
                            for group in obs) for m in relabel)
            canon_cache[obs] = got
        return got

    raw: dict[tuple[int, str, Cards], int] = {}  # (player, betting, observation) -> actions
    iso: dict[tuple[int, str, Cards], int] = {}
    histories: set[tuple[str, Cards, Cards]] = set()
    rounds = game.num_rounds
    for deal in deals_of(game, deck):
        holes, boards = deal[: game.num_players], deal[game.num_players:]
        obs = [[(holes[p], *boards[: r + 1]) for r in range(rounds)]
               for p in range(game.num_players)]
        for betting, p, r, n in nodes:
            raw[(p, betting, obs[p][r])] = n
            iso[(p, betting, canonical(obs[p][r]))] = n
            histories.add((betting, holes, boards[: r + 1]))

    round_of = {b: r for b, _, r, _ in nodes}

    def per_round(table: dict[tuple[int, str, Cards], int], weight: bool) -> list[int]:
        out = [0] * rounds
        for key, n in table.items():
            out[round_of[key[1]]] += n if weight else 1
        return out

    states = [0] * rounds
    for betting, _, _ in histories:
        states[round_of[betting]] += 1
    return {
        "infosets_raw": per_round(raw, False), "infosets_iso": per_round(iso, False),
        "actions_raw": per_round(raw, True), "actions_iso": per_round(iso, True),
        "per_player_raw": [sum(1 for k in raw if k[0] == p) for p in range(game.num_players)],
        "per_player_iso": [sum(1 for k in iso if k[0] == p) for p in range(game.num_players)],
        "states": states,
    }


def deals_of(game: Game, deck: list[int]) -> Iterator[Cards]:
    """Every deal: each player's hole cards, then each round's board cards (sets, sorted)."""
    groups = [game.num_hole_cards] * game.num_players + list(game.num_board_cards)

    def rec(left: list[int], i: int) -> Iterator[Cards]:
        if i == len(groups):
            yield ()
            return
        for chosen in itertools.combinations(left, groups[i]):
            rest = [c for c in left if c not in chosen]
            for tail in rec(rest, i + 1):
                yield (tuple(chosen), *tail)

    return rec(sorted(deck), 0)


BRUTE_CASES = [
    (str(DATA / "kuhn.limit.2p.game"), None),
    ("leduc.limit.2p.game", None),
    ("leduc.nolimit.2p.game", None),
    ("leduc.nolimit.2p.game", "fcpa"),
    (TINY_ROYAL, None),
    (TINY_ROYAL, "fcpa"),
    (TINY_ROYAL, "fchpa3"),
    (TINY3, None),
]


@pytest.mark.parametrize(("game_spec", "spec"), BRUTE_CASES,
                         ids=[f"{Path(g).name}-{s or 'full'}" for g, s in BRUTE_CASES])
def test_counts_equal_brute_force_over_every_deal(game_spec: str, spec: str | None) -> None:
    game = load_game(game_spec)
    abstraction = None if spec is None else parse_betting_abstraction(spec)
    size = game_size(game, abstraction, game_name=game_spec)
    assert same_counts(size.betting, explicit_counts(game, abstraction))
    truth = brute_force(game, abstraction)
    assert list(size.infosets(isomorphic=False)) == truth["infosets_raw"]
    assert list(size.infosets(isomorphic=True)) == truth["infosets_iso"]
    assert list(size.infoset_actions(isomorphic=False)) == truth["actions_raw"]
    assert list(size.infoset_actions(isomorphic=True)) == truth["actions_iso"]
    assert [size.player_infosets(p, isomorphic=False)
            for p in range(game.num_players)] == truth["per_player_raw"]
    assert [size.player_infosets(p, isomorphic=True)
            for p in range(game.num_players)] == truth["per_player_iso"]
    assert list(size.states()) == truth["states"]
    if abstraction is not None:  # the canonical abstract tree the solvers build
        tree = build_tree(game, abstraction)
        assert size.betting.total_decisions == len(tree.decision_nodes)
        assert size.betting.total_terminals == len(tree.nodes) - len(tree.decision_nodes)


def test_known_small_game_figures() -> None:
    kuhn = game_size(load_game(DATA / "kuhn.limit.2p.game"))
    assert kuhn.total_infosets(isomorphic=False) == 12
    assert kuhn.total_infoset_actions(isomorphic=False) == 24
    leduc = game_size(load_game("leduc.limit.2p.game"))
    assert leduc.total_infosets(isomorphic=False) == 936  # the published Leduc figure
    assert leduc.observations_raw == (6, 30) and leduc.observations_iso == (3, 15)


# --------------------------------------------------------------------------- betting only


@st.composite
def small_games(draw: st.DrawFn) -> Game:
    n = draw(st.integers(2, 4))
    rounds = draw(st.integers(1, 3))
    nolimit = draw(st.booleans())
    stack = tuple(draw(st.integers(1, 8 if n <= 3 else 5)) for _ in range(n))
    blind = tuple(draw(st.integers(0, min(s, 2))) for s in stack)
    return Game(
        betting_type=BettingType.NOLIMIT if nolimit else BettingType.LIMIT,
        num_players=n, num_rounds=rounds, stack=stack, blind=blind,
        raise_size=() if nolimit else tuple(draw(st.integers(1, 3)) for _ in range(rounds)),
        first_player=tuple(draw(st.integers(0, n - 1)) for _ in range(rounds)),
        max_raises=tuple(draw(st.sampled_from([0, 1, 2, 3, 255])) for _ in range(rounds)),
        num_suits=4, num_ranks=13, num_hole_cards=1, num_board_cards=(0,) * rounds,
    )


@settings(max_examples=200, deadline=None)
@given(small_games(), st.sampled_from([None, "fcpa", "fchpa3", "fc2pa"]))
def test_memoised_count_equals_explicit_walk(game: Game, spec: str | None) -> None:
    # pot fractions are undefined while the pot is empty (node_actions raises): blinds needed
    usable = spec is not None and game.is_nolimit and sum(game.blind) > 0
    abstraction = PRESETS[spec] if usable and spec is not None else None
    counts = count_betting(game, abstraction)
    assert same_counts(counts, explicit_counts(game, abstraction))
    assert counts.distinct_states <= counts.total_decisions


@pytest.mark.parametrize("spec", [None, "fcpa", "fchpa"])
def test_memoised_count_equals_explicit_walk_on_bundled_games(spec: str | None) -> None:
    for name in ("leduc.nolimit.2p.game", TINY_ROYAL, "nl3p_uneven.game"):
        game = load_game(name)
        if name == "nl3p_uneven.game":  # the real stacks are far too deep to walk
            game = dataclasses.replace(game, stack=(5, 7, 9), blind=(0, 1, 2))
        abstraction = None if spec is None else PRESETS[spec]
        assert same_counts(count_betting(game, abstraction), explicit_counts(game, abstraction))


def _nolimit(stack: tuple[int, ...], blind: tuple[int, ...], first: tuple[int, ...],
             max_raises: tuple[int, ...]) -> Game:
    return Game(betting_type=BettingType.NOLIMIT, num_players=len(stack),
                num_rounds=len(first), stack=stack, blind=blind, raise_size=(),
                first_player=first, max_raises=max_raises, num_suits=4, num_ranks=13,
                num_hole_cards=1, num_board_cards=(0,) * len(first))


KEY_GAMES = {
    # found by dropping one field from the key and comparing with the explicit walk
    "min_raise_to": _nolimit((5, 7, 8), (0, 1, 1), (2, 2), (3, 3)),
    "raises": _nolimit((5, 5), (0, 0), (1,), (3,)),
    "round": _nolimit((3, 4), (2, 0), (0, 0), (3, 1)),
}


@pytest.mark.parametrize("field", list(KEY_GAMES))
def test_games_whose_count_needs_each_key_field(field: str) -> None:
    game = KEY_GAMES[field]
    assert same_counts(count_betting(game), explicit_counts(game))


def test_the_64_action_cap_is_part_of_the_key() -> None:
    game = Game(betting_type=BettingType.LIMIT, num_players=2, num_rounds=2,
                stack=(INT32_MAX, INT32_MAX), blind=(1, 1), raise_size=(1, 1),
                first_player=(0, 0), max_raises=(255, 255), num_suits=4, num_ranks=13,
                num_hole_cards=1, num_board_cards=(0, 0))
    counts = count_betting(game)
    assert same_counts(counts, explicit_counts(game))
    # a raise needs room for itself and every call: none once the round has 63 actions, so
    # the round's nodes are k raises (k = 0..63) or a check and k raises (k = 0..62)
    assert counts.decisions_in(0) == 64 + 63


# --------------------------------------------------------------------------- Royal


def test_royal_full_game_matches_the_published_figures() -> None:
    start = time.perf_counter()
    size = game_size(load_game(ROYAL), game_name=ROYAL)
    assert time.perf_counter() - start < 10
    b = size.betting
    assert [b.decisions_in(0), b.decisions_in(1)] == [1188, 19996]
    assert size.observations_raw == (190, 155_040) and size.observations_iso == (25, 7760)
    assert size.total_infosets(isomorphic=True) == 155_198_660  # published: ~1.55e8
    assert size.total_infosets(isomorphic=False) == 3_100_405_560
    assert size.total_infoset_actions(isomorphic=True) == 447_189_185
    memory = size.memory(isomorphic=True)
    assert round(memory["cfr"] / 1e9) == 7  # published: ~7 GB
    assert round(memory["strategy_float64"] / 1e9, 2) == 3.58  # published: 3.58 GB


@pytest.mark.parametrize(("name", "megabytes"), [
    ("fcpa", 5.5), ("fcha", 10.2), ("fcmhpa", 160), ("fcmhqtpa", 471)])
def test_royal_abstract_strategy_files_match_the_published_sizes(
        name: str, megabytes: float) -> None:
    size = game_size(load_game(ROYAL), royal_abstraction(name))
    mb = size.memory(isomorphic=True)["strategy_float64"] / 1e6
    assert round(mb, 1 if megabytes < 100 else 0) == megabytes


def test_full_hunl_is_refused_at_once() -> None:
    start = time.perf_counter()
    with pytest.raises(GameTooLargeError, match="--abstraction"):
        game_size(load_game(HUNL), game_name=HUNL)
    assert time.perf_counter() - start < 5
    # an abstraction of it counts in moments
    size = game_size(load_game(HUNL), PRESETS["fcpa"])
    assert size.observations_iso == (169, 1_286_792, 55_190_538, 2_428_287_420)


def test_transition_budget_stops_a_long_count() -> None:
    game = load_game(ROYAL)
    with pytest.raises(GameTooLargeError, match="more than 1,000 betting transitions"):
        count_betting(game, max_transitions=1000)


def test_format_mentions_every_figure() -> None:
    text = format_size(game_size(load_game(ROYAL), PRESETS["fcpa"], game_name=ROYAL))
    for needle in ("decision nodes", "terminal: fold", "position 1 acts", "infosets raw",
                   "infosets isomorphic", "infoset-actions isomorphic", "CFR: 2 doubles (16 B)",
                   "strategy float32 (4 B)", "strategy uint16 (2 B)", "5.47 MB"):
        assert needle in text


# --------------------------------------------------------------------------- CLI


def test_cli_prints_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "royal.json"
    assert main(["size", ROYAL, "--abstraction", "fcpa", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "abstraction 'fcpa'" in text and "279,660" in text and f"wrote {out}" in text
    data = json.loads(out.read_text())
    assert data["isomorphic"]["total_infosets"] == 279_660
    assert data["isomorphic"]["memory_bytes"]["strategy_float64"] == 8 * 683_705
    assert data["abstraction"]["name"] == "fcpa"
    assert data["bytes_per_infoset_action"] == {"cfr": 16, "float64": 8, "float32": 4,
                                                "uint16": 2}


@pytest.mark.parametrize(("args", "needle"), [
    (["size", "no-such.game"], "could not open game definition 'no-such.game'"),
    (["size", ROYAL, "--abstraction", "bogus"], "--abstraction: expected a preset"),
    (["size", ROYAL, "--abstraction", '{"fractions": [[[-1]]]}'], "increasing positive"),
    (["size", HUNL], "cannot count the full game"),
    # 3,000 levels: was a RecursionError traceback
    (["size", ROYAL, "--abstraction", '{"fractions": ' + "[" * 3000 + "]" * 3000 + "}"],
     "--abstraction: expected a JSON betting abstraction nested at most 32 levels deep"),
])
def test_cli_bad_input_is_a_one_line_error(
        args: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 1
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("acpc-strategy: error: ")
    assert needle in lines[0] and len(lines[0]) < 400
    assert captured.out == ""


def test_count_follows_per_player_and_sequence_sizes() -> None:
    """Per-player sizes and sequence overrides: the count equals the canonical tree's."""
    game = load_game("leduc.nolimit.2p.game")
    spec = parse_betting_abstraction(
        '{"fractions": [[[0.5, 1.0]]], "max_raises": [2], "players": [null, [[[2.0]]]],'
        ' "sequences": {"c": [0.25, 0.75, 3.0], "cc/": [], "b0.5": [0.5, 1.0, 1.5]}}')
    counts = count_betting(game, spec)
    tree = build_tree(game, spec)
    decisions = [[0, 0], [0, 0]]
    actions = [[0, 0], [0, 0]]
    for node in tree.decision_nodes:
        decisions[node.round][node.player] += 1
        actions[node.round][node.player] += len(node.actions)
    assert [list(r) for r in counts.decisions] == decisions
    assert [list(r) for r in counts.actions] == actions
    assert counts.total_terminals == len(tree.nodes) - len(tree.decision_nodes)
    plain = count_betting(game, dataclasses.replace(spec, sequences=()))
    assert plain.decisions != counts.decisions  # the overrides change the tree

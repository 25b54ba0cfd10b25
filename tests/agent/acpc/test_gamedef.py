from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.acpc.errors import GameDefError
from agent.acpc.gamedef import (
    INT32_MAX,
    MAX_GAMEDEF_CHARS,
    UNLIMITED_RAISES,
    BettingType,
    Game,
    format_gamedef,
    parse_gamedef,
)
from agent.acpc.gamefiles import bundled_games, load_game
from tests.support import games

NL2 = """GAMEDEF
nolimit
numPlayers = 2
numRounds = 4
stack = 20000 20000
blind = 100 50
firstPlayer = 2 1 1 1
numSuits = 4
numRanks = 13
numHoleCards = 2
numBoardCards = 0 3 1 1
END GAMEDEF
"""


@pytest.mark.parametrize("name", bundled_games())
def test_bundled_games_round_trip(name: str) -> None:
    game = load_game(name)
    text = format_gamedef(game)
    again = parse_gamedef(text)
    assert again == game
    assert format_gamedef(again) == text
    assert again.fingerprint == game.fingerprint


def test_reference_values_nl2() -> None:
    game = parse_gamedef(NL2)
    assert game.betting_type is BettingType.NOLIMIT
    assert game.stack == (20000, 20000)
    assert game.blind == (100, 50)
    assert game.first_player == (1, 0, 0, 0)
    assert game.max_raises == (UNLIMITED_RAISES,) * 4
    assert game.raise_size == ()
    assert game.num_board_cards == (0, 3, 1, 1)
    assert game.board_cards_through(1) == 3
    assert game.cards_per_hand == 9
    # The canonical text of the reference file is the file itself.
    assert format_gamedef(game) == NL2


def test_quirks_case_equals_whitespace_comments_unknown_end() -> None:
    text = (
        "# a comment\n"
        "\n"
        "NoLimit\n"
        "NUMPLAYERS=2\n"
        "numrounds   4\n"
        "stack=20000=20000\n"
        "Blind 100 50 999 trailing words\n"
        "firstplayer = 2 1 1 1\n"
        "this line is unknown and ignored\n"
        "pot-limit is not a betting type here\n"
        "numSuits = 4\nnumRanks = 13\nnumHoleCards = 2\n"
        "numBoardCards\t=\t0 3 1 1\n"
        "END GAMEDEF\n"
        "numPlayers = 3\n"  # after END GAMEDEF: not read
    )
    game = parse_gamedef(text)
    assert game == parse_gamedef(NL2)
    assert game.fingerprint == parse_gamedef(NL2).fingerprint


def test_defaults_and_last_value_wins() -> None:
    text = (
        "limit\nnumPlayers = 3\nnumRounds = 2\nblind = 1 2 0\nblind = 5 10 0\n"
        "raiseSize = 2 4\nmaxRaises = 3\nnumSuits = 4\nnumRanks = 13\nnumHoleCards = 1\n"
        "numBoardCards = 0 1\n"
    )
    game = parse_gamedef(text)
    assert game.blind == (5, 10, 0)
    assert game.stack == (INT32_MAX,) * 3
    assert game.first_player == (0, 0)
    assert game.max_raises == (3, UNLIMITED_RAISES)
    assert "stack" not in format_gamedef(game)
    assert "maxRaises = 3 255" in format_gamedef(game)


def test_limit_after_nolimit_and_crlf_lines() -> None:
    text = NL2.replace("nolimit\n", "nolimit\nlimit\nraiseSize = 100 100 200 200\n")
    text = text.replace("\n", "\r\n")
    game = parse_gamedef(text)
    assert game.betting_type is BettingType.LIMIT
    assert game.raise_size == (100, 100, 200, 200)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("numRounds = 4", "numRounds = four"),
         "x.game:4: expected 'numRounds = <int>', got 'numRounds = four'"),
        (("numPlayers = 2\n", ""), "x.game: missing required line 'numPlayers = <int>'"),
        (("blind = 100 50", "blind = 100"), "x.game:6: expected 2 per-player values"),
        (("blind = 100 50", "blind = 100 50000"), "expected blind for player 2 in 0..stack"),
        (("numRanks = 13", "numRanks = 2"), "too many hole and board cards"),
        (("numRounds = 4", "numRounds = 5"), "value in 1..4"),
        (("firstPlayer = 2 1 1 1", "firstPlayer = 3 1 1 1"), "firstPlayer for round 1"),
        (("numBoardCards = 0 3 1 1", "numBoardCards = 0 3"), "expected 4 per-round values"),
        (("nolimit", "limit"), "missing required line 'raiseSize = <int> ...'"),
    ],
)
def test_errors_name_file_line_and_value(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(GameDefError) as info:
        parse_gamedef(NL2.replace(*edit), "x.game")
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_load_game_errors(tmp_path: object) -> None:
    with pytest.raises(GameDefError, match=r"could not open game definition 'no/such\.game'"):
        load_game("no/such.game")


def test_trailing_data_after_end_is_ignored_and_truncation_fails() -> None:
    game = parse_gamedef(NL2)
    assert parse_gamedef(NL2 + "garbage\x00\xff\n" * 3) == game
    # Every truncation either parses to a game or raises GameDefError, never anything else.
    for cut in range(len(NL2)):
        with contextlib.suppress(GameDefError):
            parse_gamedef(NL2[:cut])


@given(games())
def test_round_trip_property(game: Game) -> None:
    text = format_gamedef(game)
    assert parse_gamedef(text) == game


@given(
    games(),
    st.sampled_from([str.upper, str.lower, str.title]),
    st.sampled_from([" ", "=", " = ", "\t="]),
)
def test_fingerprint_ignores_layout(game: Game, case: object, sep: str) -> None:
    text = format_gamedef(game)
    lines = []
    for line in text.splitlines():
        key, _, value = line.partition(" = ")
        lines.append(f"{case(key)}{sep}{value}" if value else case(line))  # type: ignore[operator]
    lines.insert(1, "# comment inserted")
    variant = "\n".join(lines) + "\n"
    assert parse_gamedef(variant).fingerprint == game.fingerprint


HUGE = "1" + "0" * 5000


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (("stack = 20000 20000", f"stack = {HUGE} 20000"), "'stack = <int> ...'"),
        (("blind = 100 50", f"blind = 100 {HUGE}"), "'blind = <int> ...'"),
        (("numPlayers = 2", f"numPlayers = {HUGE}"), "'numPlayers = <int>'"),
        (("numRounds = 4", f"numRounds = -{HUGE}"), "'numRounds = <int>'"),
        (("numSuits = 4", f"numSuits = {HUGE}"), "'numSuits = <int>'"),
        (("numRanks = 13", f"numRanks = {HUGE}"), "'numRanks = <int>'"),
        (("numHoleCards = 2", f"numHoleCards = {HUGE}"), "'numHoleCards = <int>'"),
        (("numBoardCards = 0 3 1 1", f"numBoardCards = 0 3 1 {HUGE}"),
         "'numBoardCards = <int> ...'"),
        (("firstPlayer = 2 1 1 1", f"firstPlayer = {HUGE}"), "'firstPlayer = <int> ...'"),
        (("nolimit", f"nolimit\nmaxRaises = {HUGE}"), "'maxRaises = <int> ...'"),
        (("nolimit", f"limit\nraiseSize = {HUGE}"), "'raiseSize = <int> ...'"),
    ],
)
def test_huge_numbers_are_one_line_naming_line_and_field(edit: tuple[str, str],
                                                         field: str) -> None:
    # A 5,000-digit number used to escape as the interpreter's ValueError about its integer
    # conversion limit; now it is a GameDefError naming the file, the line and the field,
    # with a short excerpt.
    with pytest.raises(GameDefError) as info:
        parse_gamedef(NL2.replace(*edit), "x.game")
    message = str(info.value)
    assert message.startswith("x.game:")
    assert field in message and "at most 20 digits" in message
    assert "\n" not in message and len(message) < 300


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("nolimit", "limit\nraiseSize = 100 100 2147483648 200"),
         "expected raise sizes in 1..2147483647"),
        (("stack = 20000 20000", "stack = 20000 2147483648"), "expected stacks in 1..2147483647"),
        (("blind = 100 50", "blind = 100 -1"), "expected blind for player 2 in 0..stack"),
        (("nolimit", "nolimit\nmaxRaises = 256"), "expected maxRaises in 0..255"),
        (("numSuits = 4", "numSuits = 5"), "value in 1..4"),
        (("numRanks = 13", "numRanks = 14"), "value in 1..13"),
        (("numHoleCards = 2", "numHoleCards = 4"), "value in 1..3"),
        (("numPlayers = 2", "numPlayers = 11"), "value in 2..10"),
        (("numBoardCards = 0 3 1 1", "numBoardCards = 0 3 1 -1"), "at least 0"),
    ],
)
def test_every_number_is_range_checked(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(GameDefError, match=r"^x\.game:\d+: ") as info:
        parse_gamedef(NL2.replace(*edit), "x.game")
    assert message in str(info.value)


def test_long_lines_are_quoted_as_an_excerpt_and_long_files_refused(tmp_path: Path) -> None:
    with pytest.raises(GameDefError) as info:
        parse_gamedef(NL2.replace("numRounds = 4", "numRounds = x" + "y" * 6000), "x.game")
    assert len(str(info.value)) < 300 and "(6,013 characters)" in str(info.value)
    big = tmp_path / "big.game"
    big.write_text(NL2 + "#" * (MAX_GAMEDEF_CHARS + 1) + "\n")
    with pytest.raises(GameDefError, match=r"big\.game: expected a game definition of at most "
                       r"1,048,576 bytes, got more"):
        load_game(big)


def test_a_name_the_system_refuses_is_a_short_game_def_error() -> None:
    # a 6,000-character name was an OSError quoting all of it
    with pytest.raises(GameDefError, match=r"^could not open game definition 'xxx.*\(6,000 "
                       r"characters\): File name too long$"):
        load_game("x" * 6000)

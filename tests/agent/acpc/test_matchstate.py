from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.acpc.cards import format_cards
from agent.acpc.dealing import deal_hands
from agent.acpc.errors import RemoteProtocolError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import (
    MatchState,
    format_matchstate,
    parse_matchstate,
    parse_matchstate_prefix,
    parse_next_matchstate,
    states_match,
    view_of,
)
from tests.support import LOGS, games, random_playout


def transcript_lines(kind: str) -> list[str]:
    out = []
    for line in (LOGS / "nl1000.transcript.txt").read_text().splitlines():
        parts = line.split(" ", 4)
        if parts[0] == kind:
            out.append(parts[4].rstrip("\r"))
    return out


def test_transcript_states_round_trip(nl2: Game) -> None:
    lines = transcript_lines("TO")
    assert len(lines) > 30
    for line in lines:
        ms = parse_matchstate(line, nl2)
        assert format_matchstate(ms) == line


def test_transcript_responses_parse_as_prefix(nl2: Game) -> None:
    sent = transcript_lines("TO")
    for line in transcript_lines("FROM"):
        ms, end = parse_matchstate_prefix(line, nl2)
        assert line[end] == ":"
        assert format_matchstate(ms) in sent
        assert ms.is_to_act


@pytest.mark.parametrize(
    ("game_name", "line", "to_act", "showdown"),
    [
        ("holdem.nolimit.2p.reverse_blinds.game", "MATCHSTATE:1:31:r300r900c/r1800:|JdTc/6dJc9c",
         True, False),
        ("holdem.limit.3p.game", "MATCHSTATE:0:7:frc/cc/crrrrc/rrc:7s9d|JsKh|/5h8cJc/2d/9s",
         False, True),
        ("leduc.limit.2p.game", "MATCHSTATE:0:0:crrf:Qs|", False, False),
    ],
)
def test_protocol_md_examples(game_name: str, line: str, to_act: bool, showdown: bool) -> None:
    game = load_game(game_name)
    ms = parse_matchstate(line, game)
    assert format_matchstate(ms) == line
    assert ms.is_to_act is to_act
    assert ms.state.is_showdown is showdown


def test_whole_byte_by_byte_and_trailing(nl2: Game) -> None:
    line = "MATCHSTATE:0:0:cc/r3023r6694c/:7d3d|/5sKs7s/9s"
    whole = parse_matchstate(line, nl2)
    # Every strict prefix is either an error or a different (earlier) state: never a crash
    # and never the same state.
    for cut in range(len(line)):
        try:
            ms = parse_matchstate(line[:cut], nl2)
        except RemoteProtocolError:
            continue
        assert ms != whole
    # Trailing data: the prefix parser stops where the state ends, the whole parser refuses.
    for tail in (":c", ":r500\r\n", "xyz", "9h"):
        ms, end = parse_matchstate_prefix(line + tail, nl2)
        assert ms == whole and end == len(line)
        with pytest.raises(RemoteProtocolError):
            parse_matchstate(line + tail, nl2)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("STATE:0:0::7d3d|", "expected a line starting 'MATCHSTATE:'"),
        ("MATCHSTATE:2:0::7d3d|", "expected a position in 0..1"),
        ("MATCHSTATE:0:x::7d3d|", "expected the hand number"),
        ("MATCHSTATE:0:0:r50:7d3d|", "illegal action 'r50'"),
        ("MATCHSTATE:0:0:cc/:7d3d|", "expected 3 board cards for round 1"),
        ("MATCHSTATE:0:0::7d|", "expected 2 hole cards for position 0"),
        ("MATCHSTATE:0:0::7d7d|", "expected distinct cards"),
        ("MATCHSTATE:0:0:cc", "expected ':' and the cards"),
    ],
)
def test_errors(nl2: Game, line: str, message: str) -> None:
    with pytest.raises(RemoteProtocolError, match=message):
        parse_matchstate(line, nl2)


@pytest.mark.parametrize(
    ("line", "card"),
    [("MATCHSTATE:1:3:r10:|Qc", "Qc"), ("MATCHSTATE:1:3:r10:|2c", "2c"),
     ("MATCHSTATE:0:3:cc/:Kh|/Qd", "Qd"), ("MATCHSTATE:0:3:cc/cc:Kh|Jh/Qs", "Jh")],
)
def test_cards_outside_the_deck(line: str, card: str) -> None:
    """Leduc's deck is Q, K, A of hearts and spades: any other card is refused with its own
    message, by the whole parse and by the client's parse of a next state alike."""
    leduc_nl = load_game("leduc.nolimit.2p.game")
    message = f"expected cards of the game's deck \\(ranks QKA, suits hs\\), got '{card}'"
    with pytest.raises(RemoteProtocolError, match=message):
        parse_matchstate(line, leduc_nl)
    prev_text = line.split(":")
    prev_text[3] = ""
    prev_text[4] = "Kh|" if line.startswith("MATCHSTATE:0") else "|Kh"
    prev = ":".join(prev_text)
    with pytest.raises(RemoteProtocolError, match=message):
        parse_next_matchstate(line, leduc_nl, parse_matchstate(prev, leduc_nl), prev)
    assert parse_matchstate(line.replace(card, "Ah"), leduc_nl).hand_number == 3


def test_errors_quote_a_short_excerpt(nl2: Game) -> None:
    """An error about a long line quotes a short part of it, not the whole line."""
    betting = "".join(f"r{k}" for k in range(200, 6401, 100))  # 63 raises, 315 characters
    for line in ("MATCHSTATE:0:0:" + "c" * 3000, "MATCHSTATE:0:0::7d3d|" + "9" * 3000,
                 f"MATCHSTATE:1:0:{betting}", f"MATCHSTATE:1:0:{betting}:|7d7d"):
        with pytest.raises(RemoteProtocolError) as info:
            parse_matchstate(line, nl2)
        assert len(str(info.value)) < 200, str(info.value)


def test_views_hide_cards_until_showdown(nl2: Game) -> None:
    deal = next(deal_hands(nl2, 42))
    from agent.acpc.betting import parse_betting

    folded = parse_betting(nl2, "f")
    lines = [format_matchstate(view_of(p, 2, folded, deal.hole, deal.board)) for p in (0, 1)]
    assert lines == ["MATCHSTATE:0:2:f:7d3d|", "MATCHSTATE:1:2:f:|2hAc"]
    shown = parse_betting(nl2, "cc/cc/cc/cc")
    line = format_matchstate(view_of(1, 0, shown, deal.hole, deal.board))
    assert line == "MATCHSTATE:1:0:cc/cc/cc/cc:7d3d|2hAc/5sKs7s/9s/6h"


def test_states_match_is_semantic(nl2: Game) -> None:
    a = parse_matchstate("MATCHSTATE:0:0:cc/r3023:7d3d|/5sKs7s", nl2)
    b = parse_matchstate("MATCHSTATE:0:0:kk/R3023:7D3D|2hAc/5sKs7s", nl2)
    assert states_match(a, b)
    c = parse_matchstate("MATCHSTATE:0:1:cc/r3023:7d3d|/5sKs7s", nl2)
    assert not states_match(a, c)
    d = parse_matchstate("MATCHSTATE:0:0:cc/r3024:7d3d|/5sKs7s", nl2)
    assert not states_match(a, d)


@settings(max_examples=150, deadline=None)
@given(games(), st.integers(0, 2**32 - 1))
def test_views_round_trip_property(game: Game, seed: int) -> None:
    rng = random.Random(seed)
    final, _ = random_playout(game, rng)
    deal = next(deal_hands(game, seed))
    # Replay the hand and check every intermediate view of every position.
    from agent.acpc.betting import BettingState

    state = BettingState.initial(game)
    for action in [a for rnd in final.actions for a in rnd] + [None]:
        for p in range(game.num_players):
            ms = view_of(p, seed % 1000, state, deal.hole, deal.board)
            text = format_matchstate(ms)
            back = parse_matchstate(text, game)
            assert format_matchstate(back) == text
            assert states_match(ms, back)
            assert back.is_to_act == (not state.finished and state.player == p)
            assert format_cards(back.own_cards) == format_cards(deal.hole[p])
        if action is not None:
            state = state.apply(action)


@settings(max_examples=100, deadline=None)
@given(games(), st.integers(0, 2**32 - 1))
def test_incremental_parse_equals_full_parse(game: Game, seed: int) -> None:
    from agent.acpc.betting import BettingState

    rng = random.Random(seed)
    final, _ = random_playout(game, rng)
    deal = next(deal_hands(game, seed))
    state = BettingState.initial(game)
    previous = [None] * game.num_players
    for action in [a for rnd in final.actions for a in rnd] + [None]:
        for p in range(game.num_players):
            text = format_matchstate(view_of(p, 3, state, deal.hole, deal.board))
            fast = parse_matchstate(text, game, previous[p])
            assert fast == parse_matchstate(text, game)
            previous[p] = fast
        if action is not None:
            state = state.apply(action)


def test_incremental_parse_does_not_resume_inside_a_number(nl2: Game) -> None:
    prev = parse_matchstate("MATCHSTATE:0:0:r300:|2hAc", nl2)
    ms = parse_matchstate("MATCHSTATE:0:0:r3000:|2hAc", nl2, prev)
    assert ms.state.max_spent == 3000


def _mutations(text: str, rng: random.Random) -> list[str]:
    """``text`` and damaged copies of its cards section (the part after the last ':')."""
    head = text.rfind(":") + 1
    cards = text[head:]
    out = [text, text + "x", text + "2c", text + "/", text.replace("/", ""),
           text[:head] + cards.replace("|", "|2c"),
           # a card of the first rank and suit (outside a small game's deck)
           text[:-2] + "2c", text[:-1] + "c", text[:-2] + "2" + text[-1]]
    for _ in range(6):
        k = rng.randrange(len(cards) + 1)
        cut = cards[:k] + cards[k + 1:]
        pair = cards[max(0, k - 2):k] or "As"
        out += [text[:head] + cut, text[:head] + cards[:k] + pair + cards[k:]]
    # the last card written over by each card of the hand (a card dealt twice)
    shown = re.findall(r"[2-9TJQKA][cdhs]", cards)
    out += [text[:-2] + card for card in shown if text.endswith(shown[-1])]
    return out


def _outcome(parse: object, text: str) -> object:
    try:
        return parse(text)  # type: ignore[operator]
    except RemoteProtocolError:
        return "error"


def _check_damaged_continuations(game: Game, seed: int) -> int:
    """Every next state of a random hand and damaged copies of it: parse_next_matchstate
    equals parse_matchstate (the same state, or the same rejection). The damaged copies are
    made for every player's view when a round begins and for one player's view, drawn,
    after each other action (every player's view at every action made the long hands of
    ten-player games cost minutes). Returns how many next states were in a later round than
    the one before (the new-rounds path)."""
    from agent.acpc.betting import BettingState

    rng = random.Random(seed)
    final, _ = random_playout(game, rng)
    deal = next(deal_hands(game, seed))
    state = BettingState.initial(game)
    previous: list[tuple[MatchState, str] | None] = [None] * game.num_players
    new_rounds = 0
    last_round = state.round
    for action in [a for rnd in final.actions for a in rnd] + [None]:
        drawn = rng.randrange(game.num_players)
        for p in range(game.num_players):
            text = format_matchstate(view_of(p, 3, state, deal.hole, deal.board))
            prev = previous[p]
            if prev is not None and (p == drawn or state.round != last_round):
                for t in _mutations(text, rng):
                    full = _outcome(lambda x: parse_matchstate(x, game), t)
                    fast = _outcome(lambda x, q=prev: parse_next_matchstate(x, game, *q), t)
                    assert fast == full, (prev[1], t)
                new_rounds += state.round > prev[0].state.round
            previous[p] = (parse_matchstate(text, game), text)
        last_round = state.round
        if action is not None:
            state = state.apply(action)
    return new_rounds


@settings(max_examples=100, deadline=None)
@given(games(), st.integers(0, 2**32 - 1))
def test_next_parse_equals_full_parse_on_damaged_continuations(game: Game, seed: int) -> None:
    """parse_next_matchstate (the client's parse of a state continuing the last one) against
    parse_matchstate, random games."""
    _check_damaged_continuations(game, seed)


@pytest.mark.parametrize("game_name", ["holdem.nolimit.2p.reverse_blinds.game",
                                       "holdem.limit.3p.game", "leduc.limit.2p.game"])
def test_next_parse_equals_full_parse_on_damaged_new_rounds(game_name: str) -> None:
    """The same on bundled games, where hands reach new rounds (a dealt-twice card on the
    new board must be rejected as the full parse rejects it)."""
    game = load_game(game_name)
    assert sum(_check_damaged_continuations(game, seed) for seed in range(40)) > 20

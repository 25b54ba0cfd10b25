"""PHH export (``acpc-log phh``): every exported hand is read back by pokerkit, and what
pokerkit replays (its own operations: cards dealt, bets, final stacks) rebuilds the log's
betting string, cards and chips won."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pokerkit
import pytest
from pokerkit import HandHistory

from agent.acpc.betting import (
    CALL,
    FOLD,
    LIMIT_RAISE,
    Action,
    ActionKind,
    BettingState,
    parse_betting,
)
from agent.acpc.dealing import deal_hands
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from dealer.logfile import format_state_line, hand_values
from dealer.phh import (
    PhhError,
    hand_to_phh,
    log_hands,
    log_to_phhs,
    phh_variant,
    trace_to_phhs,
)
from evaluation.logtool import main as logtool_main
from tests.support import DATA, LOGS, ROOT

MAPPED_LOGS = [
    ("nl1000.log", "holdem.nolimit.2p.reverse_blinds.game"),
    ("lim2p_1000.log", "holdem.limit.2p.reverse_blinds.game"),
    ("nl3p_1000.log", "holdem.nolimit.3p.game"),
    ("lim3p_1000.log", "holdem.limit.3p.game"),
]


def replay(hh: HandHistory, game: Game) -> tuple[list[str], list[str], str, list[int]]:
    """What pokerkit makes of a hand, in ACPC terms, from pokerkit's operations alone:
    (actions as ACPC tokens with '/' for each board dealt, hole cards by player, board,
    final stacks)."""
    state = list(hh)[-1]
    n = game.num_players
    put = [0] * n  # chips each player had in before the current street
    street = [0] * n  # chips in on the current street
    tokens: list[str] = []
    hole = [""] * n
    board: list[str] = []
    for op in state.operations:
        if isinstance(op, pokerkit.BlindOrStraddlePosting):
            street[op.player_index] += op.amount
        elif isinstance(op, pokerkit.HoleDealing):
            hole[op.player_index] += "".join(map(repr, op.cards))
        elif isinstance(op, pokerkit.BoardDealing):
            board += [repr(c) for c in op.cards]
            tokens.append("/")
        elif isinstance(op, pokerkit.BetCollection):
            put = [a + b for a, b in zip(put, street, strict=True)]
            street = [0] * n
        elif isinstance(op, pokerkit.Folding):
            tokens.append("f")
        elif isinstance(op, pokerkit.CheckingOrCalling):
            street[op.player_index] += op.amount
            tokens.append("c")
        elif isinstance(op, pokerkit.CompletionBettingOrRaisingTo):
            street[op.player_index] = op.amount
            to = put[op.player_index] + op.amount
            tokens.append(f"r{to}" if game.is_nolimit else "r")
    return tokens, hole, "".join(board), list(state.stacks)


def expected_tokens(game: Game, betting: str) -> list[str]:
    """The log's actions as pokerkit plays them: a raise that no opponent still in can
    answer with more chips (each one's stack is at most the bet) is a call in pokerkit,
    which refuses such raises (the excess comes back either way)."""
    final = parse_betting(game, betting)
    state = BettingState.initial(game)
    out: list[str] = []
    for r, acts in enumerate(final.actions):
        if r:
            out.append("/")
        for action in acts:
            token = str(action)
            if action.kind is ActionKind.RAISE and max(
                    game.stack[q] for q in range(game.num_players)
                    if q != state.player and not state.folded[q]) <= state.max_spent:
                token = "c"
            out.append(token)
            state = state.apply(action)
    return out


def check_against_state_lines(game: Game, text: str, lines: Sequence[str]) -> int:
    states = [x for x in lines if x.startswith("STATE:")]
    histories = list(HandHistory.loads_all(text))
    assert len(histories) == len(states)
    for hh, line in zip(histories, states, strict=True):
        _, number, betting, cards, values, names = line.split(":")
        tokens, hole, board, stacks = replay(hh, game)
        assert tokens == expected_tokens(game, betting), (line, hh.actions)
        holes, _, board_text = cards.partition("/")
        assert hole == holes.split("|"), line
        assert board == board_text.replace("/", ""), line
        vals = [float(v) for v in values.split("|")]
        won = [s - s0 for s, s0 in zip(stacks, game.stack, strict=True)]
        if all(v.is_integer() for v in vals):
            assert won == vals, (line, won)
        else:  # the ACPC splits odd chips in fractions, pokerkit gives them (fewer than the
            # players splitting) to one player
            n = game.num_players
            assert sum(won) == 0 and all(abs(w - v) < n for w, v in zip(won, vals, strict=True))
        assert hh.hand == int(number) and hh.players == names.split("|")
        assert hh.finishing_stacks in (None, stacks)
    return len(states)


REPLAYED = 250


@pytest.mark.parametrize(("log", "game_name"), MAPPED_LOGS)
def test_reference_logs_round_trip_through_pokerkit(log: str, game_name: str) -> None:
    """The first :data:`REPLAYED` hands of each reference log (pokerkit's replay costs ~40 ms
    a hand; all 1,000 made this file a minute of the suite per log)."""
    game = load_game(game_name)
    lines = (LOGS / log).read_text().splitlines()
    states = [i for i, line in enumerate(lines) if line.startswith("STATE:")]
    assert len(states) == 1000
    lines = lines[:states[REPLAYED - 1] + 1]
    text, count, skipped = log_to_phhs(game, lines, log)
    assert count == REPLAYED and not skipped
    assert check_against_state_lines(game, text, lines) == REPLAYED


def random_hand(game: Game, rng: random.Random) -> BettingState:
    state = BettingState.initial(game)
    while not state.finished:
        kinds = state.legal_actions()
        kind = rng.choices(kinds, weights=[1 if k is ActionKind.FOLD else 4 for k in kinds])[0]
        if kind is ActionKind.RAISE:
            lo, hi = state.raise_bounds() or (0, 0)
            to = rng.choice([lo, hi, rng.randint(lo, hi)])
            state = state.apply(Action(kind, to) if game.is_nolimit else LIMIT_RAISE)
        else:
            state = state.apply(FOLD if kind is ActionKind.FOLD else CALL)
    return state


@pytest.mark.parametrize("game_name", ["holdem.nolimit.2p.reverse_blinds.game",
                                       "holdem.nolimit.6p.game", "nl3p_uneven.game",
                                       "holdem.limit.3p.game"])
def test_random_hands_round_trip_through_pokerkit(game_name: str) -> None:
    """Random legal play (all-ins, side pots, uneven stacks, run-outs), dealt by the reference
    dealing, written as log lines, exported and replayed by pokerkit."""
    game = load_game(game_name)
    rng = random.Random(11)
    names = [f"s{p}" for p in range(game.num_players)]
    lines = []
    deals = deal_hands(game, 5)
    for number in range(120):
        deal = next(deals)
        state = random_hand(game, rng)
        values = hand_values(state, deal.hole, deal.board)
        lines.append(format_state_line(number, state, deal.hole, deal.board, values, names))
    text, count, skipped = log_to_phhs(game, lines, skip=True)
    kept = [x for x in lines if int(x.split(":")[1]) not in skipped]
    assert check_against_state_lines(game, text, kept) == count
    assert count >= 100
    assert_pokerkit_refuses(game, lines, skipped)


def assert_pokerkit_refuses(game: Game, lines: Sequence[str], skipped: Sequence[int]) -> None:
    """The hands left out have no PHH form: written anyway, pokerkit refuses them."""
    for hand in log_hands(game, lines):
        if hand.number in skipped:
            with pytest.raises(ValueError):
                list(HandHistory.loads(hand_to_phh(hand, check=False)))


def test_a_lowering_short_stack_raise_is_refused_or_skipped(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    game = load_game("lim4p_stack.game")
    lines = (LOGS / "limit_short_raise.log").read_text().splitlines()
    with pytest.raises(PhhError, match="limit raise by a short stack that lowers the bet"):
        log_to_phhs(game, lines)
    text, count, skipped = log_to_phhs(game, lines, skip=True)
    assert count + len(skipped) == 8 and count >= 1
    kept = [x for x in lines if x.startswith("STATE:") and int(x.split(":")[1]) not in skipped]
    assert check_against_state_lines(game, text, kept) == count
    assert_pokerkit_refuses(game, lines, skipped)
    out = tmp_path / "s.phhs"
    assert logtool_main(["phh", "lim4p_stack.game", str(LOGS / "limit_short_raise.log"),
                         "--out", str(out), "--skip-unmappable"]) == 0
    assert out.read_text() == text
    assert "skipped hand(s)" in capsys.readouterr().err


@pytest.mark.parametrize("game_name", ["leduc.limit.2p.game", "kuhn.limit.3p.game",
                                       "royal.nolimit.2p.game",
                                       str(DATA / "kuhn.limit.2p.game")])
def test_games_pokerkit_has_no_variant_for_are_refused_in_one_line(
        game_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(PhhError):
        phh_variant(load_game(game_name))
    log = tmp_path / "x.log"
    log.write_text("# nothing\n")
    assert logtool_main(["phh", game_name, str(log)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("acpc-log: error: expected a hold'em game pokerkit reads")
    assert "\n" not in err


def test_the_cli_writes_what_pokerkit_reads(tmp_path: Path) -> None:
    out = tmp_path / "nl.phhs"
    assert logtool_main(["phh", "holdem.nolimit.2p.reverse_blinds.game",
                         str(LOGS / "nl1000.log"), "--out", str(out)]) == 0
    lines = (LOGS / "nl1000.log").read_text().splitlines()
    game = load_game("holdem.nolimit.2p.reverse_blinds.game")
    assert check_against_state_lines(game, out.read_text(), lines) == 1000


def strip_last_action(betting: str) -> str:
    """The betting without its last action (and the '/'s after it)."""
    body = betting.rstrip("/")
    i = len(body) - 1
    while body[i].isdigit():
        i -= 1
    return body[:i]


def test_traces_round_trip_with_unknown_cards(tmp_path: Path) -> None:
    """A trace: records of one seat's decisions. The PHH hand is the betting through the
    last decision; pokerkit replays exactly those actions, cards unknown."""
    game = load_game("holdem.nolimit.2p.reverse_blinds.game")
    rng = random.Random(5)
    records = []
    wanted = {}
    full = {}
    for number in range(200):
        final = random_hand(game, rng)
        state = BettingState.initial(game)
        last = None
        for acts in final.actions:
            for action in acts:
                if state.player == 0:
                    records.append({"hand": number, "position": 0, "betting": state.betting,
                                    "real": str(action), "fallback": None})
                    last = state.apply(action)
                state = state.apply(action)
        if last is not None:
            # a last action that reaches a showdown is a comment (unknown cards)
            full[number] = last.betting
            wanted[number] = strip_last_action(last.betting) if last.is_showdown \
                else last.betting
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    text, count = trace_to_phhs(game, path.read_text().splitlines())
    assert count == len(wanted)
    for hh, (number, betting) in zip(HandHistory.loads_all(text), sorted(wanted.items()),
                                     strict=True):
        tokens, hole, board, _ = replay(hh, game)
        assert hh.hand == number
        # the trace ends at our last action; pokerkit's run-out deals may add '/'s after an
        # all-in, which the betting so far does not have yet
        got = "".join(tokens)
        assert got.rstrip("/") == betting.rstrip("/"), (number, hh.actions)
        assert set(hole[0]) == {"?"} and set(board) <= {"?"}
        if got.rstrip("/") != "".join(expected_tokens(game, full[number])).rstrip("/"):
            assert hh.actions[-1].endswith(": reaches a showdown of unknown cards")
    out = tmp_path / "t.phhs"
    assert logtool_main(["phh", "holdem.nolimit.2p.reverse_blinds.game", str(path),
                         "--out", str(out)]) == 0
    assert out.read_text() == text


def test_a_real_agent_trace_exports_the_logged_hands(tmp_path: Path) -> None:
    """acpc-agent with the bundled hold'em strategy and --trace against acpc-dealer: each
    hand's PHH from the trace (its result record) replays in pokerkit as the logged hand,
    with the agent's cards and the board; without the result records, as the start of it."""
    name = "holdem.nolimit.2p.reverse_blinds.game"
    game = load_game(name)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    dealer = subprocess.Popen([sys.executable, "-m", "dealer.cli", "m", name, "20", "5", "a",
                               "b", "-q"], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env)
    assert dealer.stdout is not None
    ports = dealer.stdout.readline().split()
    trace = tmp_path / "t.jsonl"
    agents = [subprocess.Popen([sys.executable, "-m", "agent.cli", name, "127.0.0.1",
                                ports[0].decode(), "--strategy", "holdem.nolimit.2p.strat",
                                "--trace", str(trace), "--quiet"], cwd=tmp_path, env=env),
              subprocess.Popen([sys.executable, "-m", "agent.cli", name, "127.0.0.1",
                                ports[1].decode(), "--strategy", "builtin:random", "--seed",
                                "3", "--quiet"], cwd=tmp_path, env=env)]
    try:
        assert dealer.wait(timeout=600) == 0
        assert all(a.wait(timeout=60) == 0 for a in agents)
    finally:
        for proc in (dealer, *agents):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    log = {int(x.split(":")[1]): x for x in (tmp_path / "m.log").read_text().splitlines()
           if x.startswith("STATE:")}
    lines = trace.read_text().splitlines()
    text, count = trace_to_phhs(game, lines, "t.jsonl")
    assert count == 20  # every hand has its result record
    for hh in HandHistory.loads_all(text):  # the whole logged hand, with the cards shown
        line = log[hh.hand]
        betting = line.split(":")[2]
        tokens, hole, board, _ = replay(hh, game)
        assert tokens == expected_tokens(game, betting), (line, hh.actions)
        seat = line.split(":")[5].split("|").index("a")  # the traced agent is 'a'
        cards = line.split(":")[3]
        assert hole[seat] == cards.split("/")[0].split("|")[seat], (line, hh.actions)
        assert "".join(board) == "".join(cards.split("/")[1:])[: 2 * len(board)]
    # without the result records (a trace cut short): the hand up to the last decision
    decisions = [x for x in lines if '"event": "result"' not in x]
    text, count = trace_to_phhs(game, decisions, "t.jsonl")
    assert 0 < count <= 20
    for hh in HandHistory.loads_all(text):
        line = log[hh.hand]
        tokens, _, _, _ = replay(hh, game)
        want = expected_tokens(game, line.split(":")[2])
        got = [t for t in tokens if t != "/"]
        assert got == [t for t in want if t != "/"][: len(got)], (line, hh.actions)
        assert len(got) >= 1


def test_long_cards_and_raises_in_a_log_are_quoted_as_an_excerpt() -> None:
    # "expected cards, got '3h9000...'" quoted the card parser's message whole (5k
    # characters)
    game = load_game("leduc.nolimit.2p.game")
    for line, needle in (
        ("STATE:0:r12c/:3h" + "9" * 4999 + "|Qs/Qh:-12|12:a|b", "expected cards, got '3h99"),
        ("STATE:0:r" + "9" * 5000 + "c/:Ks|Qs/Qh:-12|12:a|b", "expected a legal betting"),
        # an illegal raise was a RemoteProtocolError out of log_hands, not a PhhError
        ("STATE:0:r5000c/:Ks|Qs/Qh:-12|12:a|b", "expected a legal betting, got 'r5000c/'"),
    ):
        with pytest.raises(PhhError) as info:
            log_hands(game, [line], "m.log")
        message = str(info.value)
        assert message.startswith("m.log:1: " + needle) and len(message) < 400, message

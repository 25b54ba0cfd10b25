"""PHH to ACPC logs (``acpc-log from-phh``): logs round-trip byte for byte through PHH, and
hands played and written by pokerkit become logs ``acpc-log verify`` accepts."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import pytest
from pokerkit import (
    Automation,
    Deck,
    FixedLimitTexasHoldem,
    HandHistory,
    NoLimitTexasHoldem,
    Poker,
    State,
)

from agent.acpc.gamefiles import load_game
from dealer.phh import PhhError, log_to_phhs, phhs_to_log
from evaluation.logtool import main as logtool_main
from evaluation.logtool import verify_lines
from tests.support import LOGS

AUTOMATIONS = (Automation.ANTE_POSTING, Automation.BET_COLLECTION,
               Automation.BLIND_OR_STRADDLE_POSTING, Automation.CARD_BURNING,
               Automation.HOLE_CARDS_SHOWING_OR_MUCKING, Automation.HAND_KILLING,
               Automation.CHIPS_PUSHING, Automation.CHIPS_PULLING)


def test_a_log_comes_back_from_phh_byte_for_byte(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    name = "holdem.nolimit.2p.reverse_blinds.game"
    phh = tmp_path / "m.phhs"
    back = tmp_path / "m.log"
    assert logtool_main(["phh", name, str(LOGS / "nl1000.log"), "--out", str(phh)]) == 0
    assert logtool_main(["from-phh", name, str(phh), "--out", str(back)]) == 0
    assert "the cards are the header seed's deals" in capsys.readouterr().err
    assert back.read_bytes() == (LOGS / "nl1000.log").read_bytes()
    assert logtool_main(["verify", name, str(back)]) == 0
    # pokerkit reads what acpc-log phh writes, the user fields (_acpc_header) included
    first = phh.read_text().split("\n\n[2]")[0].split("\n", 1)[1]
    assert HandHistory.loads(first).players == ["P1", "P2"]


def test_a_limit_three_player_log_comes_back_byte_for_byte() -> None:
    game = load_game("holdem.limit.3p.game")
    text = (LOGS / "lim3p_1000.log").read_text()
    phh, count, skipped = log_to_phhs(game, text.splitlines(), "lim3p_1000.log")
    assert count == 1000 and not skipped
    assert phhs_to_log(game, phh).text == text


def _play(game: Poker, stacks: tuple[int, ...], caps: tuple[int, ...],
          rng: random.Random) -> State:
    """One hand of random play in pokerkit, dealt from a seeded shuffle, with at most
    ``caps[street]`` raises a street (pokerkit's limit hold'em allows 4 before the flop, the
    ACPC game 3: a hand with a fourth has no ACPC form, as the next test shows)."""
    state = game(stacks, len(stacks))
    deck = list(Deck.STANDARD)
    rng.shuffle(deck)
    streets = 0
    raises = 0
    while state.status:
        if state.can_deal_hole():
            state.deal_hole(repr(deck.pop()))
        elif state.can_deal_board():
            count = 3 if streets == 0 else 1
            state.deal_board("".join(repr(deck.pop()) for _ in range(count)))
            streets += 1
            raises = 0
        else:
            can_raise = state.can_complete_bet_or_raise_to() and raises < caps[streets]
            moves = (["f"] if state.can_fold() else []) + ["c"] * 4 + (["r"] * 2 if can_raise
                                                                       else [])
            move = rng.choice(moves)
            if move == "f":
                state.fold()
            elif move == "c":
                state.check_or_call()
            else:
                lo = state.min_completion_betting_or_raising_to_amount
                hi = state.max_completion_betting_or_raising_to_amount
                assert lo is not None and hi is not None
                state.complete_bet_or_raise_to(rng.choice([lo, hi, rng.randint(lo, hi)]))
                raises += 1
    return state


@pytest.mark.parametrize(("game_name", "hands"), [
    ("holdem.nolimit.2p.reverse_blinds.game", 40),
    ("holdem.nolimit.6p.game", 25),
    ("holdem.limit.3p.game", 25),
])
def test_hands_pokerkit_played_become_a_log_verify_accepts(
        game_name: str, hands: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = load_game(game_name)
    n = game.num_players
    blinds = (game.blind[1], game.blind[0]) if n == 2 else game.blind
    poker: Poker = (NoLimitTexasHoldem(AUTOMATIONS, True, 0, blinds, game.big_blind)
                    if game.is_nolimit else
                    FixedLimitTexasHoldem(AUTOMATIONS, True, 0, blinds, game.raise_size[0],
                                          game.raise_size[2]))
    rng = random.Random(7)
    parts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pokerkit warns on cards dealt out of its order
        for i in range(hands):
            state = _play(poker, game.stack, game.max_raises, rng)
            hh = HandHistory.from_game_state(poker, state, players=[f"bot{p}" for p in range(n)],
                                             finishing_stacks=list(state.stacks))
            parts.append(f"[{i + 1}]\n{hh.dumps()}\n")
    phh = tmp_path / "pk.phhs"
    phh.write_text("\n".join(parts))
    log = tmp_path / "pk.log"
    # finishing_stacks are checked against the ACPC payoffs hand by hand
    assert logtool_main(["from-phh", game_name, str(phh), "--out", str(log)]) == 0
    assert "verify with --cards-as-logged" in capsys.readouterr().err
    lines = log.read_text().splitlines()
    assert len(lines) == 4 + hands + 1 and lines[0].endswith(f" {hands} 0")
    assert logtool_main(["verify", game_name, str(log), "--cards-as-logged"]) == 0
    assert f"OK ({hands} hands" in capsys.readouterr().out
    # without the flag, verify re-derives the seed's cards, which these are not
    assert logtool_main(["verify", game_name, str(log)]) == 1
    # and the cards are checked: a card dealt twice is a mismatch
    hole = lines[4].split(":")[3].split("|")
    twice = lines[4].replace(hole[1][:2], hole[0][:2], 1)
    result = verify_lines(game, [*lines[:4], twice, *lines[5:]], cards_as_logged=True)
    assert result.mismatch is not None and "each dealt once" in result.mismatch.reason


def _hand(game_name: str, **changes: object) -> str:
    game = load_game(game_name)
    text, _, _ = log_to_phhs(game, (LOGS / "nl1000.log").read_text().splitlines()[:5])
    body = text.split("\n", 1)[1]
    lines = [line for line in body.splitlines()
             if line.split(" = ")[0] not in changes]
    lines += [f"{key} = {value}" for key, value in changes.items()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("changes", "message"), [
    ({"variant": "'FT'"}, "expected variant = \"NT\""),
    ({"antes": "[1, 1]"}, "expected no antes"),
    ({"starting_stacks": "[100, 20000]"}, "expected starting_stacks"),
    ({"actions": "['d dh p1 ????', 'd dh p2 AcAd', 'p2 f']"}, "every hole card known"),
    ({"actions": "['d dh p1 2c3c', 'd dh p2 AcAd', 'p1 f']"}, "expected p2 to act"),
    ({"actions": "['d dh p1 2c3c', 'd dh p2 AcAd', 'p2 cbr 99999']"}, "expected a legal action"),
    ({"actions": "['d dh p1 2c3c', 'd dh p2 AcAd', 'p2 cc']"}, "expected a finished hand"),
    ({"actions": "['d dh p1 2c3c', 'd dh p2 2c3d', 'p2 f']"}, "every card dealt once"),
    ({"actions": "['d dh p1 2c3c', 'd dh p2 AcAd', 'p2 sd']"}, "expected a PHH hold'em action"),
    ({"finishing_stacks": "[1, 2]"}, "expected finishing_stacks"),
    ({"players": "['a b', 'c']"}, "expected players"),
])
def test_phh_with_no_acpc_form_is_one_line(changes: dict[str, str], message: str,
                                           tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    name = "holdem.nolimit.2p.reverse_blinds.game"
    with pytest.raises(PhhError, match=message.replace("(", r"\(")):
        phhs_to_log(load_game(name), _hand(name, **changes))
    bad = tmp_path / "bad.phh"
    bad.write_text(_hand(name, **changes))
    assert logtool_main(["from-phh", name, str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("acpc-log: error: ") and "\n" not in err


def test_files_and_games_with_no_acpc_form_are_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.phhs"
    for text, message in [("[1]\nvariant = ", "expected PHH (TOML) text"),
                          ("[x]\nvariant = 'NT'\n", "expected PHH hands"),
                          ("\xff", "expected a UTF-8 PHH")]:
        bad.write_bytes(text.encode("latin-1"))
        assert logtool_main(["from-phh", "holdem.nolimit.2p.reverse_blinds.game",
                             str(bad)]) == 1
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err
    assert logtool_main(["from-phh", "leduc.limit.2p.game", str(bad)]) == 1
    assert "expected a hold'em game pokerkit reads" in capsys.readouterr().err


def test_a_fourth_raise_before_the_flop_pokerkit_allows_is_refused() -> None:
    game = load_game("holdem.limit.3p.game")
    hand = ("variant = 'FT'\nantes = [0, 0, 0]\nblinds_or_straddles = [5, 10, 0]\n"
            "small_bet = 10\nbig_bet = 20\nstarting_stacks = [2147483647, 2147483647, "
            "2147483647]\nactions = ['d dh p1 2c3c', 'd dh p2 4c5c', 'd dh p3 6c7c', "
            "'p3 cbr 20', 'p1 cbr 30', 'p2 cbr 40', 'p3 cbr 50']\n")
    with pytest.raises(PhhError, match="maximum of 3 raises"):
        phhs_to_log(game, hand)


def test_with_uneven_stacks_only_raises_nobody_can_answer_come_back_as_calls() -> None:
    """What log -> PHH -> log cannot keep: a raise no opponent still in can answer with more
    chips is written as a call (pokerkit refuses the raise); the chips won stay the same."""
    from agent.acpc.betting import ActionKind, parse_betting
    from agent.acpc.dealing import deal_hands
    from dealer.logfile import format_state_line, hand_values
    from tests.dealer.test_phh import random_hand

    game = load_game("nl3p_uneven.game")
    rng = random.Random(11)
    deals = deal_hands(game, 5)
    lines = []
    for number in range(300):
        deal = next(deals)
        state = random_hand(game, rng)
        lines.append(format_state_line(number, state, deal.hole, deal.board,
                                       hand_values(state, deal.hole, deal.board),
                                       ["s0", "s1", "s2"]))
    text, count, skipped = log_to_phhs(game, lines, skip=True)
    kept = [x for x in lines if int(x.split(":")[1]) not in skipped]
    back = phhs_to_log(game, text).text.splitlines()[4:-1]
    assert len(back) == count == len(kept)
    changed = 0
    for was, now in zip(kept, back, strict=True):
        _, _, bet_was, *rest_was = was.split(":")
        _, _, bet_now, *rest_now = now.split(":")
        assert rest_now == rest_was  # cards, chips won, names
        if bet_now == bet_was:
            continue
        changed += 1
        before = parse_betting(game, bet_was)
        after = parse_betting(game, bet_now)
        state = parse_betting(game, "")
        for r, (acts, new) in enumerate(zip(before.actions, after.actions, strict=True)):
            assert len(acts) == len(new), (was, now)
            for a, b in zip(acts, new, strict=True):
                if a != b:  # a raise that only the raiser's own stack could cover
                    assert a.kind is ActionKind.RAISE and b.kind is ActionKind.CALL
                    assert all(game.stack[q] <= state.max_spent for q in range(3)
                               if q != state.player and not state.folded[q]), (r, was)
                state = state.apply(a)
    assert 0 < changed < count // 10
    # what came back has a PHH form as it is: a second trip changes nothing
    again = phhs_to_log(game, log_to_phhs(game, back)[0]).text.splitlines()[4:-1]
    assert again == back

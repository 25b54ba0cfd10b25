"""Traces a person can read (issue 19): the decision record's fields for people, and
``acpc-agent explain`` telling a trace as a story, on policy runs and a live match."""

from __future__ import annotations

import asyncio
import io
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.abstraction.translation import get_mapping
from agent.acpc.betting import CALL, FOLD, ActionKind, BettingState
from agent.acpc.dealing import deal_hands
from agent.acpc.describe import cards_text, legal_labels
from agent.acpc.errors import UsageError
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import view_of
from agent.agents import resolve_strategy
from agent.explain import _chosen_index, explain, read_trace
from agent.policy import StrategyPolicy
from agent.strategy.hotswap import load_for_game
from agent.strategy.purification import parse_purification
from tests.support import ROOT, r
from tests.support.dealer_harness import Dealer

GAME = "leduc.nolimit.2p.game"


def _policy_records(mapping: str, purify: str, hands: int, seed: int) -> list[dict[str, Any]]:
    """Hands of the bundled fcpa file (position 1) against a random opponent that makes
    small, odd-sized and all-in raises, through the policy with a trace; each record also
    keeps the real state it was made in (``_state``, ``_cards``) for the checks."""
    game = load_game(GAME)
    loaded = load_for_game(resolve_strategy("leduc.nolimit.2p.fcpa.strat"), game)
    records: list[dict[str, Any]] = []
    policy = StrategyPolicy(loaded, get_mapping(mapping), parse_purification(purify),
                            seed=seed, mapping_name=mapping, trace=records.append)
    rng = random.Random(seed)
    deals = deal_hands(game, seed)
    for hand in range(hands):
        deal = next(deals)
        state = BettingState.initial(game)
        steps = 0
        while not state.finished and steps < 64:
            steps += 1
            ms = view_of(1, hand, state, deal.hole, deal.board)
            if state.player == 1:
                before = len(records)
                action = policy.act(ms)
                assert len(records) == before + 1
                records[-1]["_state"] = state
                records[-1]["_cards"] = ms.own_cards
            else:
                kind = rng.choice(state.legal_actions())
                if kind is ActionKind.RAISE:
                    bounds = state.raise_bounds()
                    assert bounds is not None
                    action = r(rng.choice([bounds[0], bounds[1], rng.randint(*bounds)]))
                else:
                    action = FOLD if kind is ActionKind.FOLD else CALL
            state = state.apply(action)
    return records


@pytest.mark.parametrize(("mapping", "purify"), [("rand-pshar", "none"), ("det-arith", "full")])
def test_decision_records_say_what_came_in_and_what_was_played(mapping: str, purify: str) -> None:
    records = _policy_records(mapping, purify, hands=60, seed=3)
    decided = [x for x in records if x["fallback"] is None]
    translations = [t for x in records for t in x["translations"] if "x" in t]
    assert len(decided) > 50 and len(translations) > 20
    for x in records:
        state: BettingState = x["_state"]
        assert x["cards"] == cards_text(x["_cards"]) and len(x["cards"].split()) == 1
        assert x["legal"] == legal_labels(state)
        assert ("fold" in x["legal"]) == state.can_fold()
        assert x["played"].split()[0] in {"fold", "check", "call", "raise", "bet"}
    for x in decided:
        assert len(x["actions"]) == len(x["raw"]) == len(x["purified"])
        assert x["purify"] == purify and 0.0 <= x["draw"] < 1.0
        chosen = _chosen_index(x)
        assert chosen is not None and x["purified"][chosen] > 0
        label = x["actions"][chosen]  # the drawn action, as it is played in the real state
        assert label == x["played"] or label.endswith(": " + x["played"]), (label, x)
        if x["played"].split()[0] in {"raise", "bet"}:  # (a raise the real state forbids
            assert x["abstract"].startswith("r")   # is played as a call)
    for t in translations:  # the draw decides between the two actions named in 'between'
        a_label, b_label = t["between"]
        if t["A"] == t["B"] or t.get("all_in_rule") or t["f"] in (0.0, 1.0):
            continue
        expected = a_label if t["u"] < t["f"] else b_label
        assert (expected == "check/call") == (t["choice"] == "c"), (t, expected)
        verb, to, chips = t["real_text"].split()
        assert verb in {"raise", "bet"} and to == "to" and t["real"] == "r" + chips


def test_translations_are_reported_once() -> None:
    """Each translated raise appears in exactly one record: the next decision's."""
    records = _policy_records("rand-pshar", "none", hands=40, seed=5)
    by_hand: dict[int, list[dict[str, Any]]] = {}
    for x in records:
        by_hand.setdefault(x["hand"], []).append(x)
    for hand_records in by_hand.values():
        seen = [t["real"] for x in hand_records for t in x["translations"]]
        state: BettingState = hand_records[-1]["_state"]
        opponent_raises = [a for rnd in state.actions for a in rnd
                           if a.kind is ActionKind.RAISE]
        assert len(seen) <= len(opponent_raises)


def test_explain_tells_every_decision() -> None:
    records = _policy_records("rand-pshar", "none", hands=30, seed=7)
    for x in records:
        del x["_state"], x["_cards"]
    out = io.StringIO()
    told = explain(json.loads(json.dumps(records)), out)
    text = out.getvalue()
    hands = {x["hand"] for x in records}
    assert told == len(hands)
    assert text.count("\nhand ") + text.startswith("hand ") == len(hands)
    assert text.count("played ") == len(records)
    translated = sum(1 for x in records for t in x["translations"] if "x" in t)
    assert sum(1 for line in text.splitlines()
               if "the opponent's " in line and "pots (x)" in line) == translated
    decided = [x for x in records if x["fallback"] is None]
    assert text.count("abstract node ") == len(decided)
    first = decided[0]
    assert f"cards {first['cards']}" in text
    out = io.StringIO()
    explain(records, out, only=[first["hand"]])
    assert out.getvalue().startswith(f"hand {first['hand']}: position 1, cards ")


def _explain(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent.cli", "explain", *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_explain_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hand": 0, "event": "decision"}\nnot json\n')
    done = _explain(str(bad))
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert f"{bad}:2" in done.stderr and "'not json'" in done.stderr
    good = tmp_path / "good.jsonl"
    good.write_text('{"hand": 4, "position": 0, "betting": "", "real": "c", '
                    '"fallback": "off-tree: check/call", "translations": []}\n')
    done = _explain(str(good), "--hand", "9")
    assert done.returncode == 1 and "4..4" in done.stderr and "9" in done.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert _explain(str(empty)).returncode == 1
    assert _explain(str(tmp_path / "missing.jsonl")).returncode == 1
    done = _explain(str(good))
    assert done.returncode == 0 and "check/call to the end of the hand" in done.stdout


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        # a non-UTF-8 file (here a strategy file's first bytes) was a UnicodeDecodeError
        (b'{"hand": 0}\n\x89STRAT\xff\x00\n', ":2: expected an agent trace (acpc-agent "
         "--trace) (UTF-8), got byte 0x89 at column 1"),
        (b'{"hand": 0, "x": ' + b"[" * 3000 + b"]" * 3000 + b"}\n",
         ":1: expected a trace record nested at most 32 levels deep"),
        (b'{"hand": 0, "x": "' + b"y" * (1 << 20) + b'"}\n',
         ":1: expected an agent trace (acpc-agent --trace) with lines of at most 1,048,576 "
         "bytes, got a longer line"),
        (b'{"hand": 0, "x": "' + b"y" * 5000 + b'"\n', "(5,019 characters)"),
        # fields explain computes with, wrongly typed, were a TypeError (fuzz trace:1:38)
        (b'{"hand": 0, "event": "result", "hole_cards": [7, 8]}\n',
         ":1: expected 'hole_cards' to be a list of strings, got [7, 8]"),
        (b'{"hand": 0, "legal": [' + b"1, " * 2000 + b'1]}\n',
         ":1: expected 'legal' to be a list of strings, got [1, 1, 1, "),
        (b'{"hand": 0, "raw": 0.5}\n', ":1: expected 'raw' to be a list of numbers, got 0.5"),
        (b'{"hand": 0, "purified": ["a"]}\n',
         ":1: expected 'purified' to be a list of numbers, got ['a']"),
        (b'{"hand": 0, "seconds": "fast"}\n', ":1: expected 'seconds' to be a number, got 'fast'"),
        (b'{"hand": 0, "translations": [1]}\n',
         ":1: expected 'translations' to be a list of objects, got [1]"),
    ],
)
def test_hostile_traces_are_one_short_line(tmp_path: Path, content: bytes, needle: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(content)
    with pytest.raises(UsageError) as info:
        read_trace(path)
    message = str(info.value)
    assert message.startswith(str(path)) or f"{path}:" in message
    assert needle in message and len(message) < 400 and "\n" not in message


def test_live_trace_explained(tmp_path: Path) -> None:
    """A traced match against acpc-dealer: every hand has its result record, and explain
    tells a hand from the cards to the chips won."""
    hands = 40

    async def match() -> int:
        dealer = await Dealer.start(["ex", GAME, str(hands), "5", "A", "B", "-q"], tmp_path)
        agents = [
            await asyncio.create_subprocess_exec(
                sys.executable, "-m", "agent.cli", GAME, "127.0.0.1", str(port), *args,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
            for port, args in zip(dealer.ports, [
                ["--strategy", "leduc.nolimit.2p.fcpa.strat", "--seed", "2",
                 "--trace", str(tmp_path / "t.jsonl")],
                ["--strategy", "builtin:random", "--seed", "3"]], strict=True)
        ]
        rc, _, _ = await dealer.wait(120)
        for agent in agents:
            await asyncio.wait_for(agent.communicate(), 60)
        return rc

    assert asyncio.run(match()) == 0
    records = read_trace(tmp_path / "t.jsonl")
    results = [x for x in records if x["event"] == "result"]
    assert [x["hand"] for x in results] == list(range(hands))
    assert all(len(x["hole_cards"]) == 2 for x in results)
    total = sum(x["chips"] for x in results)
    log = (tmp_path / "ex.log").read_text().splitlines()
    score = log[-1]  # SCORE:a|b:A|B, seat order as named; A is our agent
    assert score.startswith("SCORE:")
    ours = float(score.split(":")[1].split("|")[0])
    assert total == pytest.approx(ours)
    hand = next(x["hand"] for x in records if x["event"] == "decision" and x["translations"])
    done = _explain(str(tmp_path / "t.jsonl"), "--hand", str(hand))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"hand {hand}: position ")
    assert "pots (x), between A = " in done.stdout
    assert lines[-1].lstrip().split()[0] in {"won", "lost", "broke"}

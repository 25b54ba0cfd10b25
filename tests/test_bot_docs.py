"""The examples of docs/bots.md, run as written (issue 32, item 3): the page cannot drift.

Every code block marked ``<!-- test: NAME -->`` is written to a file NAME in a fresh
folder; the shell block runs with the project's commands first on ``PATH`` (what an
installed ``acpc-agent`` is), and the output shown after a block is compared with what the
run prints (the score of two deterministic bots; the external agent's answers).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

DOC = ROOT / "docs" / "bots.md"
FENCE = re.compile(r"(?:<!-- test: (\S+) -->\n)?```(\w*)\n(.*?)```", re.S)
TIMEOUT_S = 120


def blocks() -> list[tuple[str | None, str]]:
    """Every fenced block of the page in order: (its test name or None, its text)."""
    return [(m.group(1), m.group(3)) for m in FENCE.finditer(DOC.read_text())]


def named(name: str) -> tuple[str, str]:
    """The block called ``name`` and the block after it (its output as the page shows it)."""
    found = blocks()
    for i, (n, text) in enumerate(found):
        if n == name:
            return text, found[i + 1][1] if i + 1 < len(found) else ""
    raise AssertionError(f"docs/bots.md has no block marked <!-- test: {name} -->")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder holding every marked block of the page, under its name."""
    for name, text in blocks():
        if name is not None:
            (tmp_path / name).write_text(text)
    return tmp_path


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)  # the bot is found beside the command, as for a user
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)


def score(text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith("SCORE:")]
    assert len(lines) == 1, text
    return lines[0]


def test_the_ten_line_bot_plays_with_acpc_agent_against_acpc_dealer(folder: Path) -> None:
    """Example (a): the bot file and the shell lines, as on the page; the dealer's score is
    the one the page shows (both bots are deterministic), each seat's summary says 200
    hands; ``play.py`` in the bot's seat (``agent.bot.play``) gets the same score."""
    bot, _ = named("mybot.py")
    assert len([line for line in bot.splitlines() if line.strip()]) <= 10  # as promised
    script, shown = named("run.sh")
    done = run(["bash", "run.sh"], folder)
    assert done.returncode == 0, done.stderr[-2000:]
    assert score(done.stdout) == score(shown)
    summaries = [line for line in done.stderr.splitlines() if line.startswith("acpc-agent:")]
    assert len(summaries) == 2 and all("hands 200," in line for line in summaries), summaries
    seat = "acpc-agent leduc.limit.2p.game 127.0.0.1 $port1 --strategy mybot:MyBot &"
    assert seat in script
    (folder / "ports").unlink()
    (folder / "run2.sh").write_text(script.replace(seat, "python play.py &"))
    again = run(["bash", "run2.sh"], folder)
    assert again.returncode == 0, again.stderr[-2000:]
    assert score(again.stdout) == score(shown)
    assert "hands 200, chips won " + score(shown).split(":")[1].split("|")[0] in again.stdout


def test_python_drives_an_external_acpc_agent(folder: Path) -> None:
    """Example (b): ``ExternalAgent`` starts ``acpc-agent`` (the min-raise bot), asks it
    three states, and prints what the page shows (the answers, no timeout, exit 0)."""
    _, shown = named("drive.py")
    done = run([sys.executable, "drive.py"], folder)
    assert done.returncode == 0, done.stderr[-2000:]
    got = done.stdout.splitlines()
    want = shown.splitlines()
    assert got[:3] == want[:3]
    assert got[3].startswith("actions 3, timeouts 0 (late answers 0), repaired 0, ignored "
                             "lines 0, slowest ") and got[3].endswith("exit status 0")
    # the answers are the built-in's own
    from agent.acpc.gamefiles import load_game
    from agent.acpc.matchstate import parse_matchstate
    from agent.builtin import MinRaisePolicy

    game = load_game("leduc.limit.2p.game")
    for line in got[:3]:
        text, _, action = line.partition(" -> ")
        assert str(MinRaisePolicy().act(parse_matchstate(text, game))) == action

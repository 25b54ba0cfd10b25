"""The bot API (agent/bot.py, agent/agents.py's ``module:Class``): loading a bot, the one
line a bad spec gets, the checks on its answers, the helpers, and ``acpc-agent``'s exit
statuses (issue 32, item 3)."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent import cli as agentcli
from agent.acpc.betting import CALL, FOLD, Action, ActionKind
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import MatchState, parse_matchstate
from agent.agents import (
    BotError,
    BotPolicy,
    BotSpecError,
    is_bot_spec,
    load_bot,
    make_policy,
    policy_kernels,
    strategy_kind,
)
from agent.bot import play, pot_raise, raise_to
from agent.decision import realise

LEDUC = load_game("leduc.limit.2p.game")
NOLIMIT = load_game("leduc.nolimit.2p.game")
_COUNTER = itertools.count()

BOTS = '''
from agent.bot import CALL, FOLD, Action, MatchState, raise_to

class Caller:
    def act(self, state: MatchState) -> Action:
        return CALL

class Seeded:
    def __init__(self, game, seed=None):
        self.game, self.seed = game, seed
    def act(self, state):
        return CALL

class Keywords:
    def __init__(self, **options):
        self.options = options
    def act(self, state):
        return CALL

class NoAct:
    pass

class Text:
    def act(self, state):
        return "c"

class Folder:
    def act(self, state):
        return FOLD

class Broken:
    def act(self, state):
        return 1 / 0

class Angry:
    def __init__(self):
        raise RuntimeError("no")
    def act(self, state):
        return CALL

def factory(game):
    return Caller()

NOT_CALLABLE = 3
'''


@pytest.fixture
def bots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A fresh bot module (a new name each time) in ``tmp_path``; ``sys.path`` and
    ``sys.modules`` are put back afterwards."""
    name = f"userbots_{next(_COUNTER)}"
    (tmp_path / f"{name}.py").write_text(BOTS)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield name, tmp_path
    sys.modules.pop(name, None)


def state(text: str, game: object = LEDUC) -> MatchState:
    return parse_matchstate(text, game)  # type: ignore[arg-type]


def test_specs_are_told_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert strategy_kind("builtin:call") == "builtin"
    assert strategy_kind("mybot:MyBot") == "bot" and is_bot_spec("pkg.sub:Outer.Inner")
    assert strategy_kind("leduc.limit.2p.strat") == "file"
    assert strategy_kind("x.strat") == "file" and not is_bot_spec("a/b:C")
    assert not is_bot_spec("builtin:call") and not is_bot_spec("mod:") and not is_bot_spec(
        "1mod:X")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mybot:MyBot").write_text("")  # a path that exists is a file first
    assert strategy_kind("mybot:MyBot") == "file"
    assert policy_kernels("nothere:Bot", LEDUC) == []  # a bot compiles nothing of ours


def test_a_bot_is_made_with_the_keywords_it_accepts(bots: tuple[str, Path]) -> None:
    name, where = bots
    plain = load_bot(f"{name}:Caller", LEDUC, seed=5, path=where)
    assert isinstance(plain, BotPolicy)
    seeded = load_bot(f"{name}:Seeded", LEDUC, seed=5, path=where).bot
    assert (seeded.game, seeded.seed) == (LEDUC, 5)
    assert load_bot(f"{name}:Keywords", LEDUC, seed=7, path=where).bot.options == {
        "game": LEDUC, "seed": 7}
    assert load_bot(f"{name}:factory", LEDUC, path=where).act(state("MATCHSTATE:0:0::Ks|")) \
        == CALL
    # make_policy: the same bot, seeded, for every command
    policy = make_policy(f"{name}:Seeded", LEDUC, seed=9, bot_path=where)
    assert isinstance(policy, BotPolicy) and policy.bot.seed == 9
    with pytest.raises(ValueError, match=r"expected mapping with a strategy file, got the "
                                         r"bot"):
        make_policy(f"{name}:Caller", LEDUC, mapping="det-arith", bot_path=where)


@pytest.mark.parametrize(("attr", "message"), [
    ("Nope", r"expected a class 'Nope' in module '{m}' \(.*{m}\.py\) for the bot "
             r"'{m}:Nope', got no such name"),
    ("NoAct", r"expected '{m}:NoAct' to be a bot: a class with a method act\(self, state\) "
              r"-> Action, got <class '{m}\.NoAct'> without act"),
    ("NOT_CALLABLE", r"expected '{m}:NOT_CALLABLE' to name a bot class, got 3"),
])
def test_a_spec_that_names_no_bot_gets_one_line(bots: tuple[str, Path], attr: str,
                                                message: str) -> None:
    name, where = bots
    with pytest.raises(BotSpecError, match=message.format(m=name)):
        load_bot(f"{name}:{attr}", LEDUC, path=where)


def test_modules_that_cannot_be_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    with pytest.raises(BotSpecError, match=r"expected an importable module 'no_such_bot_mod' "
                                           r"\(from .*\) for the bot 'no_such_bot_mod:X', got "
                                           r"ModuleNotFoundError"):
        load_bot("no_such_bot_mod:X", LEDUC, path=tmp_path)
    name = f"userbots_{next(_COUNTER)}"
    (tmp_path / f"{name}.py").write_text("import no_such_dependency_xyz\n")
    with pytest.raises(BotSpecError, match=rf"expected the module '{name}' of the bot "
                                           rf"'{name}:X' to import, got ModuleNotFoundError: "
                                           r"No module named 'no_such_dependency_xyz'"):
        load_bot(f"{name}:X", LEDUC, path=tmp_path)
    broken = f"userbots_{next(_COUNTER)}"
    (tmp_path / f"{broken}.py").write_text("def (:\n")
    with pytest.raises(BotSpecError, match=rf"expected the module '{broken}' of the bot "
                                           rf"'{broken}:X' to import, got SyntaxError"):
        load_bot(f"{broken}:X", LEDUC, path=tmp_path)
    with pytest.raises(BotSpecError, match=r"expected a bot as module:Class"):
        load_bot("a/b.py", LEDUC)
    for module in (name, broken):
        sys.modules.pop(module, None)


def test_two_modules_of_one_name_are_refused(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A second folder's module of the same name would silently be the first one (Python
    imports a name once per process): refused in one line instead."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    name = f"userbots_{next(_COUNTER)}"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"{name}.py").write_text(BOTS)
    load_bot(f"{name}:Caller", LEDUC, path=tmp_path / "a")
    load_bot(f"{name}:Caller", LEDUC, path=tmp_path / "a")  # the same one again: fine
    with pytest.raises(BotSpecError, match=rf"expected one module '{name}' per process, got "
                                           rf"'.*a/{name}\.py' imported already and "
                                           rf"'.*b/{name}\.py'"):
        load_bot(f"{name}:Caller", LEDUC, path=tmp_path / "b")
    sys.modules.pop(name, None)


def test_every_answer_is_checked(bots: tuple[str, Path]) -> None:
    name, where = bots
    facing = state("MATCHSTATE:1:0:r:|Qh")
    free = state("MATCHSTATE:0:0::Ks|")
    with pytest.raises(BotError, match=rf"expected bot '{name}:Text' to return an Action "
                                       r".* in 'MATCHSTATE:1:0:r:\|Qh', got 'c'"):
        load_bot(f"{name}:Text", LEDUC, path=where).act(facing)
    folder = load_bot(f"{name}:Folder", LEDUC, path=where)
    assert folder.act(facing) == FOLD
    with pytest.raises(BotError, match=rf"bot '{name}:Folder' returned an illegal action in "
                                       r"'MATCHSTATE:0:0::Ks\|': fold is not legal"):
        folder.act(free)
    with pytest.raises(BotError, match=rf"bot '{name}:Broken' raised ZeroDivisionError: "
                                       r"division by zero in 'MATCHSTATE:0:0::Ks\|'") as info:
        load_bot(f"{name}:Broken", LEDUC, path=where).act(free)
    assert isinstance(info.value.__cause__, ZeroDivisionError)  # --debug shows it
    with pytest.raises(BotError, match=rf"could not make the bot '{name}:Angry' with no "
                                       r"arguments: RuntimeError: no"):
        load_bot(f"{name}:Angry", LEDUC, path=where)


def test_the_raise_helpers_stay_legal() -> None:
    """``raise_to`` moves a size into the bounds; ``pot_raise`` is the agents' realise."""
    ms = state("MATCHSTATE:1:0:r4:|Ks", NOLIMIT)  # facing a raise to 4 (stacks of 12)
    lo, hi = ms.state.raise_bounds()  # type: ignore[misc]
    assert raise_to(ms, 1) == Action(ActionKind.RAISE, lo)
    assert raise_to(ms, 10**9) == Action(ActionKind.RAISE, hi)
    assert raise_to(ms, lo + 1) == Action(ActionKind.RAISE, lo + 1)
    for fraction in (0.5, 1.0, 3.0):
        assert pot_raise(ms, fraction) == realise(ms.state, ActionKind.RAISE, fraction)
        ms.state.check_action(pot_raise(ms, fraction))
    capped = state("MATCHSTATE:0:0:rr:Ks|")  # limit Leduc: 2 raises, no more
    assert raise_to(capped, 10) == CALL and pot_raise(capped) == CALL
    assert raise_to(state("MATCHSTATE:0:0::Ks|"), 10) == Action(ActionKind.RAISE)


@pytest.mark.parametrize("attr", ["Nope", "NoAct"])
def test_acpc_agent_exits_2_with_one_line_for_a_bad_spec(
        bots: tuple[str, Path], attr: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    name, where = bots
    monkeypatch.chdir(where)  # acpc-agent imports from the current directory
    status = agentcli.main(["leduc.limit.2p.game", "127.0.0.1", "1", "--strategy",
                            f"{name}:{attr}"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("acpc-agent: error: expected ")
    assert f"'{name}:{attr}'" in err


def test_acpc_agent_refuses_strategy_file_options_for_a_bot(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        agentcli.main(["leduc.limit.2p.game", "127.0.0.1", "1", "--strategy", "mybot:MyBot",
                       "--purify", "full"])
    assert info.value.code == 2
    assert "--purify apply to strategy files, not to the bot 'mybot:MyBot'" in (
        capsys.readouterr().err)


def test_play_checks_a_bot_object_and_reports_the_connection_error() -> None:
    import asyncio

    class Bot:
        def act(self, ms: MatchState) -> Action:
            return CALL

    with pytest.raises(OSError):  # nothing listens on port 1
        asyncio.run(play(Bot(), "127.0.0.1", 1, "leduc.limit.2p.game"))

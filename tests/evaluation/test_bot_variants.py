"""A user's bot (``module:Class``) in acpc-match: variants on the command line and in a
TOML file, the seat's process and checksums, in-process matches and the estimators, where
it plays exactly as the built-in it imitates; bad specs exit 2 (issue 32, item 3)."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.acpc.dealing import deal_hands
from agent.acpc.gamefiles import load_game
from agent.agents import BotPolicy
from evaluation import cli as matchcli
from evaluation.estimators.estimator import hand_value, make_model
from evaluation.match.variants import (
    VariantError,
    check_variant,
    checksums,
    load_toml,
    make_seat_policy,
    parse_variant,
    sha256_file,
)
from evaluation.match.worker import MatchSettings, agent_command

LEDUC = "leduc.limit.2p.game"
_COUNTER = itertools.count()

BOTS = '''
from agent.bot import CALL, FOLD, LIMIT_RAISE, Action, MatchState, raise_bounds

class Folder:
    """builtin:fold, written as a bot."""
    def act(self, state: MatchState) -> Action:
        return FOLD if state.state.can_fold() else CALL

class MinRaiser:
    """builtin:minraise in a limit game, written as a bot."""
    def act(self, state: MatchState) -> Action:
        return CALL if raise_bounds(state) is None else LIMIT_RAISE
'''


@pytest.fixture
def bots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A fresh bot module in ``tmp_path/bots`` (a new name each time); ``sys.path`` and
    ``sys.modules`` put back afterwards."""
    name = f"matchbots_{next(_COUNTER)}"
    folder = tmp_path / "bots"
    folder.mkdir()
    (folder / f"{name}.py").write_text(BOTS)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield name, folder
    sys.modules.pop(name, None)


def test_a_bot_variant_from_the_command_line_and_from_toml(bots: tuple[str, Path],
                                                           tmp_path: Path) -> None:
    name, folder = bots
    v = parse_variant(f"me={name}:Folder,seed=3", folder)
    assert (v.kind, v.strategy, v.seed, v.cwd) == ("bot", f"{name}:Folder", 3, str(folder))
    with pytest.raises(VariantError, match=rf"variant 'me': mapping=, purify= and sizes= apply "
                                           rf"to strategy files, not the bot '{name}:Folder'"):
        parse_variant(f"me={name}:Folder,purify=full", folder)
    toml = folder / "run.toml"
    toml.write_text(f'game = "{LEDUC}"\n[variants.me]\nstrategy = "{name}:MinRaiser"\n'
                    f'[variants.call]\nstrategy = "builtin:call"\n')
    variants, settings = load_toml(toml)
    assert settings == {"game": LEDUC}
    me = variants[0]
    assert (me.kind, me.cwd) == ("bot", str(folder))  # imported from the TOML file's folder
    check_variant(me, LEDUC, "tcp")  # deep: imports and makes it (the cwd is elsewhere)
    policy = make_seat_policy(me, load_game(LEDUC), 5)
    assert isinstance(policy, BotPolicy) and type(policy.bot).__name__ == "MinRaiser"
    # the seat's process runs in the bot's folder; the manifest hashes the module's file
    cmd, cwd = agent_command(me, MatchSettings(game_spec=LEDUC), 11, 4000)
    assert cwd == str(folder) and cmd[cmd.index("--strategy") + 1] == f"{name}:MinRaiser"
    module = folder / f"{name}.py"
    assert checksums(me) == {str(module): sha256_file(module)}


def mbb(path: Path, label: str) -> float:
    data = json.loads(path.read_text())
    for row in data["results"]:
        if f"{row['variant']} vs {' '.join(row['opponents'])}" == label:
            return float(row["raw"]["mean"])
    raise AssertionError(f"no row {label!r} in {data['results']}")


def test_an_in_process_match_plays_the_bot_as_the_builtin_it_imitates(
        bots: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same seeds, the same cards and random's same draws: the bot that plays as
    builtin:minraise gets exactly the built-in's result against builtin:random."""
    name, folder = bots
    monkeypatch.chdir(folder)  # -v specs are imported from the current directory
    out = {}
    for label, spec in (("bot", f"{name}:MinRaiser"), ("builtin", "builtin:minraise")):
        out[label] = tmp_path / f"{label}.json"
        status = matchcli.main(["--game", LEDUC, "-v", f"me={spec}", "-v",
                                "rnd=builtin:random", "--hands", "60", "--transport",
                                "inproc", "--jobs", "1", "--run-dir",
                                str(tmp_path / f"run-{label}"), "--json", str(out[label]),
                                "--quiet"])
        assert status == 0
    got = mbb(out["bot"], "me vs rnd")
    assert got == mbb(out["builtin"], "me vs rnd") and got != 0.0


def test_the_estimators_walk_a_bot_as_they_walk_the_builtins(bots: tuple[str, Path]) -> None:
    name, folder = bots
    game = load_game(LEDUC)
    bot = make_model(parse_variant(f"me={name}:MinRaiser", folder), game)
    builtin = make_model(parse_variant("me=builtin:minraise"), game)
    call = make_model(parse_variant("call=builtin:call"), game)
    values = []
    for i, deal in zip(range(12), deal_hands(game, 5), strict=False):
        for seats in ((bot, call), (call, bot)):
            mirror = tuple(builtin if m is bot else m for m in seats)
            got = hand_value(game, seats, deal, (5, i), integrate_cards=False)
            assert got == hand_value(game, mirror, deal, (5, i), integrate_cards=False)
            values.append(got)
    assert len(set(values)) > 1  # the deals differ: a real comparison


@pytest.mark.parametrize("estimator", ["played", "exact-agents"])
def test_a_bad_bot_spec_exits_2_naming_the_variant(
        bots: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], estimator: str) -> None:
    name, folder = bots
    monkeypatch.chdir(folder)
    played = ["--transport", "inproc", "--run-dir", str(tmp_path / "run")]
    status = matchcli.main(["--game", LEDUC, "-v", f"me={name}:Nope", "-v",
                            "call=builtin:call", "--hands", "10", "--estimator", estimator,
                            "--quiet", *(played if estimator == "played" else [])])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1, err
    assert err.startswith("acpc-match: error: variant 'me': expected a class 'Nope' in module "
                          f"'{name}'")


def test_exact_refuses_a_bot_in_one_line(bots: tuple[str, Path],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    name, _ = bots
    status = matchcli.main(["--game", LEDUC, "-v", f"me={name}:Folder", "-v",
                            "call=builtin:call", "--exact"])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1
    assert "a bot cannot be valued exactly: --estimator exact-agents can" in err

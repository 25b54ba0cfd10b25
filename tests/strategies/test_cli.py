"""``acpc-strategy`` and the bundled strategy files.

* Every bundled file loads with ``load_strategy``, matches its manifest entry (checksum,
  size, iterations), measures the manifest's exploitability again, meets the issue's
  bounds (limit Leduc: exploitability <= 0.001 and game value -0.0856 +- 0.001), and plays
  legal actions through ``StrategyPolicy`` with the card abstraction the agent rebuilds.
* ``inspect``, ``exploit`` and ``list`` work on every bundled file; bad or corrupt files
  give ``acpc-strategy: error: ...`` on stderr, exit 1, no traceback.
* ``solve``: writes a loadable file; ``--resume`` continues to the same table as an
  uninterrupted run; Ctrl-C (SIGINT) writes a checkpoint and exits 130; the 3-player Kuhn
  recipe rebuilds its bundled table exactly.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.actions import PRESETS, build_tree
from agent.abstraction.buckets import BlindCards
from agent.abstraction.translation import get_mapping
from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.dealing import deal_hands
from agent.acpc.gamedef import Game
from agent.acpc.matchstate import view_of
from agent.data import manifest_path, strategy_path
from agent.policy import StrategyPolicy
from agent.strategy.fileformat import dump_strategy, load_strategy, table_layout
from agent.strategy.hotswap import load_for_game
from agent.strategy.purification import parse_purification
from strategies.cli import main
from strategies.measure.best_response import exploitability, strategy_table
from strategies.recipes import RECIPES, get_recipe, load_manifest
from tests.support import ROOT

ENUMERATED = [name for name, r in RECIPES.items() if r.enumerated]
"""Recipes over enumerated deals (the hold'em recipe is tested in test_holdem_solver.py)."""
BUNDLED = [RECIPES[name].bundled_path for name in ENUMERATED]


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "strategies.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)


# --------------------------------------------------------------------------- bundled files


def test_manifest_lists_every_recipe() -> None:
    files = load_manifest()["files"]
    assert set(files) == {name for name, r in RECIPES.items() if r.bundled}
    assert json.loads(manifest_path().read_text())["files"] == files


@pytest.mark.parametrize("name", ENUMERATED)
def test_bundled_file_matches_its_manifest_entry(name: str) -> None:
    recipe = get_recipe(name)
    entry = load_manifest()["files"][name]
    path = recipe.bundled_path
    strategy = load_strategy(path, recipe.load_game())
    assert strategy.checksum == entry["checksum"]
    assert path.stat().st_size == entry["bytes"] < 64_000
    assert strategy.meta["iterations"] == entry["iterations"] == recipe.iterations
    assert strategy.table.dtype.name == entry["dtype"] == recipe.dtype
    assert strategy.cards == entry["cards"] and strategy.cards["kind"] == "lossless"
    game = recipe.abstract_game()
    result = exploitability(game, strategy_table(game, strategy))
    kind, value = result.headline
    assert kind == entry["exploitability_kind"]
    assert value == pytest.approx(entry["exploitability"], rel=1e-9, abs=1e-15)
    assert list(result.values) == pytest.approx(entry["game_value"], abs=1e-12)
    if game.num_players == 2:
        assert value < 1e-4
    else:
        assert kind == "nash_conv" and value < 1e-4


def test_limit_leduc_meets_the_issue_bounds() -> None:
    entry = load_manifest()["files"]["leduc.limit.2p"]
    assert entry["exploitability_kind"] == "exploitability"
    assert entry["exploitability"] <= 0.001
    assert abs(entry["game_value"][0] - (-0.0856)) <= 0.001


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_bundled_files_play_through_the_strategy_policy(path: Path) -> None:
    recipe = get_recipe(path.stem)
    game = recipe.load_game()
    loaded = load_for_game(path, game)  # card_abstraction_from_spec(game, strategy.cards)
    policies = [StrategyPolicy(loaded, get_mapping("rand-pshar"), parse_purification("none"),
                               seed=p) for p in range(game.num_players)]
    rng = random.Random(1)
    deals = deal_hands(game, 5)
    for hand in range(40):
        deal = next(deals)
        state = BettingState.initial(game)
        while not state.finished:
            p = state.player
            if p == hand % game.num_players:
                action = policies[p].act(view_of(p, hand, state, deal.hole, deal.board))
            else:
                action = _random_action(state, rng)
            state = state.apply(action)  # raises if the policy's action were illegal
    assert sum(pol.stats.decisions for pol in policies) > 0
    if not game.is_nolimit:  # the abstraction is the whole game: never off the tree
        assert all(pol.stats.off_tree_fallbacks == 0 for pol in policies)


def _random_action(state: BettingState, rng: random.Random) -> Action:
    kind = rng.choice(state.legal_actions())
    if kind is ActionKind.FOLD:
        return FOLD
    if kind is ActionKind.CALL:
        return CALL
    if not state.game.is_nolimit:
        return LIMIT_RAISE
    bounds = state.raise_bounds()
    assert bounds is not None
    return Action(ActionKind.RAISE, rng.randint(*bounds))


# --------------------------------------------------------------------------- inspect, exploit, list


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_inspect_and_exploit_every_bundled_file(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    for needle in ("game:", "betting:", "cards:", "table:", "meta:", "sample information sets",
                   "NashConv", "bucket 0"):
        assert needle in out
    assert ("exploitability " in out) == (path.stem != "kuhn.limit.3p")
    assert main(["exploit", str(path)]) == 0
    out = capsys.readouterr().out
    entry = load_manifest()["files"][path.stem]
    shown = float(re.findall(r"(?:exploitability|NashConv) ([0-9.e+-]+) chips/hand", out)[-1])
    assert shown == pytest.approx(entry["exploitability"], rel=1e-5)
    if path.stem == "kuhn.limit.3p":
        assert "NashConv (the sum of the best-response gains)" in out


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in RECIPES:
        assert name in out
    assert "NashConv" in out and "expl" in out
    for name, recipe in RECIPES.items():  # a recipe that is never bundled is not told to
        (line,) = [x for x in out.splitlines() if x.startswith(f"{name} ")]
        assert ("--bundle" in line) is (recipe.bundled and "not built" in line)
        assert ("not bundled" in line) is not recipe.bundled


def test_inspect_readable_infosets(capsys: pytest.CaptureFixture[str]) -> None:
    path = get_recipe("leduc.nolimit.2p.fchpa").bundled_path
    assert main(["inspect", str(path), "--samples", "20"]) == 0
    out = capsys.readouterr().out
    assert "(start)" in out and "'cc/'" in out and "r12[all-in]" in out and "[0.5p]" in out
    assert re.search(r"bucket \d+ \([AKQ][hs] \| [AKQ][hs]\)", out)


def test_inspect_a_game_too_big_for_the_abstract_game(
    tmp_path: Path, nl2: Game, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hold'em files: described without figures by inspect; exploit says why not."""
    betting = PRESETS["fcpa3"]
    tree = build_tree(nl2, betting)
    cards = BlindCards(nl2)
    layout = table_layout(tree, cards.buckets)
    table = np.concatenate([
        np.full(int(layout.rows[n.id]) * len(n.actions), 1.0 / len(n.actions))
        for n in tree.decision_nodes
    ])
    path = dump_strategy(tmp_path / "hu.strat", nl2, betting, cards.spec, table, tree=tree)
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "abstract-game figures: not computed" in out and "r20000[all-in]" in out
    assert main(["exploit", str(path)]) == 1
    assert "deals to enumerate" in capsys.readouterr().err


# --------------------------------------------------------------------------- errors


def _corrupt_files(tmp_path: Path) -> dict[str, Path]:
    good = get_recipe("leduc.limit.2p").bundled_path.read_bytes()
    flipped = bytearray(good)
    flipped[-3] ^= 0x40
    files = {
        "truncated": good[:-40],
        "flipped": bytes(flipped),
        "garbage": b"not a strategy file at all",
        "empty": b"",
        "trailing": good + b"\0\0",
    }
    out = {}
    for name, data in files.items():
        out[name] = tmp_path / f"{name}.strat"
        out[name].write_bytes(data)
    out["missing"] = tmp_path / "missing.strat"
    return out


@pytest.mark.parametrize("command", ["inspect", "exploit"])
def test_corrupt_files_give_a_clean_error(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, path in _corrupt_files(tmp_path).items():
        assert main([command, str(path)]) == 1, name
        err = capsys.readouterr().err
        if name == "missing":  # neither a file nor a bundled name: the one resolver's line
            assert err.startswith("acpc-strategy: error: expected a strategy file or a "
                                  "bundled strategy (") and f"got {str(path)!r}" in err, err
        else:
            assert err.startswith(f"acpc-strategy: error: {path}"), (name, err)
        assert "Traceback" not in err


def test_errors_in_a_real_process(tmp_path: Path) -> None:
    bad = _corrupt_files(tmp_path)["flipped"]
    out = run_cli("exploit", str(bad))
    assert out.returncode == 1
    assert out.stderr.startswith("acpc-strategy: error: ") and "checksum" in out.stderr
    assert "Traceback" not in out.stderr
    out = run_cli("--debug", "inspect", str(bad))
    assert out.returncode == 1 and "Traceback" in out.stderr
    out = run_cli("solve", "--recipe", "nope")
    assert out.returncode == 1 and "expected a recipe in" in out.stderr


def test_solve_argument_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:  # a bad value: argparse's line, status 2
        main(["solve", "--recipe", "kuhn.limit.3p", "--iterations", "-1"])
    assert info.value.code == 2 and "--iterations" in capsys.readouterr().err
    assert main(["solve", "--recipe", "kuhn.limit.3p", "--resume", "--checkpoint",
                 str(tmp_path / "none.npz")]) == 1
    assert "checkpoint to resume" in capsys.readouterr().err


# --------------------------------------------------------------------------- solve


def test_solve_and_resume_match_an_uninterrupted_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["solve", "--recipe", "leduc.limit.2p", "--quiet"]
    ckpt = str(tmp_path / "a.ckpt.npz")
    assert main([*base, "--iterations", "30", "--out", str(tmp_path / "a.strat"),
                 "--checkpoint", ckpt]) == 0
    assert main([*base, "--iterations", "70", "--out", str(tmp_path / "a.strat"),
                 "--checkpoint", ckpt, "--resume"]) == 0
    assert main([*base, "--iterations", "70", "--out", str(tmp_path / "b.strat"),
                 "--checkpoint", str(tmp_path / "b.ckpt.npz")]) == 0
    out = capsys.readouterr()
    assert "from iteration 30" in out.err and "70 iterations of cfr+" in out.out
    a = load_strategy(tmp_path / "a.strat")
    b = load_strategy(tmp_path / "b.strat")
    assert a.checksum == b.checksum and a.meta["iterations"] == 70
    assert a.meta["exploitability"] == b.meta["exploitability"] > 0


def test_solve_with_a_time_budget_and_progress_bar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("rich")
    assert main(["solve", "--recipe", "kuhn.limit.3p", "--minutes", "0.01", "--out",
                 str(tmp_path / "k.strat"), "--checkpoint", str(tmp_path / "k.npz")]) == 0
    err = capsys.readouterr().err
    assert "it/s" in err
    assert load_strategy(tmp_path / "k.strat").meta["iterations"] > 0


def test_recipe_rebuilds_the_bundled_table_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Full-width solvers are deterministic: same recipe, same table checksum."""
    assert main(["solve", "--recipe", "kuhn.limit.3p", "--quiet", "--out",
                 str(tmp_path / "k.strat"), "--checkpoint", str(tmp_path / "k.npz")]) == 0
    capsys.readouterr()
    entry = load_manifest()["files"]["kuhn.limit.3p"]
    assert load_strategy(tmp_path / "k.strat").checksum == entry["checksum"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_writes_a_checkpoint_and_resume_continues(tmp_path: Path) -> None:
    ckpt = tmp_path / "run.ckpt.npz"
    out = tmp_path / "run.strat"
    args = [sys.executable, "-m", "strategies.cli", "solve", "--recipe",
            "leduc.nolimit.2p.fchpa", "--iterations", "100000000", "--quiet",
            "--checkpoint", str(ckpt), "--out", str(out)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(args, cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True, env=env) as proc:
        assert proc.stderr is not None
        for _ in range(10):  # a cold numba cache prints the compile notice first
            banner = proc.stderr.readline()
            if "solving" in banner or not banner:
                break
        assert "solving leduc.nolimit.2p.fchpa" in banner, banner
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "--resume" in err
    stopped = int(re.search(r"interrupted at iteration (\d+)", err).group(1))  # type: ignore[union-attr]
    assert ckpt.exists() and not out.exists()
    done = run_cli("solve", "--recipe", "leduc.nolimit.2p.fchpa", "--resume", "--iterations",
                   str(stopped + 3), "--quiet", "--checkpoint", str(ckpt), "--out",
                   str(out))
    assert done.returncode == 0, done.stderr
    assert f"from iteration {stopped}" in done.stderr
    assert load_strategy(out).meta["iterations"] == stopped + 3


def test_list_and_help_import_neither_numpy_nor_numba() -> None:
    """``acpc-strategy list`` prints the manifest: no kernel, so no numba (nor numpy)."""
    code = (
        "import contextlib, io, sys\n"
        "from strategies.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    status = main(['list'])\n"
        "assert status == 0 and 'holdem.nolimit.2p' in out.getvalue(), out.getvalue()\n"
        "print(sorted(m for m in ('numpy', 'numba', 'llvmlite', 'msgpack') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_inspect_holdem_summarises_thresholds_and_labels_buckets(
        capsys: pytest.CaptureFixture[str]) -> None:
    path = strategy_path("holdem.nolimit.2p.strat")
    if not path.exists():
        pytest.skip("the bundled hold'em file is not built")
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    cards = next(line for line in out.splitlines() if line.startswith("cards: "))
    assert len(cards) < 400 and "round 1: 49 from 0.0" in cards and "round 3: 49" in cards
    assert "bucket 0 (22):" in out and "bucket 1 (32o):" in out


def test_a_recipe_is_a_named_preset_of_a_custom_solve(tmp_path: Path) -> None:
    """Issue 19 (solve what you describe): the same game, betting, cards and solver give the
    same table whether named by a recipe or spelled out."""
    by_recipe = run_cli("solve", "--recipe", "leduc.limit.2p", "--iterations", "40",
                        "--quiet", "--out", str(tmp_path / "r.strat"), "--checkpoint",
                        str(tmp_path / "r.npz"))
    assert by_recipe.returncode == 0, by_recipe.stderr
    spelled = run_cli("solve", "--game", "leduc.limit.2p.game", "--abstraction", "fcpa", "--cards",
                      "lossless", "--solver", "cfr+", "--iterations", "40", "--quiet",
                      "--out", str(tmp_path / "c.strat"), "--checkpoint",
                      str(tmp_path / "c.npz"))
    assert spelled.returncode == 0, spelled.stderr
    assert (load_strategy(tmp_path / "r.strat").checksum
            == load_strategy(tmp_path / "c.strat").checksum)


def test_custom_holdem_solve_with_buckets(tmp_path: Path) -> None:
    out = run_cli("solve", "--game", "holdem.nolimit.2p.reverse_blinds.game", "--abstraction",
                  '{"name": "t", "fractions": [[[1.0]]], "max_raises": [1, 1, 1, 1]}',
                  "--cards", '{"kind": "holdem", "buckets": [169, 3, 3, 3], "samples": 500,'
                  ' "pool_deals": 800}', "--iterations", "3000", "--quiet", "--out",
                  str(tmp_path / "h.strat"), "--checkpoint", str(tmp_path / "h.npz"))
    assert out.returncode == 0, out.stderr
    loaded = load_strategy(tmp_path / "h.strat")
    assert loaded.cards["kind"] == "holdem" and loaded.cards["buckets"] == [169, 3, 3, 3]
    assert loaded.meta["iterations"] == 3000 and loaded.betting.name == "t"


def test_solve_betting_nested_too_deep_is_one_short_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 3,000 levels used to be a RecursionError traceback; inline, it is quoted as an excerpt
    deep = '{"fractions": ' + "[" * 3000 + "]" * 3000 + "}"
    (tmp_path / "deep.json").write_text(deep)
    for spec in (deep, str(tmp_path / "deep.json")):
        assert main(["solve", "--game", "leduc.nolimit.2p.game", "--abstraction", spec,
                     "--out", str(tmp_path / "x.strat")]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and len(err[0]) < 400, err
        assert "expected a JSON betting abstraction nested at most 32 levels deep" in err[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "leduc.limit.2p.game", "--cards", '{"kind": "holdem", "buckets": [169,'
          ' 2, 2, 2]}'], "expected a hold'em game"),
        (["--game", "leduc.limit.2p.game", "--cards", "nope"], "expected --cards lossless"),
        (["--game", "holdem.nolimit.2p.reverse_blinds.game", "--cards",
          '{"kind": "holdem", "buckets": [169, 2, 2]}'], "buckets' [169, b1, b2, b3]"),
        (["--game", "holdem.nolimit.2p.reverse_blinds.game", "--cards",
          '{"kind": "holdem", "buckets": [169, 2, 2, 2]}', "--solver", "cfr+"],
         "mccfr-es-pool"),
        (["--game", "holdem.nolimit.2p.reverse_blinds.game"], "deals to enumerate"),
    ],
)
def test_custom_solve_errors_are_one_line(tmp_path: Path, args: list[str],
                                          message: str) -> None:
    out = run_cli("solve", *args, "--out", str(tmp_path / "x.strat"))
    assert out.returncode == 1, out.stderr
    assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--recipe", "leduc.limit.2p", "--cards", "lossless"], "--cards goes with --game"),
    (["--recipe", "leduc.limit.2p", "--abstraction", "fcpa", "--solver", "cfr"],
     "--abstraction, --solver go with --game"),
    (["--game", "leduc.limit.2p.game", "--bundle"], "--bundle goes with --recipe"),
])
def test_solve_options_that_do_not_apply_are_usage_errors(
        args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 2 as every command's 'does not apply' (exit 1 on main, found while solving)."""
    with pytest.raises(SystemExit) as info:
        main(["solve", *args])
    err = capsys.readouterr().err.splitlines()
    assert info.value.code == 2 and message in err[-1], err
    assert err[-1].startswith("acpc-strategy solve: error: ")


@pytest.mark.parametrize("change", [{"samples": 100_000_000_000}, {"pool_deals": 10**11},
                                    {"buckets": [169, 8, 60_000, 8]}])
def test_cards_option_numbers_are_bounded(change: dict[str, object]) -> None:
    """``solve --cards`` with 10^11 pool deals made the solver ask numpy for 5 TiB (a
    MemoryError traceback); the sizes are bounded where the option is read."""
    from agent.acpc.errors import UsageError
    from strategies.commands.main import parse_cards_option

    spec = {"kind": "holdem", "buckets": [169, 8, 8, 8], **change}
    with pytest.raises(UsageError, match=r"in 1\.\.10,000"):
        parse_cards_option(json.dumps(spec))


@pytest.mark.parametrize(("text", "message"), [
    ("[" * 2000 + "]" * 2000, "nested at most"),  # a RecursionError in json.loads on main
    ('{"kind": "holdem", "buckets": [169, 8, 8, 8], "x": "' + "y" * 5000 + '"}',
     "of at most 4,096 characters"),
    ('"' + "x" * 4000 + '"', "with kind 'lossless' or 'holdem'"),
    ('{"kind": "holdem", "buckets": [169, 8, 8, "' + "z" * 4000 + '"]}', "'buckets'"),
    ('{"kind": "holdem", "buckets": [169, 8, 8, 8], "samples": "' + "s" * 4000 + '"}',
     "'samples'"),
])
def test_cards_option_is_bounded_and_quoted_short(text: str, message: str) -> None:
    """``solve --cards``: nesting and length bounded before ``json.loads``, and the message
    quotes an excerpt (at most ~80 characters of the input, with its length)."""
    from agent.acpc.errors import UsageError
    from strategies.commands.main import parse_cards_option

    with pytest.raises(UsageError, match=re.escape(message)) as info:
        parse_cards_option(text)
    assert len(str(info.value)) < 300 and re.search(r"\(\d[\d,]* characters\)", str(info.value))

"""acpc-match: variants, scheduling, exact statistics, TCP = in-process, resume after kill -9,
failures named by variant, exports, Ray (when installed)."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent.acpc.gamefiles import load_game
from agent.data import strategy_path
from evaluation import cli as matchcli
from evaluation.logtool import verify_log
from evaluation.match.runner import variant_cli_spec
from evaluation.match.schedule import deal_seed, make_groups, plan_jobs
from evaluation.match.variants import Variant, VariantError, load_toml, parse_variant
from evaluation.match.worker import agent_command
from tests.support import DATA, ROOT

FOLD_CLIENT = DATA / "fold_client.py"
CRASH_CLIENT = DATA / "crash_client.py"
HOLDEM = "holdem.nolimit.2p.reverse_blinds.game"
LEDUC_NL_STRAT = strategy_path("leduc.nolimit.2p.fcpa.strat")
DEFAULT_LEDUC = ("leduc.nolimit.2p.fcpa.strat", "leduc.nolimit.2p.game")


@pytest.fixture(scope="module")
def leduc_strategy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random fcpa strategy for no-limit Leduc (lossless cards), made for the tests."""
    import numpy as np

    from agent.abstraction.actions import PRESETS, build_tree
    from agent.abstraction.buckets import LosslessCards
    from agent.strategy.fileformat import dump_strategy, table_layout

    game = load_game("leduc.nolimit.2p.game")
    cards = LosslessCards(game)
    tree = build_tree(game, PRESETS["fcpa"])
    layout = table_layout(tree, cards.buckets)
    rng = np.random.default_rng(3)
    table = np.empty(layout.total)
    for node in tree.decision_nodes:
        k, n = len(node.actions), layout.rows[node.id]
        rows = rng.random((n, k))
        rows /= rows.sum(axis=1, keepdims=True)
        table[layout.offsets[node.id] : layout.offsets[node.id] + n * k] = rows.ravel()
    path = tmp_path_factory.mktemp("strat") / "leduc.nolimit.2p.test.strat"
    return dump_strategy(path, game, PRESETS["fcpa"], cards.spec, table, tree=tree)


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = matchcli.main([*args, "--quiet"])
    out, err = capsys.readouterr()
    return status, out, err


def results(path: Path) -> dict[str, dict[str, object]]:
    """``variant vs opponents`` -> raw estimate, from a --json export."""
    data = json.loads(path.read_text())
    return {
        f"{r['variant']} vs {' '.join(r['opponents'])}": r for r in data["results"]
    }


def store_rows(run_dir: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(run_dir / "results.sqlite")
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


# ---------------------------------------------------------------------- specs


def test_variant_specs(tmp_path: Path) -> None:
    v = parse_variant("a=builtin:call")
    assert (v.name, v.kind, v.strategy) == ("a", "builtin", "builtin:call")
    f = parse_variant("b=x.strat,mapping=rand-pshar,purify=full,seed=7", tmp_path)
    assert f.kind == "file" and f.strategy == str(tmp_path / "x.strat")
    assert (f.mapping, f.purify, f.seed, f.sizes) == ("rand-pshar", "full", 7, None)
    assert "sizes" not in f.identity()  # runs made before the option keep their identity
    z = parse_variant("z=x.strat,sizes=REAL", tmp_path)
    assert z.sizes == "real" and z.identity()["sizes"] == "real"
    assert Variant.from_json(z.to_json()) == z
    assert variant_cli_spec(z).endswith(",sizes=real")
    assert parse_variant(variant_cli_spec(z), tmp_path) == replace(z, spec=variant_cli_spec(z))
    cmd, _ = agent_command(z, SimpleNamespace(game_spec="g"), 1, 5000)  # type: ignore[arg-type]
    assert cmd[-2:] == ["--sizes-in", "real"]
    assert "--sizes-in" not in agent_command(f, SimpleNamespace(game_spec="g"), 1,  # type: ignore[arg-type]
                                             5000)[0]
    c = parse_variant("c=cmd=./startme.sh --fast 'two words'", tmp_path)
    assert c.kind == "cmd" and c.cmd == ("./startme.sh", "--fast", "two words")
    assert parse_variant("d=builtin:fold").kind == "builtin"
    bad = {
        "nameless": "expected a variant as NAME=",
        "b@d=builtin:call": "expected a name of letters",
        "x=builtin:call,mapping=det-arith": "apply to strategy files",
        "x=s.strat,color=red": "expected options among mapping, purify, sizes, seed",
        "x=s.strat,sizes=chips": "expected a size convention .abstract, real.",
        "x=builtin:call,sizes=real": "apply to strategy files",
        "x=s.strat,seed=many": "seed: expected an integer 0..9223372036854775807, got .many.",
        "x=cmd=": "expected a command after cmd=",
        "x=": "expected a strategy file, builtin:NAME, module:Class or cmd=COMMAND",
    }
    for text, message in bad.items():
        with pytest.raises(VariantError, match=message):
            parse_variant(text)
    toml = tmp_path / "v.toml"
    toml.write_text(
        'game = "leduc.limit.2p.game"\nhands = 30\n'
        '[variants]\nquick = "builtin:random,seed=3"\n'
        '[variants.alice]\nstrategy = "builtin:call"\n'
        '[variants.bob]\nstrategy = "bob.strat"\nmapping = "det-arith"\n'
        '[variants.ext]\ncmd = ["./agent.sh", "--x"]\n',
        encoding="utf-8",
    )
    variants, settings = load_toml(toml)
    assert settings == {"game": "leduc.limit.2p.game", "hands": 30}
    by_name = {x.name: x for x in variants}
    assert sorted(by_name) == ["alice", "bob", "ext", "quick"]
    assert by_name["quick"].seed == 3
    assert by_name["bob"].strategy == str(tmp_path / "bob.strat")
    assert by_name["ext"].cmd == ("./agent.sh", "--x") and by_name["ext"].cwd == str(tmp_path)
    toml.write_text('colour = 1\n', encoding="utf-8")
    with pytest.raises(VariantError, match="expected keys among variants"):
        load_toml(toml)


def test_toml_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toml = tmp_path / "run.toml"
    toml.write_text(
        'game = "leduc.limit.2p.game"\nhands = 15\nmatches = 2\ntransport = "inproc"\n'
        'workers = 1\nseed = 5\n[variants]\nfolder = "builtin:fold"\n'
        '[variants.raiser]\nstrategy = "builtin:minraise"\n',
        encoding="utf-8",
    )
    out_json = tmp_path / "r.json"
    status, _, err = run_cli(["--variants", str(toml), "--run-dir", str(tmp_path / "run"),
                                "--json", str(out_json)], capsys)
    assert status == 0, err
    assert results(out_json)["folder vs raiser"]["raw"]["mean"] == -1000  # type: ignore[index]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["settings"]["master_seed"] == 5 and manifest["settings"]["hands"] == 15
    assert "--variant" in manifest["reproduce"] and "folder=builtin:fold" in manifest["reproduce"]


def test_duplicate_schedule() -> None:
    a, b, c = (parse_variant(t) for t in ("a=builtin:call", "b=builtin:random", "c=builtin:fold"))
    assert make_groups([a, b, c], 2) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert make_groups([a, b, c], 2, ["c:a"]) == [("c", "a")]
    assert make_groups([a, b, c], 3) == [("a", "b", "c")]
    with pytest.raises(VariantError, match="'z' in --pair"):
        make_groups([a, b], 2, ["a:z"])
    with pytest.raises(VariantError, match="defined twice"):
        make_groups([a, a], 2)
    jobs = plan_jobs([a, b], [("a", "b")], master_seed=9, matches=3, hands=10)
    assert [j.match_id for j in jobs[:2]] == ["a,b/k0/r0", "a,b/k0/r1"]
    assert [j.seats for j in jobs[:2]] == [("a", "b"), ("b", "a")]
    assert jobs[0].deal_seed == jobs[1].deal_seed == deal_seed(9, 0) != jobs[2].deal_seed
    # A variant keeps its private seed in both seatings of a unit.
    assert jobs[0].agent_seeds == tuple(reversed(jobs[1].agent_seeds))
    three = plan_jobs([a, b, c], [("a", "b", "c")], master_seed=9, matches=1, hands=10)
    assert [j.seats for j in three] == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    assert plan_jobs([a, b], [("a", "b")], master_seed=9, matches=5, hands=10)[:6] == jobs


def test_bad_variants_fail_before_playing(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--game", "leduc.limit.2p.game", "--run-dir", str(tmp_path / "r")]
    status, _, err = run_cli([*base, "-v", "a=builtin:call", "-v", "b=missing.strat"], capsys)
    assert status == 1
    assert "acpc-match: error: variant 'b': strategy file" in err and "not found" in err
    status, _, err = run_cli([*base, "-v", "a=builtin:call", "-v", "b=builtin:nope"], capsys)
    assert status == 1 and "acpc-match: error: variant 'b': expected --strategy" in err
    status, _, err = run_cli([*base, "-v", "a=builtin:call", "-v", "b=cmd=./no-such-agent"],
                             capsys)
    assert status == 1 and "variant 'b': command './no-such-agent' not found" in err
    status, _, err = run_cli([*base, "-v", "a=builtin:call", "-v", "b=cmd=python x.py",
                              "--transport", "inproc"], capsys)
    assert status == 1 and "variant 'b' is an external command: it needs --transport tcp" in err
    status, _, err = run_cli(["--game", "nope.game", "-v", "a=builtin:call"], capsys)
    assert status == 1 and err.startswith("acpc-match: error: game:")
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------------- statistics


def test_exact_results_in_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Heads-up no-limit hold'em, reverse blinds: the folder loses its small blind (50)
    when it acts first and its big blind (100) when the min-raiser does: -750 mbb/h in
    every unit. Two callers: exactly 0. The folder against a caller loses exactly 50 in
    every hand it acts first."""
    out_json = tmp_path / "r.json"
    status, out, _ = run_cli([
        "--game", HOLDEM, "--transport", "inproc", "--workers", "1", "--hands", "40",
        "--matches", "3", "--run-dir", str(tmp_path / "run"), "--json", str(out_json),
        "-v", "fold=builtin:fold", "-v", "raise=builtin:minraise",
        "-v", "call1=builtin:call", "-v", "call2=builtin:call",
        "--pair", "fold:raise", "--pair", "call1:call2", "--pair", "fold:call1",
    ], capsys)
    assert status == 0, out
    res = results(out_json)
    fold = res["fold vs raise"]["raw"]
    assert isinstance(fold, dict)
    assert (fold["mean"], fold["se"], fold["ci_low"], fold["ci_high"]) == (-750, 0, -750, -750)
    assert fold["significant"] is True and fold["units"] == 3 and fold["hands"] == 240
    assert res["raise vs fold"]["raw"]["mean"] == 750  # type: ignore[index]
    calls = res["call1 vs call2"]["raw"]
    assert isinstance(calls, dict)
    assert calls["mean"] == 0 and calls["ci_low"] <= 0 <= calls["ci_high"]
    assert calls["significant"] is False
    assert re.search(r"^fold\s+raise\s+-750\.0\s+0\.0\s+0\.0\s+3\s+240\s+yes$", out, re.M)
    rows = store_rows(tmp_path / "run",
                      "SELECT seats, hand_values FROM matches WHERE group_key='fold,call1'")
    assert len(rows) == 6
    for seats_text, values_text in rows:
        seat = json.loads(str(seats_text)).index("fold")
        for hand, row in enumerate(json.loads(str(values_text))):
            position = (seat - hand) % 2
            if position == 1:  # the small blind acts first: fold
                assert row[seat] == -50
            else:  # big blind, checked down against the caller
                assert row[seat] in (-100, 0, 100)


def test_three_player_rotations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_json = tmp_path / "r.json"
    status, _out, _ = run_cli([
        "--game", "holdem.nolimit.3p.game", "--transport", "inproc", "--workers", "1",
        "--hands", "30", "--matches", "2", "--run-dir", str(tmp_path / "run"),
        "--json", str(out_json), "-v", "a=builtin:call", "-v", "b=builtin:call",
        "-v", "c=builtin:call",
    ], capsys)
    assert status == 0
    data = json.loads(out_json.read_text())
    assert data["matches_done"] == 6 and data["hands_played"] == 180
    for r in data["results"]:
        assert r["raw"]["mean"] == pytest.approx(0.0, abs=1e-9)  # symmetric: every seat


# ---------------------------------------------------------------------- transports


def _logs(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run_dir / "logs").glob("*.log"))}


@pytest.mark.slow
def test_tcp_and_inproc_logs_are_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], leduc_strategy: Path
) -> None:
    setups = [
        (HOLDEM, ["-v", "r1=builtin:random", "-v", "r2=builtin:random,seed=5"], "60"),
        ("leduc.nolimit.2p.game",  # the default table's opponent off: these logs only
         ["-v", f"s={leduc_strategy},mapping=rand-pshar", "-v", "r=builtin:random",
          "--opponent", "none"], "80"),
    ]
    for i, (game, variants, hands) in enumerate(setups):
        dirs = {}
        for transport in ("tcp", "inproc"):
            run_dir = tmp_path / f"{i}-{transport}"
            status, _out, err = run_cli([
                "--game", game, "--transport", transport, "--workers", "2", "--hands", hands,
                "--matches", "1", "--seed", "11", "--run-dir", str(run_dir), *variants,
                # a strategy-file agent on a fresh install compiles its kernels at launch
                "--start-timeout-ms", "120000",
            ], capsys)
            assert status == 0, err
            dirs[transport] = run_dir
        tcp, inproc = _logs(dirs["tcp"]), _logs(dirs["inproc"])
        assert len(tcp) == 2 and tcp == inproc
        for name in tcp:
            assert verify_log(load_game(game), dirs["tcp"] / "logs" / name).ok


@pytest.mark.slow
def test_external_command_exact_loss_over_tcp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An external always-fold agent against the min-raiser in limit Leduc: it loses its
    ante (1 chip) every hand: -1000 mbb/h, exactly."""
    out_json = tmp_path / "r.json"
    csv_path = tmp_path / "r.csv"
    status, _out, err = run_cli([
        "--game", "leduc.limit.2p.game", "--hands", "25", "--matches", "2", "--workers", "2",
        "--run-dir", str(tmp_path / "run"), "--json", str(out_json), "--csv", str(csv_path),
        "-v", f"folder=cmd={sys.executable} {FOLD_CLIENT} leduc.limit.2p.game",
        "-v", "raiser=builtin:minraise",
    ], capsys)
    assert status == 0, err
    raw = results(out_json)["folder vs raiser"]["raw"]
    assert isinstance(raw, dict)
    assert (raw["mean"], raw["se"], raw["units"], raw["hands"]) == (-1000, 0, 2, 100)
    lines = csv_path.read_text().splitlines()
    assert lines[0].startswith("group,variant,opponents,mbb_per_hand")
    assert any(x.startswith("folder raiser,folder,raiser,-1000.0") for x in lines)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert str(FOLD_CLIENT) in manifest["variants"]["folder"]["checksums"]
    assert manifest["settings"]["hands"] == 25 and len(manifest["deal_seeds"]) == 2
    assert manifest["reproduce"][0] == "acpc-match"


@pytest.mark.slow
def test_failing_agents_are_named_and_the_rest_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    args = [
        "--game", "leduc.limit.2p.game", "--hands", "20", "--matches", "1", "--workers", "2",
        # Long enough for an agent launched on a loaded machine (2 cores, the suite's workers
        # and more); the never-connecting agent costs the test this long.
        "--start-timeout-ms", "20000", "--run-dir", str(run_dir),
        "-v", "good1=builtin:call", "-v", "good2=builtin:random",
        "-v", f"crash=cmd={sys.executable} {CRASH_CLIENT}",
        "-v", f"never=cmd={sys.executable} -c 'import time; time.sleep(60)'",
        "--pair", "good1:good2", "--pair", "good1:crash", "--pair", "never:good2",
    ]
    status, out, err = run_cli(args, capsys)
    assert status == 1
    assert "variant 'crash' (seat " in err and "simulated crash" in err
    assert "variant 'never' (seat " in err and "never connected within 20 s" in err
    assert re.search(r"^good1\s+good2\s+\S+", out, re.M)
    done = {r[0] for r in store_rows(run_dir, "SELECT match_id FROM matches")}
    assert done == {"good1,good2/k0/r0", "good1,good2/k0/r1"}
    # Rerun: the finished matches are not played again; the broken ones are retried.
    status, _, err = run_cli(args, capsys)
    assert status == 1
    starts = store_rows(run_dir, "SELECT match_id FROM events WHERE session=2 AND "
                                 "kind='start'")
    assert {r[0] for r in starts}.isdisjoint(done)
    assert len(store_rows(run_dir, "SELECT match_id FROM matches")) == 2


def test_run_dir_keeps_its_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--game", "leduc.limit.2p.game", "--transport", "inproc", "--workers", "1",
            "--matches", "1", "--run-dir", str(tmp_path / "run"), "-v", "a=builtin:call"]
    assert run_cli([*base, "-v", "b=builtin:random", "--hands", "10"], capsys)[0] == 0
    status, _, err = run_cli([*base, "-v", "b=builtin:random", "--hands", "20"], capsys)
    assert status == 1 and "made with hands = 10, this run has 20" in err
    status, _, err = run_cli([*base, "-v", "b=builtin:fold", "--hands", "10"], capsys)
    assert status == 1 and "variant 'b' was 'b=builtin:random'" in err
    from evaluation.match.store import ResultStore

    holder = ResultStore(tmp_path / "run")  # another runner using the directory
    try:
        status, _, err = run_cli([*base, "-v", "b=builtin:random", "--hands", "10"], capsys)
    finally:
        holder.close()
    assert status == 1 and "is in use by another acpc-match (pid " in err
    # More units in the same directory: the first unit is kept, the second is played.
    more = [x if x != "1" else "2" for x in base]
    status, out, _ = run_cli([*more, "-v", "b=builtin:random", "--hands", "10"], capsys)
    assert status == 0 and "4 of 4 matches" in out
    sessions = store_rows(tmp_path / "run", "SELECT session, COUNT(*) FROM matches "
                                            "GROUP BY session ORDER BY session")
    assert sessions == [(1, 2), (2, 2)]


def test_allin_ev_and_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    base = ["--game", "leduc.nolimit.2p.game", "--transport", "inproc", "--workers", "1",
            "--hands", "60", "--matches", "3", "--run-dir", str(run_dir),
            "-v", "a=builtin:random", "-v", "b=builtin:random,seed=4"]
    assert run_cli(base, capsys)[0] == 0
    # The same run with --allin-ev computes the missing all-in values from the logs.
    out_json, plot = tmp_path / "r.json", tmp_path / "r.png"
    status, out, _ = run_cli([*base, "--allin-ev", "--json", str(out_json),
                              "--plot", str(plot)], capsys)
    assert status == 0 and "all-in EV" in out
    r = results(out_json)["a vs b"]
    assert isinstance(r["raw"], dict) and isinstance(r["allin_ev"], dict)
    assert r["allin_ev"]["units"] == 3
    rows = store_rows(run_dir, "SELECT hand_values, allin_values FROM matches")
    assert len(rows) == 6 and all(a is not None for _, a in rows)
    changed = sum(
        x != y for raw, adj in rows
        for x, y in zip(json.loads(str(raw)), json.loads(str(adj)), strict=True)
    )
    assert changed > 0  # random players go all in before the river in Leduc
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_default_setup_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    setup = matchcli.default_setup()
    assert setup.game == HOLDEM and "holdem.nolimit.2p.strat" in setup.variants[0]
    assert [v.split("=")[0] for v in setup.variants] == ["rand-pshar", "det-arith", "offtree"]
    assert "mapping=rand-pshar" in setup.variants[0]
    assert "mapping=det-arith" in setup.variants[1]
    # a missing first choice falls through to the next bundled strategy, then to built-ins
    monkeypatch.setattr(matchcli, "DEFAULT_STRATEGIES",
                        (("no-such.strat", HOLDEM), DEFAULT_LEDUC))
    second = matchcli.default_setup()
    assert second.game == "leduc.nolimit.2p.game" and "fcpa" in second.variants[0]
    monkeypatch.setattr(matchcli, "DEFAULT_STRATEGIES", (("no-such.strat", HOLDEM),))
    fallback = matchcli.default_setup()
    assert fallback.game == "leduc.limit.2p.game" and "no-such.strat not found" in fallback.why
    assert fallback.variants == ("random=builtin:random", "call=builtin:call")
    # the default run, on Leduc to keep the test short: 2 pairs x 2 seatings x 20 hands
    # (rand-pshar against det-arith, exactly 0, is not played: the default table says why;
    # tests/evaluation/test_decision.py checks the table's exploitability column)
    monkeypatch.setattr(matchcli, "DEFAULT_STRATEGIES", (DEFAULT_LEDUC,))
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(["--transport", "inproc", "--hands", "20", "--matches", "1",
                                "--workers", "1"], capsys)
    assert status == 0 and "acpc-match: default: " in err
    assert "4 of 4 matches, 80 hands" in out
    assert "rand-pshar vs det-arith: not played" in out
    assert len(list((tmp_path / "acpc-match-runs").iterdir())) == 1


# ---------------------------------------------------------------------- kill -9 and resume


def _runner(run_dir: Path, jobs: str) -> list[str]:
    return [sys.executable, "-m", "evaluation.cli", "--game", HOLDEM, "--transport", "inproc",
            "--workers", jobs, "--hands", "150", "--matches", "10", "--run-dir", str(run_dir),
            "-v", "call=builtin:call", "-v", "random=builtin:random", "--quiet"]


@pytest.mark.slow
def test_kill_9_then_resume(tmp_path: Path) -> None:
    killed = tmp_path / "killed"
    err_path = tmp_path / "killed.err"
    err_file = err_path.open("w")
    proc = subprocess.Popen(_runner(killed, "2"), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=err_file)
    db_path = killed / "results.sqlite"
    before: list[tuple[object, ...]] = []
    for _ in range(600):
        time.sleep(0.05)
        if db_path.exists():
            try:
                before = store_rows(killed, "SELECT match_id, finished_at, log_sha256 "
                                            "FROM matches")
            except sqlite3.Error:
                continue
            if len(before) >= 4:
                break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    err_file.close()
    assert 4 <= len(before) < 20, "the run finished before it could be killed"
    time.sleep(3)  # the pool's workers and resource tracker notice the death and exit
    assert "leaked semaphore" not in err_path.read_text()
    resumed = subprocess.run(_runner(killed, "2"), cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    after = store_rows(killed, "SELECT match_id, finished_at, log_sha256 FROM matches")
    assert len(after) == 20 and set(before) <= set(after)  # nothing lost, nothing redone
    kept = {r[0] for r in store_rows(killed, "SELECT match_id FROM matches WHERE session=1")}
    assert len(kept) >= len(before)
    redone = store_rows(killed, "SELECT match_id FROM events WHERE session=2 AND kind='start'")
    assert kept.isdisjoint({r[0] for r in redone})
    clean = subprocess.run(_runner(tmp_path / "clean", "1"), cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr
    assert resumed.stdout == clean.stdout  # the same final table
    assert _logs(killed) == _logs(tmp_path / "clean")


# ---------------------------------------------------------------------- ray, imports


class _FakeRay:
    """Just enough of Ray's API, run synchronously, to check the runner's Ray driver."""

    def __init__(self) -> None:
        self.initialized = False
        self.init_kwargs: dict[str, object] = {}
        self.tasks = 0
        self.puts = 0
        self.options: dict[str, object] = {}

    def is_initialized(self) -> bool:
        return self.initialized

    def init(self, **kwargs: object) -> None:
        self.initialized, self.init_kwargs = True, kwargs

    def shutdown(self) -> None:
        self.initialized = False

    def remote(self, fn: Callable[..., str] | None = None, **options: object) -> Any:
        if fn is None:  # ray.remote(max_retries=...)(fn)
            self.options = options
            return self.remote
        fake = self

        class Remote:
            def remote(self, *args: object) -> tuple[str]:
                fake.tasks += 1
                return (fn(*args),)

        return Remote()

    def put(self, data: bytes) -> bytes:
        self.puts += 1
        return data

    def wait(self, refs: list[object], num_returns: int = 1) -> tuple[list[object], list[object]]:
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref: tuple[str]) -> str:
        return ref[0]

    def cancel(self, ref: object, force: bool = False) -> None:
        return None


def test_ray_driver_with_a_fake_ray(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    base = ["--game", "leduc.limit.2p.game", "--transport", "inproc", "--hands", "20",
            "--matches", "2", "-v", "a=builtin:random", "-v", "b=builtin:call,seed=2",
            "--unit", "hand"]
    status, local, _ = run_cli([*base, "--workers", "1", "--run-dir", str(tmp_path / "l")],
                               capsys)
    assert status == 0 and "      80  " in local  # 2 units x 20 hands as hand pairs
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    status, remote, err = run_cli([*base, "--workers", "3", "--backend", "ray", "--address",
                                   "auto", "--run-dir", str(tmp_path / "r")], capsys)
    assert status == 0, err
    assert remote == local and _logs(tmp_path / "r") == _logs(tmp_path / "l")
    assert fake.tasks == 4 and fake.init_kwargs["address"] == "auto"
    assert not fake.initialized
    units = store_rows(tmp_path / "r", "SELECT COUNT(*) FROM matches")
    assert units == [(4,)]


def test_ray_missing_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError, installed or not
    status, _, err = run_cli(["--game", "leduc.limit.2p.game", "--transport", "inproc",
                              "--hands", "5", "--matches", "1", "--backend", "ray",
                              "--run-dir", str(tmp_path / "r"), "-v", "a=builtin:call",
                              "-v", "b=builtin:call"], capsys)
    assert status == 1
    assert ("acpc-match: error: expected ray for --backend ray: pip install "
            "'acpc-arena[cluster]'") in err


def test_an_address_without_ray_is_a_clear_error(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(["--game", "leduc.limit.2p.game", "--transport", "inproc",
                              "--hands", "5", "--matches", "1", "--address", "127.0.0.1:1",
                              "--run-dir", str(tmp_path / "r"), "-v", "a=builtin:call",
                              "-v", "b=builtin:call"], capsys)
    assert status == 1
    assert err.endswith("acpc-match: error: expected --address only with --backend ray\n")
    assert not (tmp_path / "r").exists()  # checked before the run directory is made


@pytest.mark.parametrize("target", ["out.txt", "out"])
def test_a_bad_plot_file_fails_before_playing(tmp_path: Path, target: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(["--game", "leduc.limit.2p.game", "--transport", "inproc",
                              "--hands", "5", "--matches", "1", "-v", "a=builtin:call",
                              "-v", "b=builtin:random", "--run-dir", str(tmp_path / "r"),
                              "--plot", str(tmp_path / target)], capsys)
    assert status == 1
    assert "acpc-match: error: expected --plot to name a .png, .pdf, .svg file" in err
    assert not (tmp_path / "r").exists()  # nothing was played


def test_plot_without_matplotlib_fails_before_playing(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    status, _, err = run_cli(["--game", "leduc.limit.2p.game", "--transport", "inproc",
                              "--hands", "5", "--matches", "1", "-v", "a=builtin:call",
                              "-v", "b=builtin:random", "--run-dir", str(tmp_path / "r"),
                              "--plot", str(tmp_path / "r.png")], capsys)
    assert status == 1
    assert "acpc-match: error: --plot needs matplotlib" in err
    assert not (tmp_path / "r").exists()


def test_the_documented_toml_example_parses(tmp_path: Path) -> None:
    from evaluation.match.variants import load_toml

    text = (ROOT / "docs" / "reference" / "acpc-match.md").read_text()
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "variants.toml"
    path.write_text(block)
    variants, settings = load_toml(path)
    assert settings == {"game": "leduc.nolimit.2p.game", "hands": 2000, "matches": 10}
    by_name = {v.name: v for v in variants}
    assert by_name["pshar"].mapping == "rand-pshar" and by_name["pshar"].purify == "full"
    want = tmp_path / "agent" / "data" / "strategies" / "leduc.nolimit.2p.fcpa.strat"
    assert by_name["pshar"].strategy == str(want)
    assert by_name["random"].strategy == "builtin:random" and by_name["random"].seed == 3
    assert by_name["external"].cmd == ("./startme.sh", "--fast")
    assert by_name["external"].cwd == str(tmp_path)


def test_any_project_error_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.acpc.errors import StrategyFileError
    from evaluation.match import runner

    def broken(config: object, progress: object) -> object:
        raise StrategyFileError("x.strat: truncated table")

    monkeypatch.setattr(runner, "run", broken)
    status, _, err = run_cli(["--game", "leduc.limit.2p.game", "--hands", "5", "--matches",
                              "1", "-v", "a=builtin:call", "-v", "b=builtin:random",
                              "--run-dir", str(tmp_path / "r")], capsys)
    assert status == 1
    assert err.strip() == "acpc-match: error: x.strat: truncated table"


def test_in_process_seats_reuse_the_last_few_loaded_files() -> None:
    """A round robin switching between file variants loads each one once per process."""
    from evaluation.match import variants as worker

    game = load_game("leduc.nolimit.2p.game")
    variants = [parse_variant(f"{n}=leduc.nolimit.2p.fcpa.strat,mapping={m}")
                for n, m in (("a", "rand-pshar"), ("b", "det-arith"), ("c", "rand-geo-1"))]
    worker._POLICY_CACHE.clear()
    first = [worker.make_seat_policy(v, game, seed=1) for v in variants]
    again = [worker.make_seat_policy(v, game, seed=2) for v in variants * 2]
    for policy, v in zip(again, variants * 2, strict=True):
        original = first[variants.index(v)]
        assert policy.loaded is original.loaded and policy.mapping_name == v.mapping
        assert policy is not original  # a fresh policy (its own seed) per seat
    more = ("det-geo", "rand-geo-2", "det-pshar", "rand-arith", "det-arith")
    for i, m in enumerate(more):  # more variants than kept: the oldest go
        worker.make_seat_policy(parse_variant(f"x{i}=leduc.nolimit.2p.fcpa.strat,mapping={m},"
                                              "purify=full"), game, seed=0)
    assert len(worker._POLICY_CACHE) == worker._POLICY_CACHE_SIZE < len(more)
    assert worker.make_seat_policy(variants[0], game, seed=3).loaded is not first[0].loaded


# ---------------------------------------------------------------------- same seed, same result


def _kinds_played(run_dir: Path, game_spec: str, name: str) -> set[str]:
    """The kinds of action (``f``, ``c``, ``r``) seat ``name`` played in a run's logs."""
    from agent.acpc.betting import BettingState, parse_betting

    game = load_game(game_spec)
    kinds: set[str] = set()
    for text in _logs(run_dir).values():
        for line in text.decode().splitlines():
            if not line.startswith("STATE:"):
                continue
            parts = line.split(":")
            seat = parts[5].split("|").index(name)
            state = BettingState.initial(game)
            for action in [a for rnd in parse_betting(game, parts[2]).actions for a in rnd]:
                if state.player == seat:
                    kinds.add(str(action)[0])
                state = state.apply(action)
    return kinds


@pytest.mark.slow
def test_same_seed_same_tables_with_both_cores_busy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], leduc_strategy: Path
) -> None:
    """Issue 28: the same run three times with the same seed (agent processes over TCP, two
    workers), once with both cores busy, gives the same table, JSON and logs; the match
    agents load their kernels before connecting and report their time-guard counts."""
    strategy = parse_variant(f"s={leduc_strategy},mapping=rand-pshar")
    cmd, _ = agent_command(strategy, SimpleNamespace(game_spec="g"),  # type: ignore[arg-type]
                           1, 5000, tmp_path / "seat1.stats.json")
    assert "--preload" in cmd and cmd[cmd.index("--stats") + 1].endswith("seat1.stats.json")
    outputs = []
    for i in range(3):
        busy = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in
                range(2 if i == 1 else 0)]
        try:
            status, out, err = run_cli([
                "--game", "leduc.nolimit.2p.game", "--hands", "30", "--matches", "1",
                "--seed", "28", "--workers", "2", "--run-dir", str(tmp_path / f"run{i}"),
                "--json", str(tmp_path / f"run{i}.json"), "-v", str(strategy.spec),
                "-v", "r=builtin:random", "--start-timeout-ms", "120000", "--opponent",
                "none"], capsys)
        finally:
            for proc in busy:
                proc.kill()
                proc.wait()
        assert status == 0 and "warning" not in err, err
        outputs.append((out, (tmp_path / f"run{i}.json").read_text(), _logs(tmp_path / f"run{i}")))
    assert outputs[0] == outputs[1] == outputs[2]
    data = json.loads(outputs[0][1])
    assert data["time_guard"] == {"s": 0, "r": 0} and data["timing_dependent"] is False
    rows = store_rows(tmp_path / "run0", "SELECT time_guard FROM matches")
    assert sorted(json.loads(str(r[0])) for r in rows) == [[0, 0], [0, 0]]


@pytest.mark.parametrize("transport", ["tcp", "inproc"])
def test_time_guard_fallbacks_are_counted_shown_and_warned(
    transport: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, leduc_strategy: Path
) -> None:
    """A time guard that really fires (a nanosecond: every strategy decision overruns it)
    makes the strategy check or call; each such decision is counted in the agent (its
    process over TCP, or in-process on the real clock), stored per seat, summed per variant
    in the table's footnote and the JSON, and the run warns that its results depend on
    timing. In-process on the fake clock (the default) no guard applies."""
    from evaluation.match import worker

    game = "leduc.nolimit.2p.game"
    base = ["--game", game, "--hands", "30", "--matches", "1", "--seed", "3", "--workers", "1",
            "-v", f"s={leduc_strategy},mapping=rand-pshar", "-v", "r=builtin:random",
            "--start-timeout-ms", "120000", "--opponent", "none"]
    monkeypatch.setattr(worker, "TIME_GUARD_MS", 1e-6)
    status, out, err = run_cli([*base, "--transport", "inproc", "--run-dir",
                                str(tmp_path / "fake")], capsys)
    assert status == 0 and "time guard" not in out + err
    assert {"f", "r"} & _kinds_played(tmp_path / "fake", game, "s")  # it plays the strategy
    extra = ["--inproc-clock", "real"] if transport == "inproc" else []
    status, out, err = run_cli([*base, "--transport", transport, *extra, "--run-dir",
                                str(tmp_path / "guard"), "--json", str(tmp_path / "g.json")],
                               capsys)
    assert status == 0, err
    assert _kinds_played(tmp_path / "guard", game, "s") == {"c"}
    data = json.loads((tmp_path / "g.json").read_text())
    count = data["time_guard"]["s"]
    assert count > 0 and data["time_guard"]["r"] == 0 and data["timing_dependent"] is True
    note = (f"time guard: {count} decision(s) checked or called past the agents' 1e-06 ms "
            f"time guard (s {count}): these results depend on timing")
    assert out.splitlines()[-1] == note
    assert err.splitlines()[-1] == f"acpc-match: warning: {note}"
    rows = store_rows(tmp_path / "guard", "SELECT seats, time_guard FROM matches")
    assert sum(dict(zip(json.loads(str(s)), json.loads(str(t)), strict=True))["s"]
               for s, t in rows) == count


def test_a_run_directory_from_before_the_time_guard_counts_still_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A results store without the ``time_guard`` column (made before the counts were kept)
    gains it when opened; its matches count as no fallback, and its table re-prints."""
    base = ["--game", "leduc.limit.2p.game", "--transport", "inproc", "--workers", "1",
            "--hands", "10", "--matches", "1", "--run-dir", str(tmp_path / "run"),
            "-v", "a=builtin:call", "-v", "b=builtin:random", "--json", str(tmp_path / "r.json")]
    status, first, _ = run_cli(base, capsys)
    assert status == 0
    db = sqlite3.connect(tmp_path / "run" / "results.sqlite")
    db.execute("ALTER TABLE matches DROP COLUMN time_guard")
    db.close()
    status, again, _ = run_cli(base, capsys)
    assert status == 0 and again == first
    assert json.loads((tmp_path / "r.json").read_text())["time_guard"] == {"a": 0, "b": 0}
    assert store_rows(tmp_path / "run", "SELECT time_guard FROM matches") == [(None,), (None,)]

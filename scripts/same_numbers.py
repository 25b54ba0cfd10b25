"""Record and compare the numbers a refactor must not move.

Usage::

    python scripts/same_numbers.py record --out before.json [--only NAME ...] [--list]
    python scripts/same_numbers.py compare before.json after.json

``record`` runs a fixed list of checks (solves of the bundled recipes, ``inspect`` and
``exploit`` of every bundled file, the translation lab, the grafting, learned-size, Royal and
100-card Kuhn reproductions, ``acpc-match --exact`` and every estimator, LBR), each at fixed
seeds and small settings, and writes per check its name, the exact command line, a SHA-256 of
its normalised output and the key numbers in readable form. ``compare`` prints every
difference, one line each, and exits 1 if there is any (0 if the two records agree).

Normalised output: a command's ``--json`` when it has one, else its text; timings, dates,
paths, durations and progress lines are dropped; JSON is hashed canonically (sorted keys).
A strategy file a check writes is reduced to its table bytes (SHA-256), the header's table
checksum and the header without the run's timings.

The script only runs the installed entry points (``acpc-strategy``, ``acpc-match``,
``acpc-log``, found beside the running interpreter) and the repository's ``scripts/*.py`` by
path, and finds bundled files under either layout (``agent/data/strategies`` or
``strategies/data``), so one copy of it records the code before and after a reshape.
Checks whose output is not deterministic (``unstable``) are recorded with the reason and
never hashed or compared; ``record --twice`` runs every selected check twice and marks any
whose hash changes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "same-numbers/1"
ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

#: bundled strategy files and their manifest, new layout first
DATA_DIRS = (ROOT / "agent" / "data" / "strategies", ROOT / "strategies" / "data")
MANIFESTS = (ROOT / "agent" / "data" / "strategies" / "manifest.json",
             ROOT / "strategies" / "manifest.json")
BUNDLED = ("kuhn.limit.3p", "leduc.limit.2p", "leduc.nolimit.2p.fcpa", "leduc.nolimit.2p.fchpa",
           "royal.nolimit.2p.fcpa", "royal.nolimit.2p.fcha", "holdem.nolimit.2p",
           "holdem.nolimit.2p.pa", "holdem.nolimit.2p.pa.overbet")
HOLDEM = "holdem.nolimit.2p.reverse_blinds.game"
#: the flop strength table the numba fast walk and the sampled LBR read when cached
FLOP_TABLE = "holdem-strength-r1-k4-v1.npz"

#: JSON keys dropped before hashing: timings, dates, machine and path facts
DROP_KEY = re.compile(
    r"(?:^|_)(?:seconds|secs|elapsed|created|date|wall|cpu|duration|timestamp|started|"
    r"finished|hostname|pid|cwd|tool_version|load|rate)(?:$|_)"
    r"|^(?:time|host|command|commands|argv|path|out|out_dir|run_dir|code_version|version_info|"
    r"hands_per_second|hands_per_s|progress)$")
#: text lines dropped before hashing: timings, progress, dates
DROP_LINE = re.compile(
    r"\d\s*(?:s|ms|min|CPU s|seconds)\b(?![-'])|\bit/s\b|/s\b|\bETA\b|elapsed|created:|"
    r"tool_version:|seconds:|load average|\d{4}-\d\d-\d\dT\d\d:\d\d|^\s*\[?\d\d:\d\d:\d\d\]?")
#: JSON leaves (by their last key) kept readable in the record
READABLE_KEY = re.compile(
    r"mean|mbb|chips|ci|interval|low|high|lo$|hi$|expl|nash|value|gain|best|br\d?$|se$|"
    r"half|checksum|sha256|size|learned|threshold|win|lose|total|ev|iterations|deals|hands|"
    r"units|p_value|seat|position|rotation|lbr|average|exact|round_robin|nashconv", re.I)
#: text lines kept readable in the record
READABLE_LINE = re.compile(
    r"expl|NashConv|value|gain|checksum|mbb|chips|best response|LBR|mean|\+/-|±", re.I)
MAX_READABLE = 200
#: a check's normalised output is kept in the record (to name what differs) up to this size
MAX_KEPT = 60_000
#: most lines ``compare`` prints for one check's kept output
MAX_DIFF_LINES = 12


# --------------------------------------------------------------------------- normalising


def canonical(obj: Any) -> str:
    """JSON with sorted keys and no spaces: the text a record hashes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=True)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Paths:
    """Replaces the run's own paths (temporary folder, bundled data, repository, home) by
    placeholders, so the same output under another layout or folder reads the same."""

    def __init__(self, tmp: Path) -> None:
        pairs = [(str(tmp), "<tmp>")]
        pairs += [(str(d), "<data>") for d in DATA_DIRS]
        pairs += [(str(d.relative_to(ROOT)), "<data>") for d in DATA_DIRS]
        pairs += [(str(ROOT), "<repo>"), (str(Path.home()), "~")]
        self.pairs = sorted(pairs, key=lambda p: -len(p[0]))

    def __call__(self, text: str) -> str:
        for old, new in self.pairs:
            text = text.replace(old, new)
        return text


def clean_json(obj: Any, paths: Callable[[str], str]) -> Any:
    """``obj`` without timing, date and path keys, its strings' paths replaced."""
    if isinstance(obj, dict):
        return {k: clean_json(v, paths) for k, v in obj.items() if not DROP_KEY.search(str(k))}
    if isinstance(obj, list | tuple):
        return [clean_json(v, paths) for v in obj]
    if isinstance(obj, str):
        return paths(obj)
    return obj


def drop_keys(obj: Any, keys: set[str]) -> Any:
    """``obj`` without the dict keys ``keys``, at any depth."""
    if isinstance(obj, dict):
        return {k: drop_keys(v, keys) for k, v in obj.items() if k not in keys}
    if isinstance(obj, list):
        return [drop_keys(v, keys) for v in obj]
    return obj


def clean_text(text: str, paths: Callable[[str], str]) -> list[str]:
    """The lines of ``text`` that are not timings or progress, paths replaced."""
    out = []
    for line in text.splitlines():
        line = paths(line).rstrip()
        if line and not DROP_LINE.search(line):
            out.append(line)
    return out


def readable_json(obj: Any, prefix: str = "") -> dict[str, Any]:
    """The numbers (and checksums) of ``obj`` worth reading, by dotted path; lists longer
    than 12 are left to the hash."""
    out: dict[str, Any] = {}

    def walk(o: Any, path: str, key: str) -> None:
        if len(out) >= MAX_READABLE:
            return
        if isinstance(o, dict):
            for k in sorted(o, key=str):
                walk(o[k], f"{path}.{k}" if path else str(k), str(k))
        elif isinstance(o, list):
            if all(isinstance(v, dict) for v in o):
                labels = [_label(v, i) for i, v in enumerate(o)]
                if len(set(labels)) < len(labels):
                    labels = [f"{label}#{i}" for i, label in enumerate(labels)]
                for v, label in zip(o, labels, strict=True):
                    walk(v, f"{path}[{label}]", key)
            elif len(o) <= 12:
                for i, v in enumerate(o):
                    walk(v, f"{path}[{i}]", key)
        elif isinstance(o, bool):
            return
        elif (isinstance(o, int | float) and READABLE_KEY.search(key)) or (
                isinstance(o, str) and re.search(r"checksum|sha256", key) and len(o) <= 64):
            out[path] = o

    walk(obj, prefix, prefix)
    return out


#: fields that name an item of a list of objects in a readable path
LABELS = ("name", "game", "comparison", "group", "variant", "strategy", "file", "mapping",
          "purify", "sizes_in", "stack", "stacks", "seat", "abstraction", "label", "config")


def _label(item: dict[str, Any], index: int) -> str:
    parts = [str(item[k]) if not isinstance(item[k], list) else ",".join(map(str, item[k]))
             for k in LABELS if isinstance(item.get(k), str | int | float | list)
             and not isinstance(item.get(k), bool)]
    return "/".join(parts) if parts else str(index)


def readable_lines(lines: list[str], prefix: str = "") -> dict[str, Any]:
    """The lines with figures worth reading, numbered ``L000``..."""
    kept = [line.strip() for line in lines
            if READABLE_LINE.search(line) or re.search(r"\d\.\d", line)]
    return {f"{prefix}L{i:03d}": line for i, line in enumerate(kept[:MAX_READABLE])}


def strategy_digest(path: Path) -> dict[str, Any]:
    """A strategy file as numbers: SHA-256 of its table bytes, the header's table checksum,
    and the header without the run's timings (msgpack header, see README "Strategy files")."""
    import msgpack  # a dependency of the project, not a project module

    data = path.read_bytes()
    if data[:8] != b"ACPCSTR1":
        raise ValueError(f"{path}: expected a strategy file (magic b'ACPCSTR1'), "
                         f"got {data[:8]!r}")
    length = int.from_bytes(data[8:16], "little")
    header = msgpack.unpackb(data[16:16 + length], raw=False, strict_map_key=False)
    offset = int(header["table_offset"])
    header = clean_json({k: v for k, v in header.items() if k != "header_checksum"},
                        lambda s: s)
    return {"table_sha256": hashlib.sha256(data[offset:]).hexdigest(),
            "checksum": header.get("checksum"), "table_len": header.get("table_len"),
            "header": header,
            "meta": readable_json(header.get("meta", {}))}


def find_bundled(name: str) -> Path:
    for d in DATA_DIRS:
        if (d / f"{name}.strat").is_file():
            return d / f"{name}.strat"
    raise FileNotFoundError(f"bundled strategy {name!r}: expected it in one of "
                            f"{[str(d) for d in DATA_DIRS]!r}")


def manifest_path() -> Path:
    for m in MANIFESTS:
        if m.is_file():
            return m
    raise FileNotFoundError(f"expected a manifest at one of {[str(m) for m in MANIFESTS]!r}")


def cache_dir() -> Path:
    env = os.environ.get("ACPC_ARENA_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "acpc-arena"


# --------------------------------------------------------------------------- the checks


@dataclass
class Run:
    """One check's run: its own temporary folder and what the command printed."""

    tmp: Path
    paths: Paths
    stdout: str = ""
    stderr: str = ""

    def json(self, name: str) -> Any:
        return json.loads((self.tmp / name).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Check:
    """A command and how to read its numbers.

    ``argv`` is the command line as a template: a first word ``acpc-*`` is the entry point
    beside the interpreter, ``python`` the interpreter, ``scripts/X.py`` the repository's
    script; ``{tmp}`` is a fresh folder for the outputs, ``{data:NAME}`` the bundled file
    ``NAME.strat`` (either layout), ``{holdem_betting}`` the bundled hold'em file's betting
    abstraction as JSON, and ``prepare(tmp)`` (if any) runs first and returns more such
    names. ``read(run)`` returns ``(normalised, readable)``: the JSON-able data that is hashed
    and a flat dict of the key numbers. ``note`` says what is reduced; ``unstable`` (a
    reason) marks an output that is not deterministic: recorded, never hashed nor
    compared; ``volatile`` does the same for some keys only."""

    name: str
    argv: tuple[str, ...]
    read: Callable[[Run], tuple[Any, dict[str, Any]]]
    note: str = ""
    unstable: str = ""
    timeout: float = 900.0
    prepare: Callable[[Path], dict[str, str]] | None = None
    #: keys (JSON keys at any depth, or readable names ending so) whose values are not
    #: deterministic, with the reason: dropped from the hash and the compared values
    volatile: tuple[tuple[str, str], ...] = ()


def expand(template: tuple[str, ...], tmp: Path, names: dict[str, str]) -> list[str]:
    """The command line of ``template`` (see :class:`Check`)."""
    argv = []
    for i, word in enumerate(template):
        if i == 0 and word.startswith("acpc-"):
            word = str(BIN / word)
        elif i == 0 and word == "python":
            word = sys.executable
        elif i == 1 and template[0] == "python" and word.startswith("scripts/"):
            word = str(ROOT / word)
        else:
            word = re.sub(r"\{data:([\w.]+)\}", lambda m: str(find_bundled(m[1])), word)
            word = word.replace("{tmp}", str(tmp))
            if "{holdem_betting}" in word:
                word = word.replace("{holdem_betting}", holdem_betting())
            for key, value in names.items():
                word = word.replace("{" + key + "}", value)
        argv.append(word)
    return argv


def from_stdout(run: Run) -> tuple[Any, dict[str, Any]]:
    lines = clean_text(run.stdout, run.paths)
    return lines, readable_lines(lines)


def from_json(*names: str, text: bool = False) -> Callable[[Run], tuple[Any, dict[str, Any]]]:
    """Read the JSON files ``names`` the command wrote in its folder (and its stdout if
    ``text``)."""

    def read(run: Run) -> tuple[Any, dict[str, Any]]:
        data: dict[str, Any] = {}
        readable: dict[str, Any] = {}
        for name in names:
            data[name] = clean_json(run.json(name), run.paths)
            readable.update(readable_json(data[name], Path(name).stem))
        if text:
            data["stdout"], lines = from_stdout(run)
            readable.update(lines)
        return data, readable

    return read


def from_strategy(name: str, *, text: bool = False) -> Callable[[Run], tuple[Any, dict[str, Any]]]:
    """Read the strategy file ``name`` a solve wrote (and its stdout if ``text``)."""

    def read(run: Run) -> tuple[Any, dict[str, Any]]:
        digest = strategy_digest(run.tmp / name)
        readable = {"checksum": digest["checksum"], "table_sha256": digest["table_sha256"],
                    **{f"meta.{k}": v for k, v in digest["meta"].items()}}
        data: dict[str, Any] = {"strategy": digest}
        if text:
            data["stdout"], lines = from_stdout(run)
            readable.update(lines)
        return data, readable

    return read


def read_manifest(run: Run) -> tuple[Any, dict[str, Any]]:
    manifest = json.loads(manifest_path().read_text(encoding="utf-8"))["files"]
    data: dict[str, Any] = {}
    readable: dict[str, Any] = {}
    for name in BUNDLED:
        digest = strategy_digest(find_bundled(name))
        entry = manifest[name]
        data[name] = {"manifest_checksum": entry.get("checksum"),
                      "manifest_file_sha256": entry.get("file_sha256"),
                      "manifest_exploitability": entry.get("exploitability"),
                      "file": digest}
        readable[f"{name}.checksum"] = digest["checksum"]
        readable[f"{name}.manifest_checksum"] = entry.get("checksum")
        readable[f"{name}.table_sha256"] = digest["table_sha256"]
        readable[f"{name}.exploitability"] = entry.get("exploitability")
    return data, readable


def read_match(*names: str) -> Callable[[Run], tuple[Any, dict[str, Any]]]:
    """A played match: its ``--json`` and the ``acpc-log allin-ev`` of every log it kept."""

    def read(run: Run) -> tuple[Any, dict[str, Any]]:
        data, readable = from_json(*names)(run)
        logs = sorted((run.tmp / "run").rglob("*.log"))
        data["logs_sha256"] = {str(p.relative_to(run.tmp)): hashlib.sha256(
            p.read_bytes()).hexdigest() for p in logs}
        readable["logs"] = len(logs)
        return data, readable

    return read


def read_flop_cached(run: Run) -> tuple[Any, dict[str, Any]]:
    data, readable = from_json("sa.json")(run)
    # the numba fast walk runs only with the flop table cached: say which walk ran
    cached = (cache_dir() / FLOP_TABLE).is_file()
    data["flop_table_cached"] = cached
    readable["flop_table_cached (numba fast walk)"] = cached
    return data, readable


def holdem_betting() -> str:
    """The bundled hold'em file's betting abstraction (hp-p-4333) as JSON, from the manifest."""
    manifest = json.loads(manifest_path().read_text(encoding="utf-8"))["files"]
    return json.dumps(manifest["holdem.nolimit.2p"]["betting_spec"])


FCPA, FCHPA = "{data:leduc.nolimit.2p.fcpa}", "{data:leduc.nolimit.2p.fchpa}"
LEDUC_VS = ("-v", f"pshar={FCPA},mapping=rand-pshar", "-v", f"arith={FCPA},mapping=det-arith")
HOLDEM_VS = ("-v", "pshar={data:holdem.nolimit.2p},mapping=rand-pshar",
             "-v", "arith={data:holdem.nolimit.2p},mapping=det-arith",
             "-v", "random=builtin:random", "--pair", "pshar:random", "--pair", "arith:random")
SOLVE_OUT = ("--out", "{tmp}/x.strat", "--checkpoint", "{tmp}/x.ckpt.npz", "--quiet")
SAMPLED_VALUE = ("the solve's closing sampled value of the first seat differs in its last "
                 "digits from run to run (-54.722119515648764, -54.72211951564867, "
                 "-54.72211951564871 in three runs; the table bytes are identical)")
RECIPE_ITERATIONS = {"royal.nolimit.2p.fcpa": 1500, "royal.nolimit.2p.fcha": 1000}


def _match_log(tmp: Path) -> dict[str, str]:
    """Play one small in-process no-limit Leduc match; its log for ``acpc-log allin-ev``."""
    run = tmp / "match"
    argv = expand(("acpc-match", "--game", "leduc.nolimit.2p.game", "-v", f"a={FCPA}",
                   "-v", "b=builtin:random", "--hands", "300", "--matches", "1", "--seed", "9",
                   "--transport", "inproc", "--workers", "1", "--run-dir", str(run), "--quiet"),
                  tmp, {})
    subprocess.run(argv, check=True, capture_output=True, text=True, cwd=tmp)
    logs = sorted(run.rglob("*.log"))
    if not logs:
        raise FileNotFoundError(f"expected a match log under {str(run)!r}, found none")
    return {"log": str(logs[0])}


def checks() -> list[Check]:
    """The fixed list of checks, in the order ``record`` runs them."""
    out: list[Check] = [
        Check("manifest", ("(read the manifest and every bundled file)",), read_manifest,
              note="table checksums of the bundled files, read from the files and from the "
              "manifest"),
        Check("cards-flop", ("acpc-strategy", "cards", "--round", "flop", "--json",
                             "{tmp}/cards.json", "--quiet"), from_json("cards.json"),
              note="builds the flop table once (9 minutes at load 10), then cached; the "
              "numba fast walk needs it", timeout=3600),
    ]
    for recipe in ("kuhn.limit.3p", "leduc.limit.2p", "leduc.nolimit.2p.fcpa",
                   "leduc.nolimit.2p.fchpa"):
        out.append(Check(f"solve-{recipe}", ("acpc-strategy", "solve", "--recipe", recipe,
                                             *SOLVE_OUT),
                         from_strategy("x.strat"), note="the recipe's own iterations"))
    for recipe, iterations in (("royal.nolimit.2p.fcpa", 5), ("royal.nolimit.2p.fcha", 3)):
        out.append(Check(
            f"solve-{recipe}", ("acpc-strategy", "solve", "--recipe", recipe, "--iterations",
                                str(iterations), *SOLVE_OUT),
            from_strategy("x.strat"), note=f"reduced: {iterations} iterations (recipe: "
            f"{RECIPE_ITERATIONS[recipe]})"))
    out.append(Check(
        "solve-holdem-small",
        ("acpc-strategy", "solve", "--game", HOLDEM, "--abstraction", "{holdem_betting}", "--cards",
         '{"kind": "holdem", "buckets": [169, 8, 8, 8], "samples": 2000, "pool_deals": 5000}',
         "--solver", "mccfr-es-pool", "--iterations", "20000", *SOLVE_OUT, "--workers", "1"),
        from_strategy("x.strat"), volatile=(("sampled_value_p0", SAMPLED_VALUE),),
        note="reduced: the hold'em recipes' solver (mccfr-es-pool) and betting (hp-p-4333) "
        "with 8 E[HS^2] buckets from 2,000 samples, a 5,000-deal pool and 20,000 iterations "
        "(the recipes' 2,000,000-deal pool takes ~9 minutes to build)"))
    for name in BUNDLED:
        data = "{data:" + name + "}"
        out.append(Check(f"inspect-{name}", ("acpc-strategy", "inspect", data, "--samples", "4"),
                         from_stdout))
        if name.startswith("holdem"):
            out.append(Check(
                f"exploit-{name}",
                ("acpc-strategy", "exploit", data, "--train-deals", "4000", "--test-deals",
                 "2000", "--train-seed", "0", "--test-seed", "3", "--workers", "2"),
                from_stdout, note="reduced: 4,000 training and 2,000 test deals"))
        elif not name.startswith("royal"):  # Royal: exact best responses in royal-tables
            for purify in ("none", "full"):
                out.append(Check(f"exploit-{name}-{purify}",
                                 ("acpc-strategy", "exploit", data, "--purify", purify),
                                 from_stdout))
    out += [
        Check("translation-tables",
              ("python", "scripts/translation_tables.py", "--out", "{tmp}", "--stacks", "1,3,10",
               "--iterations", "2000", "--value-iterations", "200", "--skip-best-size"),
              from_json("clairvoyance.json", "nl-kuhn.json", "nl-leduc.json"),
              note="reduced: stacks 1,3,10, 2,000 CFR+ iterations, 200 value iterations"),
        Check("translation-best-size",
              ("acpc-strategy", "translation", "best-size", "--stacks", "1,3", "--iterations",
               "2000", "--out", "{tmp}"),
              from_json("best-size.json"), note="reduced: stacks 1,3, 2,000 iterations"),
        Check("grafting-leduc",
              ("python", "scripts/grafting_leduc.py", "--out", "{tmp}", "--iterations", "2000",
               "--graft-iterations", "500", "--graft-target", "0.0005", "--workers", "2"),
              from_json("results.json"),
              note="reduced: 2,000 base and at most 500 graft iterations"),
        Check("learned-sizes",
              ("python", "scripts/learned_sizes.py", "--out", "{tmp}", "--kuhn-iterations",
               "100000", "--leduc-iterations", "2000", "--solve-iterations", "2000"),
              from_json("learned_sizes.json"),
              note="reduced: 100,000 Kuhn, 2,000 Leduc learning and 2,000 solve iterations"),
        Check("royal-tables",
              ("python", "scripts/royal_tables.py", "--out", "{tmp}",
               "--strategy", "fcpa={data:royal.nolimit.2p.fcpa}",
               "--strategy", "fcha={data:royal.nolimit.2p.fcha}",
               "--mappings", "rand-pshar,det-arith", "--purify", "none,full", "--no-plots",
               "--quiet"),
              from_json("royal_tables.json"),
              note="reduced: the two bundled files, mappings rand-pshar and det-arith"),
        Check("kuhn100",
              ("python", "scripts/kuhn100.py", "--out", "{tmp}", "--skip-curves",
               "--reference-iterations", "2000"),
              from_json("values.json"),
              note="reduced: the values table only (the curves run on solver time, not "
              "deterministic), 2,000 reference iterations"),
        Check("match-exact-leduc",
              ("acpc-match", "--exact", "--game", "leduc.nolimit.2p.game", *LEDUC_VS,
               "-v", "call=builtin:call", "-v", "rnd=builtin:random",
               "--json", "{tmp}/exact.json"),
              from_json("exact.json")),
        Check("match-exact-kuhn3p",
              ("acpc-match", "--exact", "--game", "kuhn.limit.3p.game",
               "-v", "s={data:kuhn.limit.3p}", "-v", "c=builtin:call", "-v", "r=builtin:random",
               "--json", "{tmp}/exact.json"),
              from_json("exact.json")),
    ]
    for estimator in ("exact-agents", "sampled-agents"):
        out.append(Check(
            f"match-{estimator}-leduc",
            ("acpc-match", "--estimator", estimator, "--game", "leduc.nolimit.2p.game",
             *LEDUC_VS, "-v", "rnd=builtin:random", "--pair", "pshar:rnd", "--pair", "arith:rnd",
             "--hands", "200", "--matches", "4", "--seed", "7", "--json", "{tmp}/est.json"),
            from_json("est.json"), note="800 deals per group"))
    out += [
        Check("match-sampled-agents-holdem",
              ("acpc-match", "--estimator", "sampled-agents", "--game", HOLDEM, *HOLDEM_VS,
               "--hands", "100", "--matches", "4", "--seed", "11", "--json", "{tmp}/sa.json"),
              read_flop_cached, note="400 deals per group; the numba fast walk when the flop "
              "table is cached (recorded as flop_table_cached)"),
        Check("match-exact-agents-holdem",
              ("acpc-match", "--estimator", "exact-agents", "--game", HOLDEM, *HOLDEM_VS,
               "--hands", "50", "--matches", "2", "--seed", "11", "--json", "{tmp}/ea.json"),
              from_json("ea.json"), note="100 deals per group"),
        Check("match-played-leduc",
              ("acpc-match", "--game", "leduc.nolimit.2p.game", *LEDUC_VS,
               "-v", "rnd=builtin:random", "--hands", "200", "--matches", "3", "--seed", "5",
               "--transport", "inproc", "--workers", "1", "--allin-ev", "--run-dir", "{tmp}/run",
               "--quiet", "--json", "{tmp}/played.json"),
              read_match("played.json"),
              note="in process, 3 units x 2 seatings x 200 hands per pair, all-in EV"),
        Check("match-played-holdem",
              ("acpc-match", "--game", HOLDEM, *HOLDEM_VS, "--hands", "100", "--matches", "2",
               "--seed", "5", "--transport", "inproc", "--workers", "1", "--allin-ev",
               "--run-dir", "{tmp}/run", "--quiet", "--json", "{tmp}/played.json"),
              read_match("played.json"),
              note="in process, 2 units x 2 seatings x 100 hands per pair, all-in EV"),
        Check("log-allin-ev", ("acpc-log", "allin-ev", "leduc.nolimit.2p.game", "{log}"),
              from_stdout, prepare=_match_log,
              note="{log}: the log of a 300-hand in-process no-limit Leduc match, fcpa "
              "against builtin:random, seed 9"),
        Check("lbr-exact-leduc",
              ("acpc-strategy", "lbr", FCPA, "--mappings", "all", "--purify", "none,full",
               "--json", "{tmp}/lbr.json"),
              from_json("lbr.json")),
        Check("lbr-sampled-holdem",
              ("acpc-strategy", "lbr", "{data:holdem.nolimit.2p}", "--hands", "40", "--seed",
               "1", "--workers", "1", "--progress", "1000", "--out", "{tmp}/lbr.json"),
              from_json("lbr.json"), note="reduced: 40 hands"),
        Check("lbr-sampled-leduc",
              ("acpc-strategy", "lbr", FCHPA, "--sampled", "--hands", "400", "--seed", "3",
               "--mappings", "rand-pshar", "--purify", "none", "--progress", "1000",
               "--out", "{tmp}/lbr.json"),
              from_json("lbr.json"), note="400 hands"),
    ]
    return out


# --------------------------------------------------------------------------- record


@dataclass
class Result:
    name: str
    command: list[str]
    sha256: str | None
    values: dict[str, Any]
    seconds: float
    note: str = ""
    unstable: str = ""
    error: str = ""
    normalised: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "command": shlex.join(self.command),
                             "command_normalised": self.normalised,
                             "sha256": self.sha256, "values": self.values,
                             "seconds": round(self.seconds, 1)}
        for key in ("note", "unstable", "error"):
            if getattr(self, key):
                d[key] = getattr(self, key)
        d.update(self.extra)
        return d


def run_check(check: Check, base: Path) -> Result:
    tmp = Path(tempfile.mkdtemp(prefix=f"{check.name}-", dir=base))
    run = Run(tmp, Paths(tmp))
    start = time.perf_counter()
    argv: list[str] = []
    try:
        names = check.prepare(tmp) if check.prepare else {}
        argv = expand(check.argv, tmp, names)
        if not argv[0].startswith("("):
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=check.timeout,
                                  cwd=tmp, check=False)
            run.stdout, run.stderr = proc.stdout, proc.stderr
            if proc.returncode != 0:
                tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
                raise RuntimeError(f"exit {proc.returncode}: {tail}")
        data, values = check.read(run)
        if check.volatile:
            keys = {key for key, _ in check.volatile}
            data = drop_keys(data, keys)
            values = {k: v for k, v in values.items()
                      if not any(k == key or k.endswith("." + key) for key in keys)}
    except Exception as exc:  # a failed check is recorded, the others still run
        return Result(check.name, argv, None, {}, time.perf_counter() - start, check.note,
                      check.unstable, error=f"{type(exc).__name__}: {exc}",
                      normalised=run.paths(shlex.join(argv)))
    text = canonical(data)
    digest = None if check.unstable else sha256_text(text)
    result = Result(check.name, argv, digest, values, time.perf_counter() - start, check.note,
                    check.unstable, normalised=run.paths(shlex.join(argv)))
    if len(text) <= MAX_KEPT:
        result.extra["output"] = data
    if check.volatile:
        result.extra["not_compared"] = {key: why for key, why in check.volatile}
    return result


def _write(out: Path, results: dict[str, Any], seconds: float, *, complete: bool) -> None:
    """Write the record (after every check, so an interrupted run keeps what is done)."""
    doc = {"format": FORMAT, "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "python": sys.version.split()[0], "seconds": round(seconds, 1),
           "complete": complete, "checks": results}
    tmp = out.with_name(out.name + ".part")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(out)


def record(out: Path, only: list[str], twice: bool) -> int:
    known = {c.name: c for c in checks()}
    unknown = [n for n in only if n not in known]
    if unknown:
        print(f"same_numbers: error: --only: expected check names (see --list), got "
              f"{unknown!r}", file=sys.stderr)
        return 2
    selected = [known[n] for n in only] if only else list(known.values())
    results: dict[str, Any] = {}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="same-numbers-") as base:
        for check in selected:
            result = run_check(check, Path(base))
            if twice and result.sha256 is not None:
                again = run_check(check, Path(base))
                result.extra["deterministic"] = again.sha256 == result.sha256
                if again.sha256 != result.sha256:
                    result.unstable = "differs between two runs: " + "; ".join(
                        diff_values(result.values, again.values)[:5])
                    result.sha256 = None
            results[check.name] = result.to_json()
            _write(out, results, time.perf_counter() - start, complete=False)
            state = ("ERROR " + result.error) if result.error else (
                "unstable: not hashed" if result.unstable else (result.sha256 or "")[:16])
            print(f"{check.name:38s} {result.seconds:7.1f} s  {state}", flush=True)
    total = time.perf_counter() - start
    _write(out, results, total, complete=True)
    errors = sum(1 for r in results.values() if "error" in r)
    print(f"same_numbers: {len(results)} checks in {total:.0f} s, {errors} failed; wrote {out}")
    return 1 if errors else 0


# --------------------------------------------------------------------------- compare


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b) and type(a) is type(b)


def diff_values(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One line per key whose value differs, is missing or is new."""
    lines = []
    for key in sorted(set(before) | set(after)):
        if key not in after:
            lines.append(f"{key}: {before[key]!r} -> (missing)")
        elif key not in before:
            lines.append(f"{key}: (missing) -> {after[key]!r}")
        elif not _same(before[key], after[key]):
            b, a = before[key], after[key]
            extra = ""
            if isinstance(b, int | float) and isinstance(a, int | float) and b != 0:
                extra = f" (relative {abs(a - b) / abs(b):.2e})"
            lines.append(f"{key}: {b!r} -> {a!r}{extra}")
    return lines


def flatten(obj: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of ``obj`` by its path (``a.b[3]``)."""
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out.update(flatten(v, f"{path}.{k}" if path else str(k)))
        return out
    if isinstance(obj, list):
        out = {}
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{path}[{i}]"))
        return out
    return {path: obj}


def compare_records(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Every difference between two records, one line each (empty: identical). A check in
    one record only, an error, a hash or a readable value that differs is a difference; an
    unstable check (not deterministic) is never compared."""
    lines = []
    b_checks, a_checks = before.get("checks", {}), after.get("checks", {})
    for name in sorted(set(b_checks) | set(a_checks)):
        if name not in a_checks:
            lines.append(f"{name}: only in the first record")
            continue
        if name not in b_checks:
            lines.append(f"{name}: only in the second record")
            continue
        b, a = b_checks[name], a_checks[name]
        if b.get("unstable") or a.get("unstable"):
            continue
        for side, rec in (("first", b), ("second", a)):
            if rec.get("error"):
                lines.append(f"{name}: failed in the {side} record: {rec['error']}")
        if b.get("error") or a.get("error"):
            continue
        value_lines = [f"{name}: {line}" for line in diff_values(b.get("values", {}),
                                                                 a.get("values", {}))]
        lines.extend(value_lines)
        if b.get("sha256") != a.get("sha256") and not value_lines:
            where = "the readable values agree"
            if "output" in b and "output" in a:
                found = diff_values(flatten(b["output"]), flatten(a["output"]))
                lines.extend(f"{name}: output {line}" for line in found[:MAX_DIFF_LINES])
                if len(found) > MAX_DIFF_LINES:
                    where += f"; {len(found) - MAX_DIFF_LINES} more output differences"
            lines.append(f"{name}: sha256 {b.get('sha256')} -> {a.get('sha256')} ({where})")
    return lines


def unstable_checks(record_: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for name, rec in sorted(record_.get("checks", {}).items()):
        if rec.get("unstable"):
            yield name, rec["unstable"]


def compare(before_path: Path, after_path: Path) -> int:
    records = []
    for path in (before_path, after_path):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"same_numbers: error: {path}: expected a record written by "
                  f"'same_numbers.py record', got {exc}", file=sys.stderr)
            return 2
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            print(f"same_numbers: error: {path}: expected format {FORMAT!r}, got "
                  f"{doc.get('format') if isinstance(doc, dict) else type(doc).__name__!r}",
                  file=sys.stderr)
            return 2
        if doc.get("complete") is False:
            print(f"note: {path}: an interrupted record (only the checks it finished)",
                  file=sys.stderr)
        records.append(doc)
    lines = compare_records(*records)
    for line in lines:
        print(line)
    for name, rec in sorted(records[0].get("checks", {}).items()):
        other = records[1].get("checks", {}).get(name)
        if other and other.get("command_normalised") != rec.get("command_normalised"):
            print(f"note: {name}: the command differs: {rec.get('command_normalised')!r} -> "
                  f"{other.get('command_normalised')!r}", file=sys.stderr)
    skipped = dict(unstable_checks(records[0])) | dict(unstable_checks(records[1]))
    for name, why in sorted(skipped.items()):
        print(f"note: {name}: not compared (not deterministic: {why})", file=sys.stderr)
    total = len(set(records[0].get("checks", {})) | set(records[1].get("checks", {})))
    print(f"same_numbers: {len(lines)} difference(s) over {total} checks", file=sys.stderr)
    return 1 if lines else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="same_numbers", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="run the checks and write their numbers")
    r.add_argument("--out", type=Path, help="the record to write (JSON)")
    r.add_argument("--only", nargs="+", default=[], metavar="NAME", help="only these checks")
    r.add_argument("--list", action="store_true", help="list the checks and their commands")
    r.add_argument("--twice", action="store_true",
                   help="run every check twice and mark those whose hash changes")
    c = sub.add_parser("compare", help="print every difference between two records")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "compare":
        return compare(args.before, args.after)
    if args.list:
        for check in checks():
            if args.only and check.name not in args.only:
                continue
            command = shlex.join(check.argv)
            note = f"  [{check.note}]" if check.note else ""
            print(f"{check.name}: {command}{note}")
        return 0
    if args.out is None:
        p.error("record: expected --out FILE.json (or --list)")
    return record(args.out, args.only, args.twice)


if __name__ == "__main__":
    sys.exit(main())

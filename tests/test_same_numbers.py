"""The compare logic of ``scripts/same_numbers.py`` (pure functions, tiny records)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "same_numbers.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("same_numbers_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


sn = _load()


def _record(**values: Any) -> dict[str, Any]:
    data = {"exploitability": 0.25, "checksum": "5bc5674ed3c35feb", **values}
    return {"format": sn.FORMAT, "checks": {"exploit-x": {
        "name": "exploit-x", "command": "acpc-strategy exploit x.strat",
        "sha256": sn.sha256_text(sn.canonical(data)), "values": data}}}


def test_identical_records_have_no_difference() -> None:
    assert sn.compare_records(_record(), _record()) == []


def test_a_changed_value_is_one_line_naming_check_key_and_both_values() -> None:
    lines = sn.compare_records(_record(), _record(exploitability=0.5))
    assert len(lines) == 1
    assert lines[0].startswith("exploit-x: exploitability: 0.25 -> 0.5")


def test_a_missing_check_and_an_error_are_differences() -> None:
    after = _record()
    after["checks"]["lbr-y"] = {"name": "lbr-y", "sha256": None, "values": {},
                                "error": "RuntimeError: exit 1"}
    assert sn.compare_records(_record(), after) == ["lbr-y: only in the second record"]
    before = json.loads(json.dumps(after))
    before["checks"]["lbr-y"]["error"] = ""
    assert sn.compare_records(before, after) == [
        "lbr-y: failed in the second record: RuntimeError: exit 1"]


def test_a_changed_hash_with_equal_values_is_reported() -> None:
    after = _record()
    after["checks"]["exploit-x"]["sha256"] = "0" * 64
    (line,) = sn.compare_records(_record(), after)
    assert line.startswith("exploit-x: sha256 ") and "readable values agree" in line


def test_an_unstable_check_is_not_compared() -> None:
    before, after = _record(), _record(exploitability=0.5)
    after["checks"]["exploit-x"]["unstable"] = "runs on solver time"
    assert sn.compare_records(before, after) == []


def test_normalising_drops_timings_and_paths() -> None:
    paths = sn.Paths(Path("/tmp/run-1"))
    cleaned = sn.clean_json({"mean": 1.5, "cpu_seconds": 3.2, "seconds": 9,
                             "file": "/tmp/run-1/x.strat", "time_guard": 0}, paths)
    assert cleaned == {"mean": 1.5, "file": "<tmp>/x.strat", "time_guard": 0}
    assert sn.clean_text("NashConv 0.5 chips/hand\nwrote x (12 iterations in 1.2 s)\n",
                         paths) == ["NashConv 0.5 chips/hand"]


def test_a_changed_hash_names_the_output_key_when_the_output_is_kept() -> None:
    before, after = _record(), _record()
    before["checks"]["exploit-x"]["output"] = {"meta": {"solver": "cfr+ (royal_cfr)"}}
    after["checks"]["exploit-x"]["output"] = {"meta": {"solver": "cfr+ (royal)"}}
    after["checks"]["exploit-x"]["sha256"] = "0" * 64
    lines = sn.compare_records(before, after)
    assert lines[0] == "exploit-x: output meta.solver: 'cfr+ (royal_cfr)' -> 'cfr+ (royal)'"
    assert len(lines) == 2 and lines[1].startswith("exploit-x: sha256 ")

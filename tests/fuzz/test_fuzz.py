"""Mutation fuzzing of every file format the product reads (issue 28, item 8): a few hundred
seeded mutants through the real commands, in a worker with a memory cap; each must be
accepted or rejected with one ``prog: error:`` line, never a traceback, hang or
``MemoryError`` (:mod:`tests.fuzz.harness`). The long run is ``scripts/fuzz_files.py``."""

from __future__ import annotations

import random
from pathlib import Path

from tests.fuzz import mutate
from tests.fuzz.formats import FORMATS, Seed, build_seeds, make_mutant, mutant_id
from tests.fuzz.harness import ACCEPTED, FAILURE, REJECTED, Report, classify, run
from tests.fuzz.mutate import encode_json, encode_msgpack

SEED = 1
MUTANTS = 200
"""20 per format."""


def test_mutants_of_every_format_are_accepted_or_rejected_in_one_line() -> None:
    report: Report = run(SEED, MUTANTS, FORMATS, limit=5.0)
    print(report.describe())
    print(report.by_format())
    assert not report.interrupted
    assert report.counts()["mutants"] == MUTANTS
    # every seed is read without a failure (else the mutants around it prove little)
    assert [s["id"] for s in report.seeds if s["verdict"] == FAILURE] == []
    for fmt, counts in report.by_format().items():
        assert counts["mutants"] == MUTANTS // len(FORMATS), fmt
    assert report.failures() == [], report.describe()


def test_mutants_are_reproducible_from_their_id(tmp_path: Path) -> None:
    """Same id, same bytes; another id, other bytes (the long run's ids reproduce)."""
    seeds = build_seeds(tmp_path / "a")
    again = build_seeds(tmp_path / "b")
    assert seeds == again
    for seed in seeds:
        assert (tmp_path / "a" / seed.file).read_bytes() == (tmp_path / "b" / seed.file
                                                              ).read_bytes(), seed.name
    for fmt in FORMATS:
        for k in range(5):
            one = make_mutant(seeds, tmp_path / "a", mutant_id(fmt, 7, k))
            two = make_mutant(again, tmp_path / "b", mutant_id(fmt, 7, k))
            assert (one.mutation, one.data) == (two.mutation, two.data)
        datas = {make_mutant(seeds, tmp_path / "a", mutant_id(fmt, 7, k)).data
                 for k in range(5)}
        assert len(datas) > 1, fmt


def test_the_oracle_classifies() -> None:
    """One error line rejects; a traceback, an escaped exception, several or no error lines,
    a long echo or another exit status fail."""
    plain = Seed("log", "x", "x", "acpc-log", (), "text")
    verify = Seed("log", "x", "x", "acpc-log", (), "text", mismatch_ok=True)
    one = "usage: acpc-log ...\nacpc-log: error: expected a log, got 'x'\n"
    assert classify(0, None, "", plain, 1)[0] == ACCEPTED
    assert classify(1, None, one, plain, 1)[0] == REJECTED
    assert classify(2, None, one, plain, 1)[0] == REJECTED
    assert classify(1, None, one + one, plain, 1)[0] == FAILURE
    assert classify(1, None, "", plain, 1)[0] == FAILURE
    assert classify(3, None, one, plain, 1)[0] == FAILURE
    assert classify(1, None, "acpc-log: error: " + "x" * 2000, plain, 1)[0] == FAILURE
    tb = "Traceback (most recent call last):\n  File 'x'\nValueError: x\n"
    assert classify(1, None, tb + one, plain, 1)[0] == FAILURE
    assert classify(None, ValueError("x"), "", plain, 1)[1].startswith("ValueError")
    mismatch = "/t/x.log:4: expected hand 3\n  expected: 'a'\n  got:      'b'\n"
    assert classify(1, None, mismatch, verify, 1)[0] == REJECTED
    assert classify(1, None, mismatch, plain, 1)[0] == FAILURE
    echo = mismatch.replace("'b'", repr("b" * 2000))
    assert classify(1, None, echo, verify, 1)[0] == FAILURE


def test_encoders_splice_what_the_encoders_cannot_write() -> None:
    """The deep-nesting and huge-number sentinels become 3,000 nested arrays and a
    5,000-digit number in the bytes the commands read."""
    rng = random.Random(0)
    text = encode_json({"a": mutate._DEEP_TOKEN, "b": mutate._BIG_TOKEN}, rng)
    assert "[" * mutate.DEEP + "]" * mutate.DEEP in text
    assert any(len(part) == mutate.DIGITS for part in text.replace("}", " ").split())
    packed = encode_msgpack({"a": mutate._DEEP_TOKEN})
    assert b"\x91" * mutate.DEEP + b"\xc0" in packed

"""Mutation fuzzing of every file format the product reads, at length (docs/reference/limits.md,
"Fuzzing the file formats"; the harness is :mod:`tests.fuzz`, the in-suite run
``tests/fuzz/test_fuzz.py``).

    python scripts/fuzz_files.py --mutants 5000 --seed 1 [--formats strategy,game,...]
        [--big] [--limit S] [--memory-gb G] [--json OUT] [--no-progress]
    python scripts/fuzz_files.py --repro strategy:1:17 [--keep DIR]

Prints progress, then the counts and every failing cause with reproducible mutant ids
(``format:seed:k``); ``--json`` writes the summary (mutants, accepted, rejected, failures by
format and cause). Ctrl-C stops and keeps what is done. Exit status 0 iff no failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fuzz.formats import FORMATS  # noqa: E402
from tests.fuzz.harness import DEFAULT_LIMIT, DEFAULT_MEMORY, GB, Report, reproduce, run  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mutants", type=int, default=1000, help="mutants to run (default 1000)")
    p.add_argument("--seed", type=int, default=1, help="seed of the mutants (default 1)")
    p.add_argument("--formats", default=",".join(FORMATS),
                   help=f"comma-separated, among {', '.join(FORMATS)} (default: all)")
    p.add_argument("--big", action="store_true",
                   help="also the hold'em strategy files as seeds (slower mutants)")
    p.add_argument("--limit", type=float, default=DEFAULT_LIMIT,
                   help=f"seconds per mutant before it counts as a hang (default "
                        f"{DEFAULT_LIMIT:g})")
    p.add_argument("--memory-gb", type=float, default=DEFAULT_MEMORY / GB,
                   help=f"the worker's address-space cap in GB (default {DEFAULT_MEMORY / GB:g})")
    p.add_argument("--json", type=Path, default=None, help="write the summary as JSON")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--repro", metavar="ID", help="run one mutant (format:seed:k) here and "
                   "show its command, verdict and output")
    p.add_argument("--keep", type=Path, default=None, help="with --repro: write the mutant "
                   "into this directory")
    args = p.parse_args(argv)
    if args.repro:
        print(reproduce(args.repro, big=args.big, limit=args.limit, keep=args.keep))
        return 0
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown or not formats or args.mutants < 1:
        p.error(f"expected --mutants >= 1 and formats among {', '.join(FORMATS)}, got "
                f"{args.mutants} and {', '.join(unknown) or 'none'}")

    def progress(report: Report) -> None:
        n = len(report.results)
        if not args.no_progress and (n % 50 == 0 or n == report.planned):
            print(f"\r{report.line()}", end="", file=sys.stderr, flush=True)

    report = run(args.seed, args.mutants, formats, big=args.big, limit=args.limit,
                 memory=int(args.memory_gb * GB), progress=progress)
    if not args.no_progress:
        print(file=sys.stderr)
    print(report.describe())
    if args.json is not None:
        args.json.write_text(json.dumps(report.to_json(), indent=1) + "\n")
    return 1 if report.failures() or report.interrupted else 0


if __name__ == "__main__":
    sys.exit(main())

"""``acpc-strategy cards-pa``: build a potential-aware hold'em card abstraction.

Writes the ``holdem-pa`` card spec (:mod:`agent.abstraction.holdem_pa`) as JSON or msgpack
(by the suffix of ``--out``), atomically (a temporary file renamed at the end, so Ctrl-C
leaves no partial file). Progress lines go to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import msgpack

from agent.acpc.errors import UsageError
from strategies.commands.defaults import PROG


def parse_clusters(text: str) -> list[int]:
    """``"169,50,50,50"`` -> ``[169, 50, 50, 50]``."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 4:
        raise UsageError(f"expected --buckets as 4 comma-separated ints like 169,50,50,50, "
                         f"got {text!r}")
    return values


def write_spec(spec: dict[str, Any], out: str) -> int:
    """Write ``spec`` to ``out`` (``.json`` or ``.msgpack``) atomically; returns its size."""
    path = Path(out)
    tmp = path.with_name(path.name + ".tmp")
    if path.suffix == ".json":
        tmp.write_text(json.dumps(spec), encoding="utf-8")
    else:
        tmp.write_bytes(msgpack.packb(spec, use_bin_type=True))
    os.replace(tmp, path)
    return path.stat().st_size


def read_spec(path: str | Path) -> dict[str, Any]:
    """Read a spec written by :func:`write_spec`."""
    p = Path(path)
    data: Any = (json.loads(p.read_text(encoding="utf-8")) if p.suffix == ".json"
                 else msgpack.unpackb(p.read_bytes(), raw=False))
    if not isinstance(data, dict):
        raise UsageError(f"expected a card spec (a map) in {str(p)!r}, got {type(data).__name__}")
    return data


def cards_pa(args: argparse.Namespace) -> int:
    """Run ``acpc-strategy cards-pa``."""
    from strategies.cards.potential import build, build_cards

    clusters = parse_clusters(args.buckets)
    if Path(args.out).suffix not in (".json", ".msgpack"):
        raise UsageError(f"expected --out to end in .json or .msgpack, got {args.out!r}")

    def say(msg: str) -> None:
        if not args.no_progress:
            print(f"{PROG} cards-pa: {msg}", file=sys.stderr, flush=True)

    start = time.perf_counter()
    result = build(clusters, bins=args.bins, samples=args.samples, seed=args.seed,
                   workers=args.workers, progress=say)
    cards = build_cards(result, args.recall)
    size = write_spec(cards.spec, args.out)
    steps = ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items())
    print(f"{PROG} cards-pa: clusters {list(result.clusters)}, recall {args.recall}, buckets "
          f"{list(cards.buckets)}; {time.perf_counter() - start:.1f} s ({steps}); wrote "
          f"{args.out} ({size:,} bytes)")
    return 0

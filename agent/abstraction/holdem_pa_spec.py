"""The potential-aware card spec (:mod:`agent.abstraction.holdem_pa`) checked and decoded
without numba.

:func:`check_pa_spec` validates a strategy file's ``holdem-pa`` spec completely (keys,
cluster counts, recall, bins, the preflop table, the flop table's shape, checksum and
values, the turn centroids, the river thresholds) and returns the parts
:class:`~agent.abstraction.holdem_pa.PotentialAwareCards` is built from; :func:`check_pa_parts`
is the same check on the parts themselves. An agent that defers its kernels
(:mod:`agent.abstraction.deferred`) runs it before the handshake, so a bad file is refused
with a one-line error before play starts, and answers preflop from :func:`preflop_cluster`
while numba loads in the background.

Imports the stdlib, numpy and :mod:`agent.abstraction.holdem_spec`; never numba.
"""

from __future__ import annotations

import base64
import hashlib
import math
import zlib
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from agent.abstraction.holdem_spec import NUM_PREFLOP_CLASSES, check_holdem_game, preflop_class
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.acpc.limits import excerpt

__all__ = [
    "DEFAULT_BINS",
    "NUM_FLOPS",
    "NUM_PAIRS",
    "RECALLS",
    "buckets_for",
    "check_clusters",
    "check_pa_parts",
    "check_pa_spec",
    "combine_recall",
    "decode_table",
    "encode_table",
    "int_list",
    "preflop_cluster",
]

DEFAULT_BINS: Final = 50
RECALLS: Final = ("imperfect", "perfect")
NUM_FLOPS: Final = 1755
"""Suit-canonical 3-card boards of the 52-card deck (rows of the flop table)."""
NUM_PAIRS: Final = 52 * 51 // 2
"""Hole pairs (columns of the flop table)."""
SPEC_KEYS: Final = frozenset({
    "kind", "buckets", "clusters", "recall", "bins", "samples", "seed", "preflop", "flop",
    "turn_sums", "turn_weights", "river_thresholds",
})
_REQUIRED: Final = ("buckets", "clusters", "recall", "bins", "preflop", "flop", "turn_sums",
                    "turn_weights", "river_thresholds")


def combine_recall(clusters: Sequence[int], counts: Sequence[int]) -> int:
    """Perfect-recall bucket: the clusters so far as one mixed-radix integer."""
    acc = 0
    for c, n in zip(clusters, counts, strict=False):
        acc = acc * n + c
    return acc


def preflop_cluster(preflop: npt.NDArray[np.int64], hole: Sequence[int]) -> int:
    """Round-0 bucket of ``hole`` under a preflop table (either recall: a perfect-recall
    bucket of one round is its cluster).

    Raises:
        ValueError: unless ``hole`` is two distinct cards in 0..51.
    """
    return int(preflop[preflop_class(hole)])


def encode_table(array: npt.NDArray[Any]) -> dict[str, Any]:
    """A table as a JSON-able dict (dtype, shape, sha256 of the raw bytes, zlib + base64)."""
    raw = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
    return {
        "dtype": str(array.dtype),
        "shape": list(array.shape),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "zlib_b64": base64.b64encode(zlib.compress(raw, 9)).decode("ascii"),
    }


def decode_table(spec: Any, where: str, shape: tuple[int, ...], limit: int) -> npt.NDArray[Any]:
    """Validate and decode :func:`encode_table`'s dict: shape, dtype, checksum, values < limit.

    Raises:
        AbstractionError: naming ``where`` and what differs.
    """
    if not isinstance(spec, dict) or set(spec) != {"dtype", "shape", "sha256", "zlib_b64"}:
        raise AbstractionError(
            f"expected {where} to be a table {{dtype, shape, sha256, zlib_b64}}, got "
            f"{excerpt(spec)}"
        )
    if spec["dtype"] not in ("uint8", "uint16"):
        raise AbstractionError(f"expected {where} dtype 'uint8' or 'uint16', got "
                               f"{excerpt(spec['dtype'])}")
    if not isinstance(spec["shape"], list | tuple) or list(spec["shape"]) != list(shape):
        raise AbstractionError(f"expected {where} shape {list(shape)}, got "
                               f"{excerpt(spec['shape'])}")
    if not isinstance(spec["sha256"], str) or not isinstance(spec["zlib_b64"], str | bytes):
        raise AbstractionError(f"expected {where} sha256 and zlib_b64 to be strings")
    dtype = np.dtype(spec["dtype"]).newbyteorder("<")
    size = math.prod(shape) * dtype.itemsize
    # the declared shape bounds the output: a stream that inflates further is refused
    # before it is inflated (a zlib bomb costs at most this much memory)
    try:
        inflate = zlib.decompressobj()
        raw = inflate.decompress(base64.b64decode(spec["zlib_b64"], validate=True), size + 1)
    except (ValueError, TypeError, zlib.error) as exc:
        raise AbstractionError(f"expected {where} zlib_b64 to decode, got {excerpt(exc)}") from None
    if len(raw) != size or inflate.unconsumed_tail or not inflate.eof:
        raise AbstractionError(
            f"expected {where} to hold {math.prod(shape)} {spec['dtype']} values "
            f"({size} bytes), the data {'inflates to more' if len(raw) > size else 'is shorter'}"
        )
    digest = hashlib.sha256(raw).hexdigest()
    if digest != spec["sha256"]:
        raise AbstractionError(
            f"expected {where} sha256 {excerpt(spec['sha256'])}, the data has {digest!r}"
        )
    array = np.frombuffer(raw, dtype).reshape(shape).astype(np.dtype(spec["dtype"]))
    if array.size and int(array.max()) >= limit:
        raise AbstractionError(
            f"expected {where} values below {limit}, got {int(array.max())!r}"
        )
    return array


def int_list(value: Any, where: str, length: int, lo: int, hi: int) -> list[int]:
    """``value`` (a list, tuple or array) as ``length`` ints in ``lo..hi`` (bools refused).

    Raises:
        AbstractionError: naming ``where``.
    """
    if (
        not isinstance(value, list | tuple | np.ndarray)
        or len(value) != length
        or any(isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer)
               or not lo <= v <= hi for v in value)
    ):
        raise AbstractionError(
            f"expected {where} to be {length} ints in {lo}..{hi}, got {excerpt(value)}"
        )
    return [int(v) for v in value]


def check_clusters(clusters: Any) -> tuple[int, int, int, int]:
    """Validate the cluster counts ``[n0, n1, n2, n3]`` (n0 <= 169, others in 1..65535)."""
    if (
        not isinstance(clusters, list | tuple)
        or len(clusters) != 4
        or any(isinstance(c, bool) or not isinstance(c, int) for c in clusters)
        or not 1 <= clusters[0] <= NUM_PREFLOP_CLASSES
        or any(not 1 <= c <= 65535 for c in clusters[1:])
    ):
        raise AbstractionError(
            f"expected 4 cluster counts [n0 <= 169, n1, n2, n3 <= 65535] (positive ints), "
            f"got {excerpt(clusters)}"
        )
    return (int(clusters[0]), int(clusters[1]), int(clusters[2]), int(clusters[3]))


def buckets_for(clusters: Sequence[int], recall: str) -> tuple[int, ...]:
    """Buckets per round for cluster counts and a recall (module docstring of
    :mod:`agent.abstraction.holdem_pa`)."""
    if recall == "imperfect":
        return tuple(int(c) for c in clusters)
    out = []
    acc = 1
    for c in clusters:
        acc *= int(c)
        out.append(acc)
    return tuple(out)


def check_pa_parts(
    *,
    clusters: Sequence[int],
    recall: str,
    bins: int,
    preflop: Sequence[int],
    flop: npt.NDArray[Any],
    turn_sums: npt.NDArray[np.int64],
    turn_weights: npt.NDArray[np.int64],
    river_thresholds: Sequence[int],
) -> dict[str, Any]:
    """The parts of a potential-aware abstraction, validated and normalized (int64 arrays,
    a contiguous flop table): the keyword arguments of
    :class:`~agent.abstraction.holdem_pa.PotentialAwareCards` without the optional ones.

    Raises:
        AbstractionError: naming the bad part.
    """
    counts = check_clusters(list(clusters))
    if recall not in RECALLS:
        raise AbstractionError(f"expected recall 'imperfect' or 'perfect', got {excerpt(recall)}")
    if isinstance(bins, bool) or not isinstance(bins, int) or not 2 <= bins <= 1981:
        raise AbstractionError(f"expected bins to be an int in 2..1981, got {excerpt(bins)}")
    n0, n1, n2, n3 = counts
    pre = np.array(int_list(list(preflop), "preflop", NUM_PREFLOP_CLASSES, 0, n0 - 1), np.int64)
    shape = (NUM_FLOPS, NUM_PAIRS)
    if flop.shape != shape or flop.dtype not in (np.uint8, np.uint16):
        raise AbstractionError(f"expected a flop table of shape {shape} (uint8/uint16), got "
                               f"{flop.shape!r} {flop.dtype}")
    if flop.size and int(flop.max()) >= n1:
        raise AbstractionError(f"expected flop clusters below {n1}, got {int(flop.max())}")
    sums = np.asarray(turn_sums)
    weights = np.asarray(turn_weights)
    if sums.shape != (n2, bins - 1) or weights.shape != (n2,):
        raise AbstractionError(
            f"expected turn centroids of shape ({n2}, {bins - 1}) and ({n2},), got "
            f"{sums.shape!r} and {weights.shape!r}"
        )
    if (weights < 1).any() or (sums < 0).any() or (sums > 46 * weights[:, None]).any():
        raise AbstractionError(
            "expected turn centroid weights >= 1 and sums in 0..46 x weight, got "
            f"weights {excerpt(weights.tolist())}"
        )
    thresholds = int_list(list(river_thresholds), "river_thresholds", n3 - 1, 0, 1980)
    if thresholds != sorted(thresholds):
        raise AbstractionError(f"expected sorted river_thresholds, got {excerpt(thresholds)}")
    return {
        "clusters": counts,
        "recall": recall,
        "bins": bins,
        "preflop": pre,
        "flop": np.ascontiguousarray(flop),
        "turn_sums": np.ascontiguousarray(sums, dtype=np.int64),
        "turn_weights": np.ascontiguousarray(weights, dtype=np.int64),
        "river_thresholds": np.array(thresholds, np.int64),
    }


def check_pa_spec(game: Game, spec: Any) -> dict[str, Any]:
    """A strategy file's ``holdem-pa`` spec for ``game``, validated completely: the keyword
    arguments of :class:`~agent.abstraction.holdem_pa.PotentialAwareCards` (``samples`` and
    ``seed`` included).

    Raises:
        AbstractionError: if the game is not hold'em or the spec is not a valid
            ``holdem-pa`` spec (naming the bad key).
    """
    check_holdem_game(game)
    if not isinstance(spec, dict):
        raise AbstractionError(f"expected a holdem-pa card spec (a dict), got {excerpt(spec)}")
    if spec.get("kind") != "holdem-pa":
        raise AbstractionError(
            f"expected card spec kind 'holdem-pa', got {excerpt(spec.get('kind'))}"
        )
    unknown = sorted(str(k) for k in set(spec) - SPEC_KEYS)
    if unknown:
        raise AbstractionError(
            f"expected holdem-pa card spec keys among {sorted(SPEC_KEYS)}, got unknown "
            f"{excerpt(unknown)}"
        )
    for key in _REQUIRED:
        if key not in spec:
            raise AbstractionError(f"expected holdem-pa card spec key {key!r}, it is missing")
    clusters = check_clusters(spec["clusters"])
    bins = spec["bins"]
    if isinstance(bins, bool) or not isinstance(bins, int) or not 2 <= bins <= 1981:
        raise AbstractionError(f"expected holdem-pa bins to be an int in 2..1981, got "
                               f"{excerpt(bins)}")
    n2 = clusters[2]
    sums = int_list(spec["turn_sums"], "turn_sums", n2 * (bins - 1), 0, 2**53)
    weights = int_list(spec["turn_weights"], "turn_weights", n2, 1, 2**53)
    flop = decode_table(spec["flop"], "holdem-pa flop table", (NUM_FLOPS, NUM_PAIRS),
                        clusters[1])
    parts = check_pa_parts(
        clusters=clusters,
        recall=spec["recall"],
        bins=bins,
        preflop=spec["preflop"],
        flop=flop,
        turn_sums=np.array(sums, np.int64).reshape(n2, bins - 1),
        turn_weights=np.array(weights, np.int64),
        river_thresholds=spec["river_thresholds"],
    )
    expected = list(buckets_for(clusters, parts["recall"]))
    buckets = spec["buckets"]
    if not isinstance(buckets, list | tuple) or list(buckets) != expected:
        raise AbstractionError(
            f"expected buckets {expected} (holdem-pa clusters {list(clusters)}, recall "
            f"{parts['recall']!r}), got {excerpt(buckets)}"
        )
    return {**parts, "samples": spec.get("samples"), "seed": spec.get("seed")}

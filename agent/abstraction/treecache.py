"""The abstract betting tree stored beside the strategy files, read back and validated instead
of rebuilt.

Enumerating the canonical tree (:func:`agent.abstraction.actions.build_tree`) runs the rules
engine at every node: about half a second for the bundled hold'em abstraction (35,610
nodes), on every load. :func:`load_tree` instead reads the tree's *shape* from a cache file
and builds each node only when it is first used, from its parent, with the same rules
engine calls ``build_tree`` makes.

Cache file: ``<cache_dir>/trees/<key>.npz`` (:func:`agent.fileio.cache_dir`), where the key
is the sha256 of the tree format, the game's fingerprint and the betting abstraction's JSON
(:meth:`~agent.abstraction.actions.BettingAbstraction.to_json`). Arrays (read with
``allow_pickle=False``): ``parent`` (int32, -1 for the root), ``size`` (int32, nodes in the
subtree), ``round`` (int8), and ``meta``, the UTF-8 JSON of the key's fields, the node count
and the sha256 of the three arrays' bytes.

Validation when read (vectorised, a few milliseconds): the key's fields equal the wanted
ones, the digest matches, and the arrays describe a tree numbered in pre-order (the root
first, each node's children in increasing id, the first child right after its parent, each
next child right after its previous sibling's subtree, every size one more than its
children's sizes, rounds never going down) with at most ``limit`` nodes (the cap
:func:`~agent.abstraction.actions.build_tree` enforces). Validation when a node is built:
its actions come from :func:`~agent.abstraction.actions.node_actions` (the rules engine, not
the cache); their number must be the number of children the shape gives and the node's round
the stored one, else :class:`~agent.acpc.errors.AbstractionError`. So the content of every
node the agent plays is exactly what ``build_tree`` gives; the cache only saves the work of
enumerating the nodes it never visits. Any failure at read time means a rebuild (and a
rewritten cache file); writing is best effort (a read-only cache directory only costs the
rebuild).

Imports numpy, the stdlib, :mod:`agent.fileio` and :mod:`agent.abstraction.actions`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import (
    BettingAbstraction,
    BettingTree,
    Node,
    build_tree,
    child_node,
    max_tree_nodes,
    node_actions,
)
from agent.acpc.betting import BettingState
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.acpc.limits import excerpt
from agent.fileio import atomic_writer, cache_dir

__all__ = ["StoredNodes", "load_tree", "read_tree", "tree_cache_path", "tree_shape",
           "write_tree"]

TREE_FORMAT = 1
"""Bumped whenever :func:`~agent.abstraction.actions.build_tree` could number differently."""


def _key_fields(game: Game, abstraction: BettingAbstraction) -> dict[str, Any]:
    return {"tree_format": TREE_FORMAT, "game": game.fingerprint,
            "betting": abstraction.to_json()}


def tree_cache_path(game: Game, abstraction: BettingAbstraction) -> Path:
    """Where the tree of ``game`` and ``abstraction`` is cached."""
    text = json.dumps(_key_fields(game, abstraction), sort_keys=True, separators=(",", ":"))
    return cache_dir() / "trees" / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.npz"


def _digest(*arrays: npt.NDArray[Any]) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def tree_shape(tree: BettingTree) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int8]]:
    """``(num_actions, round)`` per node id (0 actions for a terminal node), read from the
    stored shape when the tree came from the cache, else from its nodes."""
    cached = tree.derived.get("shape")
    if isinstance(cached, tuple):
        return cached
    nodes = tree.nodes
    num_actions = np.fromiter((len(n.actions) for n in nodes), dtype=np.int32, count=len(nodes))
    rounds = np.fromiter((n.round for n in nodes), dtype=np.int8, count=len(nodes))
    for a in (num_actions, rounds):
        a.flags.writeable = False
    tree.derived["shape"] = (num_actions, rounds)
    return num_actions, rounds


def write_tree(tree: BettingTree, path: Path | None = None) -> Path:
    """Store a built tree's shape (atomically) and return the file's path.

    Raises:
        OSError: if the file cannot be written.
    """
    target = path or tree_cache_path(tree.game, tree.abstraction)
    nodes = tree.nodes
    n = len(nodes)
    parent = np.fromiter((nd.parent for nd in nodes), dtype=np.int32, count=n)
    rounds = np.fromiter((nd.round for nd in nodes), dtype=np.int8, count=n)
    size = np.ones(n, dtype=np.int64)
    for i in range(n - 1, 0, -1):  # pre-order: every child comes after its parent
        size[parent[i]] += size[i]
    size32 = size.astype(np.int32)
    meta = {**_key_fields(tree.game, tree.abstraction), "nodes": n,
            "sha256": _digest(parent, size32, rounds)}
    buf = io.BytesIO()
    np.savez(buf, parent=parent, size=size32, round=rounds,
             meta=np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8))
    with atomic_writer(target, suffix=".npz") as f:
        f.write(buf.getvalue())
    return target


def _bad(path: Path, what: str) -> AbstractionError:
    return AbstractionError(f"{path}: expected a stored abstract tree, {what}")


def read_tree(path: Path, game: Game, abstraction: BettingAbstraction,
              limit: int | None = None) -> BettingTree:
    """The tree stored at ``path`` for ``game`` and ``abstraction``, validated (module
    docstring); its nodes are built on first use. ``limit`` caps the node count (default
    :func:`~agent.abstraction.actions.max_tree_nodes`, the cap ``build_tree`` enforces).

    Raises:
        AbstractionError: if the file is not a valid stored tree of that game and
            abstraction (the message says what is wrong).
        OSError: if it cannot be read.
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in ("parent", "size", "round", "meta")}
    except (ValueError, KeyError, EOFError) as exc:
        raise _bad(path, f"got an unreadable file ({exc})") from None
    try:
        meta = json.loads(arrays["meta"].tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(path, f"got corrupt meta data ({exc})") from None
    want = _key_fields(game, abstraction)
    if not isinstance(meta, dict) or any(meta.get(k) != v for k, v in want.items()):
        raise _bad(path, f"for {want!r}, got one for {excerpt(meta, 300)}")
    parent, size, rounds = arrays["parent"], arrays["size"], arrays["round"]
    if limit is None:
        limit = max_tree_nodes()
    n = meta.get("nodes")
    if not isinstance(n, int) or not 1 <= n <= limit or any(
        a.shape != (n,) for a in (parent, size, rounds)
    ) or (parent.dtype, size.dtype, rounds.dtype) != (np.int32, np.int32, np.int8):
        raise _bad(path, f"of at most {limit} nodes with 3 arrays of that length, got "
                   f"nodes={n!r}, shapes {[a.shape for a in (parent, size, rounds)]}")
    if meta.get("sha256") != _digest(parent, size, rounds):
        raise _bad(path, "got arrays that do not match their digest (corrupt file)")
    _check_shape(path, game, parent, size, rounds)
    tree = BettingTree(game, abstraction)
    num_actions = np.bincount(parent[1:], minlength=n).astype(np.int32)
    for a in (num_actions, rounds):
        a.flags.writeable = False
    tree.derived["shape"] = (num_actions, rounds)
    tree.nodes = StoredNodes(tree, parent, size, rounds)
    return tree


def _check_shape(path: Path, game: Game, parent: npt.NDArray[np.int32],
                 size: npt.NDArray[np.int32], rounds: npt.NDArray[np.int8]) -> None:
    """Raise unless the arrays are a pre-order numbered tree (module docstring)."""
    n = parent.shape[0]
    ids = np.arange(n)
    if parent[0] != -1 or size[0] != n or (n > 1 and (
        (parent[1:] < 0).any() or (parent[1:] >= ids[1:]).any())):
        raise _bad(path, "got a root that is not node 0 of the whole tree, or a parent "
                   "numbered after its child")
    if (size < 1).any() or (size > n - ids).any():
        raise _bad(path, "got a subtree size out of range")
    sums = np.bincount(parent[1:], weights=size[1:].astype(np.float64), minlength=n)
    if not np.array_equal(sums.astype(np.int64) + 1, size.astype(np.int64)):
        raise _bad(path, "got a subtree size that is not one more than its children's")
    if n > 1:
        kids = 1 + np.argsort(parent[1:], kind="stable")
        par = parent[kids].astype(np.int64)
        first = np.ones(n - 1, dtype=bool)
        first[1:] = par[1:] != par[:-1]
        prev = np.empty(n - 1, dtype=np.int64)
        prev[0] = -1
        prev[1:] = kids[:-1]
        expected = np.where(first, par + 1, prev + size[np.maximum(prev, 0)])
        if not np.array_equal(kids, expected):
            raise _bad(path, "got a numbering that is not the depth-first pre-order")
        if (rounds[kids] < rounds[par]).any():
            raise _bad(path, "got a round that goes down from a parent to a child")
    if (rounds < 0).any() or (rounds >= game.num_rounds).any():
        raise _bad(path, f"got a round outside 0..{game.num_rounds - 1}")


class StoredNodes(Sequence[Node]):
    """The nodes of a stored tree, each built on first use from its parent (module
    docstring). Thread-safe: a node is built once."""

    def __init__(self, tree: BettingTree, parent: npt.NDArray[np.int32],
                 size: npt.NDArray[np.int32], rounds: npt.NDArray[np.int8]) -> None:
        self._tree = tree
        self._parent = parent.tolist()
        self._size = size.tolist()
        self._round = rounds.tolist()
        self._built: list[Node | None] = [None] * len(self._size)
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._built)

    @overload
    def __getitem__(self, index: int) -> Node: ...

    @overload
    def __getitem__(self, index: slice) -> list[Node]: ...

    def __getitem__(self, index: int | slice) -> Node | list[Node]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        node = self._built[index]
        return node if node is not None else self._build(index % len(self._built))

    def __iter__(self) -> Iterator[Node]:
        for i in range(len(self._built)):
            yield self[i]

    def _children(self, i: int) -> tuple[int, ...]:
        size = self._size
        end = i + size[i]
        kids = []
        c = i + 1
        while c < end:
            kids.append(c)
            c += size[c]
        return tuple(kids)

    def _build(self, i: int) -> Node:
        with self._lock:
            node = self._built[i]
            if node is not None:
                return node
            tree = self._tree
            if i == 0:
                node = Node(0, BettingState.initial(tree.game), -1, 0)
            else:
                parent = self[self._parent[i]]
                node = child_node(parent, parent.actions[parent.children.index(i)], i)
            self._fill(node)
            self._built[i] = node
            return node

    def _fill(self, node: Node) -> None:
        """Actions from the rules engine; children from the stored shape; both checked."""
        i = node.id
        kids = self._children(i)
        if node.round != self._round[i]:
            raise AbstractionError(f"stored abstract tree: node {i} is in round {node.round}, "
                                   f"the cache says {self._round[i]}")
        if node.is_terminal:
            if kids:
                raise AbstractionError(f"stored abstract tree: terminal node {i} has "
                                       f"{len(kids)} children in the cache")
            return
        node.actions = node_actions(node.state, self._tree.abstraction, node.depth,
                                    node.history)
        if len(node.actions) != len(kids):
            raise AbstractionError(f"stored abstract tree: node {i} has {len(node.actions)} "
                                   f"actions, the cache gives it {len(kids)} children")
        node.children = kids


def load_tree(game: Game, abstraction: BettingAbstraction) -> BettingTree:
    """The canonical tree of ``game`` and ``abstraction``: from the cache when a valid one
    is there, else built (:func:`~agent.abstraction.actions.build_tree`) and cached.

    Raises:
        AbstractionError: as :func:`~agent.abstraction.actions.build_tree`.
    """
    path = tree_cache_path(game, abstraction)
    try:
        return read_tree(path, game, abstraction)
    except (AbstractionError, OSError):
        pass
    tree = build_tree(game, abstraction)
    with contextlib.suppress(OSError):  # a read-only cache only costs the rebuild next time
        write_tree(tree, path)
    return tree

"""The stored abstract tree: equal to the built one node for node, validated when read and
when each node is built, rebuilt when the cache is bad."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.actions import (
    BettingAbstraction,
    BettingTree,
    build_tree,
    parse_betting_abstraction,
)
from agent.abstraction.treecache import (
    StoredNodes,
    load_tree,
    read_tree,
    tree_cache_path,
    write_tree,
)
from agent.acpc.errors import AbstractionError
from agent.acpc.gamefiles import load_game
from agent.strategy.fileformat import table_layout

CASES = [
    ("leduc.limit.2p.game", "fcpa"),
    ("leduc.nolimit.2p.game", "fchpa"),
    ("kuhn.limit.3p.game", "fcpa"),
    ("leduc.nolimit.2p.game",
     '{"fractions": [[[0.5, 1.0], [1.0]]], "max_raises": [2, 1], "players": [null, '
     '[[[2.0]]]], "sequences": {"c": [0.75]}}'),
]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))


def _same(built: BettingTree, stored: BettingTree) -> None:
    assert len(built.nodes) == len(stored.nodes)
    for a, b in zip(built.nodes, stored.nodes, strict=True):
        assert (a.id, a.parent, a.depth, a.history, a.actions, a.children, a.state) == (
            b.id, b.parent, b.depth, b.history, b.actions, b.children, b.state)


@pytest.mark.parametrize(("game_name", "spec"), CASES)
def test_stored_tree_equals_built_tree(game_name: str, spec: str, tmp_path: Path) -> None:
    game = load_game(game_name)
    abstraction = parse_betting_abstraction(spec)
    built = build_tree(game, abstraction)
    path = write_tree(built, tmp_path / "t.npz")
    stored = read_tree(path, game, abstraction)
    assert isinstance(stored.nodes, StoredNodes)
    buckets = (3,) * game.num_rounds
    a, b = table_layout(built, buckets), table_layout(stored, buckets)
    assert a.total == b.total
    for x, y in ((a.offsets, b.offsets), (a.rows, b.rows), (a.num_actions, b.num_actions)):
        assert np.array_equal(x, y)
    # nodes built out of order (deep first) are the same too
    fresh = read_tree(path, game, abstraction)
    last = len(built.nodes) - 1
    assert fresh.nodes[last].history == built.nodes[last].history
    assert fresh.nodes[-1].state == built.nodes[-1].state
    _same(built, stored)


def test_load_tree_builds_once_then_reads(tmp_path: Path) -> None:
    game = load_game("leduc.nolimit.2p.game")
    abstraction = parse_betting_abstraction("fchpa")
    path = tree_cache_path(game, abstraction)
    assert not path.exists()
    first = load_tree(game, abstraction)
    assert isinstance(first.nodes, list) and path.exists()
    second = load_tree(game, abstraction)
    assert isinstance(second.nodes, StoredNodes)
    _same(first, second)
    other = parse_betting_abstraction("fcpa")
    assert tree_cache_path(game, other) != path


def _rewrite(path: Path, **arrays: np.ndarray) -> None:
    with np.load(path, allow_pickle=False) as data:
        out = {k: data[k] for k in data.files}
    out.update(arrays)
    with open(path, "wb") as f:
        np.savez(f, **out)


def _meta(path: Path) -> dict[str, object]:
    with np.load(path, allow_pickle=False) as data:
        return dict(json.loads(data["meta"].tobytes().decode()))


def _set_meta(path: Path, meta: dict[str, object]) -> None:
    _rewrite(path, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))


def test_corrupt_or_foreign_cache_is_refused_and_rebuilt(tmp_path: Path) -> None:
    game = load_game("leduc.limit.2p.game")
    abstraction = parse_betting_abstraction("fcpa")
    built = build_tree(game, abstraction)
    path = write_tree(built, tmp_path / "t.npz")
    # another abstraction's key
    with pytest.raises(AbstractionError, match=r"for .*got one for"):
        read_tree(path, game, BettingAbstraction("x", (((1.0,),),), max_raises=(1,)))
    # arrays that do not match their digest
    with np.load(path, allow_pickle=False) as data:
        size = data["size"].copy()
    size[3] += 1
    _rewrite(path, size=size)
    with pytest.raises(AbstractionError, match="digest"):
        read_tree(path, game, abstraction)
    # a consistent digest over a broken numbering: two siblings' sizes swapped
    write_tree(built, path)
    with np.load(path, allow_pickle=False) as data:
        parent, size, rounds = data["parent"].copy(), data["size"].copy(), data["round"]
    kids = [i for i in range(1, len(parent)) if parent[i] == 0]
    big = max(kids, key=lambda k: size[k])
    small = min(kids, key=lambda k: size[k])
    size[big], size[small] = size[small], size[big]
    from agent.abstraction.treecache import _digest

    meta = _meta(path)
    meta["sha256"] = _digest(parent, size, rounds)
    _rewrite(path, size=size)
    _set_meta(path, meta)
    with pytest.raises(AbstractionError, match=r"pre-order|size"):
        read_tree(path, game, abstraction)
    # not a zip at all
    path.write_bytes(b"garbage")
    with pytest.raises(AbstractionError, match="unreadable"):
        read_tree(path, game, abstraction)
    # load_tree rebuilds over a bad cache file and rewrites it
    target = tree_cache_path(game, abstraction)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"garbage")
    tree = load_tree(game, abstraction)
    _same(built, tree)
    assert isinstance(read_tree(target, game, abstraction).nodes, StoredNodes)


def test_a_node_whose_actions_differ_from_the_rules_is_refused(tmp_path: Path) -> None:
    """A shape that is a valid tree but of another abstraction, under this abstraction's
    key: reading succeeds, building the first node whose actions differ fails."""
    game = load_game("leduc.nolimit.2p.game")
    wanted = parse_betting_abstraction("fchpa")
    other = parse_betting_abstraction("fcpa")
    path = write_tree(build_tree(game, other), tmp_path / "t.npz")
    meta = _meta(path)
    meta["betting"] = wanted.to_json()
    _set_meta(path, meta)
    stored = read_tree(path, game, wanted)
    with pytest.raises(AbstractionError, match="actions, the cache gives it"):
        for _ in stored.nodes:
            pass

"""``acpc-strategy graft --backend ray`` on a real Ray cluster started on 127.0.0.1 by the test.

The head is :func:`tests.support.ray_head.ray_head` (loopback only, a random token,
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, stopped by its process group). Each graft is
a Ray task; the grafted files must have the very same table (checksum) as the local process
pool's, for a Leduc partition and for a small hold'em one.

Needs the ``cluster`` extra (``ray``).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.data import strategy_path
from agent.strategy.fileformat import load_strategy
from tests.support import ROOT
from tests.support.ray_head import ray_head

ray = pytest.importorskip("ray")

ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
LEDUC = strategy_path("leduc.limit.2p.strat")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A one-node Ray cluster on 127.0.0.1 (2 CPUs, :func:`tests.support.ray_head.ray_head`:
    stopped by its process group, never ``ray stop``); yields its address."""
    ENV.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32),
               ACPC_ARENA_CACHE=str(tmp_path_factory.mktemp("cache")))
    try:
        with ray_head(ENV, tmp_path_factory.mktemp("ray-head")) as address:
            yield address
    except RuntimeError as exc:
        pytest.fail(str(exc))


def _graft(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "strategies.cli", "graft", *args,
                           "--quiet"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False, env=ENV)


def _same(a: Path, b: Path) -> None:
    sa, sb = load_strategy(a), load_strategy(b)
    assert sa.checksum == sb.checksum
    assert (sa.table == sb.table).all()


def test_ray_grafts_equal_the_process_pool(tmp_path: Path, cluster: str) -> None:
    common = ["--base", str(LEDUC), "--partition", "flop:KA", "--iterations", "300"]
    ray_out = _graft(*common, "--out", str(tmp_path / "ray.strat"), "--backend", "ray",
                     "--address", cluster)
    assert ray_out.returncode == 0, ray_out.stderr
    local = _graft(*common, "--out", str(tmp_path / "local.strat"), "--workers", "2")
    assert local.returncode == 0, local.stderr
    _same(tmp_path / "ray.strat", tmp_path / "local.strat")

    from agent.abstraction.actions import build_tree, parse_betting_abstraction
    from agent.abstraction.holdem_buckets import HoldemCards
    from agent.acpc.gamefiles import load_game
    from agent.strategy.fileformat import dump_strategy
    from strategies.games.abstract import flatten_tree
    from tests.strategies.test_pool_grafting import GAME, SMALL_BETTING, random_table

    game = load_game(GAME)
    cards = HoldemCards.build((169, 2, 3, 2), samples=300, seed=4)
    tree = build_tree(game, parse_betting_abstraction(SMALL_BETTING))
    base = tmp_path / "base.strat"
    dump_strategy(base, game, tree.abstraction, cards.spec,
                  random_table(flatten_tree(tree, cards.buckets), 1), tree=tree)
    spec = json.dumps({"grafts": [{"classes": "equity:1/2", "from_round": 1},
                                  {"classes": "equity:0/2", "from_round": 0}],
                       "cards": {"kind": "holdem", "buckets": [169, 4, 6, 4]}})
    common = ["--base", str(base), "--partition", spec, "--iterations", "2000",
              "--pool-deals", "200", "--warm", "5"]
    ray_out = _graft(*common, "--out", str(tmp_path / "hray.strat"), "--backend", "ray",
                     "--address", cluster)
    assert ray_out.returncode == 0, ray_out.stderr
    local = _graft(*common, "--out", str(tmp_path / "hlocal.strat"), "--workers", "2")
    assert local.returncode == 0, local.stderr
    _same(tmp_path / "hray.strat", tmp_path / "hlocal.strat")


def test_an_unreachable_cluster_is_a_one_line_error(tmp_path: Path) -> None:
    out = _graft("--base", str(LEDUC), "--partition", "flop:A", "--iterations", "10",
                 "--out", str(tmp_path / "x.strat"), "--backend", "ray", "--address",
                 "127.0.0.1:1")
    assert out.returncode == 1
    assert out.stderr.startswith("acpc-strategy: error: expected a running Ray cluster at "
                                 "--address '127.0.0.1:1'")
    assert len(out.stderr.strip().splitlines()) == 1

"""The bundled data of acpc-arena, the one place that knows where it is.

* ``games/*.game``: the bundled game definitions (read by :mod:`agent.acpc.gamefiles`, so a
  game can be named by its file name, e.g. ``leduc.limit.2p.game``);
* ``strategies/*.strat``: the bundled strategy files (named by file name wherever a
  strategy file is asked for; rebuilt by ``acpc-strategy solve --recipe NAME --bundle``);
* ``strategies/manifest.json``: what each bundled file's recipe measured
  (:mod:`strategies.recipes`).

Found with :mod:`importlib.resources`, so they are wherever the package is installed.
Strategy files are memory-mapped and game files are size-checked before they are read, so
the lookups return real paths: :func:`importlib.resources.as_file`, which is the file itself
when the package is a directory (always, for a normal or editable install) and otherwise a
copy kept until the interpreter exits. Writing (``--bundle``) needs the package to be a
directory, i.e. a source checkout.

A data package at the bottom of the agent: it imports only the stdlib and nothing of the
project, so that the core (:mod:`agent.acpc`) may read it.
"""

from __future__ import annotations

import atexit
from contextlib import ExitStack
from functools import cache
from importlib import resources
from pathlib import Path

__all__ = ["bundled_games", "bundled_strategies", "game_path", "manifest_path",
           "strategies_dir", "strategy_path"]

_GAMES = "games"
_STRATEGIES = "strategies"
_MANIFEST = "manifest.json"

_KEEP = ExitStack()
atexit.register(_KEEP.close)


@cache
def _path(folder: str, name: str = "") -> Path:
    """A real file-system path of ``folder/name`` in this package (see the module doc)."""
    place = resources.files(__name__) / folder
    if name:
        place = place / name
    return _KEEP.enter_context(resources.as_file(place))


def _names(folder: str, suffix: str) -> list[str]:
    place = resources.files(__name__) / folder
    if not place.is_dir():
        return []
    return sorted(p.name for p in place.iterdir() if p.name.endswith(suffix) and p.is_file())


def bundled_games() -> list[str]:
    """File names of the bundled game definitions (``*.game``), sorted."""
    return _names(_GAMES, ".game")


def game_path(name: str) -> Path:
    """The path of the bundled game ``name`` (a file name from :func:`bundled_games`; not
    checked: :func:`agent.acpc.gamefiles.bundled_game_path` checks and says why)."""
    return _path(_GAMES, name)


def bundled_strategies() -> list[str]:
    """File names of the bundled strategy files (``*.strat``), sorted (empty if none are
    installed)."""
    return _names(_STRATEGIES, ".strat")


def strategy_path(name: str) -> Path:
    """The path of the bundled strategy file ``name`` (e.g. ``leduc.limit.2p.strat``): where
    it is, or where ``--bundle`` writes it. Not checked to exist."""
    return _path(_STRATEGIES, name)


def strategies_dir() -> Path:
    """The directory of the bundled strategy files (for messages and ``--bundle``)."""
    return _path(_STRATEGIES)


def manifest_path() -> Path:
    """The manifest of the bundled strategy files (``strategies/manifest.json``)."""
    return _path(_STRATEGIES, _MANIFEST)

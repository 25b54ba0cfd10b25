"""Load game definition files from disk, including the games bundled with acpc-arena.

This is the IO side of :mod:`agent.acpc.gamedef` (which only parses text). A game may be
named by a path or by the file name of a bundled game (``holdem.nolimit.2p.reverse_blinds.game``,
``leduc.limit.2p.game``, ...), which :func:`bundled_games` lists.

The one module of the stdlib-only core that touches the file system (reading game files;
the bundled ones are in the data package :mod:`agent.data`, ``agent/data/games/``): it lives
here so that the dealer, which may import only the core, can find bundled games by name. It
does no network IO and keeps no state.
"""

from __future__ import annotations

from pathlib import Path

from agent.acpc.errors import GameDefError
from agent.acpc.gamedef import MAX_GAMEDEF_CHARS, Game, parse_gamedef
from agent.acpc.limits import excerpt, read_text_file
from agent.data import bundled_games, game_path

__all__ = ["bundled_game_path", "bundled_games", "load_game", "read_game_text"]


def bundled_game_path(name: str) -> Path:
    """Filesystem path of a bundled game file.

    Raises:
        GameDefError: if there is no bundled game of that name.
    """
    if name not in bundled_games():
        raise GameDefError(
            f"expected one of the bundled games {bundled_games()}, got {excerpt(name)}"
        )
    return game_path(name)


def read_game_text(spec: str | Path) -> tuple[str, str]:
    """Return ``(text, source)`` for a path, or for the name of a bundled game.

    Raises:
        GameDefError: if the file cannot be read, is longer than
            :data:`~agent.acpc.gamedef.MAX_GAMEDEF_CHARS` bytes (checked before reading it
            all), or is not ASCII.
    """
    path = Path(spec)
    try:
        if not path.exists() and str(spec) in bundled_games():
            path = bundled_game_path(str(spec))
    except OSError as exc:  # a name the system refuses (too long)
        raise GameDefError(
            f"could not open game definition {excerpt(str(spec))}: {exc.strerror or exc}"
        ) from None
    text = read_text_file(path, max_bytes=MAX_GAMEDEF_CHARS, what="game definition",
                          decoded="an ASCII game definition", error=GameDefError,
                          where=str(spec), encoding="ascii")
    return text, str(spec)


def load_game(spec: str | Path) -> Game:
    """Read and parse a game definition file (or a bundled game by name).

    Raises:
        GameDefError: if the file cannot be read or is not a valid game definition.
    """
    text, source = read_game_text(spec)
    return parse_gamedef(text, source)

"""Agent variants: what plays in a duplicate match, from the command line or a TOML file.

A variant is a name and one of

* a strategy for ``acpc-agent``: a strategy file (with optional ``mapping``, ``purify``,
  ``sizes`` -- the size convention, ``abstract`` or ``real``, acpc-agent's ``--sizes-in`` --
  and ``seed``) or a built-in of :data:`agent.agents.BUILTINS` (``builtin:random``,
  ``builtin:call``, ``builtin:fold``, ``builtin:minraise``, ``builtin:equity``; fold and
  min-raise make results whose values are known exactly);
* an external command (``cmd=PATH ARGS...``), started with ``HOST PORT`` appended, like the
  reference ``play_match.pl`` starts ``startme.sh``: any ACPC agent can be measured. It
  runs in its base directory (the current directory, or the TOML file's directory).

Command line: ``NAME=builtin:call``, ``NAME=path/x.strat,mapping=rand-pshar,purify=full,
sizes=real,seed=7``, ``NAME=cmd=./startme.sh --opt``. TOML::

    game = "leduc.limit.2p.game"        # optional run settings (see SETTINGS_KEYS)
    hands = 500
    [variants.alice]
    strategy = "builtin:call"
    [variants.bob]
    strategy = "bob.strat"                # relative to the TOML file
    mapping = "rand-pshar"
    [variants.ext]
    cmd = ["./startme.sh", "--fast"]      # or one string, split like a shell

Imports only the stdlib and :mod:`agent.acpc.errors` (agent code is imported lazily by
:func:`check_variant`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.acpc.errors import AcpcError

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}")
"""Variant names: they become dealer player names and parts of file names."""

OPTION_KEYS = ("mapping", "purify", "sizes", "seed")
SETTINGS_KEYS = ("game", "hands", "matches", "seed", "transport", "unit", "allin_ev", "jobs")
"""Run settings a TOML file may give (the command line overrides them)."""


class VariantError(AcpcError, ValueError):
    """A variant cannot be used; the message names it."""


@dataclass(frozen=True, slots=True)
class Variant:
    """One agent variant (see the module docstring)."""

    name: str
    strategy: str | None = None
    """``builtin:...`` or the absolute path of a strategy file; None for a command."""
    mapping: str | None = None
    purify: str | None = None
    seed: int | None = None
    cmd: tuple[str, ...] = ()
    sizes: str | None = None
    """The size convention (``abstract``/``real``; None: acpc-agent's default)."""
    cwd: str = "."
    """Where an external command runs (absolute)."""
    spec: str = ""
    """The variant as the user wrote it (for messages and the manifest)."""

    @property
    def kind(self) -> str:
        """``cmd``, ``builtin`` (:data:`agent.agents.BUILTINS`) or ``file``."""
        if self.cmd:
            return "cmd"
        assert self.strategy is not None
        if self.strategy.startswith("builtin:"):
            return "builtin"
        return "file"

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict that :meth:`from_json` reads back."""
        return {
            "name": self.name,
            "strategy": self.strategy,
            "mapping": self.mapping,
            "purify": self.purify,
            "sizes": self.sizes,
            "seed": self.seed,
            "cmd": list(self.cmd),
            "cwd": self.cwd,
            "spec": self.spec,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Variant:
        """The inverse of :meth:`to_json`."""
        return cls(
            name=str(data["name"]),
            strategy=data.get("strategy"),
            mapping=data.get("mapping"),
            purify=data.get("purify"),
            sizes=data.get("sizes"),
            seed=data.get("seed"),
            cmd=tuple(str(x) for x in data.get("cmd", ())),
            cwd=str(data.get("cwd", ".")),
            spec=str(data.get("spec", "")),
        )

    def identity(self) -> dict[str, Any]:
        """What defines the variant's play (for comparing a run with its manifest).

        ``sizes`` appears only when given, so runs made before the option keep their
        identity."""
        out: dict[str, Any] = {
            "strategy": self.strategy,
            "mapping": self.mapping,
            "purify": self.purify,
            "seed": self.seed,
            "cmd": list(self.cmd),
        }
        if self.sizes is not None:
            out["sizes"] = self.sizes
        return out


def _check_name(name: str, spec: str) -> None:
    if not NAME_PATTERN.fullmatch(name):
        raise VariantError(
            f"variant {name!r}: expected a name of letters, digits and _.+- (at most 40, "
            f"starting with a letter or digit), got {name!r} in {spec!r}"
        )


def _make(
    name: str,
    spec: str,
    base: Path,
    *,
    strategy: str | None,
    options: dict[str, Any],
    cmd: list[str] | None,
) -> Variant:
    _check_name(name, spec)
    if cmd is not None:
        if strategy is not None or options:
            raise VariantError(
                f"variant {name!r}: expected either a strategy or cmd=, got both in {spec!r}"
            )
        if not cmd:
            raise VariantError(f"variant {name!r}: expected a command after cmd=, got nothing")
        return Variant(name, cmd=tuple(cmd), cwd=str(base.resolve()), spec=spec)
    if not strategy:
        raise VariantError(
            f"variant {name!r}: expected a strategy file, builtin:NAME or cmd=COMMAND, "
            f"got {spec!r}"
        )
    unknown = sorted(set(options) - set(OPTION_KEYS))
    if unknown:
        raise VariantError(
            f"variant {name!r}: expected options among {', '.join(OPTION_KEYS)}, got "
            f"{', '.join(unknown)} in {spec!r}"
        )
    seed = options.get("seed")
    if seed is not None:
        try:
            seed = int(seed)
        except (TypeError, ValueError):
            raise VariantError(
                f"variant {name!r}: expected seed=<integer>, got seed={seed!r}"
            ) from None
        if seed < 0:
            raise VariantError(f"variant {name!r}: expected a seed >= 0, got {seed}")
    mapping = options.get("mapping")
    purify = options.get("purify")
    sizes = options.get("sizes")
    if sizes is not None:
        from agent.abstraction.convention import parse_size_convention

        try:
            sizes = parse_size_convention(str(sizes))
        except AcpcError as exc:
            raise VariantError(f"variant {name!r}: {exc} (sizes=)") from None
    if not strategy.startswith("builtin:"):
        local = (base / strategy).resolve()
        if not local.exists() and "/" not in strategy:
            from agent.agents import BUNDLED_STRATEGIES, bundled_strategies

            if strategy in bundled_strategies():  # a bundled file by name, like games
                local = BUNDLED_STRATEGIES / strategy
        strategy = str(local)
    elif mapping is not None or purify is not None or sizes is not None:
        raise VariantError(
            f"variant {name!r}: mapping=, purify= and sizes= apply to strategy files, not "
            f"{strategy}"
        )
    return Variant(
        name,
        strategy=strategy,
        mapping=None if mapping is None else str(mapping),
        purify=None if purify is None else str(purify),
        sizes=sizes,
        seed=seed,
        cwd=str(base.resolve()),
        spec=spec,
    )


def parse_variant(text: str, base: Path | None = None) -> Variant:
    """Parse ``NAME=STRATEGY[,mapping=..][,purify=..][,sizes=..][,seed=..]`` or
    ``NAME=cmd=COMMAND``.

    Relative paths are taken from ``base`` (default: the current directory).

    Raises:
        VariantError: naming the variant and what is wrong.
    """
    base = Path.cwd() if base is None else base
    name, eq, rest = text.partition("=")
    name = name.strip()
    if not eq or not name:
        raise VariantError(
            f"expected a variant as NAME=STRATEGY[,mapping=M][,purify=P][,sizes=Z][,seed=S] or "
            f"NAME=cmd=COMMAND, got {text!r}"
        )
    rest = rest.strip()
    if rest.startswith("cmd="):
        try:
            cmd = shlex.split(rest[4:])
        except ValueError as exc:
            raise VariantError(f"variant {name!r}: bad command {rest[4:]!r}: {exc}") from None
        return _make(name, text, base, strategy=None, options={}, cmd=cmd)
    head, *opts = rest.split(",")
    options: dict[str, Any] = {}
    for opt in opts:
        key, eq2, value = opt.partition("=")
        if not eq2 or not key.strip():
            raise VariantError(
                f"variant {name!r}: expected KEY=VALUE options ({', '.join(OPTION_KEYS)}), "
                f"got {opt!r}"
            )
        options[key.strip()] = value.strip()
    return _make(name, text, base, strategy=head.strip(), options=options, cmd=None)


def load_toml(path: Path) -> tuple[list[Variant], dict[str, Any]]:
    """Variants and run settings from a TOML file (module docstring).

    Raises:
        VariantError: if the file cannot be read or a variant or setting is wrong.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise VariantError(f"could not read {str(path)!r}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise VariantError(f"{path}: expected TOML, {exc}") from None
    base = path.resolve().parent
    unknown = sorted(set(data) - set(SETTINGS_KEYS) - {"variants"})
    if unknown:
        raise VariantError(
            f"{path}: expected keys among variants, {', '.join(SETTINGS_KEYS)}; got "
            f"{', '.join(unknown)}"
        )
    settings = {k: data[k] for k in SETTINGS_KEYS if k in data}
    table = data.get("variants", {})
    if not isinstance(table, dict):
        raise VariantError(f"{path}: expected a [variants.NAME] table, got {table!r}")
    variants: list[Variant] = []
    for name, entry in table.items():
        where = f"{path}: [variants.{name}]"
        if isinstance(entry, str):
            variants.append(parse_variant(f"{name}={entry}", base))
            continue
        if not isinstance(entry, dict):
            raise VariantError(f"{where}: expected a table or a string, got {entry!r}")
        entry = dict(entry)
        cmd_value = entry.pop("cmd", None)
        strategy = entry.pop("strategy", None)
        cmd: list[str] | None = None
        if cmd_value is not None:
            if isinstance(cmd_value, str):
                cmd = shlex.split(cmd_value)
            elif isinstance(cmd_value, list) and all(isinstance(x, str) for x in cmd_value):
                cmd = list(cmd_value)
            else:
                raise VariantError(f"{where}: expected cmd to be a string or a list of "
                                   f"strings, got {cmd_value!r}")
        if strategy is not None and not isinstance(strategy, str):
            raise VariantError(f"{where}: expected strategy to be a string, got {strategy!r}")
        variants.append(
            _make(name, where, base, strategy=strategy, options=entry, cmd=cmd)
        )
    return variants, settings


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes.

    Raises:
        OSError: if it cannot be read.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for _ in range(1 << 30):  # bounded: 1 MiB blocks
            block = f.read(1 << 20)
            if not block:
                break
            digest.update(block)
    return digest.hexdigest()


def resolve_command(variant: Variant) -> str | None:
    """The executable an external command will run, or None if it cannot be found."""
    exe = variant.cmd[0]
    if os.sep in exe or (os.altsep and os.altsep in exe):
        path = Path(variant.cwd) / exe
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(exe)


def checksums(variant: Variant) -> dict[str, str]:
    """sha256 of the files a variant plays with: the strategy file, or a command's files.

    For a command: the executable and every argument that names an existing file (a
    script given to an interpreter, a strategy file...), keyed by the text as written.

    Raises:
        VariantError: if the strategy file cannot be read.
    """
    kind = variant.kind
    if kind == "file":
        assert variant.strategy is not None
        try:
            return {variant.strategy: sha256_file(Path(variant.strategy))}
        except OSError as exc:
            raise VariantError(
                f"variant {variant.name!r}: could not read strategy file "
                f"{variant.strategy!r}: {exc.strerror or exc}"
            ) from None
    if kind != "cmd":
        return {}
    out: dict[str, str] = {}
    exe = resolve_command(variant)
    if exe is not None:
        out[variant.cmd[0]] = sha256_file(Path(exe))
    for arg in variant.cmd[1:]:
        path = Path(variant.cwd) / arg
        try:
            if path.is_file():
                out[arg] = sha256_file(path)
        except OSError:
            continue
    return out


def check_variant(variant: Variant, game_spec: str, transport: str, *,
                  deep: bool = True) -> None:
    """Check before any match that a variant can play (fails fast, naming the variant).

    ``deep``: strategy files are loaded for the game exactly as the agent will load them
    and built-ins are built (this imports the agent's policy code, numpy and numba, lazily);
    without it only what needs no import is checked (a command exists, a file is there).
    The runner checks deeply only when some match is left to play, so a finished run
    prints its table at once.

    Raises:
        VariantError: if the variant cannot play.
    """
    kind = variant.kind
    name = variant.name
    if kind == "cmd":
        if transport != "tcp":
            raise VariantError(
                f"variant {name!r} is an external command: it needs --transport tcp"
            )
        if resolve_command(variant) is None:
            raise VariantError(
                f"variant {name!r}: command {variant.cmd[0]!r} not found (or not executable) "
                f"in {variant.cwd}"
            )
        return
    assert variant.strategy is not None
    if kind == "file":
        if not Path(variant.strategy).is_file():
            raise VariantError(f"variant {name!r}: strategy file {variant.strategy!r} not found")
    else:
        from agent.agents import check_builtin

        try:
            check_builtin(variant.strategy)
        except ValueError as exc:
            raise VariantError(f"variant {name!r}: {exc}") from None
    if not deep:
        return
    from agent.acpc.gamefiles import load_game
    from agent.agents import make_policy

    try:
        game = load_game(game_spec)
        make_policy(variant.strategy, game, seed=0, mapping=variant.mapping,
                    purify=variant.purify, sizes_in=variant.sizes)
    except (AcpcError, ValueError, OSError) as exc:
        raise VariantError(f"variant {name!r}: {exc}") from None

"""Agent variants: what plays in a duplicate match, from the command line or a TOML file.

A variant is a name and one of

* a strategy for ``acpc-agent``: a strategy file (with optional ``mapping``, ``purify``,
  ``sizes`` -- the size convention, ``abstract`` or ``real``, acpc-agent's ``--sizes-in`` --,
  ``seed``, and ``exploit`` -- ``dbbr`` or ``safe``, acpc-agent's ``--exploit``, with
  ``exploit_prior_weight``, ``exploit_every``, ``exploit_warmup`` and ``exploit_epsilon``,
  its ``--exploit-*`` options, spelled and checked by :mod:`agent.exploitconfig`) or a
  built-in of :data:`agent.agents.BUILTINS` (``builtin:random``, ``builtin:call``,
  ``builtin:fold``, ``builtin:minraise``, ``builtin:equity``; fold and min-raise make
  results whose values are known exactly) or the user's own bot,
  ``module:Class`` (:mod:`agent.bot`), imported from the base directory (the current
  directory, or the TOML file's directory; a path that exists is a file first);
* an external command (``cmd=PATH ARGS...``), started with ``HOST PORT`` appended, like the
  reference ``play_match.pl`` starts ``startme.sh``: any ACPC agent can be measured. It
  runs in its base directory (the current directory, or the TOML file's directory).

Command line: ``NAME=builtin:call``, ``NAME=path/x.strat,mapping=rand-pshar,purify=full,
sizes=real,seed=7``, ``NAME=x.strat,exploit=dbbr,exploit_warmup=100``,
``NAME=mybot:MyBot,seed=3``, ``NAME=cmd=./startme.sh --opt``. A command-line spec that
cannot be parsed is a usage error (:class:`VariantUsageError`: exit status 2); a file's
content that cannot, an error of the file (:class:`VariantError`: 1). TOML::

    game = "leduc.limit.2p.game"        # optional run settings (see SETTINGS_KEYS)
    hands = 500
    [variants.alice]
    strategy = "builtin:call"
    [variants.bob]
    strategy = "bob.strat"                # relative to the TOML file
    mapping = "rand-pshar"
    [variants.bobx]
    strategy = "bob.strat"
    exploit = "safe"                      # bob.strat, exploiting its opponent safely
    exploit_warmup = 200                  # numbers as TOML numbers
    [variants.mine]
    strategy = "mybot:MyBot"              # mybot.py beside the TOML file
    [variants.ext]
    cmd = ["./startme.sh", "--fast"]      # or one string, split like a shell

The file is an input like the command line and is checked like it: at most
:data:`MAX_TOML_BYTES` bytes and :data:`MAX_TOML_DEPTH` levels of ``[``/``{`` nesting
(both checked before ``tomllib`` parses it); every run setting by the same
:class:`Setting` that is the argparse ``type=`` of its flag (same types, ranges and
messages; a TOML value must have the TOML type: ``hands = "5"``, ``matches = 2.5`` and
``allin_ev = "false"`` are errors); every text at most :data:`MAX_TEXT_CHARS` characters.
Messages quote at most :data:`agent.acpc.limits.EXCERPT_CHARS` characters of a value
(:func:`agent.acpc.limits.excerpt`).

Imports only the stdlib, :mod:`agent.acpc.errors`, :mod:`agent.acpc.limits` and
:mod:`agent.exploitconfig` (stdlib only); agent code is imported lazily (:mod:`agent.agents`,
which loads no numpy, to tell a bot's spec, and the policies by :func:`check_variant`).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shlex
import shutil
import sys
import tomllib
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from agent import exploitconfig
from agent.acpc.errors import AcpcError, UsageError
from agent.acpc.gamedef import Game
from agent.acpc.limits import excerpt, read_text_file

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}")
"""Variant names: they become dealer player names and parts of file names."""

EXPLOIT_KEYS = tuple(exploitconfig.key(name) for name in ("mode", *exploitconfig.OPTIONS))
"""``exploit`` and its options' keys (:mod:`agent.exploitconfig`: acpc-agent's flags)."""
OPTION_KEYS = ("mapping", "purify", "sizes", "seed", *EXPLOIT_KEYS)

MAX_TOML_BYTES = 1 << 20
"""A ``--variants`` file is at most 1 MiB (a run configuration is a few hundred bytes)."""
MAX_TOML_DEPTH = 32
"""At most 32 ``[``/``{`` open at once in a ``--variants`` file (counted outside strings
and comments before parsing: ``tomllib`` recurses once per level)."""
MAX_TEXT_CHARS = 4096
"""At most 4,096 characters (Linux's PATH_MAX) in any text value: a game, a strategy, a
mapping, a command argument..."""
"""Messages quote at most this many characters of a value, then its length."""

HANDS_MAX = 2**32 - 1
"""``--hands`` at most acpc-dealer's HANDS limit (a uint32, as the reference dealer)."""
MATCHES_MAX = 100_000
"""``--matches`` at most 100,000 duplicate units (every match is planned before the first)."""
JOBS_MAX = 1024
SEED_MAX = 2**63 - 1


class VariantError(AcpcError, ValueError):
    """A variant cannot be used; the message names it."""


class VariantUsageError(VariantError, UsageError):
    """A variant given on the command line (``-v``, ``--opponent``) that cannot be parsed,
    or an option that does not apply to the game: a usage error (exit status 2)."""


T = TypeVar("T")


class Setting(Generic[T]):
    """How one value is checked, on the command line and in a TOML file alike.

    Called with the command line's text (it is the argparse ``type=``), :meth:`from_toml`
    with a TOML value (which must already have the TOML type: no text for a number, no
    float for an int, no text for a bool). Both raise :class:`argparse.ArgumentTypeError`
    with the same one-line message, ``expected <what>, got <excerpt>``."""

    expected = "a value"

    def fail(self, got: object) -> argparse.ArgumentTypeError:
        """The one-line error for ``got``."""
        return argparse.ArgumentTypeError(f"expected {self.expected}, got {excerpt(got)}")

    def __call__(self, text: str) -> T:
        raise NotImplementedError

    def from_toml(self, value: object) -> T:
        raise NotImplementedError


class IntSetting(Setting[int]):
    """An integer in ``lo..hi``."""

    def __init__(self, lo: int, hi: int) -> None:
        self.lo, self.hi = lo, hi
        self.expected = f"an integer {lo}..{hi}"

    def _check(self, value: int, got: object) -> int:
        if not self.lo <= value <= self.hi:
            raise self.fail(got)
        return value

    def __call__(self, text: str) -> int:
        try:
            value = int(text)  # over 4,300 digits: ValueError, before any conversion
        except ValueError:
            raise self.fail(text) from None
        return self._check(value, text)

    def from_toml(self, value: object) -> int:
        if type(value) is not int:  # not bool, not float
            raise self.fail(value)
        return self._check(value, value)


class _StrSetting(Setting[str]):
    """A setting whose TOML value must be a string, checked as on the command line."""

    def from_toml(self, value: object) -> str:
        if not isinstance(value, str):
            raise self.fail(value)
        return self(value)


class TextSetting(_StrSetting):
    """Text of 1..:data:`MAX_TEXT_CHARS` characters without NUL (a path, a name)."""

    def __init__(self, what: str = "text") -> None:
        self.expected = f"{what} of 1..{MAX_TEXT_CHARS} characters"

    def __call__(self, text: str) -> str:
        if not 0 < len(text) <= MAX_TEXT_CHARS or "\0" in text:
            raise self.fail(text)
        return text


class ChoiceSetting(_StrSetting):
    """One of a few words."""

    def __init__(self, choices: tuple[str, ...]) -> None:
        self.choices = choices
        self.expected = f"one of {', '.join(choices)}"

    def __call__(self, text: str) -> str:
        if text not in self.choices:
            raise self.fail(text)
        return text


class FlagSetting(Setting[bool]):
    """A switch: a flag on the command line (no value), ``true``/``false`` in TOML."""

    expected = "true or false"

    def __call__(self, text: str) -> bool:
        raise self.fail(text)  # a flag takes no text; argparse never calls this

    def from_toml(self, value: object) -> bool:
        if type(value) is not bool:
            raise self.fail(value)
        return value


TRANSPORTS = ("tcp", "inproc")
UNITS = ("seed", "hand")
SEED = IntSetting(0, SEED_MAX)
"""The master seed, and a variant's ``seed`` option."""
TEXT = TextSetting()
RUN_SETTINGS: dict[str, Setting[Any]] = {
    "game": TextSetting("a game file or bundled game name"),
    "hands": IntSetting(1, HANDS_MAX),
    "matches": IntSetting(1, MATCHES_MAX),
    "seed": SEED,
    "transport": ChoiceSetting(TRANSPORTS),
    "unit": ChoiceSetting(UNITS),
    "allin_ev": FlagSetting(),
    "workers": IntSetting(1, JOBS_MAX),
}
"""Run settings a TOML file may give, each checked by its flag's argparse ``type=``
(``acpc-match --hands`` is ``type=RUN_SETTINGS["hands"]``); the command line overrides
them."""
SETTINGS_KEYS = tuple(RUN_SETTINGS)
DEPRECATED_KEYS = {"jobs": "workers"}
"""Old spellings of settings (as of their flags, :func:`agent.console.deprecated_alias`):
read for one release, with one warning line."""


def exists(path: Path) -> bool:
    """``path.exists()``, False for a name the system refuses (too long, ...)."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


@dataclass(frozen=True, slots=True)
class Variant:
    """One agent variant (see the module docstring)."""

    name: str
    strategy: str | None = None
    """``builtin:...``, ``module:Class`` (a bot, imported from :attr:`cwd`) or the absolute
    path of a strategy file; None for a command."""
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
    exploit: str | None = None
    """``dbbr`` or ``safe``: the agent exploits its opponent (acpc-agent's ``--exploit``;
    None: it does not)."""
    exploit_options: tuple[tuple[str, float], ...] = ()
    """The exploiter's options given (:data:`agent.exploitconfig.OPTIONS` names, in that
    order, with their values); the others keep their defaults."""

    def exploit_config(self) -> exploitconfig.ExploitConfig | None:
        """The exploiter's configuration (None without ``exploit``)."""
        if self.exploit is None:
            return None
        options: dict[str, Any] = dict(self.exploit_options)
        return exploitconfig.ExploitConfig(self.exploit, **options)

    def exploit_flags(self) -> list[str]:
        """acpc-agent's ``--exploit MODE`` and the options given (none without ``exploit``)."""
        config = self.exploit_config()
        if config is None:
            return []
        return config.flags(tuple(name for name, _ in self.exploit_options))

    @property
    def kind(self) -> str:
        """``cmd``, ``builtin`` (:data:`agent.agents.BUILTINS`), ``bot`` (``module:Class``)
        or ``file`` (an absolute path)."""
        if self.cmd:
            return "cmd"
        assert self.strategy is not None
        if self.strategy.startswith("builtin:"):
            return "builtin"
        from agent.agents import is_bot_spec

        return "bot" if is_bot_spec(self.strategy) else "file"

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
            "exploit": self.exploit,
            "exploit_options": [list(x) for x in self.exploit_options],
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
            exploit=data.get("exploit"),
            exploit_options=tuple((str(k), v) for k, v in data.get("exploit_options", ())),
        )

    def identity(self) -> dict[str, Any]:
        """What defines the variant's play (for comparing a run with its manifest).

        ``sizes`` and ``exploit`` appear only when given, so runs made before the options
        keep their identity."""
        out: dict[str, Any] = {
            "strategy": self.strategy,
            "mapping": self.mapping,
            "purify": self.purify,
            "seed": self.seed,
            "cmd": list(self.cmd),
        }
        if self.sizes is not None:
            out["sizes"] = self.sizes
        if self.exploit is not None:
            out["exploit"] = {"mode": self.exploit, **dict(self.exploit_options)}
        return out


def _check_name(name: str, spec: str, toml_file: Path | None = None) -> None:
    """The name is :data:`NAME_PATTERN`; the message quotes ``spec`` (a command-line
    variant) or names ``toml_file``."""
    if not NAME_PATTERN.fullmatch(name):
        where = f"{toml_file}: [variants]: " if toml_file is not None else ""
        given = "" if toml_file is not None else f" in {excerpt(spec)}"
        raise VariantError(
            f"{where}expected a name of letters, digits and _.+- (at most 40, starting with "
            f"a letter or digit), got {excerpt(name)}{given}"
        )


def _option(where: str, key: str, setting: Setting[T], value: object, toml: bool) -> T:
    """A variant option checked by ``setting`` (text from a spec, a value from TOML)."""
    try:
        if toml:
            return setting.from_toml(value)
        return setting(str(value))
    except argparse.ArgumentTypeError as exc:
        raise VariantError(f"{where}: {key}: {exc}") from None


def _exploit(where: str, options: dict[str, Any], toml: bool, given: str
             ) -> tuple[str | None, tuple[tuple[str, float], ...]]:
    """``exploit`` and its options from a variant's options (text from a spec, TOML values
    from a file), checked by :mod:`agent.exploitconfig` and named as the variant spells
    them."""
    spell = exploitconfig.key
    named = [n for n in exploitconfig.OPTIONS if options.get(spell(n)) is not None]
    mode = options.get(spell("mode"))
    if mode is None:
        if named:
            raise VariantError(f"{where}: {', '.join(spell(n) + '=' for n in named)} "
                               f"{'applies' if len(named) == 1 else 'apply'} "
                               f"only with exploit=MODE ({', '.join(exploitconfig.MODES)})"
                               f"{given}")
        return None, ()
    try:
        mode = exploitconfig.check_mode(mode, spell)
        values = tuple(
            (n, exploitconfig.check_option(n, options[spell(n)], spell) if toml
             else exploitconfig.parse_option(n, str(options[spell(n)]), spell))
            for n in named)
    except UsageError as exc:
        raise VariantError(f"{where}: {exc}") from None
    return mode, values


def _make(
    name: str,
    spec: str,
    base: Path,
    *,
    strategy: str | None,
    options: dict[str, Any],
    cmd: list[str] | None,
    toml_file: Path | None = None,
) -> Variant:
    """A variant; ``options`` are text from a spec, or TOML values from ``toml_file``
    (then messages start with the file and ``[variants.NAME]``)."""
    _check_name(name, spec, toml_file)
    toml = toml_file is not None
    where = f"{toml_file}: [variants.{name}]" if toml else f"variant {name!r}"
    given = "" if toml else f" in {excerpt(spec)}"
    if cmd is not None:
        if strategy is not None or options:
            raise VariantError(f"{where}: expected either a strategy or cmd, got both{given}")
        if not cmd:
            raise VariantError(f"{where}: expected a command after cmd=, got nothing")
        cmd = [_option(where, "cmd", TEXT, arg, toml) for arg in cmd]
        return Variant(name, cmd=tuple(cmd), cwd=str(base.resolve()), spec=spec)
    if not strategy:
        raise VariantError(
            f"{where}: expected a strategy file, builtin:NAME, module:Class or cmd=COMMAND, "
            f"got {excerpt(strategy if toml else spec)}"
        )
    strategy = _option(where, "strategy", TEXT, strategy, toml)
    unknown = sorted(set(options) - set(OPTION_KEYS))
    if unknown:
        raise VariantError(
            f"{where}: expected options among {', '.join(OPTION_KEYS)}, got "
            f"{excerpt(', '.join(unknown))}{given}"
        )
    seed = None if options.get("seed") is None else _option(where, "seed", SEED,
                                                            options["seed"], toml)
    exploit, exploit_options = _exploit(where, options, toml, given)
    mapping, purify, sizes = (
        None if options.get(key) is None else _option(where, key, TEXT, options[key], toml)
        for key in ("mapping", "purify", "sizes"))
    if sizes is not None:
        from agent.abstraction.convention import parse_size_convention

        try:
            sizes = parse_size_convention(sizes)
        except AcpcError as exc:
            raise VariantError(f"{where}: {exc} (sizes=)") from None
    from agent.agents import is_bot_spec

    bot = is_bot_spec(strategy) and not exists(base / strategy)
    if not strategy.startswith("builtin:") and not bot:
        local = (base / strategy).resolve()
        if not exists(local) and "/" not in strategy:
            from agent.data import bundled_strategies, strategy_path

            if strategy in bundled_strategies():  # a bundled file by name, like games
                local = strategy_path(strategy)
        strategy = str(local)
    elif mapping is not None or purify is not None or sizes is not None:
        raise VariantError(
            f"{where}: mapping=, purify= and sizes= apply to strategy files, not "
            f"{'the bot ' if bot else ''}{excerpt(strategy)}"
        )
    elif exploit is not None:
        raise VariantError(f"{where}: exploit= applies to strategy files, not "
                           f"{'the bot ' if bot else ''}{excerpt(strategy)}")
    return Variant(
        name,
        strategy=strategy,
        mapping=mapping,
        purify=purify,
        sizes=sizes,
        seed=seed,
        cwd=str(base.resolve()),
        spec=spec,
        exploit=exploit,
        exploit_options=exploit_options,
    )


def parse_variant(text: str, base: Path | None = None) -> Variant:
    """Parse ``NAME=STRATEGY[,mapping=..][,purify=..][,sizes=..][,seed=..][,exploit=..]``
    (and the exploiter's options) or ``NAME=cmd=COMMAND``.

    Relative paths are taken from ``base`` (default: the current directory).

    Raises:
        VariantUsageError: naming the variant and what is wrong (a command-line argument:
            :func:`load_toml` turns it into the file's :class:`VariantError`).
    """
    try:
        return _parse_variant(text, Path.cwd() if base is None else base)
    except VariantUsageError:
        raise
    except VariantError as exc:
        raise VariantUsageError(str(exc)) from None


def _parse_variant(text: str, base: Path) -> Variant:
    """:func:`parse_variant`'s work."""
    name, eq, rest = text.partition("=")
    name = name.strip()
    if not eq or not name:
        raise VariantError(
            f"expected a variant as NAME=STRATEGY[,mapping=M][,purify=P][,sizes=Z][,seed=S]"
            f"[,exploit=dbbr|safe] or NAME=cmd=COMMAND, got {excerpt(text)}"
        )
    _check_name(name, text)
    rest = rest.strip()
    if rest.startswith("cmd="):
        try:
            cmd = shlex.split(rest[4:])
        except ValueError as exc:
            raise VariantError(
                f"variant {name!r}: bad command {excerpt(rest[4:])}: {exc}") from None
        return _make(name, text, base, strategy=None, options={}, cmd=cmd)
    head, *opts = rest.split(",")
    options: dict[str, Any] = {}
    for opt in opts:
        key, eq2, value = opt.partition("=")
        if not eq2 or not key.strip():
            raise VariantError(
                f"variant {name!r}: expected KEY=VALUE options ({', '.join(OPTION_KEYS)}), "
                f"got {excerpt(opt)}"
            )
        options[key.strip()] = value.strip()
    return _make(name, text, base, strategy=head.strip(), options=options, cmd=None)


_TOML_TOKENS = re.compile(
    r'''"""(?:[^"\\]|\\.|"(?!""))*"{3,5}'''  # multi-line basic string
    r"|'''.*?'{3,5}"  # multi-line literal string
    r'''|"(?:[^"\\\n]|\\.)*"'''  # basic string
    r"|'[^'\n]*'"  # literal string
    r"|#[^\n]*"  # comment
    r"|[\[\]{}]",  # what nests
    re.DOTALL,
)


def toml_depth(text: str) -> int:
    """The deepest ``[``/``{`` nesting of a TOML text, counted outside strings and comments
    by one regular-expression scan (linear; no parse). A text that is not TOML gets a
    count too; ``tomllib`` then refuses it."""
    depth = deepest = 0
    for match in _TOML_TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
    return deepest


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's table, its size and nesting bounded before parsing
    (:data:`MAX_TOML_BYTES`, :data:`MAX_TOML_DEPTH`).

    Raises:
        VariantError: one line naming the file.
    """
    text = read_text_file(path, max_bytes=MAX_TOML_BYTES, what="TOML file",
                          decoded="UTF-8 TOML", error=VariantError)
    depth = toml_depth(text)
    if depth > MAX_TOML_DEPTH:
        raise VariantError(f"{path}: expected arrays and inline tables nested at most "
                           f"{MAX_TOML_DEPTH} deep, got {depth}")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise VariantError(f"{path}: expected TOML, {exc}") from None
    except ValueError:  # tomllib's int() of an integer over the interpreter's limit
        raise VariantError(f"{path}: expected integers of at most "
                           f"{sys.get_int_max_str_digits():,} digits, got a longer one") from None


def load_toml(path: Path) -> tuple[list[Variant], dict[str, Any]]:
    """Variants and run settings from a TOML file (module docstring).

    Settings come back checked, with their types (``RUN_SETTINGS``); a file may hold no
    variant (the caller decides whether variants given elsewhere suffice).

    Raises:
        VariantError: if the file cannot be read or a variant or setting is wrong.
    """
    data = read_toml(path)
    base = path.resolve().parent
    for old, new in DEPRECATED_KEYS.items():
        if old in data:
            if new in data:
                raise VariantError(f"{path}: expected {new} (or the deprecated {old}), got both")
            print(f"acpc-match: warning: {path}: {old} is deprecated (kept for one release), "
                  f"use {new}", file=sys.stderr)
            data[new] = data.pop(old)
    unknown = sorted(set(data) - set(SETTINGS_KEYS) - {"variants"})
    if unknown:
        raise VariantError(
            f"{path}: expected keys among variants, {', '.join(SETTINGS_KEYS)}; got "
            f"{excerpt(', '.join(unknown))}"
        )
    settings: dict[str, Any] = {}
    for key, setting in RUN_SETTINGS.items():
        if key in data:
            try:
                settings[key] = setting.from_toml(data[key])
            except argparse.ArgumentTypeError as exc:
                raise VariantError(f"{path}: {key}: {exc}") from None
    table = data.get("variants", {})
    if not isinstance(table, dict):
        raise VariantError(f"{path}: variants: expected [variants.NAME] tables, got "
                           f"{excerpt(table)}")
    variants: list[Variant] = []
    for name, entry in table.items():
        _check_name(name, "", path)
        where = f"{path}: [variants.{name}]"
        if isinstance(entry, str):
            try:
                variants.append(parse_variant(f"{name}={entry}", base))
            except VariantError as exc:
                raise VariantError(f"{path}: [variants]: {exc}") from None
            continue
        if not isinstance(entry, dict):
            raise VariantError(f"{where}: expected a table or a string, got {excerpt(entry)}")
        entry = dict(entry)
        cmd_value = entry.pop("cmd", None)
        strategy = entry.pop("strategy", None)
        cmd: list[str] | None = None
        if cmd_value is not None:
            if isinstance(cmd_value, str):
                try:
                    cmd = shlex.split(cmd_value)
                except ValueError as exc:
                    raise VariantError(f"{where}: cmd: bad command {excerpt(cmd_value)}: "
                                       f"{exc}") from None
            elif isinstance(cmd_value, list) and all(isinstance(x, str) for x in cmd_value):
                cmd = list(cmd_value)
            else:
                raise VariantError(f"{where}: cmd: expected a string or a list of strings, "
                                   f"got {excerpt(cmd_value)}")
        if strategy is not None and not isinstance(strategy, str):
            raise VariantError(f"{where}: strategy: expected a string, got {excerpt(strategy)}")
        variants.append(
            _make(name, where, base, strategy=strategy, options=entry, cmd=cmd, toml_file=path)
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
        try:
            return str(path) if path.is_file() and os.access(path, os.X_OK) else None
        except (OSError, ValueError):  # a name the system refuses (too long, ...)
            return None
    return shutil.which(exe)


def checksums(variant: Variant) -> dict[str, str]:
    """sha256 of the files a variant plays with: the strategy file, or a command's files.

    For a command: the executable and every argument that names an existing file (a
    script given to an interpreter, a strategy file...), keyed by the text as written.

    Raises:
        VariantError: if the strategy file cannot be read.
    """
    kind = variant.kind
    if kind == "bot":  # the bot's module file, found without running it
        assert variant.strategy is not None
        from agent.agents import module_file

        origin = module_file(variant.strategy.partition(":")[0], variant.cwd)
        return {} if origin is None else {origin: sha256_file(Path(origin))}
    if kind == "file":
        assert variant.strategy is not None
        try:
            return {variant.strategy: sha256_file(Path(variant.strategy))}
        except OSError as exc:
            raise VariantError(
                f"variant {variant.name!r}: could not read strategy file "
                f"{excerpt(variant.strategy)}: {exc.strerror or exc}"
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
                f"variant {name!r}: command {excerpt(variant.cmd[0])} not found (or not "
                f"executable) in {variant.cwd}"
            )
        return
    assert variant.strategy is not None
    if kind == "file":
        try:
            found = Path(variant.strategy).is_file()
        except (OSError, ValueError):  # a name the system refuses (too long, ...)
            found = False
        if not found:
            raise VariantError(
                f"variant {name!r}: strategy file {excerpt(variant.strategy)} not found")
    elif kind == "builtin":
        from agent.agents import check_builtin

        try:
            check_builtin(variant.strategy)
        except ValueError as exc:
            raise VariantError(f"variant {name!r}: {exc}") from None
    if not deep:
        return
    from agent.acpc.gamefiles import load_game
    from agent.agents import BotSpecError, make_policy

    why = None
    try:
        game = load_game(game_spec)
        if variant.exploit is not None:
            from agent.exploit import exploit_support

            why = exploit_support(game, variant.exploit)
        if why is None:
            make_policy(variant.strategy, game, seed=0, mapping=variant.mapping,
                        purify=variant.purify, sizes_in=variant.sizes,
                        bot_path=variant.cwd if kind == "bot" else None,
                        exploit=variant.exploit_config())
    except BotSpecError as exc:  # exit status 2, as for acpc-agent
        raise BotSpecError(f"variant {name!r}: {exc}") from None
    except (AcpcError, ValueError, OSError) as exc:
        raise VariantError(f"variant {name!r}: {exc}") from None
    if why is not None:  # the option does not apply to the game: a usage error (exit 2)
        raise VariantUsageError(f"variant {name!r}: exploit={variant.exploit}: {why}")


_POLICY_CACHE: OrderedDict[tuple[str, str | None, str | None, str | None], Any] = OrderedDict()
_POLICY_CACHE_SIZE = 4
"""Base policies kept per process (least recently used dropped): a round robin of a few
file variants switches between them without loading a file again."""
_EXPLOIT_CACHE: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
"""Per exploiting variant (:attr:`Variant.identity` but the seed): the base policy and the
fresh exploiter of a policy that never plays; each seat gets a new base policy over its
strategy and a clone of the exploiter (:meth:`agent.exploit.Exploiter.clone`), as if
``acpc-agent --exploit`` had started anew."""


def make_seat_policy(
    variant: Variant, game: Game, seed: int, time_guard: float | None = None
) -> Any:
    """A fresh policy for one seat, as ``acpc-agent`` would build it (same seed), with the
    time guard ``time_guard`` seconds (None: no guard, as for the estimators, which have no
    clock).

    Strategy files are loaded once per process and shared (read-only) by the policies (the
    last few variants' base policies are kept).

    Raises:
        ValueError, StrategyFileError: as :func:`agent.agents.make_policy`.
    """
    from agent.agents import make_policy

    assert variant.strategy is not None
    guard = time_guard
    if variant.exploit is not None:
        return _exploiting_seat_policy(variant, game, seed, guard)
    if variant.kind != "file":
        return make_policy(variant.strategy, game, seed=seed, time_guard=guard,
                           bot_path=variant.cwd if variant.kind == "bot" else None)
    from agent.policy import StrategyPolicy

    key = (variant.strategy, variant.mapping, variant.purify, variant.sizes)
    base: Any = _POLICY_CACHE.get(key)
    if base is None:
        base = make_policy(variant.strategy, game, seed=seed, mapping=variant.mapping,
                           purify=variant.purify, time_guard=guard, sizes_in=variant.sizes)
        _POLICY_CACHE[key] = base
        while len(_POLICY_CACHE) > _POLICY_CACHE_SIZE:
            _POLICY_CACHE.popitem(last=False)
    else:
        _POLICY_CACHE.move_to_end(key)
    return StrategyPolicy(
        base.loaded, base.mapping, base.purification, seed=seed,
        mapping_name=base.mapping_name, time_guard=guard, sizes_in=base.sizes_in,
    )


def _exploiting_seat_policy(variant: Variant, game: Game, seed: int,
                            time_guard: float | None) -> Any:
    """:func:`make_seat_policy` for a variant with ``exploit``: the policy
    ``acpc-agent --exploit`` plays (:class:`agent.exploiting.ExploitingPolicy`, built by
    :func:`agent.agents.make_policy` once per process), fresh for every seat."""
    from agent.agents import make_policy
    from agent.exploiting import ExploitingPolicy
    from agent.policy import StrategyPolicy

    assert variant.strategy is not None
    key = (variant.strategy, variant.mapping, variant.purify, variant.sizes,
           variant.exploit, variant.exploit_options)
    entry = _EXPLOIT_CACHE.get(key)
    if entry is None:
        first = make_policy(variant.strategy, game, seed=seed, mapping=variant.mapping,
                            purify=variant.purify, sizes_in=variant.sizes,
                            exploit=variant.exploit_config())
        assert isinstance(first, ExploitingPolicy)
        entry = _EXPLOIT_CACHE[key] = (first.base, first.exploiter)
        while len(_EXPLOIT_CACHE) > _POLICY_CACHE_SIZE:
            _EXPLOIT_CACHE.popitem(last=False)
    else:
        _EXPLOIT_CACHE.move_to_end(key)
    base, exploiter = entry
    return ExploitingPolicy(
        StrategyPolicy(base.loaded, base.mapping, base.purification, seed=seed,
                       mapping_name=base.mapping_name, time_guard=time_guard,
                       sizes_in=base.sizes_in),
        exploiter.clone())

"""The file formats the product reads: their seeds, their mutations and the command that
reads each mutant (the oracle's entry point).

A :class:`Seed` is one valid input (a bundled file, or a small file written here by the
product's own writers) with the command line that reads it (``{file}`` is the mutant's path,
``{text}`` the mutant itself as one argument, ``{out}`` a fresh directory for whatever the
command writes, ``{seeds}`` the seeds' directory) and the mutator that fits it.
:func:`build_seeds` writes every seed into a directory once per run; :func:`make_mutant`
derives mutant ``k`` of a format from ``random.Random(f"{seed}:{format}:{k}")`` alone, so
an id ``format:seed:k`` reproduces it.
"""

from __future__ import annotations

import io
import json
import random
import re
import struct
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack

from agent.data import game_path, strategies_dir
from tests.fuzz.mutate import (
    encode_json,
    encode_msgpack,
    mutate_bytes,
    mutate_text,
    mutate_value,
)

ROOT = Path(__file__).resolve().parents[2]
STRATEGIES = strategies_dir()
GAMES = game_path("leduc.limit.2p.game").parent
LOGS = ROOT / "tests" / "data" / "logs"

SMALL_STRATEGIES = ("kuhn.limit.3p.strat", "leduc.limit.2p.strat", "leduc.nolimit.2p.fcpa.strat")
BIG_STRATEGIES = ("holdem.nolimit.2p.strat", "holdem.nolimit.2p.pa.strat")
"""Hold'em seeds: only with ``big`` (the long run), each mutant reads megabytes."""
SOLVED = "leduc.nolimit.2p.stack400.fcpa.strat"
"""A 25 kB strategy file solved for the seeds (one iteration): Leduc with stacks of 400,
where a few changed header bytes can ask for a huge betting tree."""
GAME_OF = {SOLVED: "leduc.nolimit.2p.stack400.game",
           "kuhn.limit.3p.strat": "kuhn.limit.3p.game",
           "leduc.limit.2p.strat": "leduc.limit.2p.game",
           "leduc.nolimit.2p.fcpa.strat": "leduc.nolimit.2p.game",
           "holdem.nolimit.2p.strat": "holdem.nolimit.2p.reverse_blinds.game",
           "holdem.nolimit.2p.pa.strat": "holdem.nolimit.2p.reverse_blinds.game"}
"""The game each strategy seed is played in (the agent's GAME argument)."""
SMALL_GAMES = ("kuhn.limit.3p.game", "kuhn.nolimit.2p.game", "leduc.limit.2p.game",
               "leduc.nolimit.2p.game", "holdem.limit.2p.reverse_blinds.game",
               "holdem.nolimit.2p.reverse_blinds.game", "royal.nolimit.2p.game",
               "nl3p_uneven.game")
"""Bundled games as seeds; with ``big``, every bundled game (3- to 6-player hold'em take a
second or more each to count)."""

ENTRIES = {
    "acpc-strategy": "strategies.cli:main",
    "acpc-log": "evaluation.logtool:main",
    "acpc-agent": "agent.cli:main",
    "acpc-match": "evaluation.cli:main",
    "acpc-agent-start": "tests.fuzz.harness:agent_start",
}
"""Each command's ``main(argv)``, run in process."""

FORMATS = ("strategy", "agent", "cards", "betting", "game", "openspiel", "log", "phh", "trace",
           "variants")


@dataclass(frozen=True)
class Seed:
    format: str
    name: str
    file: str
    """The seed's file name in the seeds directory."""
    command: str
    """A key of :data:`ENTRIES`."""
    argv: tuple[str, ...]
    mutator: str
    """A key of :data:`MUTATORS`."""
    mismatch_ok: bool = False
    """``acpc-log verify``: a mismatch report (``FILE:LINE: reason`` and two lines, exit 1)
    is its documented rejection."""


# --------------------------------------------------------------------------- mutators


def _strategy_parts(data: bytes) -> tuple[dict[str, Any], bytes]:
    (length,) = struct.unpack_from("<Q", data, 8)
    header = msgpack.unpackb(data[16:16 + length], raw=False)
    return header, data[header["table_offset"]:]


def _sign(header: Any) -> None:
    """Recompute the header's own checksum the way the product's writer does, if the product
    has one (a ``header_checksum`` key and :func:`agent.strategy.fileformat.header_checksum`):
    anyone can recompute it as easily, so a mutant must get past it to reach the checks
    behind it. Nothing to do for files without it."""
    from agent.strategy import fileformat

    sign = getattr(fileformat, "header_checksum", None)
    if sign is None or not isinstance(header, dict) or "header_checksum" not in header:
        return
    try:
        header["header_checksum"] = sign(header)
    except Exception:  # e.g. nested too deep to sign: the mutant keeps the old checksum
        return


def _strategy_file(header: dict[str, Any], table: bytes, *, keep_offset: bool,
                   sign: bool = True) -> bytes:
    """A strategy file around a (mutated) header: the table moved to the next 64-byte
    boundary after it, ``table_offset`` set to match unless the mutation chose it, and the
    header's checksum recomputed if it has one (unless ``sign`` is false)."""
    packed = encode_msgpack(header)
    offset = -(-(16 + len(packed)) // 64) * 64
    if not keep_offset and isinstance(header, dict):
        for _ in range(3):
            header["table_offset"] = offset
            packed = encode_msgpack(header)
            offset = -(-(16 + len(packed)) // 64) * 64
    if sign:
        _sign(header)  # a sha256 in hex, as long as the one it replaces
        packed = encode_msgpack(header)
    start = 16 + len(packed)
    return b"ACPCSTR1" + struct.pack("<Q", len(packed)) + packed + b"\0" * (
        offset - start) + table


def _rounds(part: Any, key: str) -> int:
    value = part.get(key) if isinstance(part, dict) else None
    return len(value) if isinstance(value, list) and value else 1


_ATTACKS: dict[str, Callable[[dict[str, Any]], None]] = {
    # the betting tree made huge by a few bytes (64 sizes per node, 255 raises a round)
    "many-sizes": lambda h: h["betting"].update(
        fractions=[[[i / 16 for i in range(1, 65)]]],
        max_raises=[255] * _rounds(h["betting"], "max_raises")),
    "huge-max-raises": lambda h: h["betting"].update(
        max_raises=[2**31] * _rounds(h["betting"], "max_raises")),
    # a table declared huge by the card abstraction or the header
    "huge-buckets": lambda h: h["cards"].update(
        buckets=[10**9] * _rounds(h["cards"], "buckets")),
    "table-len": lambda h: h.update(table_len=2**40),
    # data naming code
    "mapping-code": lambda h: h.update(default_mapping="os:getcwd"),
    "mapping-this": lambda h: h.update(default_mapping="this:x"),
}
"""Known hostile headers (issue 28), each tried as one mutation among the others."""
_AREA = {"many-sizes": "betting", "huge-max-raises": "betting", "huge-buckets": "cards"}


def _mutate_header(rng: random.Random, data: bytes, under: tuple[str, ...] = ()
                   ) -> tuple[str, bytes]:
    """One to three changes of the header (values, keys, or a known attack), ``under`` a
    key if given; the table kept and moved after the new header."""
    header, table = _strategy_parts(data)
    names = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        area = under if isinstance(header, dict) and all(
            isinstance(header.get(k), dict) for k in under) else ()
        attacks = [a for a in _ATTACKS if not under or _AREA.get(a) == under[0]]
        if attacks and rng.random() < 0.15:
            attack = rng.choice(attacks)
            try:
                _ATTACKS[attack](header)
            except (KeyError, TypeError, AttributeError):  # an earlier change removed it
                continue
            names.append(f"attack:{attack}")
        else:
            name, header = mutate_value(rng, header, under=area, big_ints=False)
            names.append(name)
    name = "+".join(names) or "none"
    return f"header:{name}", _strategy_file(header, table, keep_offset="table_offset" in name,
                                            sign="header_checksum" not in name)


def _strategy(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    roll = rng.random()
    if roll < 0.5:
        return _mutate_header(rng, data)
    if roll < 0.7:  # the table only
        _, table = _strategy_parts(data)
        name, out = mutate_bytes(rng, data, start=len(data) - len(table))
        return f"table:{name}", out
    return mutate_bytes(rng, data)


def _strategy_cards(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    return _mutate_header(rng, data, ("cards",))


def _strategy_betting(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    return _mutate_header(rng, data, ("betting",))


def _json(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """Values inside the document (mostly), else its text or bytes."""
    roll = rng.random()
    if roll < 0.6:
        doc = json.loads(data)
        name, doc = mutate_value(rng, doc)
        indent = 1 if data.startswith(b"{\n") else None
        return f"json:{name}", encode_json(doc, rng, indent=indent).encode()
    if roll < 0.85:
        name, text = mutate_text(rng, data.decode())
        return name, text.encode("utf-8", "surrogatepass")
    return mutate_bytes(rng, data)


def _inline_json(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """A spec typed on the command line: one argument, so no NUL and no surrogates."""
    for _ in range(10):
        name, out = _json(rng, data)
        text = out.decode("utf-8", "replace").replace("\0", "")
        if text:
            return name, text.encode()
    return name, b"{}"


def _text(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    if rng.random() < 0.8:
        name, text = mutate_text(rng, data.decode())
        return name, text.encode("utf-8", "surrogatepass")
    return mutate_bytes(rng, data)


def _json_lines(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """One record of a JSON-lines file changed at the value level (mostly), else lines."""
    lines = data.decode().split("\n")
    spots = [i for i, line in enumerate(lines) if line.strip()]
    if rng.random() < 0.6 and spots:
        i = rng.choice(spots)
        name, doc = mutate_value(rng, json.loads(lines[i]))
        lines[i] = encode_json(doc, rng)
        return f"record:{name}", "\n".join(lines).encode()
    return _text(rng, data)


_TOML_LINE = re.compile(r"^(\s*)([\w.\"-]+)(\s*=\s*)(.*)$")
_TOML_VALUES = ["inf", "nan", "-1", "0", "99999999999999999999", "9223372036854775807",
                "1e300", '"' + "x" * 100_000 + '"', "[" * 3000 + "]" * 3000, "{}", "[]",
                "true", '"os:getcwd"', '"builtin:nosuch"', '""', "1979-05-27T07:32:00Z",
                '{ strategy = "builtin:call", mapping = "os:getcwd" }',
                '{ strategy = "builtin:call", seed = -1 }', '"' + "9" * 5000 + '"']


def _toml(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    lines = data.decode().split("\n")
    spots = [i for i, line in enumerate(lines) if _TOML_LINE.match(line)]
    roll = rng.random()
    if roll < 0.5 and spots:
        i = rng.choice(spots)
        m = _TOML_LINE.match(lines[i])
        assert m is not None
        if rng.random() < 0.75:
            value = rng.choice(_TOML_VALUES)
            lines[i] = m.group(1) + m.group(2) + m.group(3) + value
            name = f"toml:value:{value[:12]}@{m.group(2)}"
        else:
            key = rng.choice([m.group(2) + "_", m.group(2).upper(), '""', "x" * 1000])
            lines[i] = m.group(1) + key + m.group(3) + m.group(4)
            name = f"toml:rename-key@{m.group(2)}"
        return name, "\n".join(lines).encode()
    return _text(rng, data)


MUTATORS: dict[str, Callable[[random.Random, bytes], tuple[str, bytes]]] = {
    "strategy": _strategy,
    "strategy-cards": _strategy_cards,
    "strategy-betting": _strategy_betting,
    "json": _json,
    "inline-json": _inline_json,
    "text": _text,
    "json-lines": _json_lines,
    "toml": _toml,
}


# --------------------------------------------------------------------------- seeds


def _cut_log(text: str, hands: int) -> str:
    """The header and first ``hands`` hands of a dealer log, with the SCORE line they sum
    to (each STATE line's values by player name)."""
    head = [re.sub(r"^(# name/game/hands/seed \S+ \S+ )\d+", rf"\g<1>{hands}", line)
            for line in text.splitlines() if line.startswith("#")]
    states = [line for line in text.splitlines() if line.startswith("STATE:")][:hands]
    totals: dict[str, int] = {}
    order: list[str] = []
    for line in states:
        fields = line.split(":")
        values, names = fields[4].split("|"), fields[5].split("|")
        for value, name in zip(values, names, strict=True):
            if name not in totals:
                order.append(name)
                totals[name] = 0
            totals[name] += int(value)
    score = "SCORE:" + "|".join(str(totals[n]) for n in order) + ":" + "|".join(order)
    return "\n".join([*head, *states, score]) + "\n"


def _leduc_trace(hands: int) -> str:
    """An agent trace written by the product's own trace writer: the bundled Leduc no-limit
    file at position 1 against a random opponent (timestamps and decision times fixed, so
    the seed is the same every run)."""
    from agent.acpc.betting import CALL, FOLD, Action, ActionKind, BettingState
    from agent.acpc.dealing import deal_hands
    from agent.acpc.describe import cards_text
    from agent.acpc.gamefiles import load_game
    from agent.acpc.matchstate import view_of
    from agent.agents import make_policy
    from agent.client import final_value

    game = load_game("leduc.nolimit.2p.game")
    stream = io.StringIO()
    policy: Any = make_policy("leduc.nolimit.2p.fcpa.strat", game, seed=1, trace=stream)
    rng = random.Random(1)
    deals = deal_hands(game, 1)
    for number in range(hands):
        deal = next(deals)
        state = BettingState.initial(game)
        while not state.finished:
            if state.player == 1:
                action = policy.act(view_of(1, number, state, deal.hole, deal.board))
            else:
                kind = rng.choice(state.legal_actions())
                if kind is ActionKind.RAISE:
                    lo, hi = state.raise_bounds() or (0, 0)
                    action = Action(kind, rng.choice([lo, hi]))
                else:
                    action = FOLD if kind is ActionKind.FOLD else CALL
            state = state.apply(action)
        ms = view_of(1, number, state, deal.hole, deal.board)
        policy.trace({"event": "result", "hand": number, "position": 1,
                      "betting": state.betting,
                      "hole_cards": [cards_text(h) for h in ms.hole_cards],
                      "board": cards_text(ms.board),
                      "chips": final_value(ms)})
    text = re.sub(r'"timestamp": "[^"]*"', '"timestamp": "2026-01-01T00:00:00Z"',
                  stream.getvalue())
    return re.sub(r'"seconds": [0-9.e-]+', '"seconds": 0.001', text)


def _holdem_trace(hands: int) -> str:
    """A hold'em trace's records (decisions of position 0, result records), for
    ``acpc-log phh`` (which reads hold'em only): random legal play."""
    from agent.acpc.betting import CALL, FOLD, Action, ActionKind, BettingState
    from agent.acpc.dealing import deal_hands
    from agent.acpc.describe import cards_text
    from agent.acpc.gamefiles import load_game
    from agent.acpc.matchstate import view_of

    game = load_game("holdem.nolimit.2p.reverse_blinds.game")
    rng = random.Random(2)
    deals = deal_hands(game, 2)
    records = []
    for number in range(hands):
        deal = next(deals)
        state = BettingState.initial(game)
        while not state.finished:
            kinds = state.legal_actions()
            kind = rng.choices(kinds, weights=[1 if k is ActionKind.FOLD else 4
                                               for k in kinds])[0]
            if kind is ActionKind.RAISE:
                lo, hi = state.raise_bounds() or (0, 0)
                action = Action(kind, rng.choice([lo, hi, rng.randint(lo, hi)]))
            else:
                action = FOLD if kind is ActionKind.FOLD else CALL
            if state.player == 0:
                records.append({"hand": number, "position": 0, "betting": state.betting,
                                "real": str(action), "fallback": None})
            state = state.apply(action)
        ms = view_of(0, number, state, deal.hole, deal.board)
        records.append({"event": "result", "hand": number, "position": 0,
                        "betting": state.betting,
                        "hole_cards": [cards_text(h) for h in ms.hole_cards],
                        "board": cards_text(ms.board)})
    return "".join(json.dumps(r) + "\n" for r in records)


def _solved(out: Path, game: str, name: str) -> bytes:
    """A strategy file written by ``acpc-strategy solve`` (one iteration, fcpa)."""
    import contextlib

    from strategies.cli import main

    target = out / name
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        status = main(["solve", "--game", game, "--abstraction", "fcpa", "--iterations", "1",
                       "--quiet", "--out", str(target),
                       "--checkpoint", str(out / "solve.ckpt.npz")])
    assert status == 0, f"solve failed: the seed {name} cannot be written"
    header, table = _strategy_parts(target.read_bytes())
    target.unlink()
    header["meta"].update(created="2026-01-01T00:00:00+00:00", seconds=0.0)  # same every run
    return _strategy_file(header, table, keep_offset=False)


def _phhs(log: str, game_name: str) -> str:
    """A cut log as ``acpc-log phh`` writes it (the seed of ``acpc-log from-phh``)."""
    from agent.acpc.gamefiles import load_game
    from dealer.phh import log_to_phhs

    text, _, _ = log_to_phhs(load_game(game_name), log.splitlines())
    return text


def _openspiel(out: Path, name: str, *flags: str) -> bytes:
    """A bundled file exported by ``acpc-strategy export-openspiel [flags]``."""
    import contextlib

    from strategies.cli import main

    target = out / "export.json"
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        status = main(["export-openspiel", name, "--out", str(target), *flags])
    assert status == 0, "export-openspiel failed: the OpenSpiel seed cannot be written"
    return target.read_bytes()


_TOML_SEEDS = {
    "kuhn3p.toml": 'game = "kuhn.limit.3p.game"\nhands = 10\nmatches = 1\nseed = 3\n\n'
                   '[variants]\nrandom = "builtin:random"\ncall = "builtin:call"\n'
                   'file = "kuhn.limit.3p.strat"\n',
    "leduc.toml": 'game = "leduc.nolimit.2p.game"\n\n[variants.fcpa]\n'
                  'strategy = "leduc.nolimit.2p.fcpa.strat"\nmapping = "det-arith"\n'
                  'purify = "full"\nseed = 5\n\n[variants.caller]\nstrategy = "builtin:call"\n',
}

_BETTING = {
    "fcpa.json": {"name": "fcpa", "fold": True, "all_in": True, "fractions": [[[1.0]]],
                  "max_raises": [255]},
    "halfpot.json": {"name": "hp", "fold": True, "all_in": True,
                     "fractions": [[[0.5, 1.0], [1.0]]], "max_raises": [3, 2]},
}


def build_seeds(out: Path, *, big: bool = False) -> list[Seed]:
    """Write every seed into ``out``; the seeds, in a fixed order."""
    out.mkdir(parents=True, exist_ok=True)
    seeds: list[Seed] = []

    def add(fmt: str, name: str, data: bytes, command: str, argv: tuple[str, ...],
            mutator: str, **kw: Any) -> None:
        path = out / f"{fmt}--{name}"
        path.write_bytes(data)
        seeds.append(Seed(fmt, name, path.name, command, argv, mutator, **kw))

    inspect = ("inspect", "{file}", "--samples", "2")
    strategies = {name: (STRATEGIES / name).read_bytes()
                  for name in SMALL_STRATEGIES + (BIG_STRATEGIES if big else ())}
    strategies[SOLVED] = _solved(out, "leduc.nolimit.2p.stack400.game", SOLVED)
    for name, data in strategies.items():
        add("strategy", name, data, "acpc-strategy", inspect, "strategy")
        add("cards", name, data, "acpc-strategy", inspect, "strategy-cards")
        add("betting", name, data, "acpc-strategy", inspect, "strategy-betting")
    for name, data in strategies.items():
        # the agent's start reads the same files (issue 28: "one validation")
        add("agent", name, data, "acpc-agent-start",
            (GAME_OF[name], "127.0.0.1", "9", "--strategy", "{file}", "--quiet"), "strategy")
    solve = ("solve", "--game", "leduc.limit.2p.game", "--iterations", "1", "--quiet",
             "--out", "{out}/s.strat", "--checkpoint", "{out}/s.ckpt.npz")
    add("cards", "lossless.json", b'{"kind": "lossless"}', "acpc-strategy",
        (*solve, "--cards", "{text}"), "inline-json")
    for name, spec in _BETTING.items():
        packed = json.dumps(spec).encode()
        add("betting", f"size-{name}", packed, "acpc-strategy",
            ("size", "leduc.nolimit.2p.game", "--abstraction", "{text}",
             "--max-transitions", "200000"), "inline-json")
        add("betting", f"solve-{name}", packed, "acpc-strategy",
            ("solve", "--game", "leduc.nolimit.2p.game", "--abstraction", "{file}",
             "--iterations", "1", "--quiet", "--out", "{out}/s.strat",
             "--checkpoint", "{out}/s.ckpt.npz"), "json")
    for path in sorted(GAMES.glob("*.game")):
        if not big and path.name not in SMALL_GAMES:
            continue
        # no-limit games counted with an abstraction: the full game is too big for a mutant
        betting = ("--abstraction", "fcpa") if "nolimit" in path.read_text() else ()
        add("game", path.name, path.read_bytes(), "acpc-strategy",
            ("size", "{file}", *betting, "--max-transitions", "20000"), "text")
    cut = {name: _cut_log((LOGS / name).read_text(), hands)
           for name, hands in (("leduc_1000.log", 40), ("kuhn3p_1000.log", 40),
                               ("nl1000.log", 25), ("lim2p_1000.log", 25))}
    add("game", "leduc.limit.2p.game+log", (GAMES / "leduc.limit.2p.game").read_bytes(),
        "acpc-log", ("verify", "{file}", "{seeds}/log--leduc_1000.log"), "text",
        mismatch_ok=True)
    for name, game in (("leduc_1000.log", "leduc.limit.2p.game"),
                       ("kuhn3p_1000.log", "kuhn.limit.3p.game"),
                       ("nl1000.log", "holdem.nolimit.2p.reverse_blinds.game")):
        add("log", name, cut[name].encode(), "acpc-log", ("verify", game, "{file}"), "text",
            mismatch_ok=True)
    add("log", "allin-ev-lim2p.log", cut["lim2p_1000.log"].encode(), "acpc-log",
        ("allin-ev", "holdem.limit.2p.reverse_blinds.game", "{file}"), "text")
    # Kuhn's policy is 5 kB; Leduc's (200 kB, 936 information states) in the long run
    for name in ("kuhn.limit.3p.strat", *(("leduc.limit.2p.strat",) if big else ())):
        add("openspiel", name.replace(".strat", ".json"), _openspiel(out, name),
            "acpc-strategy", ("import-openspiel", "{file}", "--out", "{out}/o.strat"), "json")
    # universal_poker: its parameters reach OpenSpiel, which aborts on some bad ones
    add("openspiel", "kuhn.limit.3p.universal.json",
        _openspiel(out, "kuhn.limit.3p.strat", "--openspiel-game", "universal_poker"),
        "acpc-strategy", ("import-openspiel", "{file}", "--out", "{out}/o.strat"), "json")
    nl = "holdem.nolimit.2p.reverse_blinds.game"
    add("phh", "nl1000.log", cut["nl1000.log"].encode(), "acpc-log",
        ("phh", nl, "{file}", "--out", "{out}/h.phhs"), "text")
    add("phh", "holdem.trace.jsonl", _holdem_trace(20).encode(), "acpc-log",
        ("phh", nl, "{file}", "--out", "{out}/h.phhs"), "json-lines")
    add("phh", "nl1000.phhs", _phhs(cut["nl1000.log"], nl).encode(), "acpc-log",
        ("from-phh", nl, "{file}", "--out", "{out}/l.log"), "toml")
    add("trace", "leduc.trace.jsonl", _leduc_trace(15).encode(), "acpc-agent",
        ("explain", "{file}"), "json-lines")
    # hands, matches, jobs and transport fixed on the command line (it overrides the file),
    # and one variant more: a mutant without variants would otherwise run the default
    # setup (hold'em, minutes), which is a usage, not a file, matter
    for name, text in _TOML_SEEDS.items():
        tomllib.loads(text)
        add("variants", name, text.encode(), "acpc-match",
            ("--variants", "{file}", "--variant", "fuzz=builtin:call", "--hands", "2",
             "--matches", "1", "--workers", "1", "--transport", "inproc", "--run-dir",
             "{out}/run", "--quiet"), "toml")
    return seeds


# --------------------------------------------------------------------------- mutants


@dataclass(frozen=True)
class Mutant:
    id: str
    """``format:seed:k``."""
    seed: Seed
    mutation: str
    data: bytes


def mutant_id(fmt: str, seed: int, k: int) -> str:
    return f"{fmt}:{seed}:{k}"


def make_mutant(seeds: list[Seed], seeds_dir: Path, ident: str) -> Mutant:
    """Mutant ``format:seed:k``: chosen and mutated by its own random generator."""
    fmt, seed_text, k = ident.split(":")
    rng = random.Random(f"{seed_text}:{fmt}:{k}")
    choices = [s for s in seeds if s.format == fmt]
    seed = rng.choice(choices)
    data = (seeds_dir / seed.file).read_bytes()
    name, mutated = MUTATORS[seed.mutator](rng, data)
    if seed.format == "variants":  # never let a mutant name a command to run
        mutated = mutated.replace(b"cmd", b"cmx")
    return Mutant(ident, seed, name, mutated)

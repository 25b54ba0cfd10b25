"""``acpc-dealer``: the command line of the reference dealer, plus ``--host`` and ``--log-dir``.

``acpc-dealer MATCH_NAME GAMEDEF NUM_HANDS SEED NAME... [options]`` with the reference options
``-f -l -L -p p1,p2,.. -q -t -T -a --t_response --t_hand --t_per_hand --start_timeout``
(milliseconds; also spelled as ``acpc-match`` spells them: ``--quiet``,
``--t-response-ms``, ``--t-hand-ms``, ``--t-per-hand-ms``, ``--start-timeout-ms``); options
may stand before, between or after the positional arguments, short flags may be combined
(``-qT``) and long options abbreviated, as with the reference's ``getopt_long``. Bad
arguments get the reference's ``ERROR:`` wording and exit status 1.

Imports only the stdlib, :mod:`agent.acpc`, :mod:`agent.acpc.gamefiles` and :mod:`dealer`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent.acpc.errors import AcpcError, GameDefError, whole_lines
from agent.acpc.gamedef import parse_gamedef
from agent.acpc.gamefiles import read_game_text
from dealer.engine import MatchConfig
from dealer.logfile import DEFAULT_T_HAND_MS, DEFAULT_T_PER_HAND_MS, DEFAULT_T_RESPONSE_MS
from dealer.server import OBSERVER_DELAY_MS, ServerOptions, run

PROG = "acpc-dealer"
UINT32_MAX = 2**32 - 1


class _Fail(AcpcError, ValueError):
    pass


def _uint(text: str, limit: int) -> int | None:
    text = text.strip()
    if not text.isdigit():
        return None
    value = int(text)
    return value if value <= limit else None


def _parse_ports(text: str) -> tuple[int, ...]:
    ports = []
    for part in text.split(","):
        value = _uint(part, 65535)
        if value is None:
            raise _Fail(f"ERROR: bad port string {text}")
        ports.append(value)
    return tuple(ports)


class _Parser(argparse.ArgumentParser):
    """An abbreviation that matches two spellings of one option (``--start``:
    ``--start_timeout`` and ``--start-timeout-ms``) is that option, as the reference's
    ``getopt_long`` took ``--start`` before the second spelling existed."""

    def _get_option_tuples(self, option_string: str) -> list[Any]:
        found: dict[int, Any] = {}
        for option in super()._get_option_tuples(option_string):
            found.setdefault(id(option[0]), option)
        return list(found.values())


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for the documentation and tests)."""
    p = _Parser(
        prog=PROG,
        usage=f"{PROG} matchName gameDefFile #Hands rngSeed p1name p2name ... [options]",
        description="A drop-in replacement for the ACPC reference dealer.",
    )
    p.add_argument("match_name")
    p.add_argument("game_file")
    p.add_argument("hands")
    p.add_argument("seed")
    p.add_argument("names", nargs="+", metavar="name")
    p.add_argument("-f", dest="fixed_seats", action="store_true",
                   help="use fixed dealer button at table")
    p.add_argument("-l", dest="log", action="store_false", default=True,
                   help="disable the log file")
    p.add_argument("-L", dest="log", action="store_true", help="enable the log file (default)")
    p.add_argument("-p", dest="ports", default="",
                   help="player1_port,player2_port,... (0 or missing = any free port)")
    p.add_argument("-q", "--quiet", dest="quiet", action="store_true",
                   help="only print errors, warnings, and final value to stderr")
    p.add_argument("-t", dest="transactions", action="store_false", default=False,
                   help="disable the transaction file (default)")
    p.add_argument("-T", dest="transactions", action="store_true",
                   help="enable the transaction file MATCH.tlog")
    p.add_argument("-a", dest="append", action="store_true",
                   help="append to log/transaction files; with -T, resume the match recorded "
                   "in MATCH.tlog")
    p.add_argument("--t_response", "--t-response-ms", dest="t_response",
                   default=str(DEFAULT_T_RESPONSE_MS),
                   help="maximum time per response [ms]")
    p.add_argument("--t_hand", "--t-hand-ms", dest="t_hand", default=str(DEFAULT_T_HAND_MS),
                   help="maximum player time per hand [ms]")
    p.add_argument("--t_per_hand", "--t-per-hand-ms", dest="t_per_hand",
                   default=str(DEFAULT_T_PER_HAND_MS),
                   help="maximum average player time per hand over the match [ms]")
    p.add_argument("--start_timeout", "--start-timeout-ms", dest="start_timeout",
                   default="-1",
                   help="maximum time to wait for players to connect [ms]; <0 = none")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--log-dir", type=Path, default=Path("."),
                   help="directory for MATCH.log and MATCH.tlog (default: current)")
    p.add_argument("--observer-delay", type=float, default=OBSERVER_DELAY_MS, metavar="MS",
                   help="hold states for a seat that is not to act up to this long, to join "
                   f"them with the next write to it (default {OBSERVER_DELAY_MS:g}; 0 = write "
                   "every state at once, as the reference does)")
    return p


def parse_args(argv: Sequence[str]) -> tuple[MatchConfig, ServerOptions]:
    """Turn a command line into a match and server options.

    Raises:
        _Fail: with the reference's ERROR line.
    """
    parser = build_parser()
    args = parser.parse_intermixed_args(argv)
    timeouts = {}
    for key, what in (
        ("t_response", "response timeout"),
        ("t_hand", "player hand timeout"),
        ("t_per_hand", "average player hand timeout"),
    ):
        value = _uint(getattr(args, key), 2**63)
        if value is None:
            raise _Fail(f"ERROR: could not get {what} from {getattr(args, key)}")
        timeouts[key] = value
    try:
        start_timeout = int(args.start_timeout)
    except ValueError:
        raise _Fail(f"ERROR: could not get start timeout {args.start_timeout}") from None
    ports = _parse_ports(args.ports) if args.ports else ()
    if not 0 <= args.observer_delay <= 60_000:
        raise _Fail(
            f"ERROR: expected --observer-delay in 0..60000 ms, got {args.observer_delay!r}"
        )
    try:
        text, source = read_game_text(args.game_file)
        game = parse_gamedef(text, source)
    except GameDefError as exc:
        raise _Fail(f"ERROR: could not read game {args.game_file}: {exc}") from None
    if len(args.names) < game.num_players:
        raise _Fail(
            f"ERROR: expected {game.num_players} player names for {args.game_file}, "
            f"got {len(args.names)}: {args.names!r}"
        )
    if len(args.names) > game.num_players:
        extra = args.names[game.num_players:]
        print(f"WARNING: {len(args.names)} player names for a {game.num_players}-player game: "
              f"{' '.join(extra)} ignored (as the reference dealer does)", file=sys.stderr)
    hands = _uint(args.hands, UINT32_MAX)
    if not hands:
        raise _Fail(f"ERROR: invalid number of hands {args.hands}")
    seed = _uint(args.seed, UINT32_MAX)
    if seed is None:
        raise _Fail(f"ERROR: invalid random number seed {args.seed}")
    config = MatchConfig(
        match_name=args.match_name,
        game_file=args.game_file,
        game=game,
        num_hands=hands,
        seed=seed,
        seat_names=tuple(args.names[: game.num_players]),
        fixed_seats=args.fixed_seats,
        quiet=args.quiet,
        t_response_ms=timeouts["t_response"],
        t_hand_ms=timeouts["t_hand"],
        t_per_hand_ms=timeouts["t_per_hand"],
        transactions=args.transactions,
    )
    options = ServerOptions(
        host=args.host,
        ports=ports,
        log_dir=args.log_dir,
        write_log=args.log,
        append=args.append,
        start_timeout_ms=start_timeout,
        observer_delay_ms=args.observer_delay,
    )
    return config, options


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``acpc-dealer``; returns the exit status."""
    whole_lines()
    try:
        config, options = parse_args(sys.argv[1:] if argv is None else argv)
    except _Fail as exc:
        print(exc, file=sys.stderr)
        return 1
    except SystemExit as exc:  # argparse usage errors
        return 1 if exc.code else 0
    try:
        return run(config, options)
    except KeyboardInterrupt:  # 130, as a shell reports a process SIGINT ended
        print("ERROR: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

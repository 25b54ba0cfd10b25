"""``acpc-agent explain TRACE [--hand N]``: a decision trace told as a story, hand by hand.

A trace (``acpc-agent --trace FILE``) is one JSON line per decision, and one per finished
hand (``event: result``); the fields are listed in :mod:`agent.policy`. For each hand this
prints what came in (cards, board, the betting so far and the legal actions), how the
opponents' raises were read (the real size ``x`` as a pot fraction, the abstract sizes ``A``
and ``B`` around it, the mapping's probability of ``A`` and the draw that decided), what
the strategy said (the abstract node, the bucket, the distribution before and after
purification beside each action's name), what was played and why (the draw, or the
fallback that played instead), and how the hand ended.

Traces written before the fields for people existed (no ``cards``, ``actions``) are told
with what they have. Imports the stdlib, :mod:`agent.acpc` and the purification module
(stdlib only).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO, TypeGuard

from agent.acpc.errors import UsageError
from agent.acpc.limits import MAX_RECORD_LINE_BYTES, check_json, excerpt, read_lines
from agent.strategy.purification import sample_index

PROG = "acpc-agent explain"


def read_trace(path: Path) -> list[dict[str, Any]]:
    """The records of a trace file (:func:`iter_trace`), as a list.

    Raises:
        UsageError: for a line that is not a record (the file and line are named).
        OSError: if the file cannot be read.
    """
    return list(iter_trace(path))


def iter_trace(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a trace file, streamed and checked: one JSON object with an integer
    ``hand`` per line (blank lines skipped), each line UTF-8, at most
    :data:`~agent.acpc.limits.MAX_RECORD_LINE_BYTES` long and nested at most
    :data:`~agent.acpc.limits.MAX_JSON_DEPTH` deep (checked before it is parsed).

    Raises:
        UsageError: for a line that is not such an object (the file and line are named).
        OSError: if the file cannot be read.
    """
    what = "an agent trace (acpc-agent --trace)"
    with path.open("rb") as handle:
        for number, line in read_lines(handle, source=str(path), what=what, error=UsageError):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            check_json(line, where=where, what="a trace record",
                       max_chars=MAX_RECORD_LINE_BYTES, error=UsageError)
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if not isinstance(record, dict) or not isinstance(record.get("hand"), int):
                raise UsageError(
                    f"expected a JSON object with an integer 'hand' per line of {what} at "
                    f"{where}, got {excerpt(line.strip())}")
            _check_fields(record, where)
            yield record


_TEXT_LISTS = ("legal", "actions", "hole_cards")
"""Record fields told by joining their items: lists of strings (or null)."""
_NUMBER_LISTS = ("raw", "purified")
"""Record fields computed with: lists of numbers (or null)."""
_NUMBERS = ("seconds",)
"""Record fields computed with when present: numbers."""


def _check_fields(record: dict[str, Any], where: str) -> None:
    """The fields :func:`tell_hand` computes with have the types it needs (the others are
    printed as they are).

    Raises:
        UsageError: naming the line and field, with an excerpt of what came.
    """
    def bad(field: str, expected: str) -> UsageError:
        return UsageError(f"{where}: expected '{field}' to be {expected}, got "
                          f"{excerpt(record[field])}")

    for field in _TEXT_LISTS:
        value = record.get(field)
        if value is not None and (not isinstance(value, list)
                                  or not all(isinstance(v, str) for v in value)):
            raise bad(field, "a list of strings")
    for field in _NUMBER_LISTS:
        value = record.get(field)
        if value is not None and (not isinstance(value, list) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in value)):
            raise bad(field, "a list of numbers")
    for field in _NUMBERS:
        if field in record and (not isinstance(record[field], int | float)
                                or isinstance(record[field], bool)):
            raise bad(field, "a number")
    translations = record.get("translations")
    if translations is not None and (not isinstance(translations, list)
                                     or not all(isinstance(t, dict) for t in translations)):
        raise bad("translations", "a list of objects")
    info = record.get("resolve")
    if info is not None:
        if not isinstance(info, dict):
            raise bad("resolve", "an object")
        actions, probs = info.get("actions"), info.get("probs")
        if actions is not None and (not isinstance(actions, list)
                                    or not all(isinstance(v, str) for v in actions)):
            raise bad("resolve", "an object whose 'actions' is a list of strings")
        if probs is not None and (not isinstance(probs, list) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in probs)):
            raise bad("resolve", "an object whose 'probs' is a list of numbers")


def hands(records: Iterable[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """The records grouped by hand number, in the order they came."""
    out: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        out.setdefault(int(record["hand"]), []).append(record)
    return out


def _num(value: Any, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) else "?"


def tell_translation(t: dict[str, Any]) -> str:
    """One opponent raise and how it was read."""
    real = t.get("real_text") or t.get("real", "?")
    if "fallback" in t:
        return f"the opponent's {real}: no more raises in the abstraction, read as a call"
    between = t.get("between")
    a_name, b_name = between if isinstance(between, list) and len(between) == 2 else (
        "A", "B")
    head = f"the opponent's {real} is {_num(t.get('x'))} pots (x)"
    if t.get("all_in_rule"):
        return f"{head}: a real all-in, read as the abstract all-in"
    if t.get("A") == t.get("B"):
        return f"{head}, read as {a_name} ({_num(t.get('A'))})"
    text = (f"{head}, between A = {a_name} ({_num(t.get('A'))}) and "
            f"B = {b_name} ({_num(t.get('B'))})")
    mapping = t.get("mapping") or "the mapping"
    f = t.get("f")
    if not isinstance(f, (int, float)):
        return f"{text} -> {t.get('choice')}"
    if f in (0.0, 1.0):
        return f"{text}; {mapping} reads it as {a_name if f == 1.0 else b_name} for sure"
    u = t.get("u")
    if not isinstance(u, (int, float)):
        return f"{text}; {mapping} gives P(A) = {_num(f)} -> {t.get('choice')}"
    return (f"{text}; {mapping} gives P(A) = {_num(f)}, draw u = {_num(u)} "
            f"{'<' if u < f else '>='} P(A) -> {a_name if u < f else b_name}")


def _table(record: dict[str, Any]) -> list[str]:
    raw = record.get("raw") or []
    purified = record.get("purified") or []
    names = record.get("actions") or [f"action {i}" for i in range(len(raw))]
    width = max([len("action")] + [len(str(n)) for n in names])
    chosen = record.get("abstract_index")
    lines = [f"{'action':<{width}}  strategy  purified ({record.get('purify', '?')})"]
    for i, name in enumerate(names):
        p = raw[i] if i < len(raw) else None
        q = purified[i] if i < len(purified) else None
        mark = "  <-" if chosen == i else ""
        lines.append(f"{name!s:<{width}}  {_num(p):>8}  {_num(q):>8}{mark}")
    return lines


def _chosen_index(record: dict[str, Any]) -> int | None:
    """Which action the draw picked (the policy's own rule, :func:`sample_index`), or None
    when the record cannot say."""
    purified = record.get("purified")
    u = record.get("draw")
    if not isinstance(purified, list) or not isinstance(u, (int, float)) or not purified:
        return None
    return sample_index(purified, u)


SOURCES = {
    "blueprint": "from the blueprint's round-0 plan (translation expanded over the "
                 "subgame's actions)",
    "plan": "from this hand's current re-solve (the state is in its subgame)",
    "translation": "translated: not a re-solved round (hold'em and Royal re-solve their "
                   "last round only; in off-tree mode, the last round while the opponent "
                   "has kept to the blueprint's actions)",
}
"""How a re-solving decision that did not re-solve is told, by its ``source``."""


def tell_resolve(info: dict[str, Any]) -> list[str]:
    """A re-solving decision's ``resolve`` object (:mod:`agent.resolving`): where the
    distribution came from (a re-solve: its size, budget, time and accuracy)."""
    source = info.get("source")
    budget = info.get("budget_ms")
    if source == "resolve":
        solve = info.get("solve_seconds")
        ms = _num(1000 * solve, 2) if _is_num(solve) else "?"
        lines = [f"re-solved ({info.get('mode', '?')} mode, gadget {info.get('gadget', '?')}):"
                 f" subgame of {info.get('nodes', '?')} public nodes x {info.get('hands', '?')}"
                 f" hands ({info.get('live_hands', '?')} opponent hands in the gadget), "
                 f"{info.get('iterations', '?')} CFR+ iterations in "
                 f"{ms} ms"
                 f"{f' (budget {budget:g} ms)' if _is_num(budget) else ''}",
                 f"accuracy: exploitability {_num(info.get('exploitability'), 6)} chips/hand "
                 f"({_num(info.get('relative_exploitability'), 6)} per visit of its root), "
                 f"min margin {_num(info.get('min_margin'), 6)}"]
        if info.get("depth") is not None:
            leaf = info.get("leaf")
            lines.append(f"depth limit {info['depth']} round(s): " + (
                f"{info.get('leaves', '?')} leaves, "
                f"{'single-valued (blueprint)' if leaf == 'blueprint' else 'multi-valued'}"
                f" continuations" if leaf else "the subgame reaches the end of the game"))
    else:
        lines = [SOURCES.get(str(source), f"source {source}")]
    fallback = info.get("fallback")
    if fallback:
        why = f"{fallback}" + (f" ({info['error']})" if info.get("error") else "")
        if fallback == "earlier in the hand":
            why = "the re-solver fell back earlier in this hand: translation plays it out"
        lines = ([] if source is None else lines) + [f"re-solving fell back: {why}"]
    return lines


def _is_num(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _resolve_table(info: dict[str, Any]) -> tuple[list[str], str]:
    """The re-solved distribution, ``<-`` at the action drawn; and that action's name."""
    names = info.get("actions") or []
    probs = info.get("probs") or []
    u = info.get("draw")
    chosen = sample_index(probs, u) if probs and _is_num(u) else None
    width = max([len("action")] + [len(str(n)) for n in names])
    lines = [f"{'action':<{width}}  probability"]
    for i, name in enumerate(names):
        p = probs[i] if i < len(probs) else None
        lines.append(f"{name!s:<{width}}  {_num(p):>11}{'  <-' if chosen == i else ''}")
    name = names[chosen] if chosen is not None and chosen < len(names) else "?"
    return lines, name


def tell_exploit(info: dict[str, Any]) -> str:
    """An exploiting agent's state at a decision (``acpc-agent --exploit``'s ``exploit``)."""
    mode = info.get("mode", "?")
    text = (f"exploit {mode}: learned from {info.get('hands', '?')} hands, "
            f"{info.get('refits', '?')} refits, ")
    if mode == "safe" and isinstance(info.get("mix"), list):
        mix = ", ".join(_num(x) for x in info["mix"])
        risk = ", ".join(_num(x) for x in info.get("risk") or [])
        return text + (f"best response weight per position {mix} (worst-case loss {risk}) "
                       f"within the budget {_num(info.get('budget'))}")
    return text + ("playing the best response to the model" if info.get("exploiting") else
                   "playing the equilibrium (warm-up)")


def tell_decision(record: dict[str, Any]) -> list[str]:
    """One decision: what came in, how it was read, what was played and why."""
    lines = [f"betting {record.get('betting', '')!r}, board {record.get('board', '?')}; "
             f"legal: {', '.join(record.get('legal') or ['?'])}"]
    info = record.get("resolve")
    if isinstance(info, dict):
        lines.extend("  " + x for x in tell_resolve(info))
        if not info.get("fallback"):
            table, name = _resolve_table(info)
            lines.extend("    " + row for row in table)
            seconds = record.get("seconds")
            lines.append(f"  draw {_num(info.get('draw'))} -> {name}; played "
                         f"{record.get('played') or record.get('real', '?')} "
                         f"({_num(1000 * seconds, 2) if _is_num(seconds) else '?'} ms)")
            return lines
    exploit = record.get("exploit")
    if isinstance(exploit, dict):
        lines.append("  " + tell_exploit(exploit))
    for t in record.get("translations") or []:
        lines.append("  " + tell_translation(t))
    fallback = record.get("fallback")
    played = record.get("played") or record.get("real", "?")
    if fallback:
        why = {
            "off-tree: check/call": "the abstract history has left the real one: "
                                    "check/call to the end of the hand",
            "abstract round ended: check/call": "the abstract round ended before the real "
                                                "one: check/call until the next round",
            "time guard: check/call": "the decision overran its time guard: check/call",
        }.get(str(fallback), str(fallback))
        lines.append(f"  {why}; played {played}")
        return lines
    lines.append(f"  abstract node {record.get('node')} (sequence {record.get('key', '?')!r}),"
                 f" bucket {record.get('bucket')}")
    record = dict(record, abstract_index=_chosen_index(record))
    lines.extend("    " + row for row in _table(record))
    choice = record["abstract_index"]
    names = record.get("actions") or []
    name = names[choice] if isinstance(choice, int) and choice < len(names) else \
        record.get("abstract", "?")
    lines.append(f"  draw {_num(record.get('draw'))} -> {name}; played {played} "
                 f"({_num(1000 * record['seconds'], 2) if 'seconds' in record else '?'} ms)")
    return lines


def tell_hand(number: int, records: Sequence[dict[str, Any]]) -> list[str]:
    """A whole hand: its decisions and, when the trace has it, the result."""
    decisions = [r for r in records if r.get("event", "decision") == "decision"]
    results = [r for r in records if r.get("event") == "result"]
    first = (decisions or list(records))[0]
    seat = first.get("position")
    head = f"hand {number}: position {seat}"
    if first.get("cards"):
        head += f", cards {first['cards']}"
    if decisions and decisions[0].get("strategy"):
        head += f" (strategy {decisions[0]['strategy']})"
    lines = [head]
    for record in decisions:
        lines.extend("  " + line for line in tell_decision(record))
    for result in results:
        chips = result.get("chips")
        if isinstance(chips, (int, float)):
            amount = f"{abs(chips):g} chip{'' if abs(chips) == 1 else 's'}"
            verdict = f"won {amount}" if chips > 0 else f"lost {amount}" if chips < 0 else \
                "broke even"
        else:
            verdict = "result unknown"
        shown = " | ".join(result.get("hole_cards") or [])
        lines.append(f"  {verdict}: betting {result.get('betting', '')!r}, cards {shown}, "
                     f"board {result.get('board', '--')}")
    return lines


def explain(records: Iterable[dict[str, Any]], out: TextIO, *,
            only: Sequence[int] | None = None, limit: int | None = None) -> int:
    """Print the story of the selected hands of ``records``; returns how many were told.
    With ``only``, the records of other hands are dropped as they come (a stream of any
    length takes the memory of the hands asked for).

    Raises:
        UsageError: if a hand asked for is not in the trace.
    """
    seen: list[int] = []  # the lowest and highest hand numbers, for the message

    def kept(stream: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        wanted = set(only or ())
        for record in stream:
            number = int(record["hand"])
            seen[:] = [min(seen[0], number), max(seen[1], number)] if seen else [number,
                                                                                    number]
            if not wanted or number in wanted:
                yield record

    grouped = hands(kept(records))
    if only:
        missing = [n for n in only if n not in grouped]
        if missing:
            span = f"{seen[0]}..{seen[1]}" if seen else "none"
            raise UsageError(f"expected hands the trace holds ({span}), got --hand "
                             f"{missing[0]!r}")
        numbers = list(only)
    else:
        numbers = list(grouped)
    if limit is not None:
        numbers = numbers[:limit]
    for i, number in enumerate(numbers):
        if i:
            out.write("\n")
        out.write("\n".join(tell_hand(number, grouped[number])) + "\n")
    return len(numbers)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="Tell a decision trace (acpc-agent --trace) hand by hand.")
    p.add_argument("trace", type=Path, help="a trace file written by acpc-agent --trace")
    p.add_argument("--hand", type=int, action="append", default=None, metavar="N",
                   help="tell hand N only (repeatable; default: every hand)")
    p.add_argument("--limit", type=int, default=None, metavar="K",
                   help="tell at most K hands")
    return p


def main(argv: Sequence[str], out: TextIO, err: TextIO) -> int:
    """``acpc-agent explain``; returns the exit status (1 for a bad file or hand)."""
    args = build_parser().parse_args(argv)
    if args.limit is not None and args.limit < 1:
        build_parser().error(f"expected --limit of at least 1, got {args.limit!r}")
    try:
        told = explain(iter_trace(args.trace), out, only=args.hand, limit=args.limit)
    except (UsageError, OSError) as exc:
        print(f"{PROG}: error: {exc}", file=err)
        return 1
    if not told:
        print(f"{PROG}: error: expected decisions in {args.trace}, got an empty trace",
              file=err)
        return 1
    return 0

"""The live agent of a strategy file: :class:`StrategyPolicy` samples the decision model.

The rules (translation with its mapping, ``A``/``B``, ``f``, the draw and the size
convention; the bucket, the row, purification, sampling, realisation; every fallback) are
described and defined once, in :mod:`agent.decision`. The policy keeps the hand's abstract
history, draws its private randomness from one seeded :class:`random.Random` (once per
translated opponent raise, in the order of the real actions, then once per decision the
strategy makes), counts the fallbacks (:class:`PolicyStats`), applies the time guard, swaps
strategies between hands (:meth:`StrategyPolicy.swap`) and reports every decision to a
``trace`` callback.

The guard's clock starts once the decision can run: a card abstraction still loading in
the background (:mod:`agent.abstraction.deferred`, ``acpc-agent`` without ``--preload``) is
waited for first, so loading or compiling is never charged to a decision and the guard
fires only for a decision that is itself slow (a timing-dependent result, which
``acpc-match`` counts per variant and warns about).

The policy is deterministic for a given seed: the same sequence of inputs gives the same
actions. Every decision can be reported to a ``trace`` callback as a dict (one JSON line of
``acpc-agent --trace``; :mod:`agent.explain` tells it as a story):

* ``hand``, ``position``, ``betting`` (the real betting so far, ACPC text), ``cards`` and
  ``board`` (``As Kd``; ``--`` for none), ``legal`` (the legal real actions in words);
* ``translations``: the opponents' raises translated since this hand's previous decision,
  each with ``real``/``real_text``, ``x`` (its pot fraction in the real state), ``A`` and
  ``B`` (the bracketing abstract sizes; the call is 0, the all-in its fraction), ``between``
  (the names of the two abstract actions: ``check/call``, ``pot``, ``all-in``, ...),
  ``f`` (the mapping's probability of ``A``), ``u`` (the draw: ``A`` when ``u < f``),
  ``choice``, ``mapping``, ``sizes_in`` and ``all_in_rule``; or ``{"real", "fallback":
  "raise cap: as call"}``;
* when the strategy decides: ``node`` and ``key`` (the abstract node and its sequence key),
  ``bucket``, ``actions`` (the node's abstract actions in words, as each would be played in
  the real state: ``fold``, ``call 6``, ``pot: raise to 9``; in the order of) ``raw``
  (the strategy's row) and ``purified`` (after ``purify``), ``draw`` (the sample: the first
  action whose cumulative purified probability exceeds it), ``abstract`` and
  ``abstract_fraction`` (its nominal pot fraction: ``-2`` fold, ``0`` check/call, ``-1``
  all-in);
* always: ``real`` (the action sent, ACPC text), ``played`` (in words), ``fallback`` (why
  the strategy was not asked, or null), ``seconds``, ``strategy`` (checksum prefix).

A re-solving agent's records (``acpc-agent --resolve``) add a ``resolve`` object
(:mod:`agent.resolving`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.abstraction.actions import action_name
from agent.abstraction.convention import DEFAULT_SIZE_CONVENTION, parse_size_convention
from agent.abstraction.deferred import DeferredCards
from agent.abstraction.translation import MappingFn
from agent.acpc.betting import Action, ActionKind, BettingState
from agent.acpc.describe import cards_text, describe_action, legal_labels
from agent.acpc.matchstate import MatchState
from agent.decision import (
    OFF_TREE,
    RAISE_CAP,
    TIME_GUARD,
    WAITING,
    fallback_action,
    own_move,
    read_action,
    realise,
    standing,
)
from agent.strategy.hotswap import LoadedStrategy
from agent.strategy.purification import Purification, sample_index

TraceFn = Callable[[dict[str, Any]], None]


@dataclass
class PolicyStats:
    """Counters over the policy's lifetime."""

    decisions: int = 0
    translations: int = 0
    raise_cap_fallbacks: int = 0
    off_tree_fallbacks: int = 0
    """Hands whose abstract history left the real one for good (each counted once)."""
    off_tree_decisions: int = 0
    """Decisions checked or called because the hand was off the tree (the trace's
    ``fallback: "off-tree: check/call"``): several per off-tree hand."""
    waiting_fallbacks: int = 0
    """Decisions checked or called while the abstract history waited for the real round."""
    timeouts: int = 0
    """Decisions checked or called because they overran the time guard (the trace's
    ``fallback: "time guard: check/call"``): the only decisions that depend on timing."""


@dataclass
class _Hand:
    number: int
    node: int = 0
    """The abstract history (:data:`agent.decision.OFF_TREE` once it has left)."""
    seen: int = 0
    translations: list[dict[str, Any]] = field(default_factory=list)
    reported: int = 0
    """Translations already in an earlier decision's trace record."""
    own_children: dict[int, int] = field(default_factory=dict)
    """Real action index -> abstract child chosen for it (our own actions)."""
    real: BettingState | None = None
    """The real state after ``seen`` actions."""
    path: list[tuple[int, int]] = field(default_factory=list)
    """``(abstract node, action index)`` of every real action the abstract history moved
    through by rule (ours chosen by the strategy, the others' read), in order."""


class StrategyPolicy:
    """Plays a strategy file through translation and purification (module docstring)."""

    def __init__(
        self,
        loaded: LoadedStrategy,
        mapping: MappingFn,
        purification: Purification,
        *,
        seed: int | None = None,
        mapping_name: str = "",
        time_guard: float | None = None,
        trace: TraceFn | None = None,
        sizes_in: str = DEFAULT_SIZE_CONVENTION,
    ) -> None:
        self.loaded = loaded
        self.sizes_in = parse_size_convention(sizes_in)
        """The size convention (:mod:`agent.abstraction.convention`)."""
        self._pending: LoadedStrategy | None = None
        self.mapping = mapping
        self.mapping_name = mapping_name
        self.purification = purification
        self.rng = random.Random(seed)
        self.time_guard = time_guard
        self.trace = trace
        self.stats = PolicyStats()
        self._hand: _Hand | None = None

    # ----------------------------------------------------------------- public

    def act(self, ms: MatchState) -> Action:
        """A legal action for a state where we are to act."""
        return self.translate(ms)

    def sync(self, ms: MatchState) -> None:
        """Bring the hand's abstract history up to date with ``ms`` (a new hand first swaps
        in a pending strategy) without deciding: what :meth:`translate` does first. A
        policy that decides otherwise (:class:`agent.resolving.ResolvingPolicy`) calls it at
        every decision, so that translation can take over at once."""
        self._sync(ms)

    def translate(self, ms: MatchState, *, began: float | None = None,
                  extra: dict[str, Any] | None = None) -> Action:
        """The translating decision (module docstring). ``began``: when the decision began
        (``time.perf_counter()``; the trace's ``seconds`` count from it; default now; the
        time guard's clock starts here either way); ``extra``: fields added to the trace
        record."""
        self._await_cards(ms.state.round)
        clock = time.perf_counter()  # the time guard's
        start = clock if began is None else began  # the trace's
        hand = self._sync(ms)
        loaded = self.loaded  # fixed for the whole hand (swaps happen between hands)
        state = ms.state
        tree = loaded.tree
        record: dict[str, Any] = {
            "hand": ms.hand_number,
            "position": ms.position,
            "betting": state.betting,
            "translations": hand.translations[hand.reported:],
        }
        hand.reported = len(hand.translations)
        if extra:
            record.update(extra)
        round_ = state.round
        visible = ms.board[: state.game.board_cards_through(round_)]
        if self.trace is not None:
            record.update(cards=cards_text(ms.own_cards), board=cards_text(visible),
                          legal=legal_labels(state))
        why = standing(tree, hand.node, state)
        if why is not None:
            if why == WAITING:
                self.stats.waiting_fallbacks += 1
            else:
                self._leave_tree(hand)
                self.stats.off_tree_decisions += 1
            real = fallback_action(state, why)
            record["played"] = describe_action(state, real)
            return self._finish(record, start, real, why)
        node = tree.nodes[hand.node]
        bucket = loaded.cards.bucket(round_, ms.own_cards, visible)
        if self.time_guard is not None and time.perf_counter() - clock > self.time_guard:
            self.stats.timeouts += 1
            real = fallback_action(state, TIME_GUARD)
            record["played"] = describe_action(state, real)
            return self._finish(record, start, real, TIME_GUARD)
        raw = [float(p) for p in loaded.strategy.row(node.id, bucket)]
        purified = self.purification.apply(raw)
        u = self.rng.random()
        choice = sample_index(purified, u)
        abstract = node.actions[choice]
        real, hand.own_children[hand.seen] = own_move(node, state, choice)
        if self.trace is not None:
            record.update(
                node=node.id,
                key=node.history,
                bucket=bucket,
                actions=[_label(state, a.kind, a.fraction, action_name(a))
                         for a in node.actions],
                raw=[round(p, 6) for p in raw],
                purify=str(self.purification),
                purified=[round(p, 6) for p in purified],
                draw=round(u, 6),
                abstract=str(abstract.action),
                abstract_fraction=abstract.fraction,
                played=describe_action(state, real),
            )
        return self._finish(record, start, real, None)

    def swap(self, loaded: LoadedStrategy) -> None:
        """Play ``loaded`` from the next hand on (the current hand keeps its tree)."""
        self._pending = loaded

    @property
    def hand_path(self) -> tuple[tuple[int, int], ...]:
        """The current hand's abstract path so far (up to the last :meth:`sync`):
        ``(abstract node, action index)`` of every real action the abstract history moved
        through by rule, both players', in order (what :mod:`agent.exploiting` learns
        from)."""
        return tuple(self._hand.path) if self._hand is not None else ()

    @property
    def swap_pending(self) -> bool:
        """True while a swapped-in strategy waits for the next hand."""
        return self._pending is not None

    # ----------------------------------------------------------------- internals

    def _finish(
        self, record: dict[str, Any], start: float, action: Action, fallback: str | None
    ) -> Action:
        self.stats.decisions += 1
        if self.trace is not None:
            record["strategy"] = self.loaded.strategy.checksum[:16]
            record["real"] = str(action)
            record["fallback"] = fallback
            record["seconds"] = round(time.perf_counter() - start, 6)
            self.trace(record)
        return action

    def _await_cards(self, round_: int) -> None:
        """Wait, off the decision's clock, for a card abstraction still loading in the
        background (module docstring): round 0 is answered without it."""
        if round_ == 0:
            return
        for loaded in (self.loaded, self._pending):
            if loaded is not None and isinstance(loaded.cards, DeferredCards) and (
                not loaded.cards.ready
            ):
                loaded.cards.wait()

    def _leave_tree(self, hand: _Hand) -> None:
        """The abstract history left the real one for good: count the hand once."""
        if hand.node != OFF_TREE:
            hand.node = OFF_TREE
            self.stats.off_tree_fallbacks += 1

    def _sync(self, ms: MatchState) -> _Hand:
        """Bring the abstract history up to date with the real actions of ``ms``."""
        hand = self._hand
        if hand is None or hand.number != ms.hand_number:
            if self._pending is not None:
                self.loaded, self._pending = self._pending, None
            hand = _Hand(ms.hand_number)
            self._hand = hand
        real = hand.real if hand.real is not None else BettingState.initial(ms.state.game)
        actions = [a for rnd in ms.state.actions for a in rnd]
        for i in range(hand.seen, len(actions)):
            action = actions[i]
            if hand.node != OFF_TREE:
                if i in hand.own_children:  # the strategy chose it (standing was None)
                    child = hand.own_children[i]
                    hand.path.append(
                        (hand.node, self.loaded.tree.nodes[hand.node].children.index(child)))
                    hand.node = child
                else:
                    self._read(hand, real, action)
            real = real.apply(action)
        hand.seen = len(actions)
        hand.real = real
        return hand

    def _read(self, hand: _Hand, real: BettingState, action: Action) -> None:
        """Move the abstract history over a real action the strategy did not choose (an
        opponent's, or ours under a fallback): :func:`agent.decision.read_action`, drawing
        once for a translated raise."""
        tree = self.loaded.tree
        node = tree.nodes[hand.node]
        reading = read_action(tree, hand.node, real, action, self.sizes_in)
        if reading.low == OFF_TREE:
            self._leave_tree(hand)
            return
        if reading.fallback == RAISE_CAP:
            self.stats.raise_cap_fallbacks += 1
            hand.translations.append({"real": str(action), "fallback": RAISE_CAP})
        bet = reading.bet
        if bet is None:
            if reading.fallback is None or reading.fallback == RAISE_CAP:
                hand.path.append((hand.node, node.children.index(reading.low)))
            hand.node = reading.low
            return
        u = self.rng.random()
        f, chosen = bet.choose(self.mapping, u)
        hand.path.append((hand.node, chosen))
        hand.node = node.children[chosen]
        self.stats.translations += 1
        record: dict[str, Any] = {
            "real": str(action),
            "x": round(bet.x, 6),
            "A": round(bet.a, 6),
            "B": round(bet.b, 6),
            "f": round(f, 6),
            "choice": str(node.actions[chosen].action),
            "mapping": self.mapping_name,
            "sizes_in": self.sizes_in,
        }
        if self.trace is not None:
            record.update(
                u=round(u, 6),
                between=[action_name(node.actions[bet.options[i]]) for i in (bet.low, bet.high)],
                real_text=describe_action(real, action),
            )
        if bet.all_in:
            record["all_in_rule"] = True  # the real all-in read as the abstract all-in
        hand.translations.append(record)


def _label(state: BettingState, kind: ActionKind, fraction: float, name: str) -> str:
    """An abstract action as it would be played in the real ``state``: ``fold``,
    ``check``/``call N``, ``pot: raise to N`` (the trace's ``actions``)."""
    real = realise(state, kind, fraction)
    if kind is not ActionKind.RAISE:
        return describe_action(state, real)
    return f"{name}: {describe_action(state, real)}"


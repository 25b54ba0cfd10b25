"""The decision pipeline: MatchState -> real state -> abstract history -> bucket -> action.

For every decision :class:`StrategyPolicy`:

1. replays the real actions it has not seen yet onto the hand's *abstract* history (a node
   of the canonical abstract tree): our own actions move to the abstract child we chose;
   an opponent's fold or call moves to the fold/call child; an opponent's raise is measured
   as a pot fraction ``x`` of the real state before it (:mod:`agent.acpc.betsize`) and
   translated with the mapping onto the node's abstract sizes (``A``/``B``, the call being
   ``A = 0``), drawing the agent's private randomness once per real action; where the
   abstract sizes are measured (in the abstract node's state or re-expressed in the real
   state, a real all-in then always the abstract all-in) is the *size convention*
   (:mod:`agent.abstraction.convention`, option ``sizes_in``);
2. maps its cards to the round's bucket;
3. looks up the row of (node, bucket), purifies it and samples an abstract action;
4. realises it in the real state: a fold only when facing a bet (else a call), a raise
   recomputed from the real pot for the abstraction's nominal fraction and clamped to the
   real bounds, an all-in as the real all-in, a raise the real state forbids as a call.

Fallbacks (documented behaviour, counted in :attr:`StrategyPolicy.stats`):

* an opponent raise at a node where the abstraction allows no more raises is read as a
  call;
* **the abstract round ended before the real one** (a small bet read as a check or call
  closed the abstract round, so the abstract node is already in a later round): the policy
  checks or calls for the rest of the real round, without translating the actions in it,
  and plays the strategy again from the abstract node once the real game reaches that
  node's round with that node's player to act (the abstract history *waits* there);
* **the abstract history has left the real one for good** (a terminal abstract node, a
  fold the abstract node has no fold for, an earlier round's node, or another player's
  node in the same round): the policy checks or calls to the end of the hand;
* a decision that overruns its time guard checks or calls (:attr:`PolicyStats.timeouts`).
  The guard's clock starts once the decision can run: a card abstraction still loading in
  the background (:mod:`agent.abstraction.deferred`, ``acpc-agent`` without ``--preload``)
  is waited for first, so loading or compiling is never charged to a decision and the
  guard fires only for a decision that is itself slow (a timing-dependent result, which
  ``acpc-match`` counts per variant and warns about).

The translation lab's model of the agent (:mod:`strategies.measure.translation.full_br`) follows
these rules one for one.

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
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.abstraction.actions import action_name
from agent.abstraction.convention import (
    DEFAULT_SIZE_CONVENTION,
    parse_size_convention,
    read_bet,
    realise_raise_to,
)
from agent.abstraction.deferred import DeferredCards
from agent.abstraction.translation import MappingFn
from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.describe import cards_text, describe_action, legal_labels
from agent.acpc.matchstate import MatchState
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
    seen: int = 0
    translations: list[dict[str, Any]] = field(default_factory=list)
    reported: int = 0
    """Translations already in an earlier decision's trace record."""
    own_children: dict[int, int] = field(default_factory=dict)
    """Real action index -> abstract child chosen for it (our own actions)."""
    off_tree: bool = False
    real: BettingState | None = None
    """The real state after ``seen`` actions."""


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
        self._await_cards(ms.state.round)
        start = time.perf_counter()
        hand = self._sync(ms)
        loaded = self.loaded  # fixed for the whole hand (swaps happen between hands)
        state = ms.state
        tree = loaded.tree
        node = tree.nodes[hand.node]
        record: dict[str, Any] = {
            "hand": ms.hand_number,
            "position": ms.position,
            "betting": state.betting,
            "translations": hand.translations[hand.reported:],
        }
        hand.reported = len(hand.translations)
        round_ = state.round
        visible = ms.board[: state.game.board_cards_through(round_)]
        if self.trace is not None:
            record.update(cards=cards_text(ms.own_cards), board=cards_text(visible),
                          legal=legal_labels(state))
        if not hand.off_tree and waits_for_round(node.is_terminal, node.round, state.round):
            self.stats.waiting_fallbacks += 1
            record["played"] = describe_action(state, CALL)
            return self._finish(record, start, CALL, "abstract round ended: check/call")
        if hand.off_tree or node.is_terminal or node.player != ms.position or (
            node.round != state.round
        ):
            self._leave_tree(hand)
            self.stats.off_tree_decisions += 1
            record["played"] = describe_action(state, CALL)
            return self._finish(record, start, CALL, "off-tree: check/call")
        bucket = loaded.cards.bucket(round_, ms.own_cards, visible)
        if self.time_guard is not None and time.perf_counter() - start > self.time_guard:
            self.stats.timeouts += 1
            record["played"] = describe_action(state, CALL)
            return self._finish(record, start, CALL, "time guard: check/call")
        raw = [float(p) for p in loaded.strategy.row(node.id, bucket)]
        purified = self.purification.apply(raw)
        u = self.rng.random()
        choice = sample_index(purified, u)
        abstract = node.actions[choice]
        real = realise(state, abstract.action.kind, abstract.fraction)
        hand.own_children[hand.seen] = node.children[choice]
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
        if not hand.off_tree:
            hand.off_tree = True
            self.stats.off_tree_fallbacks += 1

    def _sync(self, ms: MatchState) -> _Hand:
        """Bring the abstract history up to date with the real actions of ``ms``."""
        hand = self._hand
        if hand is None or hand.number != ms.hand_number:
            if self._pending is not None:
                self.loaded, self._pending = self._pending, None
            hand = _Hand(ms.hand_number)
            self._hand = hand
        tree = self.loaded.tree
        real = hand.real if hand.real is not None else BettingState.initial(ms.state.game)
        actions = [a for rnd in ms.state.actions for a in rnd]
        for i in range(hand.seen, len(actions)):
            action = actions[i]
            if not hand.off_tree:
                node = tree.nodes[hand.node]
                if waits_for_round(node.is_terminal, node.round, real.round):
                    pass  # the abstract node waits for the real game to reach its round
                elif node.is_terminal or node.player != real.player or node.round != real.round:
                    self._leave_tree(hand)
                elif i in hand.own_children:
                    hand.node = hand.own_children[i]
                else:
                    hand.node = self._translate(hand, real, node.id, action)
            real = real.apply(action)
        hand.seen = len(actions)
        hand.real = real
        return hand

    def _translate(self, hand: _Hand, real: BettingState, node_id: int, action: Action) -> int:
        node = self.loaded.tree.nodes[node_id]
        kinds = [a.kind for a in node.actions]
        if action.kind is ActionKind.FOLD:
            if ActionKind.FOLD in kinds:
                return node.children[kinds.index(ActionKind.FOLD)]
            self._leave_tree(hand)
            return node_id
        call_index = kinds.index(ActionKind.CALL)
        if action.kind is ActionKind.CALL:
            return node.children[call_index]
        raises = [i for i, k in enumerate(kinds) if k is ActionKind.RAISE]
        if not raises:
            self.stats.raise_cap_fallbacks += 1
            hand.translations.append({"real": str(action), "fallback": "raise cap: as call"})
            return node.children[call_index]
        if not real.game.is_nolimit:
            return node.children[raises[0]]
        reading = read_bet(real, node, action.raise_to, self.sizes_in)
        u = self.rng.random()
        f, chosen = reading.choose(self.mapping, u)
        self.stats.translations += 1
        record: dict[str, Any] = {
            "real": str(action),
            "x": round(reading.x, 6),
            "A": round(reading.a, 6),
            "B": round(reading.b, 6),
            "f": round(f, 6),
            "choice": str(node.actions[chosen].action),
            "mapping": self.mapping_name,
            "sizes_in": self.sizes_in,
        }
        if self.trace is not None:
            record.update(
                u=round(u, 6),
                between=[action_name(node.actions[reading.options[i]])
                         for i in (reading.low, reading.high)],
                real_text=describe_action(real, action),
            )
        if reading.all_in:
            record["all_in_rule"] = True  # the real all-in read as the abstract all-in
        hand.translations.append(record)
        return node.children[chosen]


def waits_for_round(terminal: bool, abstract_round: int, real_round: int) -> bool:
    """True when the abstract history waits for the real round to end (module docstring).

    Shared with the translation lab's model of the policy
    (:mod:`strategies.measure.translation.full_br`)."""
    return not terminal and abstract_round > real_round


def _label(state: BettingState, kind: ActionKind, fraction: float, name: str) -> str:
    """An abstract action as it would be played in the real ``state``: ``fold``,
    ``check``/``call N``, ``pot: raise to N`` (the trace's ``actions``)."""
    real = realise(state, kind, fraction)
    if kind is not ActionKind.RAISE:
        return describe_action(state, real)
    return f"{name}: {describe_action(state, real)}"


def realise(state: BettingState, kind: ActionKind, fraction: float) -> Action:
    """A legal real action for an abstract one (see the module docstring, step 4)."""
    if kind is ActionKind.FOLD:
        return FOLD if state.can_fold() else CALL
    if kind is ActionKind.CALL:
        return CALL
    if not state.game.is_nolimit:
        return CALL if state.raise_bounds() is None else LIMIT_RAISE
    to = realise_raise_to(state, fraction)
    return CALL if to is None else Action(ActionKind.RAISE, to)

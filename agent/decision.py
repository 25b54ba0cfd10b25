"""The agent's decision, described once: what a strategy file's agent does at every real state.

This module is the one description of the rules (the docstring below) and their one
definition (the functions below). :class:`agent.policy.StrategyPolicy` *samples* it with
its private draws; the evaluators *expand* it (enumerate its distributions): the translation
lab and the Royal exact best response (:func:`strategies.measure.translation.full_br.
walk_pairs`), the estimators ``exact-agents``/``sampled-agents``
(:class:`evaluation.estimators.estimator.FileAgent`), ``--exact`` and the exact LBR (through
the lab's induced behaviour) and the sampled LBR
(:class:`strategies.measure.sampled_lbr.StrategyModel`). None of them restates a rule.

**The state.** Besides the real betting state, the agent keeps its *abstract history*: a
node of the strategy's canonical abstract tree, or :data:`OFF_TREE` once the abstract
history has left the real one for good.

**Standing** (:func:`standing`, at every real state, before the agent acts and before it
reads an opponent's action):

* **the abstract round ended before the real one** (:data:`WAITING`: a small bet read as a
  check or call closed the abstract round, so the abstract node is already in a later
  round): the real actions of the rest of the real round are not translated and the agent
  checks or calls (:func:`fallback_action`); the abstract history *waits* at its node
  (:func:`after_fallback`) and the strategy plays again from it once the real game reaches
  that node's round with that node's player to act;
* **the abstract history has left the real one** (:data:`OFF`: a terminal abstract node,
  an earlier round's node, another player's node in the same round, or :data:`OFF_TREE`):
  the agent checks or calls to the end of the hand;
* otherwise the strategy is asked (standing ``None``).

**The agent's decision** (standing ``None``, the agent to act): its cards' bucket in the
round (the card abstraction), the file's row of (node, bucket), purified
(:class:`agent.strategy.purification.Purification`), sampled with one draw ``u``
(:func:`agent.strategy.purification.sample_index`), and the abstract action realised in the
real state (:func:`own_moves`, :func:`realise`): a fold only when facing a bet (else a
call), a raise recomputed from the real pot for the abstraction's nominal fraction and
clamped to the real bounds (:func:`agent.abstraction.convention.realise_raise_to`), an
all-in as the real all-in, a raise the real state forbids as a call. The abstract history
moves to the chosen action's child. A decision that overruns the live agent's time guard
checks or calls instead (:data:`TIME_GUARD`, the only timing-dependent rule: the evaluators
never meet it); the history then reads the agent's own call as it reads an opponent's.

**Reading an action** (:func:`read_action`, standing ``None``; an opponent's action, or the
agent's own when the strategy was not asked): a fold moves to the node's fold child, or off
the tree when the node has none; a call to the call child; a raise at a node without
abstract raises is read as a call (:data:`RAISE_CAP`); in a limit game a raise is the
node's raise. A no-limit raise is *translated*: measured as a pot fraction ``x`` of the real
state before it (:mod:`agent.acpc.betsize`) and bracketed between the node's sizes ``A`` and
``B`` (the call being ``A = 0``) where the *size convention* says
(:func:`agent.abstraction.convention.read_bet`, option ``sizes_in``); the mapping
(:mod:`agent.abstraction.translation`) gives ``f(A, B, x)``, the probability of ``A``, and
one draw ``u`` of the agent's private randomness picks ``A`` when ``u < f`` (one draw per
translated raise, certain readings included). :class:`Reading` carries the outcome: one
next abstract state, or two with ``f`` and ``1 - f``.

Everything here is a pure function of its arguments (no randomness, no clock): the draws
are the caller's (the policy's :class:`random.Random`, an estimator's hash, or none: then
the distributions are expanded). Imports the stdlib, :mod:`agent.acpc`,
:mod:`agent.abstraction` and :mod:`agent.strategy` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent.abstraction.actions import BettingTree, Node
from agent.abstraction.convention import BetReading, read_bets, realise_raise_to
from agent.abstraction.translation import MappingFn
from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.errors import AbstractionError

OFF_TREE = -1
"""The abstract history once it has left the real one for good."""

WAITING = "abstract round ended: check/call"
"""Standing: the abstract node is in a later round than the real state (it waits)."""
OFF = "off-tree: check/call"
"""Standing: the abstract history has left the real one."""
TIME_GUARD = "time guard: check/call"
"""The live agent's decision overran its time guard."""
RAISE_CAP = "raise cap: as call"
"""A raise read at a node without abstract raises."""


def waits_for_round(terminal: bool, abstract_round: int, real_round: int) -> bool:
    """True when the abstract history waits for the real round to end (:data:`WAITING`)."""
    return not terminal and abstract_round > real_round


def standing(tree: BettingTree, at: int, real: BettingState,
             player: int | None = None) -> str | None:
    """Why the strategy is not asked at ``real`` with the abstract history at ``at``:
    :data:`WAITING`, :data:`OFF`, or ``None`` (it is asked; module docstring).

    ``player``: the one whose decision it is (default: the player to act at ``real``; an
    estimator may ask about the agent's next decision in ``real``'s round)."""
    if at == OFF_TREE:
        return OFF
    node = tree.nodes[at]
    if waits_for_round(node.is_terminal, node.round, real.round):
        return WAITING
    if node.is_terminal or node.player != (real.player if player is None else player) or (
        node.round != real.round
    ):
        return OFF
    return None


def after_fallback(at: int, why: str) -> int:
    """The abstract history after a real action taken under standing ``why``: a waiting
    node is kept, anything else leaves the tree."""
    return at if why == WAITING else OFF_TREE


def fallback_action(real: BettingState, why: str) -> Action:
    """The real action the agent plays when the strategy is not asked (standing ``why``, or
    :data:`TIME_GUARD`): check or call, for every fallback."""
    return CALL


def realise(state: BettingState, kind: ActionKind, fraction: float) -> Action:
    """A legal real action for an abstract one (module docstring, the agent's decision)."""
    if kind is ActionKind.FOLD:
        return FOLD if state.can_fold() else CALL
    if kind is ActionKind.CALL:
        return CALL
    if not state.game.is_nolimit:
        return CALL if state.raise_bounds() is None else LIMIT_RAISE
    to = realise_raise_to(state, fraction)
    return CALL if to is None else Action(ActionKind.RAISE, to)


def own_move(node: Node, real: BettingState, i: int) -> tuple[Action, int]:
    """Abstract action ``i`` of ``node`` as the agent plays it at ``real``: (the real
    action, the abstract child)."""
    a = node.actions[i]
    return realise(real, a.kind, a.fraction), node.children[i]


def own_moves(node: Node, real: BettingState) -> list[tuple[Action, int]]:
    """:func:`own_move` of every abstract action of ``node``, in the node's order."""
    return [own_move(node, real, i) for i in range(len(node.actions))]


def own_outcomes(node: Node, real: BettingState,
                 purified: Sequence[float]) -> list[tuple[float, Action, int]]:
    """The agent's decision at ``node`` as a distribution: ``(probability, real action,
    abstract child)`` per abstract action with positive probability in the ``purified``
    row (normalised as :func:`agent.strategy.purification.sample_index` samples it: rows
    that sum to 1)."""
    return [(p, *own_move(node, real, i)) for i, p in enumerate(purified) if p > 0.0]


@dataclass(frozen=True, slots=True)
class NodeKinds:
    """A node's actions by kind, for reading actions there."""

    fold: int
    """Index of the fold (-1: none)."""
    call: int
    """Index of the call (-1: none)."""
    raises: tuple[int, ...]
    """Indexes of the raises."""

    @classmethod
    def of(cls, node: Node) -> NodeKinds:
        kinds = [a.kind for a in node.actions]
        return cls(kinds.index(ActionKind.FOLD) if ActionKind.FOLD in kinds else -1,
                   kinds.index(ActionKind.CALL) if ActionKind.CALL in kinds else -1,
                   tuple(i for i, k in enumerate(kinds) if k is ActionKind.RAISE))


@dataclass(frozen=True, slots=True)
class Reading:
    """How the agent reads a real action: the next abstract state(s) (module docstring)."""

    low: int
    """The next abstract state (``A``'s child when the mapping draws)."""
    high: int
    """``B``'s child when the mapping draws (else equal to :attr:`low`)."""
    bet: BetReading | None = None
    """A translated no-limit raise (the agent draws once for it, even when certain)."""
    fallback: str | None = None
    """:data:`RAISE_CAP`, or the standing (:data:`WAITING`, :data:`OFF`) it was read
    under; ``None`` for a rule-following reading."""

    @property
    def draws(self) -> bool:
        """True when the live agent draws for this reading (a translated raise)."""
        return self.bet is not None

    @property
    def certain(self) -> bool:
        return self.bet is None or self.bet.certain

    def prob_low(self, mapping: MappingFn) -> float:
        """``f(A, B, x)``: the probability of :attr:`low` (1 when certain)."""
        return 1.0 if self.bet is None else self.bet.prob_low(mapping)

    def outcomes(self, mapping: MappingFn) -> list[tuple[float, int]]:
        """The reading as a distribution: ``[(1, low)]`` or ``[(f, low), (1 - f, high)]``."""
        if self.certain:
            return [(1.0, self.low)]
        f = self.prob_low(mapping)
        return [(f, self.low), (1.0 - f, self.high)]


def read_on_tree(node: Node, kinds: NodeKinds, real: BettingState, action: Action,
                 sizes_in: str) -> Reading:
    """How the agent at ``node`` (standing ``None``; ``kinds`` = ``NodeKinds.of(node)``)
    reads ``action`` taken at ``real`` (module docstring, reading an action).

    Raises:
        AbstractionError: for a call or raise at a node without a call.
    """
    if action.kind is ActionKind.FOLD:
        if kinds.fold >= 0:
            child = node.children[kinds.fold]
            return Reading(child, child)
        return Reading(OFF_TREE, OFF_TREE)
    if action.kind is ActionKind.CALL:
        if kinds.call < 0:
            raise AbstractionError(f"expected a call at abstract node {node.id}, got none")
        call = node.children[kinds.call]
        return Reading(call, call)
    return read_raises(node, kinds, real, (action.raise_to,), sizes_in)[0]


def read_raises(node: Node, kinds: NodeKinds, real: BettingState, raise_tos: Sequence[int],
                sizes_in: str) -> list[Reading]:
    """:func:`read_on_tree` of a raise to each of ``raise_tos`` at ``real`` (the node's
    sizes bracketed once, :func:`agent.abstraction.convention.read_bets`: an evaluator
    reading many candidate sizes).

    Raises:
        AbstractionError: for a node without a call.
    """
    if kinds.call < 0:
        raise AbstractionError(f"expected a call at abstract node {node.id}, got none")
    call = node.children[kinds.call]
    if not kinds.raises:
        return [Reading(call, call, fallback=RAISE_CAP) for _ in raise_tos]
    if not real.game.is_nolimit:
        child = node.children[kinds.raises[0]]
        return [Reading(child, child) for _ in raise_tos]
    return [Reading(node.children[bet.options[bet.low]], node.children[bet.options[bet.high]],
                    bet) for bet in read_bets(real, node, raise_tos, sizes_in)]


def read_action(tree: BettingTree, at: int, real: BettingState, action: Action,
                sizes_in: str) -> Reading:
    """How the agent with its abstract history at ``at`` reads ``action`` taken at ``real``:
    under a fallback standing the history waits or leaves (:func:`after_fallback`), else
    :func:`read_on_tree`."""
    why = standing(tree, at, real)
    if why is not None:
        after = after_fallback(at, why)
        return Reading(after, after, fallback=why)
    node = tree.nodes[at]
    return read_on_tree(node, NodeKinds.of(node), real, action, sizes_in)

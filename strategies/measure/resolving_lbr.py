"""Sampled LBR against the re-solving agent (``acpc-agent --resolve``): its agent model.

:mod:`strategies.measure.sampled_lbr` plays LBR against the real policy and keeps the
agent's range through an *agent model*: ``P(action | hole, history)`` for every hole.
:class:`ResolvingModel` is that model for :class:`agent.resolving.ResolvingPolicy`, and it
asks the agent's own re-solver (:mod:`agent.resolve`), not a copy of its rules:

* **A translated decision** (a round the re-solver does not play: hold'em before the
  river, :meth:`agent.resolve.Resolver.resolves`; mode ``off-tree`` before the hand's first
  re-solve, which
  :meth:`~agent.resolving.ResolvingPolicy.translates` decides for the policy and the model
  alike): the translating model, :class:`~strategies.measure.sampled_lbr.StrategyModel`,
  with its hypotheses (abstract node x weight per hole).
* **A re-solved decision the agent took**: the distribution of every private hand that
  the agent's own :class:`~agent.resolve.HandResolver` recorded for the state
  (:attr:`~agent.resolve.HandResolver.own`, read through
  :meth:`~agent.resolving.ResolvingPolicy.current_hand`): one re-solve gives the whole
  range's strategy at the node, and the range becomes ``w_h x P(action | h)``. The
  re-solver's decision is a function of the public history and the board only (its roots
  take both ranges as mixtures over the translation draws), so from there on the
  hypotheses are one, :data:`RESOLVED` (the total weight per hole).
* **A hypothetical state** (LBR weighing a raise: the agent's fold probability after it):
  a copy of the hand's re-solver (:meth:`~agent.resolve.HandResolver.copy`) decides
  there, re-solving if the raise leaves the current plan's tree (a nested re-solve per
  candidate raise) and reading the plan if not. Before the agent's first decision of a
  hand, a fresh one (:meth:`agent.resolve.Resolver.new_hand`), as the policy will start.

Same decisions as the policy, so the model's ranges are the agent's: there is no time
budget here (``ResolveConfig.seconds`` must be None: a budget makes the agent's play depend
on the clock), and a hand in which the policy fell back to translation after a re-solve
cannot be followed (the translating history is not the re-solver's): the model raises
:class:`~agent.acpc.errors.AbstractionError` then (never seen: fallbacks come only from
re-solves that raise). The counters (:class:`ModelStats`) say how many decisions each
kind was and what the hypothetical re-solves cost.

:class:`ResolvingChunkPlayer` plays a run's chunks with the re-solving agent (one
:class:`agent.resolve.Resolver` per process, shared by every chunk's policy: its caches of
roots and buckets carry over); :func:`play_chunk` is its worker entry (JSON in and out).
``acpc-strategy lbr FILE --resolve MODE`` runs it.

Imports numpy, :mod:`agent` and :mod:`strategies`; never imported by :mod:`agent`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt

from agent.acpc.betting import FOLD, Action, ActionKind, BettingState
from agent.acpc.errors import AbstractionError, UsageError
from agent.policy import StrategyPolicy
from agent.resolve import HandResolver, ResolveConfig
from agent.resolving import ResolvingPolicy
from strategies.measure.sampled_lbr import (
    ChunkPlayer,
    HandView,
    Hyps,
    LbrConfig,
    StrategyModel,
    total,
)

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

RESOLVED = -2
"""The hypotheses' key once a re-solved decision has been taken (the weight per hole; the
translating model's keys are abstract nodes and :data:`agent.decision.OFF_TREE`)."""


@dataclass
class ModelStats:
    """What the model was asked (counted over a process's hands)."""

    translated: int = 0
    """Agent decisions (taken or hypothetical) answered by the translating model."""
    played: int = 0
    """Re-solved decisions the agent took, read from its own re-solver."""
    hypothetical: int = 0
    """Re-solved decisions at states LBR only weighed (its candidate raises)."""
    hypothetical_resolves: int = 0
    """Of those, the ones that re-solved (the rest read a plan)."""
    hypothetical_seconds: float = 0.0
    """Time spent deciding them."""


class ResolvingModel(StrategyModel):
    """The agent model of a :class:`~agent.resolving.ResolvingPolicy` (module docstring).

    ``policy`` is the agent being played (:meth:`bind` another one per chunk: its hand
    state is read at each agent decision); its re-solver is the one asked.
    """

    def __init__(self, policy: ResolvingPolicy) -> None:
        if policy.config.seconds is not None:
            raise UsageError(f"expected a re-solving agent without a time budget for LBR "
                             f"(its play would depend on the clock), got "
                             f"{policy.config.seconds!r} s")
        super().__init__(policy.loaded, policy.mapping, policy.purification, policy.sizes_in)
        self.policy = policy
        self.stats = ModelStats()
        self._index: I64 | None = None

    def bind(self, policy: ResolvingPolicy) -> None:
        """Model ``policy`` from now on (a chunk's fresh agent, same strategy and re-solver
        configuration)."""
        if policy.loaded.strategy is not self.loaded.strategy or \
                policy.config != self.policy.config:
            raise UsageError("expected an agent with the model's strategy and re-solver "
                             "configuration")
        self.policy = policy

    def hand_index(self, view: HandView) -> I64:
        """The re-solver's index of every hole of ``view.holes`` (once per process)."""
        if self._index is None or self._index.shape[0] != view.holes.shape[0]:
            hands = self.policy.resolver.hands
            self._index = np.array([hands.find(h) for h in view.holes.tolist()],
                                   dtype=np.int64)
        return self._index

    def hand_state(self, view: HandView) -> tuple[HandResolver, bool]:
        """The re-solver's state of ``view``'s hand and whether it is the agent's own (False:
        the agent has not decided in the hand yet, a fresh one as it will start).

        Raises:
            AbstractionError: if the agent fell back to translation in the hand.
        """
        got = self.policy.current_hand(view.hand_number)
        if got is None:
            return self.policy.resolver.new_hand(view.agent_position), False
        hand, fallback = got
        if fallback is not None:
            raise AbstractionError(f"expected the re-solving agent to re-solve, got a "
                                   f"fallback to translation ({fallback}) in hand "
                                   f"{view.hand_number}: LBR does not model it")
        return hand, True

    def decision(self, view: HandView, hyps: Hyps, state: BettingState
                 ) -> tuple[tuple[Action, ...], F64] | None:
        """The agent's distribution at ``state`` (its turn) for every private hand of the
        re-solver, or None when the agent translates there."""
        hand, own = self.hand_state(view)
        board = view.visible(state.round)
        if self.policy.translates(hand, state, board):
            if RESOLVED in hyps:
                raise AbstractionError(f"expected a re-solved decision after a re-solved "
                                       f"one, got a translated one at {state.betting!r}")
            self.stats.translated += 1
            return None
        if own and state.betting in hand.own:
            self.stats.played += 1
            return hand.own[state.betting]
        began = time.perf_counter()
        before = self.policy.resolver.solves
        decision = hand.copy().decide(state, board)
        self.stats.hypothetical += 1
        self.stats.hypothetical_resolves += self.policy.resolver.solves - before
        self.stats.hypothetical_seconds += time.perf_counter() - began
        return decision.actions, decision.probs

    def update(self, view: HandView, hyps: Hyps, state: BettingState, action: Action) -> Hyps:
        """The hypotheses after ``action`` (module docstring)."""
        if state.player != view.agent_position:
            if RESOLVED in hyps:  # the re-solver reads the history itself: nothing to track
                return hyps
            return super().update(view, hyps, state, action)
        got = self.decision(view, hyps, state)
        if got is None:
            return super().update(view, hyps, state, action)
        actions, probs = got
        if action not in actions:
            raise AbstractionError(f"expected one of the re-solved actions "
                                   f"{[str(a) for a in actions]!r} at {state.betting!r}, "
                                   f"got {str(action)!r}")
        w = total(hyps, view.holes.shape[0])
        which = np.flatnonzero(w)
        out = np.zeros_like(w)
        out[which] = w[which] * probs[self.hand_index(view)[which], actions.index(action)]
        return {RESOLVED: out} if out.any() else {}

    def raise_fold_weights(self, view: HandView, hyps: Hyps, state: BettingState,
                           tos: Sequence[int], which: I64) -> F64:
        """As :meth:`StrategyModel.raise_fold_weights`: the translating model's batch in a
        round the re-solver does not play, else size by size through :meth:`update` (the
        agent's answer to each raise is a decision of its re-solver)."""
        if not self.policy.resolver.resolves(state.round):
            return super().raise_fold_weights(view, hyps, state, tos, which)
        out = np.zeros((len(tos), which.size))
        for j, to in enumerate(tos):
            act = Action(ActionKind.RAISE, to)
            after = state.apply(act)
            if after.finished or after.player != view.agent_position or not after.can_fold():
                continue
            moved = self.update(view, hyps, state, act)
            out[j] = total(self.update(view, moved, after, FOLD), view.holes.shape[0])[which]
        return out


class ResolvingChunkPlayer(ChunkPlayer):
    """:class:`~strategies.measure.sampled_lbr.ChunkPlayer` with the re-solving agent
    (``resolve``: its configuration, as ``acpc-agent --resolve``'s) and its model."""

    def __init__(self, config: LbrConfig, resolve: ResolveConfig) -> None:
        super().__init__(config)  # validates the run and loads the file once
        base = self.base
        if not isinstance(base, StrategyPolicy):
            raise UsageError(f"expected a strategy file for a re-solving agent, got "
                             f"{config.spec!r}")
        self.resolve = resolve
        self.base = ResolvingPolicy(base.loaded, base.mapping, base.purification, resolve,
                                    seed=0, mapping_name=base.mapping_name,
                                    sizes_in=base.sizes_in)
        self.model = self.resolving_model = ResolvingModel(self.base)

    def policy(self, seed: int) -> ResolvingPolicy:
        """A fresh re-solving agent (its own seed) on the shared re-solver; the model
        follows it."""
        base = self.base
        assert isinstance(base, ResolvingPolicy)
        policy = ResolvingPolicy(base.loaded, base.mapping, base.purification, self.resolve,
                                 seed=seed, mapping_name=base.mapping_name,
                                 sizes_in=base.sizes_in)
        policy.resolver = base.resolver  # the same blueprint: its caches carry over
        self.resolving_model.bind(policy)
        return policy


def resolve_json(resolve: ResolveConfig) -> str:
    """A re-solver configuration as JSON (for worker processes)."""
    data = asdict(resolve)
    data["extra_fractions"] = list(resolve.extra_fractions)
    return json.dumps(data)


def resolve_from_json(text: str) -> ResolveConfig:
    data = json.loads(text)
    data["extra_fractions"] = tuple(data["extra_fractions"])
    return ResolveConfig(**data)


_PLAYERS: dict[tuple[str, str], ResolvingChunkPlayer] = {}


def play_chunk(config_json: str, resolve_text: str, chunk: int) -> str:
    """JSON list of :meth:`ResolvingChunkPlayer.play`'s rows (for worker processes), as
    :func:`strategies.measure.sampled_lbr.play_chunk`."""
    key = (config_json, resolve_text)
    player = _PLAYERS.get(key)
    if player is None:
        _PLAYERS.clear()
        player = _PLAYERS[key] = ResolvingChunkPlayer(LbrConfig.from_json(config_json),
                                                      resolve_from_json(resolve_text))
    return json.dumps(player.play(chunk))


__all__ = ["RESOLVED", "ModelStats", "ResolvingChunkPlayer", "ResolvingModel",
           "play_chunk", "resolve_from_json", "resolve_json"]

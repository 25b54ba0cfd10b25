"""The live agent that re-solves (``acpc-agent --resolve``): :class:`ResolvingPolicy`.

A :class:`~agent.policy.StrategyPolicy` whose decisions come from the subgame re-solver
(:mod:`agent.resolve`) instead of translation, with translation as the fallback.

**A decision.** The translating history is brought up to date first
(:meth:`~agent.policy.StrategyPolicy.sync`: a new hand swaps in a pending strategy file, and
translation can take over at once). Then the hand's
:class:`~agent.resolve.HandResolver` decides at the real state (re-solving when the mode
asks for it, :data:`agent.resolve.MODES`; otherwise reading the current plan), and the
agent samples its action from the decision's distribution for its hole cards with one
draw ``u`` of the policy's seeded :class:`random.Random`
(:func:`agent.strategy.purification.sample_index`, no purification: the re-solved
distribution is played as the re-solving lab assembles it). Same seed, same inputs, same
actions, unless a time budget ran out (counted).

**Fallbacks** (counted in :class:`ResolvingStats`, named in the trace): translation
plays the decision, and the rest of the hand (the re-solver's later subgames hold the
agent's earlier decisions of the round fixed for *every* hand, which translation does not
give), when

* :data:`TIME_BUDGET`: with a time budget (``--resolve-ms``), the re-solve did not run its
  iterations within it, or the decision took longer than it in all (the only
  timing-dependent outcome);
* :data:`FAILED`: the re-solve raised (a subgame above the node bound, a state the
  re-solver refuses, or any other error: its message, cut to 300 characters, is in the
  trace);
* :data:`NOT_LEGAL`: the sampled action is not legal in the real state (never expected;
  counted so that it cannot pass silently).

**The resolver** is built for the strategy file being played and rebuilt at the first
decision of the hand after a hot-swap (:mod:`agent.strategy.hotswap`): a new file means a
new blueprint (its ranges, counterfactual values and round-0 plan).

**Which games** (:func:`resolve_support`): two-player no-limit games with at most two
hole cards. Leduc and Kuhn are re-solved in every round; Royal (a lossless file) in every
round too, its preflop over one flop per suit class
(:attr:`agent.resolve.Resolver.first_round_by_suits`); hold'em on its last round only
(:attr:`agent.resolve.Resolver.last_round_only`): its earlier decisions are translated
(source ``translation``, counted as :attr:`ResolvingStats.translated_rounds`), and in mode
``off-tree`` so is the river until some opponent action of the hand is off the
blueprint's abstraction (:meth:`agent.resolve.Resolver.off_tree`).

**For evaluators that model the agent** (sampled LBR's re-solving model,
:mod:`strategies.measure.resolving_lbr`): :meth:`ResolvingPolicy.translates` is the rule
above (translated or re-solved, the one :meth:`ResolvingPolicy.act` follows) and
:meth:`ResolvingPolicy.current_hand` gives the hand's re-solver state (its recorded
decisions, every private hand's distribution) and its fallback.

**The trace** (``--trace``): a re-solving decision's record has the translating record's
common fields (``hand``, ``position``, ``betting``, ``cards``, ``board``, ``legal``,
``real``, ``played``, ``fallback``, ``seconds``, ``strategy``) and ``resolve``, an object:
``mode``, ``source`` (``blueprint``: the round-0 plan read from the blueprint; ``plan``:
an earlier re-solve of the hand covers the state; ``resolve``: re-solved now;
``translation``: a round that is not re-solved, the translating record with only ``mode``
and ``source`` here), ``reason`` (a re-solve's: :data:`agent.resolve.REASONS`),
``gadget``,
``nodes`` (public nodes of the subgame), ``hands`` (private hands per player),
``live_hands`` (opponent hands in the gadget), ``iterations``, ``solve_seconds`` (the CFR+
time), ``exploitability`` (the gadget game's exploitability, chips per hand: the accuracy
estimate), ``relative_exploitability`` (the same per visit of the subgame's root),
``min_margin``, with a depth limit (``--resolve-depth``) ``depth``, ``leaf`` (the leaves'
kind, empty when the subgame reaches the end of the game) and ``leaves``, ``actions`` (the
legal real actions in words), ``probs`` (the distribution
for the agent's cards), ``draw`` (``u``) and ``budget_ms``. A fallback's record is the
translating record (:mod:`agent.policy`) with ``resolve`` holding ``mode``, ``fallback``
(the reason) and, for :data:`FAILED`, ``error``; or, when the hand fell back at an earlier
decision, ``{"mode": ..., "fallback": "earlier in the hand"}``.

Imports numpy and numba (through :mod:`agent.resolve`), :mod:`agent.policy`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent.abstraction.translation import MappingFn
from agent.acpc.betting import Action, BettingState
from agent.acpc.describe import cards_text, describe_action, legal_labels
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from agent.acpc.matchstate import MatchState
from agent.policy import PolicyStats, StrategyPolicy, TraceFn
from agent.resolve import Decision, HandResolver, ResolveConfig, Resolver
from agent.strategy.hotswap import LoadedStrategy, describe_error
from agent.strategy.purification import Purification, sample_index

TIME_BUDGET = "time budget: translation"
"""Fallback: the re-solve overran ``--resolve-ms``."""
FAILED = "re-solve failed: translation"
"""Fallback: the re-solve raised."""
NOT_LEGAL = "not legal: translation"
"""Fallback: the sampled action is not legal in the real state."""
EARLIER = "earlier in the hand"
"""The hand fell back at an earlier decision: translation plays to its end."""

def resolve_support(game: Game) -> str | None:
    """Why ``--resolve`` cannot play ``game`` (one line), or None when it can (two-player
    no-limit games; hold'em is re-solved on its last round only:
    :attr:`agent.resolve.Resolver.last_round_only`)."""
    if game.num_players != 2 or not game.is_nolimit:
        return (f"expected a two-player no-limit game for --resolve, got "
                f"{game.num_players} players, {'no-limit' if game.is_nolimit else 'limit'}")
    if game.num_hole_cards > 2:
        return (f"expected at most 2 hole cards for --resolve, got {game.num_hole_cards}")
    return None


@dataclass
class ResolvingStats(PolicyStats):
    """:class:`~agent.policy.PolicyStats` and the re-solving agent's counters."""

    resolves: int = 0
    """Decisions that re-solved a subgame (and played it)."""
    resolves_new_round: int = 0
    """Of those: the round's first re-solve (:data:`agent.resolve.REASONS`)."""
    resolves_off_plan: int = 0
    """Of those: the opponent's action left the current plan's tree."""
    resolves_always: int = 0
    """Of those: mode ``always``."""
    plan_decisions: int = 0
    """Decisions read from an earlier re-solve of the hand (source ``plan``)."""
    blueprint_decisions: int = 0
    """Decisions read from the round-0 plan (source ``blueprint``)."""
    translated_rounds: int = 0
    """Decisions translated because their round is not re-solved (source
    ``translation``: hold'em before its river; in mode ``off-tree``, the river while
    every opponent action has been one of the blueprint's)."""
    time_budget_fallbacks: int = 0
    """Hands that fell back to translation because a re-solve overran the time budget."""
    failed_fallbacks: int = 0
    """Hands that fell back to translation because a re-solve raised."""
    illegal_fallbacks: int = 0
    """Hands that fell back because a sampled action was not legal (never expected)."""
    translated_decisions: int = 0
    """Decisions translation played after a fallback (the fallback's own included)."""
    resolver_builds: int = 0
    """Resolvers built: 1, plus one per strategy swapped in."""
    resolve_seconds_max: float = 0.0
    """The slowest re-solving decision (seconds)."""

    def describe(self) -> str:
        """The summary line's part: ``re-solves N (plan P, blueprint B), fallbacks ...``."""
        return (f"re-solves {self.resolves} (new round {self.resolves_new_round}, off plan "
                f"{self.resolves_off_plan}, always {self.resolves_always}; plan "
                f"{self.plan_decisions}, blueprint "
                f"{self.blueprint_decisions}, translated rounds {self.translated_rounds}), "
                f"re-solve fallbacks time-budget "
                f"{self.time_budget_fallbacks} failed {self.failed_fallbacks} illegal "
                f"{self.illegal_fallbacks} (translated decisions "
                f"{self.translated_decisions}), resolvers built {self.resolver_builds}")


@dataclass
class _HandState:
    number: int
    resolver: HandResolver
    fallback: str | None = None


class ResolvingPolicy(StrategyPolicy):
    """Plays a strategy file by re-solving, translation as the fallback (module docstring).

    ``config``: the re-solver's (:class:`agent.resolve.ResolveConfig`: gadget, mode,
    iterations; its ``seconds`` is the time budget per decision, or None).
    """

    stats: ResolvingStats

    def __init__(
        self,
        loaded: LoadedStrategy,
        mapping: MappingFn,
        purification: Purification,
        config: ResolveConfig,
        *,
        seed: int | None = None,
        mapping_name: str = "",
        time_guard: float | None = None,
        trace: TraceFn | None = None,
        sizes_in: str = "abstract",
    ) -> None:
        super().__init__(loaded, mapping, purification, seed=seed, mapping_name=mapping_name,
                         time_guard=time_guard, trace=trace, sizes_in=sizes_in)
        why = resolve_support(loaded.strategy.game)
        if why is not None:
            raise UsageError(why)
        self.config = config
        self.stats = ResolvingStats()
        self.resolver = self._build(loaded)
        self._current: _HandState | None = None

    def _build(self, loaded: LoadedStrategy) -> Resolver:
        self.stats.resolver_builds += 1
        return Resolver(loaded.strategy, self.config, mapping=self.mapping,
                        purification=self.purification, sizes_in=self.sizes_in,
                        cards=loaded.cards)

    def warm_up(self) -> None:
        """Build the round-0 plans and run one tiny re-solve (loads or compiles the numba
        kernels, before connecting): the first decisions are not charged for it.

        Raises:
            AcpcError: if the re-solver cannot build this game's plans (e.g. the node
                bound): the game is not playable with ``--resolve``.
        """
        from dataclasses import replace

        from agent.acpc.betting import CALL, BettingState
        from agent.acpc.cards import deck_for

        game = self.resolver.game
        probe = self.resolver.with_config(replace(self.config, mode="always", iterations=1,
                                                  seconds=None))
        state = BettingState.initial(game)
        board: tuple[int, ...] = ()
        if self.resolver.resolves(0):
            for seat in (0, 1):
                self.resolver.blueprint_plan(seat)
        if self.resolver.last_round_only:
            # a river reached by checks and calls, on the deck's last cards
            while state.round < game.num_rounds - 1:
                state = state.apply(CALL)
            deck = deck_for(game)
            board = tuple(deck[len(deck) - game.total_board_cards:])
        probe.new_hand(state.player).decide(state, board)

    # ----------------------------------------------------------------- deciding

    def act(self, ms: MatchState) -> Action:
        began = time.perf_counter()
        self.sync(ms)  # swaps a pending file in at a new hand; translation can take over
        if self.resolver.blueprint is not self.loaded.strategy:
            self.resolver = self._build(self.loaded)
        hand = self._current
        if hand is None or hand.number != ms.hand_number:
            hand = self._current = _HandState(ms.hand_number,
                                              self.resolver.new_hand(ms.position))
        if hand.fallback is not None:
            return self._translate(ms, began, {"fallback": EARLIER})
        state = ms.state
        visible = ms.board[: state.game.board_cards_through(state.round)]
        if self.translates(hand.resolver, state, visible):
            # not re-solved here: translation plays (counted apart from the fallbacks)
            self.stats.translated_rounds += 1
            return self.translate(ms, began=began, extra=(
                {"resolve": {"mode": self.config.mode, "source": "translation"}}
                if self.trace is not None else None))
        budget = self.config.seconds
        try:
            decision = hand.resolver.decide(state, visible)
        except Exception as exc:  # any failure of a re-solve is a counted fallback
            hand.fallback = FAILED
            self.stats.failed_fallbacks += 1
            return self._translate(ms, began, {"fallback": FAILED,
                                               "error": describe_error(exc)})
        elapsed = time.perf_counter() - began
        st = decision.stats
        info = self._stats_record(decision)
        if budget is not None and (elapsed > budget or (
                st.source == "resolve" and st.iterations < self.config.iterations)):
            hand.fallback = TIME_BUDGET
            self.stats.time_budget_fallbacks += 1
            return self._translate(ms, began, dict(info, fallback=TIME_BUDGET))
        probs = decision.for_hole(ms.own_cards)
        u = self.rng.random()
        weights = [probs[a] for a in decision.actions]
        action = decision.actions[sample_index(weights, u)]
        if not state.is_legal(action):
            hand.fallback = NOT_LEGAL
            self.stats.illegal_fallbacks += 1
            return self._translate(ms, began, dict(info, fallback=NOT_LEGAL,
                                                   action=str(action)))
        if st.source == "resolve":
            self.stats.resolves += 1
            if st.reason == "new round":
                self.stats.resolves_new_round += 1
            elif st.reason == "off plan":
                self.stats.resolves_off_plan += 1
            else:
                self.stats.resolves_always += 1
            self.stats.resolve_seconds_max = max(self.stats.resolve_seconds_max,
                                                 time.perf_counter() - began)
        elif st.source == "plan":
            self.stats.plan_decisions += 1
        else:
            self.stats.blueprint_decisions += 1
        self.stats.decisions += 1
        if self.trace is not None:
            info.update(actions=[describe_action(state, a) for a in decision.actions],
                        probs=[round(p, 6) for p in weights], draw=round(u, 6))
            self.trace({
                "hand": ms.hand_number, "position": ms.position, "betting": state.betting,
                "cards": cards_text(ms.own_cards), "board": cards_text(visible),
                "legal": legal_labels(state), "resolve": info,
                "played": describe_action(state, action),
                "strategy": self.loaded.strategy.checksum[:16], "real": str(action),
                "fallback": None, "seconds": round(time.perf_counter() - began, 6),
            })
        return action

    def translates(self, hand: HandResolver, state: BettingState,
                   board: Sequence[int]) -> bool:
        """Whether the agent's decision at ``state`` (``hand`` the hand's re-solver state,
        ``board`` the visible board) is translated rather than re-solved: a round the
        re-solver does not play, or mode ``off-tree`` in a game re-solved on its last round
        only (hold'em) while no re-solve has run in the hand and every opponent action is
        the blueprint's (module docstring). :meth:`act` follows it; so does an evaluator that
        models the agent (sampled LBR's re-solving model)."""
        return not self.resolver.resolves(state.round) or (
            self.config.mode == "off-tree" and not self.resolver.resolves(0) and
            hand.plan is None and not self.resolver.off_tree(hand.seat, state, board))

    def current_hand(self, hand_number: int) -> tuple[HandResolver, str | None] | None:
        """The re-solver's state of hand ``hand_number`` and the reason it fell back to
        translation (None: it did not), when that is the hand the agent is playing (it has
        decided in it); None otherwise. For evaluators that model the agent: its recorded
        decisions (:attr:`agent.resolve.HandResolver.own`, every private hand's
        distribution) are what it played, and a copy answers hypothetical states."""
        hand = self._current
        if hand is None or hand.number != hand_number:
            return None
        return hand.resolver, hand.fallback

    def _stats_record(self, decision: Decision) -> dict[str, Any]:
        st = decision.stats
        out: dict[str, Any] = {"mode": self.config.mode, "source": st.source,
                               "budget_ms": (None if self.config.seconds is None else
                                             round(self.config.seconds * 1000.0, 3))}
        if st.source == "resolve":
            out.update(reason=st.reason, gadget=st.gadget, nodes=st.nodes, hands=st.hands,
                       live_hands=st.live_hands, iterations=st.iterations,
                       solve_seconds=round(st.seconds, 6),
                       exploitability=float(f"{st.exploitability:.6g}"),
                       relative_exploitability=float(f"{st.relative_exploitability:.6g}"),
                       min_margin=float(f"{st.min_margin:.6g}"))
            if st.depth is not None:
                out.update(depth=st.depth, leaf=st.leaf, leaves=st.leaves)
        return out

    def _translate(self, ms: MatchState, began: float, info: dict[str, Any]) -> Action:
        """Translation plays the decision (a fallback); the trace record says why."""
        self.stats.translated_decisions += 1
        info = {"mode": self.config.mode, **info}
        return self.translate(ms, began=began,
                              extra={"resolve": info} if self.trace is not None else None)

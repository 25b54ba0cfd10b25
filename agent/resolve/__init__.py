"""Subgame re-solving: the agent solves the part of the game it is in, instead of translating.

**The API** (what the live agent calls; everything here is deterministic: no clock, no
randomness, except an optional time budget whose iterations are counted and reported)::

    from agent.resolve import Resolver, ResolveConfig

    resolver = Resolver(blueprint, ResolveConfig(gadget="reach-maxmargin", mode="round",
                                                 iterations=200, seconds=None),
                        mapping="rand-pshar", purification="none", sizes_in="abstract")
    hand = resolver.new_hand(seat)            # once per hand
    decision = hand.decide(state, board)      # at each of the agent's decisions
    decision.actions                          # tuple[Action, ...]: the legal real actions
    decision.probs                            # [hand, action] for every private hand
    decision.for_hole(hole)                   # {Action: probability} for the agent's cards
    decision.stats                            # ResolveStats: source, gadget, nodes, hands,
                                              # iterations, seconds, exploitability,
                                              # reason (REASONS), ...

* ``Resolver(blueprint: Strategy, config: ResolveConfig | None = None, *, mapping: str |
  MappingFn = "rand-pshar", purification: str | Purification = "none", sizes_in: str =
  "abstract", cards: CardAbstraction | None = None)``: one per blueprint and match
  (two-player no-limit games). ``mapping``, ``purification`` and ``sizes_in`` are the
  translating agent's: the blueprint is read through the decision model of
  :mod:`agent.decision` with them (ranges, counterfactual values, the round-0 plan).
  ``cards`` defaults to the file's card abstraction.
* ``Resolver.new_hand(seat: int) -> HandResolver``;
  ``HandResolver.decide(state: BettingState, board: Sequence[int]) -> Decision`` (``state``
  the real betting state, the agent to act; ``board`` the board cards dealt so far);
  ``HandResolver.played(state: BettingState, action: Action) -> None`` records an action
  the agent took without ``decide`` (a fallback: the same action for every hand; every
  earlier decision of the agent in the hand must be recorded one way or the other);
  ``HandResolver.copy()`` for evaluators that branch.
* ``ResolveConfig(gadget="reach-maxmargin", mode="round", iterations=200, seconds=None,
  extra_fractions=(), max_nodes=200_000, max_raises=None, depth=None, leaf="multi",
  continuations=("blueprint", "fold", "call", "raise"), bias=5.0)``; gadgets :data:`GADGETS`
  (``unsafe``, ``resolve``, ``maxmargin``, ``reach-maxmargin``), modes :data:`MODES`; depth
  limits below. ``ResolveConfig.from_flags(mode, iterations=, gadget=, seconds=, depth=,
  leaf=)``: the configuration the command-line flags name (None: the default), as
  ``acpc-agent`` and ``acpc-strategy lbr`` build it.
* Lower level: :func:`agent.resolve.tree.build_tree`, :class:`agent.resolve.gadgets.Subgame`
  and :func:`agent.resolve.gadgets.solve` (one subgame, one gadget), and
  :func:`agent.resolve.blueprint.behaviour` (the translating blueprint on a tree).

**The subgame.** At a re-solve the subgame is rooted at the *start of the current round*
(with the real board), and runs to the end of the game (Leduc: a round-0 subgame is the
whole game, with a chance node for the board). Its betting abstraction, for both players
at every decision: fold (when facing a bet), call, a raise to every pot fraction the
blueprint's betting abstraction names anywhere (plus ``extra_fractions``), realised in
chips as the agent realises its own raises, and the all-in; the real actions of the round
so far are added where they are not among those (the opponent's off-tree bet is in the
tree: *nested* solving). The agent's own earlier decisions in the round are held at what it
really played (for every hand), so the new strategy stays consistent with its past. Cards
are lossless: every private hand of the game (with card blocking), so Leduc's subgames and
a hold'em river are exact; terminal values take time linear in the hands
(:mod:`agent.resolve.kernels`).

**Depth limits** (``depth``: rounds a subgame spans, its own counted; None, the default:
to the end of the game, as above). A subgame that would reach round ``root + depth`` stops
at that round's first node (the chance node that deals its cards): a *leaf*, where the
opponent chooses per hand among continuations of the rest of the game, copies of it in the
tree held fixed for both players (:mod:`agent.resolve.depth`; Brown, Sandholm and Amos
2018): the agent plays its blueprint there as translation would, the opponent its
blueprint or (``leaf="multi"``, the default) also the blueprint biased ``bias`` times
towards fold, call or raises; ``leaf="blueprint"`` keeps the blueprint alone
(single-valued leaves). Card chance below a leaf is exact; the kernels are the same (the
copies are frozen nodes). The plan stops at its leaves: the next round is re-solved
(reason ``new round``) from it, nested: the ranges are the plan's at the leaf, the
opponent's counterfactual values its best response against the agent's blueprint
continuation (the play that re-solve replaces, so it is safe against it), the gifts taken
in the game the plan solved (continuations held, the opponent's choice at each leaf). A
depth that covers the rest of the game changes nothing. In Leduc and Royal only a round-0
subgame can be cut (depth 1: the round-0 subgame stops at the board); each leaf costs
one copy of the rest of the game per continuation, so a depth-limited subgame here is
*larger* than the whole one (a cheaper leaf evaluation is not done).

**The root.** The history tree (the stated abstraction from the start of the hand, the real
path up to the round's start, every board) is walked with the blueprint through the
decision model (:mod:`agent.resolve.blueprint`): the opponent's range is its reach under
the translating blueprint (Bayes over every private hand through the card abstraction),
the agent's range its reach under what it really played (its recorded decisions; the
blueprint where it played the blueprint). The opponent's counterfactual best-response
values (CBVs) are computed against the agent's play there (the blueprint off the path);
the *gift* of each opponent decision on the path before the round is what it gave up (its
best action's value minus the taken one's), split over the round's boards by their chance
probability. The gadgets (:mod:`agent.resolve.gadgets`) use them.

**When it re-solves** (``mode``): ``round``: the round-0 plan is the translating
blueprint; every later round is re-solved at the agent's first decision in it; ``off-tree``:
only when the opponent's action is not in the current plan's tree (the plan of a round-0
re-solve runs on into later rounds); ``always``: at every decision. In every mode an
opponent action outside the plan's tree triggers a re-solve, and a decision inside the
current plan's tree reads the plan (no re-solve).

**Nesting.** A later round's root comes from the current plan when it is a re-solve whose
tree holds that root (ranges, CBVs and gifts against the previous re-solve's strategy); a
re-solve later in the same round keeps the round's root; otherwise (the plan is the
blueprint's) the root comes from the history tree above.

**Royal: the preflop over suit classes.** A game above
:data:`agent.resolve.resolver.MAX_WHOLE_DEALS` that deals its whole board in its second and
last round, whose private hands times *suit classes* of boards is at most
:data:`agent.resolve.resolver.MAX_SUIT_DEALS` (Royal: 190 x 95 = 18,050) and whose card
abstraction does not tell suits apart (lossless or blind), is re-solved in its first round
too (``Resolver.first_round_by_suits``): the round-0 plan (the blueprint's) and every
round-0 subgame (the whole game, as in Leduc) deal the flop one board per suit class
(:func:`agent.resolve.tree.build_tree` with ``suits``; the class's other boards are the
same play with the suits permuted, which the kernels add back at the chance node:
:attr:`agent.resolve.tree.PublicTree.perms`). That is exact when the root's ranges and
values and the agent's fixed rows are the same under every permutation of the suits, as
they are at the start of the hand with such cards (checked at each such re-solve: one
line if not). A Royal round-0 subgame has about 9,400 to 12,500 public nodes (against
113,000 over every flop). The flop's root comes from the preflop re-solve when one ran
(nested, the real flop mapped onto its class's board), otherwise from the real history
as below.

**Hold'em: the last round only.** A game whose private hands times boards exceeds
:data:`agent.resolve.resolver.MAX_WHOLE_DEALS` (``Resolver.last_round_only``) is
re-solved on its last round only, Royal's preflop apart (``Resolver.resolves(round)``;
``decide`` refuses earlier rounds, which the live agent translates). The root is walked
along the *real* history only (``Resolver.path_root``,
:func:`agent.resolve.blueprint.path_states`): each player's
range is its reach under the translating blueprint over every hole pair the board allows
(Bayes through the card abstraction, the translation draws split with the agent's own
mapping); the opponent's CBVs are its best response, over the round's stated tree without
the round's real actions, to the agent's blueprint play from its abstract histories at
the root; there are no gifts (those of earlier rounds need the values of actions not
taken, over boards this root does not enumerate: ``reach-maxmargin`` is ``maxmargin``
there). The subgame: the river with the real board, cards lossless (1,326 hole pairs, the
board's 245 blocked), showdowns by hand rank; its stated betting abstraction is capped at
the blueprint's raises for the round (``ResolveConfig.max_raises``; after the cap the
all-in is the only raise; the real actions are always in). The agent's river decisions
taken before the first re-solve (translation) are held at the blueprint's rows. In
Leduc, the path root equals the history tree's (tested).

**Limits.** The history tree enumerates every board: right for Leduc (and any game whose
boards before the current round are few). A subgame's ``compat`` is dense per board, fine
for one river board, not for a turn subgame over its 48 rivers; the hold'em turn
(depth-limited at the river) is not re-solved. Public trees are bounded by ``max_nodes``.

**Solving.** CFR+ vectorised over hands (numba kernels, :mod:`agent.resolve.kernels`;
regret matching is :func:`agent.strategy.kernels.match_row`), alternating updates, linear
averaging, to ``iterations`` or ``seconds``. The decision is the average strategy at the
current state. The accuracy estimate is the gadget game's exploitability
(:class:`agent.resolve.gadgets.Solution`).

Imports numpy, numba, :mod:`agent.acpc`, :mod:`agent.abstraction`, :mod:`agent.strategy`
and :mod:`agent.decision`.
"""

from __future__ import annotations

from agent.resolve.gadgets import GADGETS, Solution, Subgame, parse_gadget, solve
from agent.resolve.resolver import (
    MODES,
    REASONS,
    Decision,
    HandResolver,
    ResolveConfig,
    Resolver,
    ResolveStats,
)

__all__ = ["GADGETS", "MODES", "REASONS", "Decision", "HandResolver", "ResolveConfig",
           "ResolveStats", "Resolver", "Solution", "Subgame", "parse_gadget", "solve"]

"""The recipes that rebuild every bundled strategy file, and the manifest of their quality.

A :class:`Recipe` names a bundled game, a betting abstraction, the card abstraction
(lossless: ``LosslessCards(game).spec`` is written as the file's ``cards``, so the agent's
``card_abstraction_from_spec`` rebuilds it), a solver variant of :mod:`strategies.solvers.cfr`,
an iteration count and a seed. Every recipe is deterministic: the full-width solvers use
no randomness and the sampling one is seeded, so ``acpc-strategy solve --recipe NAME
--bundle`` writes the same table (same ``checksum``) on every run.

``agent/data/strategies/manifest.json`` (:func:`agent.data.manifest_path`) records, per
bundled file, what the recipe measured when the file was built: iterations, solver seconds,
the abstract-game exploitability of the stored table (chips per hand: ``(br0 + br1) / 2``
for two players, NashConv for more, see :mod:`strategies.measure.best_response`), the value
of the game to each position, the table checksum (sha256, as in the file header) and the
file size. :func:`load_manifest` reads it.

Imports :mod:`agent` and :mod:`strategies`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.abstraction.actions import BettingAbstraction, parse_betting_abstraction
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.data import manifest_path, strategy_path

if TYPE_CHECKING:
    from strategies.games.abstract import AbstractGame
    from strategies.solvers.cfr import SolverConfig



@dataclass(frozen=True, slots=True)
class Recipe:
    """How one bundled strategy file is built."""

    name: str
    """Also the file stem: ``agent/data/strategies/<name>.strat`` (:mod:`agent.data`)."""
    game: str
    """A bundled game file name (see :func:`agent.acpc.gamefiles.bundled_games`)."""
    betting: str
    """A betting abstraction preset name or JSON text."""
    solver: str
    """A variant of :data:`strategies.solvers.cfr.VARIANTS`."""
    iterations: int
    dtype: str = "float32"
    seed: int = 0
    description: str = ""
    cards: str = "lossless"
    """``lossless`` (enumerated deals, :mod:`strategies.games.abstract`), ``holdem`` (E[HS^2]
    buckets and a sampled deal pool, :mod:`strategies.solvers.dealpool`), ``holdem-pa``
    (potential-aware buckets, :mod:`agent.abstraction.holdem_pa`, and a deal pool) or
    ``royal`` (lossless cards, CFR+ on the public tree with one board per suit class:
    :mod:`strategies.solvers.royal`, for games with too many deals to enumerate; ``solver`` is
    ignored)."""
    buckets: tuple[int, ...] = ()
    """``holdem``: buckets per round, ``(169, n1, n2, n3)``; ``holdem-pa``: clusters per
    round (169 preflop: the lossless classes)."""
    card_samples: int = 50_000
    """``holdem``: deals per round behind the bucket thresholds; ``holdem-pa``: hands in
    each round's k-means sample."""
    recall: str = "imperfect"
    """``holdem-pa``: ``imperfect`` or ``perfect`` (the bucket sequence of earlier rounds)."""
    bins: int = 50
    """``holdem-pa``: river-equity bins of the turn histograms."""
    pool_deals: int = 0
    """``holdem``: deals in the solver's sampled pool."""
    discount_interval: int = 0
    """``holdem``: iterations between linear discounts (0: none)."""
    discount_until: int = 0
    """``holdem``: last iteration with a discount."""
    bundled: bool = True
    """False for files too big to ship (over 50 MB): rebuilt by the recipe only, with no
    manifest entry (``--bundle`` is refused)."""
    purification: str = "none"
    """``holdem``: the file's ``default_purification`` (what ``acpc-agent`` plays unless
    ``--purify`` says otherwise)."""

    @property
    def filename(self) -> str:
        """The bundled file name."""
        return f"{self.name}.strat"

    @property
    def bundled_path(self) -> Path:
        """Where the bundled file is."""
        return strategy_path(self.filename)

    def load_game(self) -> Game:
        """The real game."""
        return load_game(self.game)

    def betting_abstraction(self) -> BettingAbstraction:
        """The betting abstraction."""
        return parse_betting_abstraction(self.betting)

    def solver_config(self) -> SolverConfig:
        """The solver's behaviour flags (with the recipe's discount schedule)."""
        from strategies.solvers.cfr import solver_config

        config = solver_config(self.solver)
        if self.discount_interval or self.discount_until:
            config = dataclasses.replace(config, discount_interval=self.discount_interval,
                                         discount_until=self.discount_until)
        return config

    def solve_paths(
        self, out: str | None, bundle: bool, checkpoint: str | None, resume: bool
    ) -> tuple[Path, Path]:
        """Where ``solve`` writes the file and the checkpoint (``--out``/``--bundle``).

        Raises:
            ValueError: if ``resume`` but there is no checkpoint to resume from.
        """
        if out:
            target = Path(out)
        elif bundle:
            target = self.bundled_path
        else:
            target = Path(self.filename)
        ckpt = Path(checkpoint) if checkpoint else Path(f"{self.name}.ckpt.npz")
        if resume and not ckpt.exists():
            raise UsageError(f"expected a checkpoint to resume from at {str(ckpt)!r}, "
                             f"found none")
        return target, ckpt

    @property
    def enumerated(self) -> bool:
        """True if the solver enumerates the deals (lossless cards, :mod:`strategies.games`)."""
        return self.cards == "lossless"

    def abstract_game(self) -> AbstractGame:
        """The flat abstract game the solver runs on (lossless cards).

        Raises:
            ValueError: for a recipe with sampled deals (``cards == "holdem"``).
        """
        if not self.enumerated:
            raise UsageError(f"recipe {self.name!r} samples its deals (cards {self.cards!r}): "
                             f"it has no enumerated abstract game")
        from agent.abstraction.buckets import LosslessCards
        from strategies.games.abstract import build_abstract_game

        game = self.load_game()
        return build_abstract_game(game, self.betting_abstraction(), LosslessCards(game))


HOLDEM_BETTING = (
    '{"name": "hp-p-4333", "fold": true, "all_in": true, '
    '"fractions": [[[0.5, 1.0], [1.0]]], "max_raises": [4, 3, 3, 3]}'
)
"""The hold'em recipe's betting abstraction (13,464 decision nodes)."""
HOLDEM_ITERATIONS = 152_545_433
"""Iterations of the bundled hold'em file (see its manifest entry for the time)."""

HOLDEM_PA_ITERATIONS = 113_273_555
"""Iterations of the bundled potential-aware hold'em file (see its manifest entry)."""

HOLDEM_OVERBET_BETTING = (
    '{"name": "hp-p2-4333", "fold": true, "all_in": true, '
    '"fractions": [[[0.5, 1.0, 2.0], [1.0]]], "max_raises": [4, 3, 3, 3]}'
)
"""``hp-p-4333`` with a two-pot overbet beside the half-pot and pot first bets of every
round (28,028 decision nodes)."""
HOLDEM_OVERBET_ITERATIONS = 97_027_962
"""Iterations of the bundled overbet hold'em file: what 100 minutes on one core reached
(see its manifest entry and docs/reports/holdem-table.md)."""

ROYAL_FCHA = '{"name": "fcha", "fold": true, "all_in": true, "fractions": [[[0.5]]]}'
"""Royal FCHA: fold, call, half pot, all-in."""
ROYAL_FCMHPA = ('{"name": "fcmhpa", "fold": true, "all_in": true, '
                '"fractions": [[[1e-9, 0.5, 1.0]]]}')
"""Royal FCMHPA: fold, call, min raise (the fraction 1e-9, clamped up), half pot, pot,
all-in."""
ROYAL_FCMHQTPA = ('{"name": "fcmhqtpa", "fold": true, "all_in": true, '
                  '"fractions": [[[1e-9, 0.25, 0.5, 0.75, 1.0]]]}')
"""Royal FCMHQTPA: min raise, quarter, half, three-quarter and pot, fold, call, all-in."""

RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        Recipe(
            "kuhn.limit.3p", "kuhn.limit.3p.game", "fcpa", "dcfr", 100_000,
            description="the reference 3-player Kuhn poker (no equilibrium guarantee with "
            "three players: NashConv is reported)",
        ),
        Recipe(
            "leduc.limit.2p", "leduc.limit.2p.game", "fcpa", "cfr+", 50_000,
            description="the reference limit Leduc hold'em (the whole game)",
        ),
        Recipe(
            "leduc.nolimit.2p.fcpa", "leduc.nolimit.2p.game", "fcpa", "cfr+", 50_000,
            description="no-limit Leduc (stacks 12, ante 1): fold, call, pot, all-in",
        ),
        Recipe(
            "leduc.nolimit.2p.fchpa", "leduc.nolimit.2p.game", "fchpa", "cfr+", 50_000,
            description="no-limit Leduc (stacks 12, ante 1): fold, call, half pot, pot, "
            "all-in",
        ),
        Recipe(
            "holdem.nolimit.2p", "holdem.nolimit.2p.reverse_blinds.game", HOLDEM_BETTING,
            "mccfr-es-pool", HOLDEM_ITERATIONS, cards="holdem", buckets=(169, 50, 50, 50),
            card_samples=50_000, pool_deals=2_000_000, discount_interval=1_000_000,
            discount_until=30_000_000, purification="full",
            description="heads-up no-limit hold'em (stacks 20000, blinds 100/50, reverse "
            "blinds): 169 preflop classes, 50 E[HS^2] buckets per later round; first bet of "
            "a round half pot, pot or all-in, raises pot or all-in, at most 4/3/3/3 raises; "
            "external-sampling MCCFR over a pool of 2,000,000 sampled deals "
            "(strategies.solvers.dealpool); played fully "
            "purified (the most likely action) by default",
        ),
        Recipe(
            "holdem.nolimit.2p.pa", "holdem.nolimit.2p.reverse_blinds.game", HOLDEM_BETTING,
            "mccfr-es-pool", HOLDEM_PA_ITERATIONS, cards="holdem-pa",
            buckets=(169, 50, 50, 50), recall="imperfect", bins=50, card_samples=50_000,
            pool_deals=2_000_000, discount_interval=1_000_000, discount_until=30_000_000,
            purification="full",
            description="heads-up no-limit hold'em (stacks 20000, blinds 100/50, reverse "
            "blinds): potential-aware cards (169 preflop classes; 50 flop clusters of "
            "histograms over turn clusters, 50 turn clusters of river-equity histograms, "
            "both k-means under the earth mover's distance; 50 river equity buckets), "
            "imperfect recall; the betting of holdem.nolimit.2p; external-sampling MCCFR "
            "over a pool of 2,000,000 sampled deals; played fully purified by default",
        ),
        Recipe(
            "holdem.nolimit.2p.pa.overbet", "holdem.nolimit.2p.reverse_blinds.game",
            HOLDEM_OVERBET_BETTING, "mccfr-es-pool", HOLDEM_OVERBET_ITERATIONS,
            cards="holdem-pa", buckets=(169, 50, 50, 50), recall="imperfect", bins=50,
            card_samples=50_000, pool_deals=2_000_000, discount_interval=1_000_000,
            discount_until=30_000_000, purification="full",
            description="heads-up no-limit hold'em (stacks 20000, blinds 100/50, reverse "
            "blinds): the potential-aware cards of holdem.nolimit.2p.pa; first bet of a "
            "round half pot, pot, two pots or all-in, raises pot or all-in, at most 4/3/3/3 "
            "raises; external-sampling MCCFR over a pool of 2,000,000 sampled deals "
            "(97,027,962 iterations = what 100 minutes reached on one core); played fully "
            "purified by default; beats holdem.nolimit.2p head to head, +46.3 +- 19.3 "
            "mbb/hand over 1,000,000 hands through the dealer",
        ),
        Recipe(
            "royal.nolimit.2p.fcpa", "royal.nolimit.2p.game", "fcpa", "cfr+", 1500,
            cards="royal",
            description="Royal no-limit hold'em (20 cards, stacks 20, blinds 1/2 reversed): "
            "fold, call, pot, all-in; lossless cards; CFR+ on the public tree",
        ),
        Recipe(
            "royal.nolimit.2p.fcha", "royal.nolimit.2p.game", ROYAL_FCHA, "cfr+", 1000,
            cards="royal",
            description="Royal no-limit hold'em: fold, call, half pot, all-in; lossless "
            "cards; CFR+ on the public tree",
        ),
        Recipe(
            "royal.nolimit.2p.fcmhpa", "royal.nolimit.2p.game", ROYAL_FCMHPA, "cfr+", 163,
            cards="royal", bundled=False,
            description="Royal no-limit hold'em: fold, call, min raise, half pot, pot, "
            "all-in; lossless cards; CFR+ on the public tree (not bundled: 160 MB); 163 "
            "iterations = what 29 minutes reached on 2 shared cores (abstract-game "
            "exploitability 0.0111 chips/hand)",
        ),
        Recipe(
            "royal.nolimit.2p.fcmhqtpa", "royal.nolimit.2p.game", ROYAL_FCMHQTPA, "cfr+", 76,
            cards="royal", bundled=False,
            description="Royal no-limit hold'em: fold, call, min, quarter, half, "
            "three-quarter and pot, all-in; lossless cards; CFR+ on the public tree (not "
            "bundled: 471 MB); 76 iterations = what 33 minutes reached on 2 shared cores "
            "(abstract-game exploitability 0.0595 chips/hand)",
        ),
    )
}
"""Every bundled file's recipe, by name."""


def get_recipe(name: str) -> Recipe:
    """The recipe called ``name``.

    Raises:
        ValueError: for an unknown name (the message lists the known ones).
    """
    try:
        return RECIPES[name]
    except KeyError:
        raise UsageError(f"expected a recipe in {', '.join(RECIPES)}, got {name!r}") from None


def load_manifest(path: Path | None = None) -> dict[str, Any]:
    """The manifest as a dict (``{"files": {name: figures}}``); empty if there is none.

    Raises:
        ValueError: if the manifest is not valid JSON of that shape.
    """
    target = path or manifest_path()
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {"files": {}}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{target}: expected JSON, got an error: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise UsageError(f"{target}: expected an object with a 'files' object")
    return data


def update_manifest(name: str, entry: dict[str, Any], path: Path | None = None) -> Path:
    """Set the manifest entry of ``name`` (atomically rewrites the file); return its path."""
    target = path or manifest_path()
    data = load_manifest(target)
    data["files"][name] = entry
    data["files"] = dict(sorted(data["files"].items()))
    text = json.dumps(data, indent=2, sort_keys=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # package data: readable by everyone (mkstemp makes it 0600)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target

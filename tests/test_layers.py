"""Every layer rule of the project, stated once (docs/architecture.md, "Layers") and checked
on every module of ``agent``, ``dealer``, ``jobs``, ``strategies`` and ``evaluation``.

Two views of a module's dependencies:

* *what it names*: every ``import`` statement in its source, module level or inside a
  function (a lazy import is still a dependency), read with :mod:`ast`;
* *what it loads*: the modules that importing it alone in a fresh interpreter adds to
  ``sys.modules``. Heavy third-party modules (numpy, numba, msgpack) may be named by a light
  module inside a function, e.g. when an agent first plays a strategy file, but not loaded
  at import time: that is how the dealer and the CLIs start fast.

A rule governs some modules and says what they must not name or load; the graph of what
the modules name has no circle.
"""

from __future__ import annotations

import ast
import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tests.support import PACKAGES, ROOT, SHARED, module_source, project_modules

HEAVY = ("numpy", "numba", "llvmlite", "msgpack")
CLI_MODULES = {
    "agent.cli": set(),
    "dealer.cli": set(),
    "evaluation.cli": set(),
    "evaluation.logtool": set(),
    "strategies.cli": {"strategies.commands.translation", "strategies.commands.main",
                       "strategies.commands.resolve_lab"},
    "strategies.commands.main": set(),
    "evaluation.arena": set(),
    "strategies.commands.translation": set(),
    "strategies.commands.resolve_lab": set(),
}
"""Entry-point modules, each with the other CLI modules it may load (its sub-commands)."""

AGENT_LEVELS = {
    "agent.data": 0,
    "agent.acpc": 0,
    "agent.jit": 1,
    "agent.handeval": 1,
    "agent.fileio": 1,
    "agent.console": 1,
    "agent.kernelstamp": 1,
    "agent.exploitconfig": 1,
    "agent.abstraction": 2,
    "agent.strategy": 3,
    "agent.decision": 4,
    "agent.builtin": 4,
    "agent.policy": 5,
    "agent.resolve": 5,
    "agent.exploit": 5,
    "agent.resolving": 6,
    "agent.exploiting": 6,
    "agent.agents": 6,
    "agent.client": 6,
    "agent.human": 6,
    "agent.explain": 6,
    "agent.external": 6,
    "agent.bot": 7,
    "agent.cli": 7,
}
"""The agent's floors, bottom up: a module may import its own floor and those below. The
bundled data (:mod:`agent.data`) sits at the bottom beside the core, which may read it."""

PACKAGE_LEVELS = {"agent": 0, "dealer": 1, "jobs": 1, "strategies": 2, "evaluation": 3}
"""The house's floors, bottom up (docs/architecture.md): a package may name its own floor's
package and those below, never a package beside it or above it. The player (``agent``) is
at the bottom; the dealer and the job backend stand on the core alone; the offline tools
(``strategies``) on the player and the jobs; the evaluation of agents on everything."""

EVALUATION_LEVELS = {
    "evaluation.stats": 0,
    "evaluation.match.variants": 0,
    "evaluation.match.schedule": 0,
    "evaluation.estimators": 1,
    "evaluation.match": 2,
    "evaluation.cli": 3,
    "evaluation.logtool": 3,
    "evaluation.arena": 3,
    "evaluation.corebuild": 3,
}
"""The floors inside ``evaluation``: statistics and what plays (variants, seeds), the
estimators, the match runner, the commands."""




MODULES = project_modules()


@cache
def _named_all() -> dict[str, frozenset[str]]:
    """Per module: the project modules (and top-level third-party names) its source names."""
    known = set(MODULES)
    graph: dict[str, frozenset[str]] = {}
    for module in MODULES:
        source = module_source(module)
        tree = ast.parse(source.read_text(), str(source))
        package = module if source.name == "__init__.py" else module.rpartition(".")[0]
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [(a.name, None) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 \
                        else package
                    base = f"{parent}.{base}" if base else parent
                targets = [(base, a.name) for a in node.names]
            else:
                continue
            for base, attr in targets:
                if attr is not None and f"{base}.{attr}" in known:
                    names.add(f"{base}.{attr}")
                elif base in known or base.split(".")[0] not in PACKAGES:
                    names.add(base if base in known else base.split(".")[0])
                else:
                    names.add(base)
        names.discard(module)
        graph[module] = frozenset(names)
    return graph

_PROBE = (
    "import importlib, json, sys\n"
    "before = set(sys.modules)\n"
    "importlib.import_module(sys.argv[1])\n"
    "print(json.dumps(sorted(set(sys.modules) - before)))\n"
)
"""Prints the modules that importing ``argv[1]`` added (what the interpreter had loaded
before, e.g. site hooks, is not the module's doing)."""


@cache
def _loaded_all() -> dict[str, frozenset[str]]:
    """Every probed module's loads, computed once a test run: the first xdist worker that
    needs them probes (under a lock in the run's shared directory) and writes them there;
    the others read them (each worker probing for itself cost 7 CPU-s a worker)."""
    probed = sorted({m for rule, m in CASES if rule.view == "loads"})  # only where a rule looks
    shared = os.environ.get(SHARED)
    if not shared:
        return _probe_all(probed)
    stored = Path(shared) / "layer-loads.json"
    with open(Path(shared) / "layer-loads.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stored.is_file():
            found = _probe_all(probed)
            stored.write_text(json.dumps({m: sorted(v) for m, v in found.items()}),
                              encoding="utf-8")
    return {m: frozenset(v) for m, v in json.loads(stored.read_text(encoding="utf-8")).items()}


def _probe_all(modules: list[str]) -> dict[str, frozenset[str]]:
    def probe(module: str) -> tuple[str, frozenset[str]]:
        out = subprocess.run([sys.executable, "-c", _PROBE, module], capture_output=True,
                             text=True, cwd=ROOT, timeout=300, check=False)
        assert out.returncode == 0, f"importing {module} failed:\n{out.stderr[-2000:]}"
        return module, frozenset(json.loads(out.stdout))

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(probe, modules))


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _project(loaded: frozenset[str]) -> set[str]:
    return {m for m in loaded if any(_under(m, p) for p in PACKAGES)}


def _level(module: str) -> int | None:
    for prefix, level in AGENT_LEVELS.items():
        if _under(module, prefix):
            return level
    return None


# --------------------------------------------------------------------------- the rules


@dataclass(frozen=True)
class Rule:
    name: str
    view: str
    """``names`` (the source's imports, lazy ones included) or ``loads`` (sys.modules)."""
    applies: Callable[[str], bool]
    violations: Callable[[str, frozenset[str]], set[str]]


def _core_stdlib_only(module: str, deps: frozenset[str]) -> set[str]:
    bad = {m for m in deps if m.split(".")[0] not in sys.stdlib_module_names
           and m.split(".")[0] != "agent"}
    bad |= {m for m in _project(deps)
            if m not in ("agent", "agent.data") and not _under(m, "agent.acpc")}
    return bad | {m for m in ("asyncio", "socket") if m in deps}  # no network IO in the core


def _data_stdlib_only(module: str, deps: frozenset[str]) -> set[str]:
    return {m for m in deps if m.split(".")[0] not in sys.stdlib_module_names} - {"agent", module}


def _dealer_core(module: str, deps: frozenset[str]) -> set[str]:
    allowed = ("agent.acpc", "dealer")
    bad = {m for m in _project(deps)
           if m not in ("agent", "dealer") and not any(_under(m, a) for a in allowed)}
    third = {m.split(".")[0] for m in deps} - set(sys.stdlib_module_names) - set(PACKAGES)
    return bad | (third - {"uvloop"})  # uvloop: the optional faster event loop


def _dealer_core_loads(module: str, deps: frozenset[str]) -> set[str]:
    return _dealer_core(module, deps - {"agent.data"})  # the core reads its bundled games


def _light(module: str, deps: frozenset[str]) -> set[str]:
    return {m for m in (*HEAVY, "agent.policy") if m in deps}


def _package(module: str) -> str:
    return module.split(".")[0]


def _no_package_above_or_beside(module: str, deps: frozenset[str]) -> set[str]:
    own = PACKAGE_LEVELS[_package(module)]
    return {m for m in _project(deps) if _package(m) != _package(module)
            and PACKAGE_LEVELS[_package(m)] >= own}


def _evaluation_level(module: str) -> int | None:
    for prefix, level in EVALUATION_LEVELS.items():
        if _under(module, prefix):
            return level
    return None


def _no_upward_in_evaluation(module: str, deps: frozenset[str]) -> set[str]:
    own = _evaluation_level(module)
    assert own is not None
    return {m for m in deps if (lv := _evaluation_level(m)) is not None and lv > own}


def _jobs_name_only_the_core(module: str, deps: frozenset[str]) -> set[str]:
    allowed = (*sys.stdlib_module_names, *PACKAGES, "ray", "__mp_main__")  # multiprocessing's
    bad = {m for m in deps if m.split(".")[0] not in allowed}
    return bad | {m for m in _project(deps)
                  if m != "agent" and not _under(m, "agent.acpc") and not _under(m, "jobs")}


def _jobs_load_no_ray(module: str, deps: frozenset[str]) -> set[str]:
    return _jobs_name_only_the_core(module, deps) | {m for m in deps if _under(m, "ray")}


def _no_cli(module: str, deps: frozenset[str]) -> set[str]:
    allowed = {module} | CLI_MODULES.get(module, set())
    return {m for m in CLI_MODULES if m in deps and m not in allowed}


def _no_upward(module: str, deps: frozenset[str]) -> set[str]:
    own = _level(module)
    assert own is not None
    return {m for m in deps if (lv := _level(m)) is not None and lv > own}


def _is_light(module: str) -> bool:
    return (module in ("agent.builtin", "agent.agents", "agent.cli", "agent.bot",
                       "agent.external", "evaluation.stats",
                       "evaluation.cli", "evaluation.logtool", "strategies.cli",
                       "strategies.recipes", "strategies.commands.defaults",
                       "strategies.commands.translation", "strategies.commands.resolve_lab")
            or _under(module, "evaluation.match"))


RULES = [
    Rule("the core agent.acpc names only the stdlib, itself and the data agent.data",
         "names", lambda m: _under(m, "agent.acpc"), _core_stdlib_only),
    Rule("the core agent.acpc loads only the stdlib (and agent.data), no network IO", "loads",
         lambda m: _under(m, "agent.acpc"), _core_stdlib_only),
    Rule("the bundled data agent.data names only the stdlib (nothing of the project)",
         "names", lambda m: _under(m, "agent.data"), _data_stdlib_only),
    Rule("the bundled data agent.data loads only the stdlib", "loads",
         lambda m: _under(m, "agent.data"), _data_stdlib_only),
    Rule("the dealer (engine, server, cli, log formats) names only agent.acpc", "names",
         lambda m: _under(m, "dealer"), _dealer_core),
    Rule("the dealer (engine, server, cli, log formats) loads only agent.acpc (and the "
         "agent.data it reads)", "loads", lambda m: _under(m, "dealer"), _dealer_core_loads),
    Rule("the arena, the log tools and the light entry points load numpy, numba, msgpack and "
         "the policy only when they host an agent", "loads", _is_light, _light),
    Rule("a package names only its own floor and those below (agent < dealer, jobs < "
         "strategies < evaluation)", "names", lambda m: _package(m) in PACKAGE_LEVELS,
         _no_package_above_or_beside),
    Rule("jobs names only the stdlib, agent.acpc, itself and (lazily) ray", "names",
         lambda m: _under(m, "jobs"), _jobs_name_only_the_core),
    Rule("jobs loads only the stdlib, agent.acpc and itself (ray when a Ray backend opens)",
         "loads", lambda m: _under(m, "jobs"), _jobs_load_no_ray),
    Rule("no upward import inside evaluation (stats < estimators < match < commands)",
         "names", lambda m: _evaluation_level(m) is not None, _no_upward_in_evaluation),
    Rule("nothing names a CLI module but its entry point", "names", lambda m: True, _no_cli),
    Rule("no upward import inside the agent", "names",
         lambda m: _level(m) is not None, _no_upward),
]

CASES = [(rule, module) for rule in RULES for module in MODULES if rule.applies(module)]


@pytest.mark.parametrize(("rule", "module"), CASES,
                         ids=[f"{m}: {r.name}" for r, m in CASES])
def test_layer_rule(rule: Rule, module: str) -> None:
    deps = (_named_all() if rule.view == "names" else _loaded_all())[module]
    bad = rule.violations(module, deps)
    assert not bad, f"{rule.name}: {module} {rule.view} {sorted(bad)}"


def test_no_import_circle() -> None:
    """The graph of what project modules name (lazy imports included) has no circle."""
    graph = {m: {d for d in deps if d in _named_all()} for m, deps in _named_all().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                circles.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not circles, f"import circles: {circles}"


def test_every_agent_module_has_a_floor() -> None:
    """A new agent module must be given a floor in AGENT_LEVELS."""
    missing = [m for m in MODULES if _under(m, "agent") and m != "agent" and _level(m) is None]
    assert not missing, f"give these agent modules a floor in AGENT_LEVELS: {missing}"


def test_every_package_and_evaluation_module_has_a_floor() -> None:
    """A new top-level package needs a floor in PACKAGE_LEVELS; a new evaluation module one
    in EVALUATION_LEVELS."""
    missing = [m for m in MODULES if _package(m) not in PACKAGE_LEVELS
               or (_under(m, "evaluation") and m != "evaluation"
                   and _evaluation_level(m) is None)]
    assert not missing, f"give these modules a floor: {missing}"


def test_no_module_imports_another_modules_private_names() -> None:
    """``from M import _name`` (a private name of another project module) is a copy of M's
    internals in all but name: make the name public in M, or move the code. Dunder names
    (``__version__``) are public."""
    offenders = []
    for module in MODULES:
        source = module_source(module)
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            if (isinstance(node, ast.ImportFrom) and node.module and node.level == 0
                    and node.module.split(".")[0] in PACKAGES and node.module != module):
                offenders += [f"{module}: {node.module}.{a.name}" for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")]
    assert offenders == []

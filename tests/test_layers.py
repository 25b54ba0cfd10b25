"""Every layer rule of the project, stated once (ARCHITECTURE.md, "Layers and the dependency
rule") and checked on every module of ``agent``, ``dealer`` and ``strategies``.

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
import json
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache

import pytest

from tests.support import PACKAGES, ROOT, module_source, project_modules

HEAVY = ("numpy", "numba", "llvmlite", "msgpack")
CLI_MODULES = {
    "agent.cli": set(),
    "dealer.cli": set(),
    "evaluation.cli": set(),
    "evaluation.logtool": set(),
    "strategies.cli": {"strategies.commands.translation", "strategies.commands.main"},
    "strategies.commands.main": set(),
    "evaluation.arena": set(),
    "strategies.commands.translation": set(),
}
"""Entry-point modules, each with the other CLI modules it may load (its sub-commands)."""

AGENT_LEVELS = {
    "agent.acpc": 0,
    "agent.jit": 1,
    "agent.handeval": 1,
    "agent.fileio": 1,
    "agent.console": 1,
    "agent.kernelstamp": 1,
    "agent.corebuild": 1,
    "agent.abstraction": 2,
    "agent.strategy": 3,
    "agent.decision": 4,
    "agent.builtin": 4,
    "agent.policy": 5,
    "agent.agents": 6,
    "agent.client": 6,
    "agent.human": 6,
    "agent.explain": 6,
    "agent.cli": 7,
}
"""The agent's floors, bottom up: a module may import its own floor and those below."""

DEALER_CORE = ("dealer.engine", "dealer.server", "dealer.cli", "dealer.logfile")


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
    def probe(module: str) -> tuple[str, frozenset[str]]:
        out = subprocess.run([sys.executable, "-c", _PROBE, module], capture_output=True,
                             text=True, cwd=ROOT, timeout=300, check=False)
        assert out.returncode == 0, f"importing {module} failed:\n{out.stderr[-2000:]}"
        return module, frozenset(json.loads(out.stdout))

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(probe, MODULES))


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
    bad |= {m for m in _project(deps) if m != "agent" and not _under(m, "agent.acpc")}
    return bad | {m for m in ("asyncio", "socket") if m in deps}  # no network IO in the core


def _dealer_core(module: str, deps: frozenset[str]) -> set[str]:
    allowed = ("agent.acpc", *DEALER_CORE)
    bad = {m for m in _project(deps)
           if m not in ("agent", "dealer") and not any(_under(m, a) for a in allowed)}
    third = {m.split(".")[0] for m in deps} - set(sys.stdlib_module_names) - set(PACKAGES)
    return bad | (third - {"uvloop"})  # uvloop: the optional faster event loop


def _light(module: str, deps: frozenset[str]) -> set[str]:
    return {m for m in (*HEAVY, "agent.policy") if m in deps}


def _agent_imports_no_house(module: str, deps: frozenset[str]) -> set[str]:
    return {m for m in deps if _under(m, "dealer") or _under(m, "strategies")}


def _strategies_import_no_dealer(module: str, deps: frozenset[str]) -> set[str]:
    return {m for m in deps if _under(m, "dealer")}


def _no_cli(module: str, deps: frozenset[str]) -> set[str]:
    allowed = {module} | CLI_MODULES.get(module, set())
    return {m for m in CLI_MODULES if m in deps and m not in allowed}


def _no_upward(module: str, deps: frozenset[str]) -> set[str]:
    own = _level(module)
    assert own is not None
    return {m for m in deps if (lv := _level(m)) is not None and lv > own}


def _is_light(module: str) -> bool:
    return (module in ("agent.builtin", "agent.agents", "agent.cli", "dealer.stats",
                       "evaluation.cli", "evaluation.logtool", "strategies.cli",
                       "strategies.recipes", "strategies.commands.defaults",
                       "strategies.commands.translation")
            or _under(module, "evaluation.match"))


RULES = [
    Rule("the core agent.acpc names only the stdlib and itself", "names",
         lambda m: _under(m, "agent.acpc"), _core_stdlib_only),
    Rule("the core agent.acpc loads only the stdlib and does no network IO", "loads",
         lambda m: _under(m, "agent.acpc"), _core_stdlib_only),
    Rule("the dealer (engine, server, cli, log writer) names only agent.acpc", "names",
         lambda m: m in DEALER_CORE, _dealer_core),
    Rule("the dealer (engine, server, cli, log writer) loads only agent.acpc", "loads",
         lambda m: m in DEALER_CORE, _dealer_core),
    Rule("the arena, the log tools and the light entry points load numpy, numba, msgpack and "
         "the policy only when they host an agent", "loads", _is_light, _light),
    Rule("the agent names neither the dealer nor strategies", "names",
         lambda m: _under(m, "agent"), _agent_imports_no_house),
    Rule("strategies never name the dealer", "names",
         lambda m: _under(m, "strategies"), _strategies_import_no_dealer),
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

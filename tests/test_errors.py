"""One error hierarchy: everything the project raises derives from ``AcpcError``.

* Every exception class defined in ``agent``, ``dealer`` and ``strategies`` subclasses
  :class:`agent.acpc.errors.AcpcError` (and may subclass a builtin as well).
* No module raises a bare builtin exception (``raise ValueError(...)`` and the like): the
  source is read with :mod:`ast`, so a new one is caught when it is written. Re-raising
  (``raise``), raising a caught exception object, or ``NotImplementedError`` in a protocol
  stub are not new errors and are allowed.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect

import pytest

from agent.acpc.errors import AcpcError
from tests.support import ROOT, module_source, project_modules

BUILTIN_ERRORS = {name for name, value in vars(builtins).items()
                  if isinstance(value, type) and issubclass(value, BaseException)}
ALLOWED = {"NotImplementedError", "SystemExit", "KeyboardInterrupt", "StopIteration",
           "AssertionError",
           "AttributeError"}  # the protocol of __getattr__ (a proxy's missing attribute)


MODULES = project_modules()


@pytest.mark.parametrize("module", MODULES)
def test_every_exception_class_is_an_acpc_error(module: str) -> None:
    mod = importlib.import_module(module)
    for name, value in vars(mod).items():
        if inspect.isclass(value) and issubclass(value, BaseException) \
                and not issubclass(value, Warning) and value.__module__ == module:
            assert issubclass(value, AcpcError), f"{module}.{name} does not derive AcpcError"


@pytest.mark.parametrize("module", MODULES)
def test_no_bare_builtin_exception_is_raised(module: str) -> None:
    path = module_source(module)
    bad = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) \
                and isinstance(node.exc.func, ast.Name) and node.exc.func.id in BUILTIN_ERRORS \
                and node.exc.func.id not in ALLOWED:
            bad.append(f"line {node.lineno}: raise {node.exc.func.id}(...)")
    assert not bad, f"{path.relative_to(ROOT)} raises builtin exceptions: {bad}"


def test_the_hierarchy_keeps_the_builtins() -> None:
    from agent.acpc import errors

    for name in ("GameDefError", "IllegalActionError", "StrategyFileError", "CardError",
                 "AbstractionError", "UsageError"):
        cls = getattr(errors, name)
        assert issubclass(cls, AcpcError) and issubclass(cls, ValueError), name

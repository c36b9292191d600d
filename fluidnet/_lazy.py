"""Lazy public names of a package, listed once in its stub file ``__init__.pyi`` (PEP 562).

A package's ``__init__.pyi`` lists its public names as re-exports::

    from .linear.delaytf import DelayTF as DelayTF      # a name defined in a module
    from .models import flow_level as flowlevel         # an alias (here of a submodule)
    from . import models as models                      # a submodule

Type checkers and IDEs read this file in place of ``__init__.py``. At run time
:func:`attach_stub` reads the same file (with :mod:`ast`, importing nothing) and gives the
package a module-level ``__getattr__`` that imports the defining module on the first access of
a name (and binds the value in the package, so the next access is a plain attribute lookup), a
``__dir__`` listing the public names (and the module's dunders, nothing else: tab completion
offers what a user may use), and ``__all__``: the names the stub imports, in its order.
``import fluidnet`` thereby imports nothing that a given use does not need: sympy only to write
a model, numba only to compile one, scipy, xarray or matplotlib only in the analyses and plots
that use them.

``from .module import attr as name`` resolves to the attribute ``attr`` of ``module`` or, when
``module`` is a package without that attribute, to its submodule ``attr``. Names the package's
``__init__.py`` binds itself (eager imports) are looked up in the package first and never
reimported. Any other attribute that is a submodule of the package (``fluidnet.dde`` after
``import fluidnet``) is imported on access too, as an eager ``__init__`` used to do.

A public name that is also the name of a submodule (``fluidnet.dde.oscillation`` the function,
in ``fluidnet/dde/oscillation.py``) is lazy too. Python binds a submodule in its package when
it is first imported (``setattr(package, "oscillation", module)``), which would replace the
name; the package's module object is therefore of a :class:`types.ModuleType` subclass
(:class:`_Package`) that binds, for such a name, the submodule's attribute of that name instead
(the function, read from the submodule just imported). These names were imported eagerly by
their packages (bode, margins, nichols and nyquist: 4 ms of every first analysis that needed
none of them).
"""

from __future__ import annotations

import ast
import importlib
import os
import sys
import types
from collections.abc import Callable, Iterable, Mapping

__all__ = ["attach_stub", "stub_table"]


def _submodules(path: list[str]) -> frozenset[str]:
    """Names of the modules and packages directly inside a package's directories."""
    names = set()
    for directory in path:
        try:
            entries = os.listdir(directory)
        except OSError:
            continue
        for entry in entries:
            stem, dot, ext = entry.partition(".")
            if not stem.isidentifier():
                continue
            if (dot and ext == "py") or (
                not dot and os.path.isfile(os.path.join(directory, entry, "__init__.py"))
            ):
                names.add(stem)
    return frozenset(names)


class _Package(types.ModuleType):
    """A package whose public names include some named like their submodules
    (``_same_named``): binding such a submodule in the package binds its attribute of that
    name instead (see the module notes)."""

    _same_named: frozenset[str] = frozenset()

    def __setattr__(self, name: str, value: object) -> None:
        if (
            name in self._same_named
            and isinstance(value, types.ModuleType)
            and value.__name__ == f"{self.__name__}.{name}"
            and hasattr(value, name)
        ):
            value = getattr(value, name)
        super().__setattr__(name, value)


def stub_table(package: str, init_file: str) -> dict[str, tuple[str, str]]:
    """The public names of a package, read from the stub next to its ``__init__.py``.

    Parameters
    ----------
    package : str
        The package's full name (``"fluidnet.dde"``): relative imports in the stub are
        resolved against it.
    init_file : str
        Path of the package's ``__init__.py``; the stub is the ``.pyi`` file beside it.

    Returns
    -------
    dict of str to (str, str)
        Public name -> (full name of the module it is imported from, attribute name), in the
        order of the stub.

    Raises
    ------
    ImportError
        If the stub is missing, or contains a statement other than a re-export
        ``from ... import a as a``, an annotated name, a docstring or ``__all__``.
    """
    stub = os.path.splitext(init_file)[0] + ".pyi"
    try:
        with open(stub, encoding="utf-8") as f:
            tree = ast.parse(f.read(), stub)
    except OSError as exc:
        raise ImportError(f"{package}: cannot read its public names from {stub}: {exc}") from exc
    table: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module) if part)
            for alias in node.names:
                name = alias.asname or alias.name
                if alias.name == "*" or name in table:
                    raise ImportError(
                        f"{stub}, line {node.lineno}: {name!r} is a star import or listed twice"
                    )
                table[name] = (module, alias.name)
        elif isinstance(node, ast.AnnAssign | ast.Expr):
            continue  # ``__version__: str``, a docstring
        else:
            raise ImportError(
                f"{stub}, line {node.lineno}: only ``from ... import a as a`` re-exports and "
                "annotations are allowed in a package stub"
            )
    return table


def attach_stub(
    namespace: dict[str, object], extra: Mapping[str, str] | None = None
) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """Build a package's ``__getattr__``, ``__dir__`` and ``__all__`` from its ``__init__.pyi``.

    Parameters
    ----------
    namespace : dict
        The package's ``globals()``: values are bound there on first access, and its
        ``__name__``, ``__file__`` and ``__path__`` name the package and locate its stub and
        submodules.
    extra : mapping of str to str, optional
        Further lazy names, not public (not in ``__all__``, not in the stub): name -> full name
        of a module to import for it (``{"sympy": "sympy"}``).

    Returns
    -------
    getattr_, dir_ : callable
        To assign to the package's ``__getattr__`` and ``__dir__``.
    all_ : list of str
        The public names, in the order of the stub, to assign to ``__all__``.

    Examples
    --------
    In a package's ``__init__.py``::

        __getattr__, __dir__, __all__ = attach_stub(globals())
    """
    package = str(namespace["__name__"])
    table = stub_table(package, str(namespace["__file__"]))
    modules = dict(extra or {})
    submodules: list[frozenset[str]] = []
    same = frozenset(
        name
        for name, (module, attr) in table.items()
        if module == f"{package}.{name}" == f"{package}.{attr}"
    )
    own = sys.modules.get(package)
    if same and own is not None and own.__dict__ is namespace and type(own) is types.ModuleType:
        own.__class__ = type("_Package", (_Package,), {"_same_named": same})

    def __getattr__(name: str) -> object:
        if name in table:
            module_name, attr = table[name]
            if module_name == package:  # ``from . import sub as name``
                value: object = importlib.import_module(f"{package}.{attr}")
            else:
                module = importlib.import_module(module_name)
                try:
                    value = getattr(module, attr)
                except AttributeError:
                    value = importlib.import_module(f"{module_name}.{attr}")
            namespace[name] = value
            return value
        if name in modules:
            return importlib.import_module(modules[name])
        if not name.startswith("__"):
            if not submodules:
                path = namespace.get("__path__", ())
                submodules.append(
                    _submodules([str(d) for d in path] if isinstance(path, Iterable) else [])
                )
            if name in submodules[0]:
                return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        # what a user may reach: the public names and the module's dunders; not the helpers
        # its ``__init__`` binds (``annotations``, ``attach_stub``), private names, nor the
        # non-public ``extra`` names (``fn.sympy`` works, but is not offered)
        dunders = {k for k in namespace if k.startswith("__") and k.endswith("__")}
        return sorted(dunders | {k for k in table if not k.startswith("_")})

    return __getattr__, __dir__, [name for name in table if not name.startswith("_")]

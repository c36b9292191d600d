"""Lazy public names of a package (PEP 562).

A package lists its public names in a table ``name -> where`` and gets a module-level
``__getattr__`` that imports ``where`` on the first access of ``name`` (and binds the value in
the package, so the next access is a plain attribute lookup), and a ``__dir__`` that lists the
table's names with the ones already bound. ``import fluidnet`` thereby imports nothing that a
given use does not need: sympy only to write a model, numba only to compile one, scipy, xarray
or matplotlib only in the analyses and plots that use them.

``where`` is a module path, relative to the package when it starts with a dot:

* ``".module"`` — the attribute ``name`` of that module;
* ``".module:attr"`` — the attribute ``attr`` of that module (a public alias);
* ``".module:"`` — the module itself.

Any other attribute that is a submodule of the package (``fluidnet.dde`` after
``import fluidnet``) is imported on access too, as an eager ``__init__`` used to do.

A public name that is also the name of a submodule (``fluidnet.dde.oscillation`` the function,
in ``fluidnet/dde/oscillation.py``) must be imported eagerly by its package: Python binds a
submodule in its package when it is first imported, which would hide the lazy name.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping

__all__ = ["lazy_attributes"]


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


def lazy_attributes(
    namespace: dict[str, object], table: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """Build a package's ``__getattr__`` and ``__dir__`` from a table of lazy public names.

    Parameters
    ----------
    namespace : dict
        The package's ``globals()``: values are bound there on first access, and its
        ``__name__`` and ``__path__`` name the package and locate its submodules.
    table : mapping of str to str
        Public name -> where it is defined (see the module docstring for the forms).

    Returns
    -------
    getattr_, dir_ : callable
        To assign to the package's ``__getattr__`` and ``__dir__``.
    """
    package = namespace["__name__"]
    submodules: list[frozenset[str]] = []

    def __getattr__(name: str) -> object:
        where = table.get(name)
        if where is not None:
            module_name, colon, attr = where.partition(":")
            module = importlib.import_module(module_name, package)
            value = module if colon and not attr else getattr(module, attr or name)
            namespace[name] = value
            return value
        if not name.startswith("__"):
            if not submodules:
                submodules.append(_submodules(list(namespace.get("__path__", ()))))
            if name in submodules[0]:
                return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__

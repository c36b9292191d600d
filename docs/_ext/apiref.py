"""Write the API reference pages from the packages' ``__all__`` lists.

Every public name of :mod:`fluidnet` and of its public subpackages gets a page (through
autosummary), grouped by the stage that defines it, so that a new public name appears in the
reference without anyone editing the docs. :func:`sections` is what the test of the reference
(``tests/test_docs_site.py``) checks, with the gallery.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

#: Stages of the package, in data-flow order: (module prefix, title, one line on what it holds).
STAGES = [
    ("fluidnet.errors", "Errors", "The exceptions every stage raises."),
    ("fluidnet.linear", "Linear delay systems", "Linear DDEs, their roots, transfer functions."),
    ("fluidnet.symbolic", "Models", "Writing a law: states, parameters, models, equilibria."),
    ("fluidnet.codegen", "Code generation", "Compiled models: compiled, saved and loaded."),
    ("fluidnet.dde", "Nonlinear integration", "The compiled integrator, discrete maps, results."),
    ("fluidnet.stability", "Stability analysis", "Frequency domain, charts, critical values."),
    ("fluidnet.bifurcation", "Bifurcations", "Hopf points, periodic orbits, continuation."),
    ("fluidnet.stochastic", "Window chains", "Stationary laws of window chains."),
    ("fluidnet.proof", "Proved regions", "Region certificates in interval arithmetic, checker."),
    ("fluidnet.packet", "Packet simulation", "Scenarios on ns-3 and fluid-against-packet checks."),
    ("fluidnet.papers", "Papers", "Reproducing the source papers."),
    ("fluidnet.models", "Model library", "Library models, each citing its paper."),
    ("fluidnet.sweep", "Sweeps", "Executors, checkpoint stores, grids."),
]

#: Subpackages whose own ``__all__`` is documented beside the top-level names.
NAMESPACES = ["fluidnet", "fluidnet.models", "fluidnet.sweep", "fluidnet.packet"]

#: Top-level names that are subpackages, documented by their own section.
MODULE_NAMES = {"models", "flowlevel", "packet"}


def _stage(qualified: str) -> str:
    for prefix, *_ in STAGES:
        if qualified == prefix or qualified.startswith(prefix + "."):
            return prefix
    raise LookupError(f"{qualified} belongs to no documented stage")


def _defining_module(name: str, obj) -> str:
    """The fluidnet module that defines ``obj`` (data such as ``fn.t`` has no ``__module__``)."""
    where = getattr(obj, "__module__", None) or ""
    if where.startswith("fluidnet"):
        return where
    for mod_name, mod in sorted(sys.modules.items()):
        if mod_name.startswith("fluidnet.") and vars(mod).get(name) is obj:
            if not hasattr(mod, "__path__"):  # a module, not a package re-exporting it
                return mod_name
    raise LookupError(f"fluidnet.{name} is defined in no fluidnet module")


def sections() -> dict[str, list[str]]:
    """Map each stage prefix to the fully qualified public names it documents."""
    out: dict[str, list[str]] = {prefix: [] for prefix, *_ in STAGES}
    for namespace in NAMESPACES:
        package = importlib.import_module(namespace)
        for name in package.__all__:
            if namespace == "fluidnet" and name in MODULE_NAMES:
                continue
            obj = getattr(package, name)
            where = namespace if namespace != "fluidnet" else _defining_module(name, obj)
            if namespace == "fluidnet" and where == "fluidnet":  # errors re-exported eagerly
                where = "fluidnet.errors"
            out[_stage(where)].append(f"{namespace}.{name}")
    return {k: v for k, v in out.items() if v}


def dataclass_fields() -> dict[str, str]:
    """``{public class: "field, field, ..."}`` for every public dataclass: the fields its class
    page leaves out of the members (the class's Attributes section documents them, with their
    units), so that the members listed are its methods and properties."""
    import dataclasses

    out: dict[str, str] = {}
    for names in sections().values():
        for name in names:
            module, _, attr = name.rpartition(".")
            obj = getattr(importlib.import_module(module), attr)
            if isinstance(obj, type) and dataclasses.is_dataclass(obj):
                fields = [
                    f.name
                    for f in dataclasses.fields(obj)
                    if not isinstance(inspect.getattr_static(obj, f.name, None), property)
                ]
                if fields:
                    out[name] = ", ".join(fields)
    return out


def modules() -> list[str]:
    """Every module of the package (private ones, whose names start with ``_``, left out)."""
    import fluidnet

    out = ["fluidnet"]
    for info in pkgutil.walk_packages(fluidnet.__path__, "fluidnet."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            out.append(info.name)
    return sorted(out)


def _write_modules(target: Path) -> None:
    """One page with each module's docstring: what each part of the tree holds."""
    title = "Modules"
    page = [
        title,
        "=" * len(title),
        "",
        "What each module of the package holds, from its docstring, in the order of the tree. "
        "The public names are documented in the pages of the stages.",
        "",
    ]
    for name in modules():
        page += [name, "-" * len(name), "", f".. automodule:: {name}", "   :no-members:", ""]
    _replace(target / "modules.rst", "\n".join(page) + "\n")


def _write(app) -> None:
    target = Path(app.srcdir) / "api"
    target.mkdir(exist_ok=True)
    titles = {prefix: (title, line) for prefix, title, line in STAGES}
    parts = sections()
    index = [
        "API reference",
        "=============",
        "",
        "Every public name, grouped by the stage of the package that defines it. "
        "``import fluidnet as fn`` gives the names of the first groups as ``fn.<name>``; "
        "library models are ``fn.models.<name>``, sweep tools ``fluidnet.sweep.<name>``.",
        "",
        ".. toctree::",
        "   :maxdepth: 1",
        "",
    ]
    for prefix, names in parts.items():
        title, line = titles[prefix]
        slug = prefix.replace(".", "_")
        index.append(f"   {slug}")
        page = [
            title,
            "=" * len(title),
            "",
            line,
            "",
            ".. autosummary::",
            "   :toctree: generated",
            "",
        ]
        page += [f"   {name}" for name in names]
        _replace(target / f"{slug}.rst", "\n".join(page) + "\n")
    index.append("   modules")
    _write_modules(target)
    _replace(target / "index.rst", "\n".join(index) + "\n")


def _replace(path: Path, text: str) -> None:
    """Write ``text`` unless the file already holds it (keeps Sphinx's incremental builds)."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def data_comment(name: str, obj) -> tuple[str, list[str]] | None:
    """The ``#:`` comment above the definition of the public data ``name`` (``fluidnet.t``):
    ``(defining module, lines)``, or None when no module defining it has one."""
    from sphinx.errors import PycodeError
    from sphinx.pycode import ModuleAnalyzer

    short = name.rsplit(".", 1)[1]
    for mod_name, mod in sorted(sys.modules.items()):
        if not mod_name.startswith("fluidnet") or vars(mod).get(short, _NOTHING) is not obj:
            continue
        try:
            docs = ModuleAnalyzer.for_module(mod_name).find_attr_docs()
        except PycodeError:
            continue
        lines = docs.get(("", short))
        if lines:
            return mod_name, list(lines)
    return None


_NOTHING = object()


def _data_docstring(app, what, name, obj, options, lines) -> None:
    """Public data (``fluidnet.t``, ``fluidnet.s``, ``fluidnet.models.RATE``, ...) are
    instances of other libraries' classes, whose docstring (sympy's ``Symbol``) autodoc would
    show: they get the ``#:`` comment written above their definition instead."""
    if what != "data" or not name.startswith("fluidnet."):
        return
    if isinstance(obj, type) or inspect.isroutine(obj) or inspect.ismodule(obj):
        return
    own = getattr(obj, "__doc__", None)
    if own is not None and own != getattr(type(obj), "__doc__", None):
        return  # an object with a docstring of its own
    found = data_comment(name, obj)
    if found is None:
        from sphinx.errors import ExtensionError

        raise ExtensionError(
            f"{name} has no documentation of its own (autodoc would show the docstring of "
            f"{type(obj).__name__}): write a '#:' comment above its definition"
        )
    module, comment = found
    lines[:] = [*comment, "", f"Defined in :mod:`{module}`; a :class:`{_qualified(obj)}`."]


def _qualified(obj) -> str:
    cls = type(obj)
    module = cls.__module__.split(".")[0]
    return f"{module}.{cls.__qualname__}" if module != "builtins" else cls.__qualname__


def setup(app):
    app.connect("config-inited", lambda app, config: _write(app))
    # before numpydoc's handler (priority 500), which would parse the other class's docstring
    app.connect("autodoc-process-docstring", _data_docstring, priority=400)
    return {"parallel_read_safe": True, "version": "1"}

"""Resolve cross-references to fluidnet objects by what they are, not only by how they are named.

Docstrings name objects as their own module sees them (``:func:`simulate``` inside
``fluidnet.dde.simulation``, ``:func:`fluidnet.linear.roots.characteristic_roots```), while the
API reference documents each public object once, under its public name (``fluidnet.simulate``).
When Sphinx finds no target for a Python reference, this extension imports what the name points
to (from the referring module and class, then from the public namespaces) and:

* links to the public page of that very object when it has one;
* renders the name as code, without a link, when the object exists but is internal (not part of
  the public API, so it has no page);
* leaves the reference unresolved when no such object exists, so that the nitpicky build fails
  on it: a reference to a renamed or removed name is still an error.
"""

from __future__ import annotations

import importlib
from typing import Any

from docutils import nodes

#: Namespaces whose names a short reference may mean, in order of preference.
PUBLIC = ["fluidnet", "fluidnet.models", "fluidnet.sweep", "fluidnet.packet"]

_MISSING = object()
_documented: dict[int, str] | None = None


def _lookup(path: str) -> Any:
    """The object a dotted path names (a module, then attributes), or ``_MISSING``."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        except Exception:  # noqa: BLE001 - a module that fails to import names nothing here
            return _MISSING
        for attr in parts[cut:]:
            try:
                obj = getattr(obj, attr)
            except Exception:  # noqa: BLE001 - lazy attributes may raise anything
                return _MISSING
        return obj
    return _MISSING


def _documented_names() -> dict[int, str]:
    """``id(object) -> public name`` of every object with a page, and of its classes' members."""
    global _documented
    if _documented is None:
        from apiref import sections

        _documented = {}
        for names in sections().values():
            for name in names:
                obj = _lookup(name)
                if obj is _MISSING:
                    continue
                _documented.setdefault(id(obj), name)
                if isinstance(obj, type):
                    for attr, member in vars(obj).items():
                        if not attr.startswith("_"):
                            _documented.setdefault(id(member), f"{name}.{attr}")
                            func = getattr(member, "fget", None) or getattr(
                                member, "__func__", None
                            )
                            if func is not None:
                                _documented.setdefault(id(func), f"{name}.{attr}")
    return _documented


def _candidates(target: str, module: str | None, cls: str | None) -> list[str]:
    target = target.lstrip("~.")
    out = []
    if module:
        if cls:
            out.append(f"{module}.{cls}.{target}")
        out.append(f"{module}.{target}")
        package = module.rsplit(".", 1)[0]
        out.append(f"{package}.{target}")
    out.append(target)
    out += [f"{ns}.{target}" for ns in PUBLIC]
    return out


def _anywhere(target: str) -> list[Any]:
    """Objects named ``target`` in any loaded fluidnet module, or in a class of one (last resort
    for a short name written in a docstring whose page is not its defining module's)."""
    import sys

    head, _, rest = target.lstrip("~.").partition(".")
    found: list[Any] = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("fluidnet") or module is None:
            continue
        space = vars(module)
        candidates = [space.get(head, _MISSING)]
        if not rest:
            candidates += [
                vars(cls).get(head, _MISSING)
                for cls in list(space.values())
                if isinstance(cls, type) and cls.__module__ == name
            ]
        for obj in candidates:
            for attr in rest.split(".") if rest and obj is not _MISSING else []:
                obj = getattr(obj, attr, _MISSING)
            if obj is not _MISSING and all(obj is not f for f in found):
                found.append(obj)
    return found


def _link(app, env, node, contnode, obj):
    """A link to ``obj``'s public page, or ``None`` when it has none."""
    public = _documented_names().get(id(obj))  # methods and properties are registered too
    if public is None:
        return None
    domain = env.get_domain("py")
    for role in ("obj", "class", "func", "meth", "attr", "data", "mod"):
        ref = domain.resolve_xref(env, node["refdoc"], app.builder, role, public, node, contnode)
        if ref is not None:
            return ref
    return None


def _missing_reference(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"]
    if not target.lstrip("~.").split(".")[0]:
        return None
    module, cls = node.get("py:module"), node.get("py:class")
    for path in _candidates(target, module, cls):
        if not (path.startswith("fluidnet.") or path == "fluidnet"):
            continue
        obj = _lookup(path)
        if obj is _MISSING:
            continue
        # a public object links to its page; an internal one exists but has no page
        return _link(app, env, node, contnode, obj) or nodes.literal(target, contnode.astext())
    found = _anywhere(target)
    if found:
        links = [ref for obj in found if (ref := _link(app, env, node, contnode, obj))]
        if len(links) == 1:
            return links[0]
        return nodes.literal(target, contnode.astext())
    return None


def setup(app):
    app.connect("missing-reference", _missing_reference)
    return {"parallel_read_safe": True, "version": "1"}

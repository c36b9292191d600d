"""What identifies a sweep: a readable, deterministic description of its task and items.

A checkpoint store (:mod:`fluidnet.sweep.store`) keeps the description of the call that made
it, and refuses to resume a call whose description differs. :func:`describe` flattens an
object into ``{path: text}`` entries (``"factory.fixed.N": "10"``), so that the refusal can say
*what* differs; it is the same in every process (no ids, no hash randomization). Items are
identified by one 64-bit digest each (:func:`item_digests`).

**Code.** A function is described by a hash of its code and, when it is your code (not a module
of the standard library or of an installed package, whose code is identified by its version),
by everything it reads: the globals its code names (a module-level constant, a helper function
and, recursively, what the helper reads; for a module, the attributes the code names), its
closure variables, its defaults, and the classes of the objects it uses (their methods' code and
class attributes). A changed ``SCALE`` or a redefined helper is therefore a different call. What
cannot be identified (an object without state that cannot be pickled, such as a lock) is
refused with an :class:`~fluidnet.errors.OptionError` that names it; a global or closure
variable that does not affect the results can be left out by naming it in the function's
attribute ``__sweep_ignore__`` (``f.__sweep_ignore__ = ("LOG",)``). Code reached only through
``eval``, ``globals()`` or ``getattr`` with computed names is not seen.

An attribute that does not affect the results (a cache, a per-call id) is left out by naming it
in the class attribute ``__sweep_ignore__``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import sys
import sysconfig
import types
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import OptionError

__all__ = ["describe", "item_digests", "differences"]

#: Arrays up to this size are described by their values, larger ones by shape, dtype and hash.
SMALL_ARRAY = 16
#: Nesting depth below which objects are described by a hash of their pickle.
MAX_DEPTH = 12


def _number(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return repr(bool(x))
    if isinstance(x, (int, np.integer)):
        return repr(int(x))
    if isinstance(x, (float, np.floating)):
        return repr(float(x))
    return repr(complex(x))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _array(a: np.ndarray) -> str:
    if a.dtype == object:
        return "array " + json.dumps([str(v) for v in a.ravel().tolist()])[:200]
    if a.size <= SMALL_ARRAY:
        return f"array{list(a.shape)} {a.dtype} {a.tolist()!r}"
    data = np.ascontiguousarray(a).tobytes()
    return f"array{list(a.shape)} {a.dtype} sha256:{_digest(data)}"


def _ignored(obj: Any) -> set[str]:
    out: set[str] = set()
    for cls in type(obj).__mro__:
        out.update(cls.__dict__.get("__sweep_ignore__", ()))
    return out


def _code(fn: types.FunctionType) -> str:
    """A function by its name and a hash of its code (constants and names included)."""
    code = fn.__code__
    parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode()]
    for const in code.co_consts:
        parts.append(_code_const(const))
    return f"{fn.__module__}.{fn.__qualname__} code:{_digest(b'|'.join(parts))}"


def _code_const(const: Any) -> bytes:
    if isinstance(const, types.CodeType):
        inner = [const.co_code, repr(const.co_names).encode()]
        inner += [_code_const(c) for c in const.co_consts]
        return b"<" + b"|".join(inner) + b">"
    return repr(const).encode()


def _names(code: types.CodeType) -> set[str]:
    """The global and attribute names a code object (and the code nested in it) uses."""
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _names(const)
    return out


# ------------------------------------------------------------------ whose code is it
def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(str(Path(r).resolve()) for r in roots if r)


@functools.lru_cache(maxsize=1024)
def _library(module_name: str | None) -> str | None:
    """``"numpy 2.1.0"`` and the like for a module of the standard library, of an installed
    package or of fluidnet itself (code identified by its version); ``None`` for your own code
    (a script, a notebook, a module of yours, a package installed in editable mode)."""
    if not module_name:
        return None
    top = module_name.partition(".")[0]
    if top == "fluidnet":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return f"fluidnet {version('fluidnet')}"
        except PackageNotFoundError:  # pragma: no cover - run from a source tree
            return "fluidnet"
    if top in sys.builtin_module_names or top in getattr(sys, "stdlib_module_names", ()):
        return f"python {sys.version.split()[0]}"
    module = sys.modules.get(top)
    where = getattr(module, "__file__", None)
    if module is None or where is None:
        return None
    try:
        where = str(Path(where).resolve())
    except OSError:  # pragma: no cover
        return None
    if not where.startswith(_library_roots()) and "site-packages" not in where.split("/"):
        return None
    return f"{top} {getattr(module, '__version__', '')}".strip()


class _Context:
    """What one :func:`describe` call has met: the code described (under one key each)."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.keys: dict[int, str] = {}
        self.used: set[str] = set()
        self.alive: list[Any] = []  # keeps the ids of described objects unique

    def save(self) -> tuple[dict[int, str], set[str], int]:
        return dict(self.keys), set(self.used), len(self.alive)

    def restore(self, saved: tuple[dict[int, str], set[str], int]) -> None:
        self.keys, self.used = dict(saved[0]), set(saved[1])
        del self.alive[saved[2] :]

    def key(self, obj: Any, name: str) -> tuple[str, bool]:
        """``(key, new)``: where the code of ``obj`` is described."""
        known = self.keys.get(id(obj))
        if known is not None:
            return known, False
        key = f"{self.prefix}@{name}"
        n = 1
        while key in self.used:  # another object of the same name (two lambdas, say)
            n += 1
            key = f"{self.prefix}@{name}#{n}"
        self.used.add(key)
        self.keys[id(obj)] = key
        self.alive.append(obj)
        return key, True


class _Unidentified(OptionError):
    """An object of the task that the store cannot identify (names its path)."""


def describe(obj: Any, prefix: str = "task") -> dict[str, str]:
    """Flatten ``obj`` into ``{path: description}`` entries, identical in every process.

    Numbers and strings are described by their ``repr`` (exact for floats), arrays by their
    values (small) or shape, dtype and SHA-256 (large), sympy expressions by their text,
    functions by qualified name and a hash of their code and, for your own code, by what they
    read (see the module docstring: globals, helpers, closures, defaults, classes; under keys
    ``<prefix>@<module>.<name>``), mappings, sequences, dataclasses and objects by their
    contents (``__getstate__``), recursively.

    Raises
    ------
    OptionError
        For an object that can be neither described nor pickled (the message names where it is
        and how to leave it out).

    Examples
    --------
    >>> describe({"alpha": 0.4, "grid": [1, 2]}, "call")  # doctest: +NORMALIZE_WHITESPACE
    {'call': 'dict', 'call.alpha': '0.4', 'call.grid': 'list',
     'call.grid[0]': '1', 'call.grid[1]': '2'}
    """
    out: dict[str, str] = {}
    _describe(obj, prefix, out, set(), 0, _Context(prefix))
    return out


def _describe(
    obj: Any, path: str, out: dict[str, str], seen: set[int], depth: int, ctx: _Context
) -> None:
    import sympy

    if obj is None or isinstance(obj, (str, bytes)):
        out[path] = repr(obj)
        return
    if isinstance(obj, (bool, int, float, complex, np.number, np.bool_)):
        out[path] = _number(obj)
        return
    if isinstance(obj, np.ndarray):
        out[path] = _array(obj)
        return
    if isinstance(obj, sympy.Basic):
        out[path] = str(obj)
        return
    if isinstance(obj, range):
        out[path] = repr(obj)
        return
    if isinstance(obj, types.FunctionType):
        _function(obj, path, out, ctx)
        return
    if isinstance(obj, type):
        _class(obj, path, out, ctx)
        return
    if isinstance(obj, types.BuiltinFunctionType):
        out[path] = _qualname(obj)
        return
    if isinstance(obj, types.ModuleType):
        out[path] = _module(obj)
        return
    if id(obj) in seen:
        out[path] = f"{_qualname(type(obj))} (described above)"
        return
    if depth > MAX_DEPTH:
        out[path] = f"{_qualname(type(obj))} pickle:{_pickle_digest(obj, path)}"
        return
    seen = seen | {id(obj)}
    if isinstance(obj, types.MethodType):
        out[path] = f"method {getattr(obj.__func__, '__qualname__', '?')}"
        _describe(obj.__func__, f"{path}.<function>", out, seen, depth + 1, ctx)
        _describe(obj.__self__, f"{path}.<self>", out, seen, depth + 1, ctx)
        return
    if isinstance(obj, functools.partial):
        out[path] = "partial"
        _describe(obj.func, f"{path}.func", out, seen, depth + 1, ctx)
        _describe(obj.args, f"{path}.args", out, seen, depth + 1, ctx)
        _describe(obj.keywords, f"{path}.keywords", out, seen, depth + 1, ctx)
        return
    if isinstance(obj, Mapping):
        out[path] = type(obj).__name__
        for key in sorted(obj, key=str):
            _describe(obj[key], f"{path}.{key}", out, seen, depth + 1, ctx)
        return
    if isinstance(obj, (set, frozenset)):
        out[path] = f"{type(obj).__name__} {sorted(map(repr, obj))}"
        return
    if isinstance(obj, Sequence):
        out[path] = type(obj).__name__
        for i, v in enumerate(obj):
            _describe(v, f"{path}[{i}]", out, seen, depth + 1, ctx)
        return
    py_func = getattr(obj, "py_func", None)  # a numba dispatcher: its Python function
    if isinstance(py_func, types.FunctionType):
        out[path] = f"compiled {_qualname(type(obj))}"
        _describe(py_func, f"{path}.py_func", out, seen, depth + 1, ctx)
        return
    wrapped = getattr(obj, "__wrapped__", None)  # functools.lru_cache and other decorators
    if isinstance(wrapped, types.FunctionType) and callable(obj):
        out[path] = f"wrapper {_qualname(type(obj))}"
        _describe(wrapped, f"{path}.__wrapped__", out, seen, depth + 1, ctx)
        return
    _instance(obj, path, out, seen, depth, ctx)


def _instance(
    obj: Any, path: str, out: dict[str, str], seen: set[int], depth: int, ctx: _Context
) -> None:
    """An object by its class (your classes: their code) and its state."""
    cls = type(obj)
    library = _library(getattr(cls, "__module__", None))
    out[path] = _qualname(cls)
    if library is None:
        _class(cls, f"{path}.<class>", out, ctx)
    elif not library.startswith("fluidnet") and _pickles_itself(cls):
        # a library object that says how it is rebuilt (a logger: by its name; a random
        # generator: by its state): that is what identifies it, not every attribute it holds
        with contextlib.suppress(_Unidentified):
            out[path] += f" pickle:{_pickle_digest(obj, path)}"
            return
    state = _state(obj)
    if state is None:
        out[path] += f" pickle:{_pickle_digest(obj, path)}"
        return
    skip = _ignored(obj)
    mine: dict[str, str] = {}
    saved = ctx.save()
    try:
        for key in sorted(state, key=str):
            if key not in skip:
                _describe(state[key], f"{path}.{key}", mine, seen, depth + 1, ctx)
    except _Unidentified as exc:
        ctx.restore(saved)
        try:  # an object that pickles by reference (a logger, say)
            digest = _pickle_digest(obj, path)
        except _Unidentified:
            raise exc from None
        out[path] += f" pickle:{digest}"
        return
    out.update(mine)


def _pickles_itself(cls: type) -> bool:
    """Whether a class defines how its objects are pickled (``__reduce__``, or a ``copyreg``
    entry)."""
    import copyreg

    if cls in copyreg.dispatch_table:
        return True
    return any(
        "__reduce__" in c.__dict__ or "__reduce_ex__" in c.__dict__
        for c in cls.__mro__
        if c is not object
    )


def _function(fn: types.FunctionType, path: str, out: dict[str, str], ctx: _Context) -> None:
    """A function: its code at ``path``; for your own code also what it reads (globals,
    closure, defaults), once, under its key."""
    out[path] = _code(fn)
    library = _library(fn.__module__)
    if library is not None:
        out[path] += f" ({library})"
        return
    key, new = ctx.key(fn, f"{fn.__module__}.{fn.__qualname__}")
    out[path] = f"function {fn.__module__}.{fn.__qualname__} (see {key})"
    if not new:
        return
    out[key] = _code(fn)
    skip = set(getattr(fn, "__sweep_ignore__", ()))
    names = _names(fn.__code__)
    scope = fn.__globals__
    for name in sorted(names):
        if name in skip or name not in scope:
            continue  # a builtin, an attribute name, or left out
        value = scope[name]
        where = f"{key}.{name}"
        if isinstance(value, types.ModuleType):
            _module_names(value, names, where, out, ctx)
        else:
            _describe(value, where, out, set(), 0, ctx)
    for cell_name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
        if cell_name in skip:
            continue
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell: a name assigned later in the enclosing function
            out[f"{key}.<{cell_name}>"] = "(unassigned)"
            continue
        _describe(contents, f"{key}.<{cell_name}>", out, set(), 0, ctx)
    if fn.__defaults__:
        _describe(fn.__defaults__, f"{key}.<defaults>", out, set(), 0, ctx)
    if fn.__kwdefaults__:
        _describe(fn.__kwdefaults__, f"{key}.<kwdefaults>", out, set(), 0, ctx)


def _module(module: types.ModuleType) -> str:
    library = _library(module.__name__)
    return f"module {module.__name__}" + (f" ({library})" if library else "")


def _module_names(
    module: types.ModuleType, names: set[str], path: str, out: dict[str, str], ctx: _Context
) -> None:
    """A module a function uses: a library's by its version; one of yours by the attributes
    the function's code names (``GAIN`` of ``consts.GAIN``)."""
    out[path] = _module(module)
    if _library(module.__name__) is not None:
        return
    key, _ = ctx.key(module, module.__name__)
    out[path] += f" -> {key}"
    attrs = vars(module)
    for name in sorted(names):
        where = f"{key}.{name}"
        if name not in attrs or where in out:
            continue
        value = attrs[name]
        if isinstance(value, types.ModuleType):
            _module_names(value, names, where, out, ctx)
        else:
            _describe(value, where, out, set(), 0, ctx)


_CLASS_NOISE = {"__dict__", "__weakref__", "__module__", "__doc__", "__qualname__", "__slots__"}
_CODE_MEMBERS = (
    types.FunctionType,
    staticmethod,
    classmethod,
    property,
    functools.cached_property,
)


def _class(cls: type, path: str, out: dict[str, str], ctx: _Context) -> None:
    """A class: by name (a library's); yours also by its methods and class attributes, once."""
    out[path] = f"class {_qualname(cls)}"
    if _library(getattr(cls, "__module__", None)) is not None:
        return
    key, new = ctx.key(cls, f"{cls.__module__}.{cls.__qualname__}")
    out[path] += f" -> {key}"
    if not new:
        return
    out[key] = f"class {_qualname(cls)}"
    skip = set(cls.__dict__.get("__sweep_ignore__", ()))
    for i, base in enumerate(cls.__bases__):
        if base is not object:
            _class(base, f"{key}.<bases>[{i}]", out, ctx)
    for name in sorted(cls.__dict__):
        value = cls.__dict__[name]
        dunder = name.startswith("__") and name.endswith("__")
        if name in skip or name in _CLASS_NOISE or name == "_abc_impl":
            continue
        if dunder and not isinstance(value, _CODE_MEMBERS):
            continue  # annotations, dataclass fields and the like: not code
        for member, part in _members(value):
            _describe(member, f"{key}.{name}{part}", out, set(), 0, ctx)


def _members(value: Any) -> Iterator[tuple[Any, str]]:
    """What of a class attribute decides results: a method's function, a property's accessors."""
    if isinstance(value, (staticmethod, classmethod)):
        yield value.__func__, ""
    elif isinstance(value, property):
        for part in ("fget", "fset", "fdel"):
            f = getattr(value, part)
            if f is not None:
                yield f, f".<{part}>"
    elif isinstance(value, functools.cached_property):
        yield value.func, ""
    elif type(value).__name__ in ("getset_descriptor", "member_descriptor", "wrapper_descriptor"):
        return
    else:
        yield value, ""


def _qualname(cls: Any) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', repr(cls))}"


def _state(obj: Any) -> dict[str, Any] | None:
    if dataclasses.is_dataclass(obj):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    getstate = getattr(obj, "__getstate__", None)
    state = getstate() if getstate is not None else getattr(obj, "__dict__", None)
    if isinstance(state, tuple) and len(state) == 2:  # (dict, slots)
        state = {**(state[0] or {}), **(state[1] or {})}
    return dict(state) if isinstance(state, Mapping) else None


def _pickle_digest(obj: Any, path: str) -> str:
    import pickle

    try:
        return _digest(pickle.dumps(obj, protocol=4))
    except Exception as exc:  # noqa: BLE001 - pickling raises many types
        raise _Unidentified(
            f"store= cannot identify {path}, a {type(obj).__name__} the sweep's task uses (it "
            f"has no state to describe and cannot be pickled: {exc}), so a store cannot tell "
            "whether results computed with it may be reused. If it does not change the "
            "results, leave it out: name it in __sweep_ignore__ (a global or closure variable "
            "of a function f: f.__sweep_ignore__ = ('name',); an attribute of your class: a "
            "class attribute __sweep_ignore__ = ('name',)); else run without store="
        ) from exc


def item_digests(items: Sequence[Any]) -> np.ndarray:
    """One 64-bit digest per item (uint64): a point, a block of a grid, a member index."""
    out = np.empty(len(items), dtype=np.uint64)
    for i, item in enumerate(items):
        out[i] = int.from_bytes(hashlib.blake2b(_item_bytes(item), digest_size=8).digest(), "big")
    return out


def _plain(obj: Any, depth: int = 0) -> bool:
    """Built-in scalars in dicts, lists and tuples: their ``repr`` identifies them."""
    if type(obj) in (float, int, str, bool) or obj is None:
        return True
    if depth > 3:
        return False
    if type(obj) in (tuple, list):
        return all(_plain(v, depth + 1) for v in obj)
    if type(obj) is dict:
        return all(type(k) is str and _plain(v, depth + 1) for k, v in obj.items())
    return False


def _item_bytes(item: Any) -> bytes:
    if type(item) is dict and all(type(v) is float for v in item.values()):
        if all(type(k) is str for k in item):  # a grid point {name: value}: fastest
            return repr(item).encode()
    if _plain(item):  # built-in scalars in containers: fast
        return repr(item).encode()
    return json.dumps(describe(item, "item"), sort_keys=True).encode()


def differences(here: Mapping[str, str], stored: Mapping[str, str], limit: int = 6) -> list[str]:
    """Lines ``"path: <here> here, <stored> in the store"`` for entries that differ."""
    lines = []
    for key in sorted(set(here) | set(stored)):
        a, b = here.get(key), stored.get(key)
        if a == b:
            continue
        lines.append(f"{key}: {_short(a)} here, {_short(b)} in the store")
    if len(lines) > limit:
        lines = lines[:limit] + [f"... and {len(lines) - limit} more differences"]
    return lines


def _short(text: str | None, width: int = 90) -> str:
    if text is None:
        return "(absent)"
    text = str(text)
    return text if len(text) <= width else text[: width - 3] + "..."

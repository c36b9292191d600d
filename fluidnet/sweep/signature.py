"""What identifies a sweep: a readable, deterministic description of its task and items.

A checkpoint store (:mod:`fluidnet.sweep.store`) keeps the description of the call that made
it, and refuses to resume a call whose description differs. :func:`describe` flattens an
object into ``{path: text}`` entries (``"factory.fixed.N": "10"``), so that the refusal can say
*what* differs; it is the same in every process (no ids, no hash randomization). Items are
identified by one 64-bit digest each (:func:`item_digests`).

An attribute that does not affect the results (a cache, a per-call id) is left out by naming it
in the class attribute ``__sweep_ignore__``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import types
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

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


def describe(obj: Any, prefix: str = "task") -> dict[str, str]:
    """Flatten ``obj`` into ``{path: description}`` entries, identical in every process.

    Numbers and strings are described by their ``repr`` (exact for floats), arrays by their
    values (small) or shape, dtype and SHA-256 (large), sympy expressions by their text,
    functions by qualified name and a hash of their code, mappings, sequences, dataclasses and
    objects by their contents (``__getstate__``), recursively.

    Examples
    --------
    >>> describe({"alpha": 0.4, "grid": [1, 2]}, "call")  # doctest: +NORMALIZE_WHITESPACE
    {'call': 'dict', 'call.alpha': '0.4', 'call.grid': 'list',
     'call.grid[0]': '1', 'call.grid[1]': '2'}
    """
    out: dict[str, str] = {}
    _describe(obj, prefix, out, set(), 0)
    return out


def _describe(obj: Any, path: str, out: dict[str, str], seen: set[int], depth: int) -> None:
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
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type)):
        out[path] = _code(obj) if isinstance(obj, types.FunctionType) else _qualname(obj)
        if isinstance(obj, types.FunctionType):
            for cell_name, cell in zip(
                obj.__code__.co_freevars, obj.__closure__ or (), strict=False
            ):
                _describe(cell.cell_contents, f"{path}.<{cell_name}>", out, seen, depth + 1)
            if obj.__defaults__:
                _describe(obj.__defaults__, f"{path}.<defaults>", out, seen, depth + 1)
        return
    if id(obj) in seen or depth > MAX_DEPTH:
        out[path] = f"{_qualname(type(obj))} (nested)"
        return
    seen = seen | {id(obj)}
    if isinstance(obj, types.MethodType):
        out[path] = f"method {obj.__func__.__qualname__}"
        _describe(obj.__self__, f"{path}.<self>", out, seen, depth + 1)
        return
    if isinstance(obj, functools.partial):
        out[path] = "partial"
        _describe(obj.func, f"{path}.func", out, seen, depth + 1)
        _describe(obj.args, f"{path}.args", out, seen, depth + 1)
        _describe(obj.keywords, f"{path}.keywords", out, seen, depth + 1)
        return
    if isinstance(obj, Mapping):
        out[path] = type(obj).__name__
        for key in sorted(obj, key=str):
            _describe(obj[key], f"{path}.{key}", out, seen, depth + 1)
        return
    if isinstance(obj, (set, frozenset)):
        out[path] = f"{type(obj).__name__} {sorted(map(repr, obj))}"
        return
    if isinstance(obj, Sequence):
        out[path] = type(obj).__name__
        for i, v in enumerate(obj):
            _describe(v, f"{path}[{i}]", out, seen, depth + 1)
        return
    state = _state(obj)
    out[path] = _qualname(type(obj))
    if state is None:
        out[path] += f" pickle:{_pickle_digest(obj)}"
        return
    skip = _ignored(obj)
    for key in sorted(state, key=str):
        if key not in skip:
            _describe(state[key], f"{path}.{key}", out, seen, depth + 1)


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


def _pickle_digest(obj: Any) -> str:
    import pickle

    try:
        return _digest(pickle.dumps(obj, protocol=4))
    except Exception as exc:  # noqa: BLE001 - pickling raises many types
        from ..errors import OptionError

        raise OptionError(
            f"store= cannot identify a {type(obj).__name__} in the sweep's task (it has no "
            f"state to describe and cannot be pickled: {exc})"
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

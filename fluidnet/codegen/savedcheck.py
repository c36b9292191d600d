"""The metadata of a saved compiled model, checked before anything in the file is run.

Every field of ``meta.json`` is validated (types, names, bounds, lags) and its counts are then
compared with what the loaded libraries report themselves (:func:`check_against_library`), so
that a damaged or edited file is refused with a :class:`~fluidnet.StoreError` naming the field.
The standard library only: loading a saved model imports neither sympy nor numba.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import StoreError
from .clib import CLibrary

__all__ = ["check_against_library", "check_meta", "identifier"]

_KEY = re.compile(r"[0-9a-f]{8,64}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_LAG_FIELDS = {"state", "delay", "label", "kind"}
_LAG_KINDS = ("constant", "parameter", "state")


def identifier(name: str) -> str:
    """``name`` as Python reads it (NFKC, as :func:`fluidnet.parsing.identifier`,
    without importing sympy)."""
    return name if name.isascii() else unicodedata.normalize("NFKC", name)


def _is_name(v: Any) -> bool:
    """A name as :func:`~fluidnet.codegen.compiled.save_compiled` writes it: an identifier,
    NFKC-normalized."""
    return isinstance(v, str) and v.isidentifier() and identifier(v) == v


def _damaged(path: Path, field: str, what: str) -> StoreError:
    return StoreError(
        f"{path}: the field {field} of its metadata {what}; the file is damaged or was "
        "edited: save the model again"
    )


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:  # an integer beyond the range of a float
        return False


def check_meta(path: Path, meta: Mapping[str, Any]) -> None:
    """Every field of a saved model's metadata has the type and shape :func:`save_compiled`
    writes (the counts are checked against the library by :func:`check_against_library`)."""
    for field, kind in (
        ("key", str),
        ("name", str),
        ("states", list),
        ("params", dict),
        ("nonnegative", list),
        ("lags", list),
        ("surfaces", list),
        ("sizes", list),
        ("sha256", dict),
        ("seal", str),
    ):
        if field not in meta:
            raise _damaged(path, field, "is missing")
        if not isinstance(meta[field], kind):
            raise _damaged(path, field, f"is a {type(meta[field]).__name__}, not a {kind.__name__}")
    if not _KEY.fullmatch(meta["key"]):
        raise _damaged(path, "key", f"is {meta['key'][:40]!r}, not a hexadecimal digest")
    if not _SHA256.fullmatch(meta["seal"]):
        raise _damaged(path, "seal", f"is {meta['seal'][:70]!r}, not a SHA-256")
    digests = meta["sha256"]
    if set(digests) != {"model.so", "jac.so"} or not all(
        isinstance(v, str) and _SHA256.fullmatch(v) for v in digests.values()
    ):
        raise _damaged(path, "sha256", "is not {'model.so': sha256, 'jac.so': sha256}")
    states = meta["states"]
    for i, n in enumerate(states):
        if not _is_name(n):
            raise _damaged(path, f"states[{i}]", f"is {n!r}, not a (NFKC-normalized) name")
    if len(set(states)) != len(states):
        raise _damaged(path, "states", "names a state twice")
    for name, spec in meta["params"].items():
        field = f"params[{name!r}]"
        if not _is_name(name) or name in states:
            raise _damaged(path, field, "is not a parameter name (or is a state's)")
        if not isinstance(spec, dict) or set(spec) != {"value", "bounds"}:
            raise _damaged(path, field, "is not {'value': ..., 'bounds': [lo, hi]}")
        value, bounds = spec["value"], spec["bounds"]
        if value is not None and not _is_number(value):
            raise _damaged(path, f"{field}['value']", f"is {value!r}, not a finite number")
        if (
            not isinstance(bounds, list)
            or len(bounds) != 2
            or not all(b is None or _is_number(b) for b in bounds)
        ):
            raise _damaged(path, f"{field}['bounds']", f"is {bounds!r}, not [lo, hi]")
        lo, hi = bounds
        if lo is not None and hi is not None and lo > hi:
            raise _damaged(path, f"{field}['bounds']", f"is {bounds!r}: lo > hi")
        if value is not None and (
            (lo is not None and value < lo) or (hi is not None and value > hi)
        ):
            raise _damaged(path, f"{field}['value']", f"{value!r} is outside its bounds {bounds}")
    n = len(states)
    nonneg = meta["nonnegative"]
    if not all(_is_int(i) and 0 <= i < n for i in nonneg) or len(set(nonneg)) != len(nonneg):
        raise _damaged(path, "nonnegative", f"is {nonneg!r}, not distinct state indices < {n}")
    for k, lag in enumerate(meta["lags"]):
        field = f"lags[{k}]"
        if not isinstance(lag, dict) or set(lag) != _LAG_FIELDS:
            raise _damaged(path, field, f"is not a dict with the keys {sorted(_LAG_FIELDS)}")
        if not (_is_int(lag["state"]) and 0 <= lag["state"] < n):
            raise _damaged(path, f"{field}['state']", f"is {lag['state']!r}, not a state index")
        if not all(isinstance(lag[f], str) for f in ("delay", "label", "kind")):
            raise _damaged(path, field, "has a delay, label or kind that is not text")
        if lag["kind"] not in _LAG_KINDS:
            raise _damaged(path, f"{field}['kind']", f"is {lag['kind']!r}, not in {_LAG_KINDS}")
    if not all(isinstance(x, str) for x in meta["surfaces"]):
        raise _damaged(path, "surfaces", "holds something other than text")
    sizes = meta["sizes"]
    if len(sizes) != 4 or not all(_is_int(v) and v >= 0 for v in sizes):
        raise _damaged(path, "sizes", f"is {sizes!r}, not four counts")
    eq = meta.get("equilibrium")
    if eq is not None:
        if not isinstance(eq, dict) or list(eq) != states:
            raise _damaged(path, "equilibrium", "does not give one value per state, in order")
        bad = [k for k, v in eq.items() if not _is_number(v)]
        if bad:
            raise _damaged(path, f"equilibrium[{bad[0]!r}]", f"is {eq[bad[0]]!r}, not a number")


def check_against_library(path: Path, meta: Mapping[str, Any], lib: CLibrary, jac: CLibrary):
    """The metadata's counts are the library's own (a parameter vector shorter than the
    library's ``N_PARAMS`` would be read past its end)."""
    counts = {
        "states": (len(meta["states"]), lib.N_STATES, "N_STATES"),
        "params": (len(meta["params"]), lib.N_PARAMS, "N_PARAMS"),
        "lags": (len(meta["lags"]), lib.N_LAGS, "N_LAGS"),
        "surfaces": (len(meta["surfaces"]), lib.N_SWITCHES, "N_SWITCHES"),
    }
    for field, (listed, own, name) in counts.items():
        if listed != own:
            raise _damaged(
                path, field, f"lists {listed} entries, but its library has {own} ({name})"
            )
    own = [lib.N_STATES, lib.N_LAGS, lib.N_SWITCHES, lib.N_PARAMS]
    if list(meta["sizes"]) != own:
        raise _damaged(path, "sizes", f"is {meta['sizes']}, but its library has {own}")
    jac_own = [jac.N_STATES, jac.N_LAGS, jac.N_SWITCHES, jac.N_PARAMS]
    if jac_own != own:
        raise _damaged(path, "sizes", f"is {own} for the model but {jac_own} for its Jacobian")
    for k, lag in enumerate(meta["lags"]):
        if lag["state"] != lib.LAG_STATE[k]:
            raise _damaged(
                path,
                f"lags[{k}]['state']",
                f"is {lag['state']}, but its library reads state {lib.LAG_STATE[k]}",
            )
        if (lag["kind"] == "state") != bool(lib.LAG_STATEDEP[k]):
            raise _damaged(
                path,
                f"lags[{k}]['kind']",
                f"is {lag['kind']!r}, but its library "
                + ("evaluates the delay from the states" if lib.LAG_STATEDEP[k] else "does not"),
            )

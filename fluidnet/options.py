"""Options of the analyses and the integrator, checked where they enter.

Every public function checks its options before any work starts, with the helpers here, so
that a bad option is an :class:`~fluidnet.errors.OptionError` naming the option, the value and
what is allowed -- never a ``TypeError`` or ``ValueError`` from deep inside (``negative
dimensions are not allowed``), a silent conversion (``rtol="1e-6"`` read as a number), or an
error raised at the first grid point of a long sweep:

* :func:`count_option` for sizes and counts (``max_nodes``, ``n_nodes``, ``n_seed``,
  ``intervals``, ``workers``): whole numbers (``bool`` is not one) at least a minimum;
* :func:`number_option` for tolerances, steps and times: real numbers, positive or finite as
  asked; :func:`numbers_option` for arrays of them (frequencies), :func:`range_option` for a
  pair ``(low, high)`` (``w_range``);
* :func:`option_dict` for the dicts of options passed on to another function
  (``root_options``, ``critical_options``): a mapping whose names are the valid ones, listed
  in the message otherwise;
* :func:`root_options` for ``root_options`` itself: the discretization options of
  :func:`~fluidnet.linear.roots.characteristic_roots` (:data:`ROOT_OPTIONS`), their values
  checked too.

Parameter values (overrides, defaults, grids, interval ends) are not options: they follow the
rule of :mod:`fluidnet.overrides` and are :class:`~fluidnet.errors.ParameterError` when wrong.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .errors import OptionError, ParameterError
from .overrides import parameter_values, real_number

__all__ = [
    "ROOT_OPTIONS",
    "count_option",
    "index_option",
    "number_option",
    "numbers_option",
    "option_dict",
    "range_option",
    "root_options",
    "seed_option",
]

#: The options of :func:`~fluidnet.linear.roots.characteristic_roots` that an analysis passes
#: on from its ``root_options``, with their smallest values: the discretization sizes. (``k``,
#: ``region`` and ``multiplicity`` are chosen by the analysis itself.)
ROOT_OPTIONS = {"max_nodes": 2, "n_nodes": 2}


def _at(where: str) -> str:
    return f"{where}: " if where else ""


def count_option(name: str, value: Any, *, minimum: int = 1, where: str = "") -> int:
    """``value`` as an int: a whole number (an int or numpy integer, not ``bool``; a float
    only when whole) at least ``minimum``; else an :class:`OptionError` naming ``name``."""
    ok = not isinstance(value, (bool, np.bool_))
    if ok and isinstance(value, (int, np.integer)):
        got = int(value)
    elif ok and isinstance(value, (float, np.floating)) and float(value).is_integer():
        got = int(value)
    else:
        raise OptionError(
            f"{_at(where)}{name} = {value!r} must be a whole number (at least {minimum})"
        )
    if got < minimum:
        raise OptionError(f"{_at(where)}{name} = {value!r} must be at least {minimum}")
    return got


def seed_option(value: Any, *, where: str = "", none: bool = True) -> int | None:
    """A seed of :func:`numpy.random.default_rng`: a whole number ``>= 0`` (an int or numpy
    integer, not ``bool``), or ``None`` (fresh entropy) when ``none``; else an
    :class:`OptionError` naming it (numpy's own errors name neither the seed nor the call)."""
    if value is None and none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        also = " or None (fresh entropy)" if none else ""
        raise OptionError(f"{_at(where)}seed = {value!r} must be a whole number >= 0{also}")
    if value < 0:
        raise OptionError(f"{_at(where)}seed = {value!r} must be >= 0")
    return int(value)


def index_option(name: str, value: Any, size: int, *, where: str = "") -> int:
    """``value`` as a position in a sequence of ``size`` elements: a whole number with
    ``0 <= value < size`` (a negative index is refused, not counted from the end: ``-1`` is a
    mistake more often than "the last"); else an :class:`OptionError` naming ``name``."""
    got = count_option(name, value, minimum=0, where=where)
    if got >= size:
        raise OptionError(
            f"{_at(where)}{name} = {value!r} is out of range: there are {size} (0 to {size - 1})"
        )
    return got


def number_option(
    name: str,
    value: Any,
    *,
    positive: bool = False,
    allow_inf: bool = False,
    where: str = "",
) -> float:
    """``value`` as a float: a real number (see :func:`fluidnet.overrides.real_number`; text is
    not read as one), not NaN, finite unless ``allow_inf``, and ``> 0`` when ``positive``; else
    an :class:`OptionError` naming ``name``."""
    got = real_number(value)
    if got is None:
        raise OptionError(f"{_at(where)}{name} = {value!r} must be a real number")
    if math.isnan(got) or (math.isinf(got) and not allow_inf):
        raise OptionError(f"{_at(where)}{name} = {value!r} must be finite")
    if positive and not got > 0:
        raise OptionError(f"{_at(where)}{name} = {value!r} must be positive")
    return got


def numbers_option(name: str, value: Any, *, where: str = "") -> np.ndarray:
    """``value`` (real numbers: a real array or a sequence of real numbers, text not read) as
    a float array, all finite; else an :class:`OptionError` naming ``name`` and the value."""
    try:
        arr = parameter_values(name, value)
    except ParameterError as exc:
        raise OptionError(f"{_at(where)}{exc}") from None
    return arr


def range_option(
    name: str, value: Any, *, positive: bool = False, where: str = ""
) -> tuple[float, float]:
    """``value`` as a pair ``(low, high)`` of finite real numbers with ``low < high`` (and
    ``low > 0`` when ``positive``); else an :class:`OptionError` naming ``name``."""
    if isinstance(value, (str, bytes, Mapping)) or np.ndim(value) != 1 or len(value) != 2:
        raise OptionError(f"{_at(where)}{name} = {value!r} must be a pair (low, high)")
    lo, hi = (number_option(f"{name}[{i}]", v, where=where) for i, v in enumerate(value))
    if not lo < hi or (positive and not lo > 0):
        need = "0 < low < high" if positive else "low < high"
        raise OptionError(f"{_at(where)}{name} = {value!r}: need {need}")
    return lo, hi


def option_dict(name: str, value: Any, valid: Iterable[str], *, where: str = "") -> dict:
    """``value`` (a mapping of option names, or ``None`` for none) as a dict, or an
    :class:`OptionError` naming an unknown option and listing the valid ones."""
    valid = tuple(valid)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise OptionError(
            f"{_at(where)}{name} must be a dict of options, got {type(value).__name__}"
        )
    unknown = [k for k in value if k not in valid]
    if unknown:
        raise OptionError(
            f"{_at(where)}unknown {name} {', '.join(map(repr, unknown))}; valid: "
            f"{', '.join(map(repr, valid))}"
        )
    return dict(value)


def root_options(value: Any, *, where: str = "") -> dict[str, int]:
    """``root_options`` checked: names among :data:`ROOT_OPTIONS`, sizes whole numbers at least
    their minimum (see :func:`option_dict`, :func:`count_option`)."""
    got = option_dict("root_options", value, ROOT_OPTIONS, where=where)
    return {
        k: count_option(f"root_options[{k!r}]", v, minimum=ROOT_OPTIONS[k], where=where)
        for k, v in got.items()
    }

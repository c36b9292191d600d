"""Parameter overrides and parameter values: one convention for every entry point.

The whole API contract (parameter values, ``grid=`` for many parameter sets, ranges, sizes,
result attributes) is stated once in the documentation's *Concepts* page ("The API contract",
``docs/concepts.md``) and checked on every public callable by ``tests/test_api_contract.py``;
this module implements its parameter-value part.

Every function that evaluates a model at parameter values other than its defaults takes them
as ``params={name: value, ...}``: :func:`fluidnet.simulate`, :func:`fluidnet.simulate_ensemble`,
:meth:`fluidnet.Model.equilibrium`, :meth:`~fluidnet.Model.linearize`,
:meth:`~fluidnet.Model.loop_gain`, :func:`fluidnet.stability_chart`,
:func:`fluidnet.stability_boundary`, :func:`fluidnet.critical_value`,
:func:`fluidnet.stability_switches`, :func:`fluidnet.phase_portrait`,
:func:`fluidnet.nonlinear_chart`, :func:`fluidnet.hopf_point`, :func:`fluidnet.hopf_at`,
:func:`fluidnet.periodic_orbit`, :func:`fluidnet.continue_equilibria`. A dict cannot clash with
the function's own options (a model may well have a parameter called ``k`` or ``method``).
Many parameter sets (an outer product) are ``grid={name: values}`` instead, with ``params``
holding the other parameters, one value each.

The analyses that accepted parameters as keywords (``m.linearize(alpha=0.1)``,
``fn.critical_value(m, "d0", lo, hi, beta=0.3)``) still do, for names that are not options of
the function; a name given both ways is an error. The integrators take ``params`` only, and say
so when given a parameter as a keyword.

Parameter values
----------------
A parameter value -- an override, a model's default, a grid value, an end of a searched
interval -- is a *real number*: a Python ``int`` or ``float``, a numpy real scalar, a 0-d real
array, or a real sympy number (``sympy.Rational(1, 3)``, ``sympy.pi``); grids and array-valued
overrides are real arrays (or sequences of real numbers). Anything else is a
:class:`~fluidnet.errors.ParameterError` naming the parameter and the value, at every entry
point alike: text (``"0.3"`` is not read as a number), ``True`` and ``False``, complex numbers
(even with a zero imaginary part), ``None`` as an override, and other objects. The checks are
:func:`real_number`, :func:`parameter_value` and :func:`parameter_values`; every entry point
uses them (through :func:`merge_params`, :meth:`fluidnet.Model.resolve_params`, the grids of
:func:`fluidnet.sweep.grid_points`, and the interval checks of the analyses).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .errors import OptionError, ParameterError

__all__ = [
    "merge_params",
    "parameter_value",
    "parameter_values",
    "real_number",
    "reject_keywords",
]


def real_number(value: Any) -> float | None:
    """``value`` as a float when it is a real number (see the module notes), else ``None``."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, numbers.Real):  # int, float, numpy real scalars, Fraction, sympy
        return float(value)  # Integer / Rational / Float
    if isinstance(value, np.ndarray):
        if value.ndim == 0 and value.dtype.kind in "fiu":
            return float(value)
        return None
    # a real sympy number that is not a Rational or Float (pi, sqrt(2)), without importing sympy
    if type(value).__module__.startswith("sympy") and getattr(value, "is_number", False):
        if getattr(value, "is_extended_real", False):
            return float(value)
    return None


def _why(value: Any) -> str:
    if isinstance(value, (str, bytes)):
        return "text is not read as a number"
    if isinstance(value, (bool, np.bool_)):
        return "True and False are not numbers"
    if isinstance(value, (complex, np.complexfloating)) or (
        isinstance(value, np.ndarray) and value.dtype.kind == "c"
    ):
        return "a complex number"
    if value is None:
        return "no value"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return f"a {type(value).__name__}"


def parameter_value(label: str, value: Any, *, finite: bool = True) -> float:
    """``value`` as a float, or a :class:`~fluidnet.errors.ParameterError` naming ``label``
    (e.g. ``"parameter 'T'"``, ``"lo of 'd0'"``) and the value.

    Parameters
    ----------
    label : str
        What the value is, for the message.
    value
        A real number (see the module notes).
    finite : bool, default True
        Refuse NaN and infinities too.
    """
    got = real_number(value)
    if got is None:
        raise ParameterError(
            f"{label}: {value!r} is not a real number ({_why(value)}); give an int, a float, a "
            "numpy real scalar or a 0-d real array"
        )
    if finite and not np.isfinite(got):
        raise ParameterError(f"{label}: value {got} is not finite")
    return got


def parameter_values(label: str, values: Any, *, finite: bool = True) -> np.ndarray:
    """``values`` (a real array, a sequence of real numbers or one real number) as a float
    array of the same shape, or a :class:`~fluidnet.errors.ParameterError` naming ``label``
    and the first value that is not a real number."""
    if isinstance(values, (str, bytes, Mapping)) or values is None:
        parameter_value(label, values)  # raises
    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if arr.dtype.kind in "fiu":
        out = arr.astype(float)
    else:
        flat = arr.reshape(-1)
        out = np.empty(flat.shape, dtype=float)
        for i, v in enumerate(flat):
            got = real_number(v)
            if got is None:
                parameter_value(label, v)  # raises, naming the value
            out[i] = got
        out = out.reshape(arr.shape)
    if finite and not np.all(np.isfinite(out)):
        raise ParameterError(f"{label}: value {out[~np.isfinite(out)][0]} is not finite")
    return out


def merge_params(
    params: Mapping[str, Any] | None,
    keywords: Mapping[str, Any],
    where: str,
) -> dict[str, Any]:
    """``params`` and keyword overrides in one dict, every value checked to be a real number
    (returned as a float; an array is refused: many parameter sets are a ``grid``).

    Raises
    ------
    OptionError
        When ``params`` is not a mapping or a name is given both ways.
    ParameterError
        For a value that is not a real number, naming the parameter and the value.
    """
    if params is None:
        params = {}
    elif not isinstance(params, Mapping):
        raise OptionError(
            f"{where}: params must be a dict {{name: value}}, got {type(params).__name__}"
        )
    twice = sorted(set(params) & set(keywords))
    if twice:
        raise OptionError(
            f"{where}: {', '.join(map(repr, twice))} given both in params={{...}} and as a "
            "keyword; give each parameter once"
        )
    merged = {**{str(k): v for k, v in params.items()}, **keywords}
    return {k: _checked(k, v, where) for k, v in merged.items()}


def _checked(name: str, value: Any, where: str) -> float:
    label = f"{where}: parameter {name!r}"
    if np.ndim(value) > 0 and not isinstance(value, (str, bytes)):
        raise ParameterError(
            f"{label}: {value!r} is not a real number (an array; {where} takes one value "
            "per parameter)"
        )
    return parameter_value(label, value)


def reject_keywords(
    keywords: Mapping[str, Any], where: str, model=None, valid: Iterable[str] = ()
) -> None:
    """Raise a clear :class:`OptionError` for unexpected keywords of ``where``.

    Names that are parameters of ``model`` get the pointer to ``params={...}``; ``valid``, when
    given, is listed as the options ``where`` takes.
    """
    if not keywords:
        return
    names = sorted(keywords)
    known = set(getattr(model, "param_names", ()))
    as_params = [n for n in names if n in known]
    if as_params:
        example = ", ".join(f"{n!r}: {keywords[n]!r}" for n in as_params)
        raise OptionError(
            f"{where}() takes parameter overrides as params={{...}}, not as keywords: write "
            f"params={{{example}}}"
        )
    listed = f" (its options: {', '.join(sorted(valid))})" if valid else ""
    raise OptionError(
        f"{where}() got unknown option(s) {', '.join(map(repr, names))}{listed}; parameter "
        "overrides go in params={...}"
    )

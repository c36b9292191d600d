"""Parameter overrides: one convention for every entry point.

Every function that evaluates a model at parameter values other than its defaults takes them
as ``params={name: value, ...}``: :func:`fluidnet.simulate`, :func:`fluidnet.simulate_ensemble`,
:meth:`fluidnet.Model.equilibrium`, :meth:`~fluidnet.Model.linearize`,
:meth:`~fluidnet.Model.loop_gain`, :func:`fluidnet.stability_chart`,
:func:`fluidnet.stability_boundary`, :func:`fluidnet.critical_value`,
:func:`fluidnet.stability_switches`, :func:`fluidnet.phase_portrait`,
:func:`fluidnet.nonlinear_chart`. A dict cannot clash with the function's own options (a model
may well have a parameter called ``k`` or ``method``).

The analyses that accepted parameters as keywords (``m.linearize(alpha=0.1)``,
``fn.critical_value(m, "d0", lo, hi, beta=0.3)``) still do, for names that are not options of
the function; a name given both ways is an error. The integrators take ``params`` only, and say
so when given a parameter as a keyword.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import OptionError

__all__ = ["merge_params", "reject_keywords"]


def merge_params(
    params: Mapping[str, Any] | None, keywords: Mapping[str, Any], where: str
) -> dict[str, Any]:
    """``params`` and keyword overrides in one dict.

    Raises
    ------
    OptionError
        When ``params`` is not a mapping or a name is given both ways.
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
    return {**{str(k): v for k, v in params.items()}, **keywords}


def reject_keywords(keywords: Mapping[str, Any], where: str, model=None) -> None:
    """Raise a clear :class:`OptionError` for unexpected keywords of ``where``.

    Names that are parameters of ``model`` get the pointer to ``params={...}``.
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
    raise OptionError(
        f"{where}() got unknown option(s) {', '.join(map(repr, names))}; parameter overrides go "
        "in params={...}"
    )

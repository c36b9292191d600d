"""What each slider of the explorer shows: a model parameter's range, step, unit and meaning.

A slider's range comes from the user (``(lo, hi)``), else from the parameter's
:class:`~fluidnet.Param` ``bounds`` around its value: from a quarter to four times the value,
cut at the bounds (a parameter with both bounds finite and a value of 0 spans its bounds). The
specs are plain data, so they are tested without any widget.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ParameterError

if TYPE_CHECKING:
    from ..symbolic.model import Model

__all__ = ["SliderSpec", "slider_specs", "SPAN"]

#: A slider without a given range spans ``value / SPAN`` to ``value * SPAN`` (within bounds).
SPAN = 4.0

#: Slider positions between the ends of a range.
STEPS = 200


@dataclass(frozen=True)
class SliderSpec:
    """One slider: a parameter, its starting value and its range.

    Attributes
    ----------
    name : str
        The parameter's name.
    value : float
        Starting value (the model's default, or the value given in ``params``).
    lo, hi : float
        The slider's ends.
    step : float
        The slider's increment: ``(hi - lo) / 200``.
    unit : str
        The parameter's unit (``"1"`` for a dimensionless one).
    doc : str
        The parameter's meaning, from its :class:`~fluidnet.Param`.
    """

    name: str
    value: float
    lo: float
    hi: float
    step: float
    unit: str = ""
    doc: str = ""

    @property
    def label(self) -> str:
        """``name [unit]`` (the unit left out when it is ``"1"`` or empty)."""
        return self.name if self.unit in ("", "1") else f"{self.name} [{self.unit}]"


def _default_range(name: str, value: float, bounds: tuple[Any, Any]) -> tuple[float, float]:
    b_lo = -math.inf if bounds[0] is None else float(bounds[0])
    b_hi = math.inf if bounds[1] is None else float(bounds[1])
    if value > 0:
        lo, hi = value / SPAN, value * SPAN
    elif value < 0:
        lo, hi = value * SPAN, value / SPAN
    elif math.isfinite(b_lo) and math.isfinite(b_hi):
        lo, hi = b_lo, b_hi
    else:
        raise ParameterError(
            f"parameter {name!r} is 0 and has an unbounded side: give the slider's range as "
            f"sliders={{{name!r}: (lo, hi)}}"
        )
    return max(lo, b_lo), min(hi, b_hi)


def _checked_range(name: str, given: Any, value: float, bounds) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in given)
    except (TypeError, ValueError):
        raise ParameterError(
            f"slider {name!r}: range {given!r} is not a pair (lo, hi) of real numbers"
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ParameterError(f"slider {name!r}: range ({lo:g}, {hi:g}) needs finite lo < hi")
    for end in (lo, hi):
        if (bounds[0] is not None and end < bounds[0]) or (
            bounds[1] is not None and end > bounds[1]
        ):
            raise ParameterError(
                f"slider {name!r}: range ({lo:g}, {hi:g}) leaves the parameter's bounds "
                f"{tuple(bounds)}; give a range inside them"
            )
    if not lo <= value <= hi:
        raise ParameterError(
            f"slider {name!r}: its value {value:g} is outside the range ({lo:g}, {hi:g}); "
            f"widen the range or start elsewhere with params={{{name!r}: value}}"
        )
    return lo, hi


def slider_specs(
    model: Model,
    sliders: Sequence[str] | Mapping[str, Any] | None = None,
    params: Mapping[str, float] | None = None,
) -> list[SliderSpec]:
    """The sliders for some parameters of a model.

    Parameters
    ----------
    model : fluidnet.Model
    sliders : sequence of str or dict, optional
        Parameter names, or ``{name: (lo, hi) or None}`` (``None``: the default range). Default:
        every parameter of the model.
    params : dict, optional
        Starting values ``{name: value}`` other than the model's defaults.

    Returns
    -------
    list of SliderSpec
        In the order given.

    Raises
    ------
    ParameterError
        For an unknown name, a parameter without a value, a range that is not ``lo < hi``
        within the parameter's bounds, or a starting value outside its range.

    Examples
    --------
    >>> import fluidnet as fn
    >>> from fluidnet.explore.sliders import slider_specs
    >>> [(s.label, s.lo, s.hi) for s in slider_specs(fn.models.rcp(), ["alpha", "d0"])]
    [('alpha', 0.1, 1.6), ('d0 [s]', 0.05, 0.8)]
    """
    table = model.params
    chosen: Mapping[str, Any]
    if sliders is None:
        chosen = dict.fromkeys(table)
    elif isinstance(sliders, str):
        chosen = {sliders: None}
    elif isinstance(sliders, Mapping):
        chosen = sliders
    else:
        chosen = dict.fromkeys(sliders)
    if not chosen:
        raise ParameterError("no slider: name at least one parameter of the model")
    start = dict(params or {})
    specs = []
    for name, given in chosen.items():
        if name not in table:
            raise ParameterError(
                f"no parameter {name!r} in model {model.name!r} (its parameters: "
                f"{', '.join(table)})"
            )
        p = table[name]
        value = start.get(name, p.value)
        if value is None:
            raise ParameterError(
                f"parameter {name!r} has no default value: give one with params={{{name!r}: v}}"
            )
        value = float(value)
        if given is None:
            lo, hi = _default_range(name, value, p.bounds)
        else:
            lo, hi = _checked_range(name, given, value, p.bounds)
        specs.append(SliderSpec(name, value, lo, hi, (hi - lo) / STEPS, p.unit, p.doc))
    return specs

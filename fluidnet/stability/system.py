"""The linear system at given parameter values, from a model or a user factory.

Every parameter-plane analysis (:func:`~fluidnet.stability.stability_chart`,
:func:`~fluidnet.stability.stability_boundary`, :func:`~fluidnet.stability.critical_value`)
accepts either a :class:`fluidnet.Model` — linearized at its equilibrium for every parameter
point — or a *factory*: a callable ``f(**params)`` returning one of

* a :class:`fluidnet.LinearDDE`;
* a :class:`fluidnet.DelayTF` loop gain ``L = N/D`` (the closed loop is ``D + N = 0``, taken in
  companion form; ``D + N`` must be retarded);
* a :class:`fluidnet.QuasiPolynomial` characteristic function (companion form);
* a :class:`fluidnet.Model` (linearized at its default parameters).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import AnalysisError, ParameterError
from ..linear.delaytf import DelayTF
from ..linear.lineardde import LinearDDE
from ..linear.quasipoly import QuasiPolynomial
from ..symbolic.model import Model

__all__ = ["SystemFactory", "as_linear"]

# Models already unpickled in this (worker) process, by factory token: their compiled
# linearization plans are built once per process, not once per chunk of work.
_WORKER_MODELS: dict[str, Model] = {}


def as_linear(obj: Any, where: str = "") -> LinearDDE:
    """Convert what a factory returned into a :class:`LinearDDE` (see the module docstring)."""
    if isinstance(obj, LinearDDE):
        return obj
    if isinstance(obj, Model):
        return obj.linearize()
    if isinstance(obj, DelayTF):
        qp = obj.den + obj.num
        what = "closed-loop characteristic function den + num of the loop gain"
    elif isinstance(obj, QuasiPolynomial):
        qp = obj
        what = "characteristic quasi-polynomial"
    else:
        raise AnalysisError(
            f"the factory returned {type(obj).__name__}{where}; expected a LinearDDE, a DelayTF "
            "loop gain, a QuasiPolynomial or a Model"
        )
    if not qp.is_retarded:
        raise AnalysisError(f"the {what}{where} is not retarded: {qp!r}")
    return qp.companion()


class SystemFactory:
    """``factory(**params) -> LinearDDE`` for a model or a user factory, with fixed values.

    Picklable (for process executors) when the model or the user factory is.

    Parameters
    ----------
    source : Model or callable
    fixed : dict
        Parameter values used at every call (overridden by the call's own).

    Raises
    ------
    ParameterError
        When ``source`` is a Model and a fixed name is not one of its parameters.
    """

    #: Not part of what a sweep computes (see :mod:`fluidnet.sweep.signature`).
    __sweep_ignore__ = ("token",)

    def __init__(self, source: Model | Callable[..., Any], fixed: Mapping[str, Any] | None = None):
        if not isinstance(source, Model) and not callable(source):
            raise AnalysisError(
                f"expected a Model or a callable factory(**params), got {type(source).__name__}"
            )
        self.source = source
        self.fixed = dict(fixed or {})
        self.token = uuid.uuid4().hex
        self.check_names(self.fixed)

    @property
    def is_model(self) -> bool:
        return isinstance(self.source, Model)

    @property
    def name(self) -> str:
        if self.is_model:
            return self.source.name
        return getattr(self.source, "__name__", type(self.source).__name__)

    def check_names(self, names) -> None:
        """Raise :class:`ParameterError` for a name that is not a parameter of the model."""
        if not self.is_model:
            return
        known = self.source.param_names
        for n in names:
            if n not in known:
                raise ParameterError(
                    f"unknown parameter {n!r} for model {self.source.name!r} "
                    f"(parameters: {', '.join(known)})"
                )

    def values(self, **values: float) -> dict[str, float]:
        return {**self.fixed, **values}

    def __call__(self, **values: float) -> LinearDDE:
        params = self.values(**values)
        if self.is_model:
            return self.source.linearize(**params)
        where = " at " + ", ".join(f"{k}={v:g}" for k, v in params.items()) if params else ""
        return as_linear(self.source(**params), where)

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self.is_model:
            self.source = _WORKER_MODELS.setdefault(self.token, self.source)

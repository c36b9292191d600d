"""Step-size controllers: one object decides every continuation's next step.

A continuation step is *attempted* with a length ``h`` by a stepper (predict, correct, judge)
which reports what happened in a :class:`Attempt`. The controller reads the report and
returns whether the step is accepted and the length of the next one; it never sees the
problem. As in diffrax, where the step-size controller of an ODE solve is an object separate
from the solver, the same controller classes serve every curve and branch of fluidnet:

* :class:`IterationController` -- grow after a corrector that converged fast, shrink after a
  slow one (the classic rule of AUTO and DDE-BIFTOOL for branches of orbits and of
  bifurcation points);
* :class:`ErrorController` -- scale the step by the root of the ratio of a tolerance to the
  measured error of the predictor (the rule of embedded Runge-Kutta pairs, for paths where
  the predictor's error is what matters: characteristic roots followed to the imaginary axis).

A controller raises :class:`StepSizeError` when a step keeps failing at the smallest length it
allows; the caller turns it into the message of its own analysis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Attempt",
    "StepController",
    "IterationController",
    "ErrorController",
    "StepSizeError",
]


class StepSizeError(Exception):
    """The step failed at the smallest length allowed (or too many times in a row).

    Attributes
    ----------
    attempt : Attempt
        The last failed attempt (its ``reason`` says why).
    h : float
        Its length.
    """

    def __init__(self, attempt: Attempt, h: float, why: str):
        super().__init__(why)
        self.attempt = attempt
        self.h = h


@dataclass
class Attempt:
    """What a stepper reports about one attempted step.

    Attributes
    ----------
    ok : bool
        The corrector converged and the stepper accepts the new point.
    point : object
        The new point (the stepper's own type) when ``ok``.
    h : float
        The length actually attempted (a stepper may shorten it, e.g. to land on the end of an
        interval).
    iterations : int
        Corrector iterations used.
    error_ratio : float
        ``tolerance / error`` of the predictor (``inf`` when exact, ``nan`` when not measured).
    reason : str
        Why the step failed (``""`` when ``ok``); controllers may cut the step differently by
        reason.
    restart : object
        Instead of a step, the stepper restarted the path at this point (no length used).
    data : dict
        Anything else the stepper wants to keep with the step.
    """

    ok: bool
    point: Any = None
    h: float = math.nan
    iterations: int = 0
    error_ratio: float = math.nan
    reason: str = ""
    restart: Any = None
    data: dict = field(default_factory=dict)


class StepController:
    """Base class: ``adapt(h, attempt) -> (accept, next h)``; counts consecutive rejections.

    Parameters
    ----------
    h_min, h_max : float
        Smallest and largest step length.
    max_rejects : int, optional
        Consecutive rejections after which the step fails (default: unlimited; the step then
        fails only below ``h_min``).
    """

    def __init__(self, h_min: float = 0.0, h_max: float = math.inf, max_rejects: int | None = None):
        if not (h_min >= 0 and h_max > 0 and h_min <= h_max):
            raise ValueError(f"need 0 <= h_min <= h_max, got {h_min!r}, {h_max!r}")
        self.h_min = float(h_min)
        self.h_max = float(h_max)
        self.max_rejects = max_rejects
        self.rejects = 0

    def adapt(self, h: float, attempt: Attempt) -> tuple[bool, float]:
        """Whether ``attempt`` is accepted, and the next step length.

        Raises
        ------
        StepSizeError
            When a rejected step cannot be shortened further.
        """
        if attempt.ok:
            self.rejects = 0
            return True, self.grow(h, attempt)
        self.rejects += 1
        if self.max_rejects is not None and self.rejects > self.max_rejects:
            raise StepSizeError(attempt, h, f"{self.rejects} rejected steps in a row")
        return False, self.shrink(h, attempt)

    def reset(self) -> None:
        """Forget the rejections (after a restart of the path)."""
        self.rejects = 0

    def grow(self, h: float, attempt: Attempt) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def shrink(self, h: float, attempt: Attempt) -> float:  # pragma: no cover - abstract
        raise NotImplementedError


class IterationController(StepController):
    """Step length from the corrector's iteration count.

    After an accepted step: times ``grow`` when the corrector needed at most ``fast``
    iterations (always, with ``fast=None``), divided by ``grow`` when it needed ``slow`` or
    more, else unchanged; clipped to ``[h_min, h_max]``. After a rejected one: times ``cut``,
    and :class:`StepSizeError` when that falls below ``h_min``.
    """

    def __init__(
        self,
        h_min: float,
        h_max: float,
        *,
        fast: int | None = 3,
        slow: int | None = 6,
        grow: float = 1.5,
        cut: float = 0.5,
        max_rejects: int | None = None,
    ):
        super().__init__(h_min, h_max, max_rejects)
        self.fast, self.slow, self.factor, self.cut = fast, slow, float(grow), float(cut)

    def grow(self, h: float, attempt: Attempt) -> float:
        it = attempt.iterations
        if self.fast is None or it <= self.fast:
            return min(h * self.factor, self.h_max)
        if self.slow is not None and it >= self.slow:
            return max(h / self.factor, self.h_min)
        return h

    def shrink(self, h: float, attempt: Attempt) -> float:
        new = h * self.cut
        if new < self.h_min:
            raise StepSizeError(attempt, h, f"the step failed at its smallest length {h:.3g}")
        return new


class ErrorController(StepController):
    """Step length from the predictor's error (``attempt.error_ratio = tol / err``).

    After an accepted step: ``h min(grow, max(floor, safety ratio^(1/order)))``, at most
    ``h_max``. After a rejected one: ``h cut`` (``cuts[reason]`` when given for the reason);
    :class:`StepSizeError` when ``h`` is already at ``h_min`` or after ``max_rejects``
    rejections in a row.
    """

    def __init__(
        self,
        h_min: float,
        h_max: float,
        *,
        order: float = 2.0,
        safety: float = 0.8,
        grow: float = 2.0,
        floor: float = 0.5,
        cut: float = 0.5,
        cuts: dict[str, float] | None = None,
        max_rejects: int | None = None,
    ):
        super().__init__(h_min, h_max, max_rejects)
        self.order, self.safety, self.factor, self.floor = order, safety, grow, floor
        self.cut = cut
        self.cuts = dict(cuts or {})

    def grow(self, h: float, attempt: Attempt) -> float:
        ratio = attempt.error_ratio
        if math.isnan(ratio):
            scale = self.factor
        else:
            root = math.sqrt(ratio) if self.order == 2 else ratio ** (1.0 / self.order)
            scale = max(self.floor, self.safety * root)
        return min(self.factor * h, h * scale, self.h_max)

    def adapt(self, h: float, attempt: Attempt) -> tuple[bool, float]:
        if not attempt.ok and (h <= self.h_min):
            self.rejects += 1
            raise StepSizeError(attempt, h, f"the step failed at its smallest length {h:.3g}")
        return super().adapt(h, attempt)

    def shrink(self, h: float, attempt: Attempt) -> float:
        return h * self.cuts.get(attempt.reason, self.cut)

"""The continuation engine: controllers, the loop, serial and batched driving, arclength."""

import math

import numpy as np
import pytest

from fluidnet.continuation import (
    Attempt,
    ErrorController,
    IterationController,
    StepSizeError,
    Stop,
    follow,
    run,
    run_batch,
)
from fluidnet.continuation.arclength import ArclengthStepper, CurvePoint, null_tangent
from fluidnet.continuation.scalar import illinois


def test_iteration_controller():
    c = IterationController(0.01, 1.0, fast=3, slow=6, grow=1.5, cut=0.5)
    assert c.adapt(0.1, Attempt(ok=True, iterations=2)) == (True, pytest.approx(0.15))
    assert c.adapt(0.1, Attempt(ok=True, iterations=4)) == (True, 0.1)
    assert c.adapt(0.1, Attempt(ok=True, iterations=7)) == (True, pytest.approx(0.1 / 1.5))
    assert c.adapt(0.9, Attempt(ok=True, iterations=1)) == (True, 1.0)  # at most h_max
    assert c.adapt(0.1, Attempt(ok=False)) == (False, 0.05)
    with pytest.raises(StepSizeError):
        c.adapt(0.015, Attempt(ok=False, reason="corrector"))


def test_error_controller_is_the_embedded_pair_rule():
    c = ErrorController(1e-9, 10.0, cuts={"axis": 0.7}, max_rejects=2)
    ok, h = c.adapt(1.0, Attempt(ok=True, error_ratio=4.0))
    assert ok and h == pytest.approx(min(2.0, 0.8 * math.sqrt(4.0)))
    assert c.adapt(1.0, Attempt(ok=True, error_ratio=0.01))[1] == pytest.approx(0.5)
    assert c.adapt(1.0, Attempt(ok=False, reason="axis"))[1] == pytest.approx(0.7)
    assert c.adapt(1.0, Attempt(ok=False, reason="curved"))[1] == pytest.approx(0.5)
    with pytest.raises(StepSizeError, match="rejected steps in a row"):
        c.adapt(1.0, Attempt(ok=False))


class Circle:
    """x^2 + y^2 = 1 in the plane."""

    def residual(self, u):
        return np.array([u @ u - 1.0])

    def jacobian(self, u):
        return 2.0 * u[None, :]


class ClosingTracer(ArclengthStepper):
    turned = 0.0

    def accepted(self, point, attempt, h_next):
        new = super().accepted(point, attempt, h_next)
        a0 = math.atan2(point.u[1], point.u[0])
        a1 = math.atan2(new.u[1], new.u[0])
        self.turned += (a1 - a0 + math.pi) % (2 * math.pi) - math.pi
        return Stop(self.points) if self.turned > 2 * math.pi else new


def test_arclength_goes_round_a_circle():
    tr = ClosingTracer(Circle(), tol=1e-13)
    u0 = np.array([1.0, 0.0])
    start = CurvePoint(u=u0, tangent=null_tangent(Circle().jacobian(u0), None, 1.0))
    pts = run(follow(tr, start, IterationController(1e-6, 0.3, fast=3), 0.1))
    U = np.array([p.u for p in pts])
    assert np.max(np.abs(np.hypot(U[:, 0], U[:, 1]) - 1)) < 1e-12
    angles = np.unwrap(np.arctan2(U[:, 1], U[:, 0]))
    assert np.all(np.diff(angles) > 0) and angles[-1] > 2 * math.pi  # once round, one way
    steps = np.diff(angles)
    assert steps.max() <= 0.3 + 1e-9  # the controller's largest step


def _countdown(n):
    """A toy path: requests the square of each number, returns their sum."""
    total = 0
    for k in range(n):
        total += yield ("square", k)
    return total


def test_run_and_run_batch_drive_the_same_generators():
    def answer(req):
        return req[1] ** 2

    assert run(_countdown(4), answer) == 14
    seen = []

    def answer_round(pending):
        seen.append(len(pending))
        return {k: r[1] ** 2 for k, r in pending.items() if k != "drop"}

    done, errors = run_batch(
        {"a": _countdown(2), "b": _countdown(4), "drop": _countdown(3)}, answer_round
    )
    assert done == {"a": 1, "b": 14} and errors == {}
    assert seen == [3, 2, 1, 1]  # every live path answered in each round


def test_illinois_finds_a_zero_to_rounding():
    z = illinois(lambda x: math.cos(x) - x, 0.0, 1.0, 1.0, math.cos(1.0) - 1.0)
    assert abs(math.cos(z) - z) < 1e-15

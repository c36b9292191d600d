"""Proved regions (fluidnet.proof.region, .leaves, .chart) against regions known in closed form.

* The Hayes equation ``x' = a x + b x(t - 1)`` (Hayes 1950): stable iff ``a < 1``, ``a + b < 0``
  and ``b > -w / sin w`` where ``w`` in ``(0, pi)`` solves ``a = w cot w``. Crossing the line
  ``a + b = 0`` (``b > -a``, ``a < 1``) brings one real root into the right half-plane, crossing
  the first Hopf curve a complex pair; the second Hopf curve (``w`` in ``(2 pi, 3 pi)``) lies
  below ``b = -5 pi / 2`` at ``a = 0``.
* A two-delay equation ``x' = -a x + b1 x(t - t1) + b2 x(t - t2)``: for ``|b1| + |b2| < a`` it
  is stable for every pair of delays (``Re s >= 0`` gives ``|s + a| >= a > |b1 e^{-s t1} +
  b2 e^{-s t2}|``), and for ``b1 + b2 > a`` it has a real positive root (``Delta(0) < 0``,
  ``Delta(+inf) = +inf``): in the quadrant ``b1, b2 >= 0`` the region is exactly
  ``b1 + b2 < a``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import brentq

import fluidnet as fn
from fluidnet.proof import leaves, region
from fluidnet.proof.arbcode import NotProved
from fluidnet.proof.certificate import cell_box
from fluidnet.proof.problem import ModelRecord


def hayes() -> fn.Model:
    x = fn.states("x")
    a, b = fn.params("a b")
    return fn.Model(rhs={x: a * x(fn.t) + b * x(fn.t - 1)}, params={a: -1.0, b: 0.5})


def hayes_stable(a: float, b: float) -> bool:
    """Hayes' criterion, in closed form."""
    if not (a < 1 and a + b < 0):
        return False
    w = math.pi / 2 if a == 0 else brentq(lambda v: v / math.tan(v) - a, 1e-12, math.pi - 1e-12)
    return b > -w / math.sin(w)


def hayes_boundary(n: int = 2000) -> np.ndarray:
    """Points of the stability boundary: the line a + b = 0 (a <= 1) and the Hopf curve."""
    w = np.linspace(1e-6, math.pi - 1e-3, n)
    hopf = np.column_stack([w / np.tan(w), -w / np.sin(w)])
    a = np.linspace(-10, 1, n)
    return np.vstack([hopf, np.column_stack([a, -a])])


def samples(box: dict, k: int = 5) -> list[tuple[float, float]]:
    (a0, a1), (b0, b1) = box["a"], box["b"]
    return [(a, b) for a in np.linspace(a0, a1, k) for b in np.linspace(b0, b1, k)]


def test_a_box_inside_the_hayes_region_is_proved_stable():
    box = {"a": (-3, -1.5), "b": (-0.8, 0.8)}
    assert all(hayes_stable(a, b) for a, b in samples(box, 9))  # inside, by the closed form
    cert = fn.certify_region(hayes(), box)
    assert (cert.verdict, cert.count) == ("stable", 0)
    assert cert.fraction_proved == 1.0 and not cert.undecided
    assert cert.caveats == []


@pytest.mark.parametrize(
    ("box", "count"),
    [
        ({"a": (0.2, 0.5), "b": (0.5, 1.0)}, 1),  # past a + b = 0: one real root
        ({"a": (-0.5, 0.0), "b": (-3.0, -2.5)}, 2),  # past the first Hopf curve only
    ],
)
def test_boxes_outside_the_hayes_region_are_proved_unstable_with_their_root_count(box, count):
    assert not any(hayes_stable(a, b) for a, b in samples(box, 9))
    cert = fn.certify_region(hayes(), box)
    assert (cert.verdict, cert.count) == ("unstable", count)
    # a second method: floating-point characteristic roots at the box's corners
    for a, b in samples(box, 2):
        roots = hayes().linearize(a=a, b=b).roots(region=0.0)
        assert len(roots) == count


def test_a_box_across_the_hayes_boundary_is_undecided_only_along_it():
    box = {"a": (-1.0, 0.5), "b": (-2.5, 0.5)}
    cert = fn.certify_region(hayes(), box, depth=4)
    assert cert.verdict == "undecided" and cert.count is None
    assert 0.7 < cert.fraction_proved < 1.0
    edge = hayes_boundary()
    for leaf in cert.leaves:
        (a0, a1), (b0, b1) = leaf.box["a"], leaf.box["b"]
        if leaf.verdict == "undecided":
            # within a cell's diagonal of the exact boundary
            d = np.min(np.hypot(edge[:, 0] - 0.5 * (a0 + a1), edge[:, 1] - 0.5 * (b0 + b1)))
            assert d <= math.hypot(a1 - a0, b1 - b0), leaf
            assert leaf.reason
        else:
            truth = {hayes_stable(a, b) for a, b in samples(leaf.box, 4)}
            assert truth == {leaf.verdict == "stable"}, leaf


def test_the_undecided_area_of_a_chart_shrinks_with_depth():
    m = hayes()
    shown = []
    for depth in (3, 5, 7):
        chart = fn.certified_chart(m, "a", "b", x_range=(-3, 1.5), y_range=(-3, 2), depth=depth)
        shown.append(1 - chart.fraction_proved)
    assert shown[0] > shown[1] > shown[2] and shown[2] < 0.03
    ds = chart.to_xarray()
    assert set(ds["verdict"].values) == {"stable", "unstable", "undecided"}
    assert int(ds.sizes["cell"]) == len(chart.leaves)
    assert ds.attrs["verdict"] == "undecided"


def two_delay(t1: float = 1.0, t2: float = 2.5) -> fn.Model:
    x = fn.states("x")
    a, b1, b2 = fn.params("a b1 b2")
    return fn.Model(
        rhs={x: -a * x(fn.t) + b1 * x(fn.t - t1) + b2 * x(fn.t - t2)},
        params={a: 1.0, b1: 0.2, b2: 0.2},
        name="two_delay",
    )


@pytest.mark.parametrize(
    ("box", "verdict"),
    [
        ({"b1": (0.05, 0.45), "b2": (0.05, 0.45)}, "stable"),  # b1 + b2 <= 0.9 < a
        ({"b1": (-0.45, -0.05), "b2": (0.05, 0.45)}, "stable"),  # |b1| + |b2| < a
        ({"b1": (0.6, 0.9), "b2": (0.6, 0.9)}, "unstable"),  # b1 + b2 >= 1.2 > a
        ({"b1": (0.3, 0.7), "b2": (0.3, 0.7)}, "undecided"),  # across b1 + b2 = a
    ],
)
def test_two_delay_boxes_against_the_closed_form_region(box, verdict):
    cert = fn.certify_region(two_delay(), box, depth=3)
    assert cert.verdict == verdict
    if verdict == "unstable":
        c = {k: 0.5 * (lo + hi) for k, (lo, hi) in box.items()}
        assert cert.count == len(two_delay().linearize(**c).roots(region=0.0)) >= 1
    if verdict == "undecided":
        for leaf in cert.leaves:
            (p0, p1), (q0, q1) = leaf.box["b1"], leaf.box["b2"]
            if leaf.verdict == "stable":
                assert p1 + q1 < 1.0
            elif leaf.verdict == "unstable":
                assert p0 + q0 > 1.0
            else:
                assert p0 + q0 <= 1.0 <= p1 + q1


def test_the_equilibrium_is_enclosed_over_the_box_and_switches_are_decided():
    """x' = p - x^2 - Max(0, x - 2) c: equilibrium sqrt(p) (the Max is 0 there when p < 4)."""
    x = fn.states("x")
    p, c = fn.params("p c")
    m = fn.Model(rhs={x: p - x(fn.t) ** 2 - c * fn.sympy.Max(0, x(fn.t - 1) - 2)},
                 params={p: 2.0, c: 1.0})  # fmt: skip
    cert = fn.certify_region(m, {"p": (1, 3)}, depth=3)
    assert cert.verdict == "stable"
    for entry in cert.data["leaves"]:
        lo, hi = (float(Fraction(v)) for v in entry["equilibrium"][0])
        box = cell_box([(Fraction(1), Fraction(3))], entry["path"], 1)[0]
        assert lo <= math.sqrt(box[0]) and math.sqrt(box[1]) <= hi
    # across x = 2 (p = 4) the switch is not decided: said so
    near = fn.certify_region(m, {"p": (3.5, 4.5)}, depth=2)
    assert near.verdict == "undecided"
    reasons = [leaf.reason for leaf in near.leaves if leaf.verdict == "undecided"]
    assert reasons and all("switching function" in r for r in reasons)


def test_a_zero_root_and_a_held_equilibrium_are_named():
    x = fn.states("x")
    a, b = fn.params("a b")
    m = fn.Model(rhs={x: a * x(fn.t) + b * x(fn.t - 1)}, params={a: -1.0, b: 1.0})
    cert = fn.certify_region(m, {"a": (-1.5, -0.5)}, depth=1, b=1.0)
    assert cert.verdict == "undecided"
    # the middle cell contains a = -1, where a + b = 0: the steady state is not isolated
    assert all("singular" in leaf.reason for leaf in cert.leaves)


def test_state_dependent_delays_and_a_projected_state_at_zero_are_caveats():
    cert = fn.certify_region(fn.models.rcp(), {"alpha": (0.5, 0.6), "beta": (0.2, 0.25)})
    assert (cert.verdict, cert.count) == ("stable", 0)
    assert any("projected state q is 0" in c for c in cert.caveats)
    red = fn.certify_region(fn.models.reno_red(N=30, c=10000), {"d": (0.05, 0.055)}, depth=2)
    assert red.verdict == "stable"
    assert any("frozen at the enclosed equilibrium" in c for c in red.caveats)


def test_joins_and_counts_are_checked_steps():
    m = hayes()
    root = [(Fraction(-3), Fraction(-2)), (Fraction(-1, 2), Fraction(1, 2))]
    setup = region.SearchSetup(ModelRecord.from_model(m), ["a", "b"], root, {})
    P = setup.balls(setup.box(""))
    proof, _ = leaves.prove_leaf(setup.problem, P, [0.0])
    leaves.check_leaf(setup.problem, P, proof)
    bad = leaves.LeafProof(proof.X, proof.omega_max / 4, proof.tree, [])
    with pytest.raises(NotProved, match="root bound"):
        leaves.check_leaf(setup.problem, P, bad)


def test_bad_input_is_refused_clearly():
    m = hayes()
    with pytest.raises(fn.OptionError, match="pair"):
        fn.certify_region(m, {"a": (1,)})
    with pytest.raises(fn.OptionError, match="lo < hi"):
        fn.certify_region(m, {"a": (1, 0)})
    with pytest.raises(fn.ParameterError, match="nope"):
        fn.certify_region(m, {"nope": (0, 1)})
    with pytest.raises(fn.OptionError, match="swept"):
        fn.certify_region(m, {"a": (0, 1)}, a=0.5)
    with pytest.raises(fn.OptionError, match="two different"):
        fn.certified_chart(m, "a", "a", x_range=(0, 1), y_range=(0, 1))
    with pytest.raises(fn.ModelError, match="time"):
        x = fn.states("x")
        k = fn.params("k")
        fn.certify_region(fn.Model(rhs={x: -k * x(fn.t) + fn.t}, params={k: 1.0}), {"k": (1, 2)})

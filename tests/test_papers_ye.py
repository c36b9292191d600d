"""Ye et al. (the TCP utility and the MRG law): the quick reproduction, and the reference
numbers recomputed here with plain numpy/scipy from the printed equations."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.optimize import brentq

import fluidnet as fn
from fluidnet.papers.ye import data


def test_quick_reproduction_passes(tmp_path):
    report = fn.reproduce("ye", out=tmp_path, quick=True, progress=False)
    assert report.ok, report.summary()
    assert len(report.targets) >= 140
    # declared before the runs (ns-3's x4 : x follows the square-root law, not Table II) and,
    # for Fig 3, after the full run (README, "Fluid against packets")
    assert [t.name for t in report.documented_mismatches] == [
        "r_max needed for a 3 Mb/s guarantee",
        "ns-3, Case I: x4 : x of the TCP law over RED against Table II",
        "ns-3, Case I: the measured utility at the end of the run within 1 % of the maximum of "
        "(15) with the measured thresholds",
    ]
    rows = json.loads((tmp_path / "ye" / "targets.json").read_text())["targets"]
    assert {r["item"] for r in rows} == {
        "derivations", "fig1", "table2", "claims_sec3", "fixed_threshold", "sliding_mode", "mrg",
        "packet_rate_ratio", "packet_utility", "packet_mrg",
    }  # fmt: skip
    for name in ("fig1_utility", "fig04_06_rate_ratio", "fig07_11_fixed_threshold",
                 "sliding_single_link", "mrg_rate_vs_r", "packet_fig04_06_rate_ratio",
                 "packet_fig3_utility", "packet_figs13_15_mrg"):  # fmt: skip
        assert (tmp_path / "ye" / "figures" / f"{name}.png").exists()


def _U(x, mu=0.1, xs=1.0, b=0.5, a=1.0):
    """(8)/(12)/(14) typed again, scalar."""
    if x < xs:
        return x * math.log(1 + a / b)
    C = xs * math.log((a + b) * xs / (mu + b * xs)) - mu / b * math.log(mu + b * xs) + mu / b
    return (mu / b + x) * (math.log(mu + b * x) - 1) - x * (math.log(b * x) - 1) + C


def test_fig1_reference_values():
    for x, v in data.FIG1_U.items():
        assert _U(x) == pytest.approx(v, abs=5e-5)
    cross = brentq(lambda v: _U(v) - math.log1p(v), 1.01, 50.0)
    assert cross == pytest.approx(data.FIG1_CROSSING, abs=5e-5)
    cross_n = brentq(lambda v: _U(v) / math.log(3) - math.log1p(v), 1.01, 50.0)
    assert cross_n == pytest.approx(data.FIG1_CROSSING_NORMALIZED, abs=5e-5)


def test_table_two_reference_roots():
    """(16) as a polynomial in x4 (cleared denominators), roots by numpy."""
    for case, (r13, r4) in data.RTTS.items():
        mu, mu4, b, B = 8e-3 / r13, 8e-3 / r4, 0.5, 100.0
        # (mu/b + B - y)^3 y - (mu4/b + y)(B - y)^3 = 0
        p1 = np.polymul(np.polymul([-1, mu / b + B], [-1, mu / b + B]), [-1, mu / b + B])
        p2 = np.polymul(np.polymul([-1, B], [-1, B]), [-1, B])
        poly = np.polysub(np.polymul(p1, [1, 0]), np.polymul([1, mu4 / b], p2))
        roots = [z.real for z in np.roots(poly) if abs(z.imag) < 1e-9 and 0 < z.real < B]
        assert len(roots) == 1
        assert roots[0] / (B - roots[0]) == pytest.approx(data.TABLE_II_EXACT[case], abs=5e-5)
        assert round(roots[0] / (B - roots[0]), 2) == data.TABLE_II[case]


def test_mrg_reference_table():
    mt, mm, B = 8e-3 / 0.012, 8e-3 / 0.08, 20.0
    for theta, rc in data.MRG_R_CRIT.items():
        # U'(x) = log(1 + mu / (x / 2)): r_crit = (1 + 2 mt / (B - theta)) / (1 + 2 mm / theta)
        assert (1 + 2 * mt / (B - theta)) / (1 + 2 * mm / theta) == pytest.approx(rc, abs=5e-4)
    # r = 1: rates proportional to mu
    assert B * mm / (mt + mm) == pytest.approx(data.MRG_PREDICTED[1.0], abs=5e-4)


def test_topology_two_fluid_is_the_optimum_of_the_utilities():
    """The averaged law's rates on the reconstructed topology II against a second method: the
    maximum of sum_i U_i (CA utility (12), rates in Mb/s, mu_i = w/RTT_i) with the three links
    full, by scipy over (x4, x5); and r_crit against the held-at-theta equilibrium."""
    from scipy.optimize import minimize

    mus = [8e-3 / r for r in data.TOPOLOGY_TWO_RTTS]

    def U(x, m):  # (12) without its constant
        return (m / 0.5 + x) * (math.log(m + 0.5 * x) - 1) - x * (math.log(0.5 * x) - 1)

    def neg(v):
        x4, x5 = v
        rest = 20.0 - x4 - x5
        return -(sum(U(rest, m) for m in mus[:3]) + U(x4, mus[3]) + U(x5, mus[4]))

    best = minimize(neg, [1.0, 3.0], bounds=[(1e-3, 10), (1e-3, 10)], tol=1e-14).x
    x, _ = data.topology_two_fluid(1.0)
    assert x[3:] == pytest.approx(best, abs=1e-4)
    assert x[:3] == pytest.approx([20.0 - best.sum()] * 3, abs=1e-4)
    # at r_crit the bonus log(r) closes the gap U'_4(theta) -> lambda(theta) exactly
    rc = data.topology_two_r_crit()
    _, lam = data.topology_two_fluid(x4=data.MRG_THETA)
    assert math.log(1 + mus[3] / (0.5 * data.MRG_THETA)) + math.log(rc) == pytest.approx(lam)
    assert data.topology_two_fluid(rc * 1.01)[0][3] == pytest.approx(data.MRG_THETA)
    assert data.topology_two_fluid(rc * 0.99)[0][3] < data.MRG_THETA


def test_utility_optimum_against_a_grid():
    mus, xs = [0.27, 0.27, 0.27, 0.16], [8.0, 8.5, 9.0, 2.5]
    best, x4 = data.utility_optimum(20.0, mus, xs)
    grid = np.linspace(1e-3, 20 - 1e-3, 200001)
    total = sum(data.u_tcp(20.0 - grid, mus[k], xs[k]) for k in range(3)) + data.u_tcp(
        grid, mus[3], xs[3]
    )
    assert best == pytest.approx(total.max(), abs=1e-7)
    assert x4 == pytest.approx(grid[np.argmax(total)], abs=2e-4)


def test_square_root_rate():
    # Mathis et al.: W = sqrt(3/(2p)) packets per RTT; p = 1 %, RTT 50 ms: 12.25 / 0.05
    assert data.square_root_rate(0.05, 0.01) == pytest.approx(math.sqrt(150) / 0.05)

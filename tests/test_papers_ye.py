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
    assert [t.name for t in report.documented_mismatches] == ["r_max needed for a 3 Mb/s guarantee"]
    rows = json.loads((tmp_path / "ye" / "targets.json").read_text())["targets"]
    assert {r["item"] for r in rows} == {
        "derivations", "fig1", "table2", "claims_sec3", "fixed_threshold", "sliding_mode", "mrg",
    }  # fmt: skip
    for name in ("fig1_utility", "fig04_06_rate_ratio", "fig07_11_fixed_threshold",
                 "sliding_single_link", "mrg_rate_vs_r"):  # fmt: skip
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

"""fn.packet.agreement_map on a small grid: a fluid-stable and a fluid-unstable MGT/RED point,
each side of the fluid boundary with margin (two ns-3 runs of 30 s)."""

from __future__ import annotations

import numpy as np
import pytest

import fluidnet as fn

pytestmark = pytest.mark.skipif(
    not fn.packet.ns3_available(), reason="needs ns-3 (pip install 'fluidnet[packet]')"
)


def test_verdicts_agree_away_from_the_fluid_boundary(tmp_path):
    # 10 flows on 1250 packets/s: the fluid equilibrium is stable below Tp ~ 0.12 s; every
    # point's run and tail from the fluid time constants (issue 35: with a tail fixed by hand a
    # still-settling queue was called oscillating, and the fluid period was NaN when the tail
    # held less than one cycle)
    m = fn.models.mgt_red(C=1250, weight=0.001, delta=1 / 1250, min_th=20, max_th=200)
    amap = fn.packet.agreement_map(
        m, {"N": [10], "Tp": [0.05, 0.3]}, boundary_points=6, store=tmp_path / "s"
    )
    d = amap.to_xarray()
    np.testing.assert_array_equal(d["fluid_stable"].values, [[1.0, 0.0]])
    np.testing.assert_array_equal(d["packet_oscillating"].values, [[0.0, 1.0]])
    assert amap.agreement() == 1.0
    # each point's tail is the rule's (fluidnet.packet.timescales)
    for j, tp in enumerate((0.05, 0.3)):
        rule = fn.packet.transient(m, {"N": 10, "Tp": tp})
        assert d["after"].values[0, j] == pytest.approx(rule.after, rel=1e-9)
        assert d["t_end"].values[0, j] == pytest.approx(rule.t_end, rel=1e-9)
    # the unstable point's tail holds four fluid cycles, and the fluid period is measured
    period = d["fluid_period"].values[0, 1]
    assert np.isfinite(period) and period == pytest.approx(d["fluid_cycle"].values[0, 1], rel=1e-3)
    assert d["t_end"].values[0, 1] - d["after"].values[0, 1] == pytest.approx(4 * period, rel=1e-3)
    # the packet queue at the stable point sits at the fluid equilibrium
    assert d["packet_queue"].values[0, 0] == pytest.approx(d["fluid_queue"].values[0, 0], rel=0.25)
    # at the unstable point both swing (fluid: nonlinear run from an empty queue), with
    # periods within 25 % (measured 5.8 s against 6.4 s)
    assert d["fluid_swing"].values[0, 1] > 1 and d["packet_swing"].values[0, 1] > 1
    assert d["packet_period"].values[0, 1] == pytest.approx(period, rel=0.25)
    assert "agree" in repr(amap) and amap.plot() is not None
    assert (d["runs_error"].values == "").all()
    # a second call reads its runs back from the run store
    assert len(fn.packet.RunStore(tmp_path / "s")) == 2
    with pytest.raises(fn.ParameterError, match="exactly two"):
        fn.packet.agreement_map(m, {"N": [10]}, 30.0)

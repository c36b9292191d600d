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
    # 10 flows on 1250 packets/s: the fluid equilibrium is stable below Tp ~ 0.12 s
    m = fn.models.mgt_red(C=1250, weight=0.001, delta=1 / 1250, min_th=20, max_th=200)
    amap = fn.packet.agreement_map(
        m, {"N": [10], "Tp": [0.05, 0.3]}, 30.0, after=8.0, boundary_points=6, store=tmp_path / "s"
    )
    d = amap.to_xarray()
    np.testing.assert_array_equal(d["fluid_stable"].values, [[1.0, 0.0]])
    np.testing.assert_array_equal(d["packet_oscillating"].values, [[0.0, 1.0]])
    assert amap.agreement() == 1.0
    # the packet queue at the stable point sits at the fluid equilibrium
    assert d["packet_queue"].values[0, 0] == pytest.approx(d["fluid_queue"].values[0, 0], rel=0.25)
    # at the unstable point both swing (fluid: nonlinear run from an empty queue)
    assert d["fluid_swing"].values[0, 1] > 1 and d["packet_swing"].values[0, 1] > 1
    assert "agree" in repr(amap) and amap.plot() is not None
    with pytest.raises(fn.ParameterError, match="exactly two"):
        fn.packet.agreement_map(m, {"N": [10]}, 30.0)

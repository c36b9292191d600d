"""The packet experiments' set-up, without ns-3: the scenarios they hand to the runner."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from fluidnet.packet import experiments


def _fake_runs(seen):
    """A stand-in for the ns-3 runs: records the scenarios, returns a queue cycling with a
    period of 1 ms around 40 packets."""

    def runs(scenarios, t_end, seeds, n_points=None):
        seen.extend(scenarios)
        t = np.linspace(0.0, t_end, n_points)
        q = 40.0 + 20.0 * np.sin(2 * np.pi * t / 1e-3)
        run = SimpleNamespace(time=t, queue=q[:, None], cpu_time=0.0)
        return [[run for _ in seeds] for _ in scenarios]

    return runs


def test_dctcp_flows_all_run_before_the_measured_tail(monkeypatch):
    """Every packet flow starts long before ``after``: the fluid model starts all N flows at
    once, and a run of a few hundred round trips cannot wait for flows spread over 1 s (the
    mapping's default, under which a 0.3 s run had about 3 of its 10 flows)."""
    seen = []
    monkeypatch.setattr(experiments, "_runs", _fake_runs(seen))
    exp = experiments.dctcp_oscillation((40.0,), t_end=0.02, after=0.008)
    (sc,) = seen
    (group,) = sc.flows
    d = 100e-6  # the model's round-trip propagation delay
    assert group.n == 10
    assert group.start == pytest.approx((0.0, 20 * d))
    assert group.start[1] < 0.008
    # the stand-in queue: span q95 - q5 of a 20-packet sine averaged over d (one tenth of its
    # period) is about 2 x 20 sin(pi/10)/(pi/10) x 0.988 = 39 packets
    assert float(exp.data["packet_span"].squeeze()) == pytest.approx(39.0, abs=1.0)
    assert float(exp.data["packet_queue"].squeeze()) == pytest.approx(40.0, abs=0.5)

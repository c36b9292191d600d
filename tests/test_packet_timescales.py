"""The measured tail of a packet run from the fluid time constants (fluidnet.packet.transient):
the rule's arithmetic by hand, its inputs against second methods (the closed form of RED's
averaging pole, the linearization's own roots, the fluid cycle's peaks found with scipy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.signal import find_peaks

import fluidnet as fn
from fluidnet.packet import batch
from fluidnet.packet.timescales import averaging_time, transient_rule

#: MGT/RED on 10 Mb/s of 1000-byte packets (the packet stage's reference network).
MGT = dict(C=1250.0, weight=0.001, delta=1 / 1250, min_th=20.0, max_th=200.0)


def test_the_rule_by_hand():
    # fluid-stable: start-up 1 + 10 x 0.1; settle 5 x max(1/0.5, 0.8); tail max(4 x 2 pi/3, 2)
    tr = transient_rule(-0.5, 3.0, rtt=0.1, start=1.0, averaging=0.8)
    assert tr.startup == pytest.approx(2.0)
    assert tr.settle == pytest.approx(10.0)
    assert tr.after == pytest.approx(12.0)
    assert tr.tail == pytest.approx(8 * math.pi / 3)
    assert tr.t_end == pytest.approx(12.0 + 8 * math.pi / 3)
    assert tr.stable and math.isnan(tr.cycle)
    # the averaging filter slower than the mode: it sets the settling time
    assert transient_rule(-2.0, 3.0, rtt=0.1, averaging=1.0).settle == pytest.approx(5.0)
    # fluid-unstable: three periods of the fluid cycle (6 s) to grow into it, four in the tail
    tr = transient_rule(1.0, 2.0, rtt=0.2, start=1.0, cycle=6.0)
    assert (tr.after, tr.tail) == pytest.approx((3.0 + 18.0, 24.0))
    assert not tr.stable and tr.cycle == 6.0
    # without a measured cycle, the linear period stands in
    tr = transient_rule(1.0, 2.0, rtt=0.2, start=1.0)
    assert tr.tail == pytest.approx(4 * math.pi)
    # a real rightmost root: 20 round trips, or 5 time constants when longer
    tr = transient_rule(-0.1, 0.0, rtt=0.1, start=0.0)
    assert math.isnan(tr.period) and tr.tail == pytest.approx(50.0)
    assert "tail [" in tr.describe() and float(tr.to_xarray()["after"]) == tr.after
    assert tr.plot() is not None
    with pytest.raises(fn.ParameterError, match="imaginary axis"):
        transient_rule(0.0, 2.0, rtt=0.1)
    with pytest.raises(fn.ParameterError, match="abscissa = nan"):
        transient_rule(math.nan, 2.0, rtt=0.1)


def test_the_time_constants_of_mgt_red():
    m = fn.models.mgt_red(**MGT)
    # RED's averaging pole K = -ln(1 - w)/delta: 1/K = 0.8 ms / -ln(0.999) s
    assert averaging_time(m) == pytest.approx((1 / 1250) / -math.log1p(-0.001), rel=1e-12)
    assert math.isnan(averaging_time(fn.models.sbrm()))
    stable = {"N": 10, "Tp": 0.05}
    tr = fn.packet.transient(m, stable)
    lin = m.linearize(params=stable)
    root = max((r.value for r in lin.roots(k=6)), key=lambda z: z.real)
    assert tr.abscissa == pytest.approx(root.real, rel=1e-6)
    assert tr.period == pytest.approx(2 * math.pi / abs(root.imag), rel=1e-6)
    q = m.equilibrium(params=stable)["q"]
    assert tr.rtt == pytest.approx(0.05 + q / 1250.0, rel=1e-12)
    assert tr.stable and tr.after == pytest.approx(1 + 10 * tr.rtt + 5 / -root.real, rel=1e-6)


def test_an_unstable_point_holds_whole_fluid_cycles():
    # far from the Hopf point the fluid cycle is much slower than the linear mode
    m = fn.models.mgt_red(**MGT)
    point = {"N": 10, "Tp": 0.3}
    tr = fn.packet.transient(m, point)
    view = fn.packet.mapping.fluid_view(m, point)
    sol = fn.simulate(m, 200.0, params=point, history=view["history"])
    t = np.linspace(100.0, 200.0, 100_001)
    peaks, _ = find_peaks(sol(t, "q"), prominence=10.0)
    cycle = float(np.mean(np.diff(t[peaks])))
    assert tr.cycle == pytest.approx(cycle, rel=1e-3)
    assert tr.cycle > 2 * tr.period  # 6.4 s against 2 pi/omega = 2.7 s
    assert tr.tail == pytest.approx(4 * cycle, rel=1e-3)
    assert tr.after == pytest.approx(tr.startup + 3 * cycle, rel=1e-3)


def test_a_point_without_a_smooth_equilibrium_is_named():
    with pytest.raises(fn.AnalysisError, match="no equilibrium found for model 'dctcp'"):
        fn.packet.transient(fn.models.dctcp())


def test_the_scheduler_variable_sends_packet_batches_to_dask(monkeypatch):
    pytest.importorskip("dask.distributed")
    monkeypatch.delenv(batch.SCHEDULER_ENV, raising=False)
    assert type(batch.packet_executor()).__name__ == "SerialExecutor"
    monkeypatch.setenv(batch.SCHEDULER_ENV, "tcp://127.0.0.1:1")
    ex = batch.packet_executor()
    assert type(ex).__name__ == "DaskExecutor" and ex.address == "tcp://127.0.0.1:1"
    assert ex.chunksize == 1  # each ns-3 run a task
    assert type(batch.packet_executor(2)).__name__ == "ProcessExecutor"  # given: as given

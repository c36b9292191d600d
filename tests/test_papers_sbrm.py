"""The SBRM paper module (seed 002): printed data, the grid rule, helpers and the quick run."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.papers import sbrm as paper

TABLE_COLUMNS = [
    "protocol", "N", "c_pkts_per_ms", "d_crit_printed_ms", "f_crit_printed_hz",
    "d_crit_grid_ms", "f_crit_grid_hz", "d_crit_exact_ms", "f_crit_exact_hz",
]  # fmt: skip


def test_printed_table_shape():
    rows = paper.TABLE_6_6_2_PRINTED
    assert len(rows) == 40
    assert {(r[0], r[1]) for r in rows} == {(n, c) for n in paper.N_VALUES for c in paper.C_VALUES}
    assert sum(paper.is_number(r[3]) for r in rows) == 36  # finite SBRM entries
    assert sum(paper.is_number(r[2]) for r in rows) == 30  # finite RED entries
    # a printed frequency exactly where a delay is printed
    for r in rows:
        assert paper.is_number(r[2]) == paper.is_number(r[4])
        assert paper.is_number(r[3]) == paper.is_number(r[5])


def test_grid_rule_on_integrator_with_delay():
    # L = k e^{-s d}/s crosses -180 deg at w = pi/(2d) with |L| = 2kd/pi: critical d = pi/(2k)
    k = 20.0  # d* = 78.54 ms
    d, f, rows = paper.grid_rule(
        lambda dd: fn.DelayTF.from_expr(k * fn.sympy.exp(-dd * fn.s) / fn.s)
    )
    assert d == 78
    assert f == pytest.approx(1 / (4 * 0.078), rel=1e-9)
    assert len(rows) == len(paper.GRID_MS)


def test_exact_critical_uses_near_bracket_and_falls_back():
    fac = paper.loop_gain_factory("SBRM", 30, 10)
    near = paper.exact_critical(fac, near_ms=86)
    wide = paper.exact_critical(fac, near_ms=50)  # no crossing in 44...56 ms: wide scan
    assert near.value == pytest.approx(wide.value, rel=1e-10)
    assert 1e3 * near.value == pytest.approx(87.3, abs=0.05)  # note 002 'cont. d*'


def test_table_loop_gains_stacked_equal_the_printed_loop_gains():
    from fluidnet.linear.stacked import Stack
    from fluidnet.papers.sbrm.critical_delay import TableLoopGains
    from fluidnet.stability.system import as_linear

    gains = TableLoopGains()
    N, c, d = np.array([20.0, 40.0]), np.array([8.0, 15.0]), np.array([0.05, 0.11])
    for proto in (0, 1):
        st = gains.stacked(np.full(2, proto), N, c, d)
        ref = Stack.from_systems([as_linear(gains(proto, N[k], c[k], d[k])) for k in range(2)])
        scale = np.max(np.abs(ref.A))
        assert np.max(np.abs(st.A0 - ref.A0)) <= 1e-13 * scale
        assert np.max(np.abs(st.A - ref.A)) <= 1e-13 * scale
        np.testing.assert_array_equal(st.tau, ref.tau)
    with pytest.raises(fn.ParameterError, match="one protocol"):
        gains.stacked(np.array([0, 1]), N, c, d)


def test_exact_critical_many_equals_one_by_one():
    jobs = [("SBRM", 30, 10, 86.0), ("RED", 30, 10, 50.0), ("SBRM", 30, 9, 50.0)]
    many = paper.exact_critical_many(jobs)
    for (proto, N, c, near), (d, f) in zip(jobs, many, strict=True):
        one = paper.exact_critical(paper.loop_gain_factory(proto, N, c), near_ms=near)
        assert d == pytest.approx(one.value, rel=1e-12, abs=0)
        assert f == pytest.approx(one.frequency, rel=1e-10, abs=0)
    assert 1e3 * many[0][0] == pytest.approx(87.3, abs=0.05)


def test_loop_gain_factory_rejects_unknown_protocol():
    with pytest.raises(ValueError, match="protocol"):
        paper.loop_gain_factory("REM", 30, 10)


def test_erlang_b_small_cases():
    assert paper.erlang_b(1.0, 1) == pytest.approx(0.5)
    assert paper.erlang_b(2.0, 2) == pytest.approx(2.0 / 5.0)  # (A^2/2)/(1 + A + A^2/2)
    assert paper.erlang_b(3.0, 0) == 1.0
    with pytest.raises(ValueError):
        paper.erlang_b(-1.0, 3)


def test_claimed_bandwidth_crossing():
    p = (0.1 / (1.5 * math.sqrt(2 / 3))) ** 2
    tcp, sb = paper.claimed_bandwidth(p)
    assert float(tcp) == pytest.approx(float(sb), rel=1e-12)
    tcp, sb = paper.claimed_bandwidth(np.array([1e-4, 1e-1]))
    assert sb[0] > tcp[0] and sb[1] < tcp[1]  # SBRM claims more below the crossing, less above


def test_quick_reproduction(tmp_path):
    report = fn.reproduce("sbrm", out=tmp_path, quick=True, progress=False)
    assert not report.errors, report.errors
    assert report.ok, report.summary()
    path = tmp_path / "sbrm" / "tables" / "table_6_6_2.csv"
    with path.open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == TABLE_COLUMNS
    assert {r["protocol"] for r in rows} == {"SBRM", "RED"}
    n30c10 = {r["protocol"]: r for r in rows if r["N"] == "30" and r["c_pkts_per_ms"] == "10"}
    assert n30c10["SBRM"]["d_crit_grid_ms"] == "86"
    assert n30c10["RED"]["d_crit_grid_ms"] == "62"
    assert (tmp_path / "sbrm" / "figures" / "fig_6_6_4_stability_regions.png").exists()
    # the ns-3 items: each quick run checks that the queue settles at half the fluid critical
    # delay, over the tail the fluid time constants give (one target each), SBRM's and Reno/RED's
    packet = {t.item: t.status for t in report.targets if t.item.startswith("packet_critical")}
    assert packet == {"packet_critical_delay": "pass", "packet_critical_delay_red": "pass"}


def _worker_probe(job):
    import signal
    import threading

    guards = {t.name for t in threading.enumerate()}
    return job, signal.getsignal(signal.SIGINT) is signal.SIG_IGN, "fluidnet-parent" in guards


def test_table_results_workers_have_orphan_guard(monkeypatch):
    # the full table runs on fluidnet's process executor: its workers leave Ctrl-C to the
    # parent and watch that the parent is alive (see fluidnet.sweep.workers)
    from fluidnet.papers.sbrm import critical_delay

    monkeypatch.setattr(critical_delay, "_TABLE_CACHE", {})
    monkeypatch.setattr(critical_delay, "_grid_row", _worker_probe)
    monkeypatch.setattr(critical_delay, "_with_exact", lambda rows: rows)
    out = critical_delay.table_results((1, 2), workers=2)
    jobs = [(proto, r) for r in (1, 2) for proto in paper.PROTOCOLS]
    assert [o[0] for o in out] == jobs  # order kept
    assert all(o[1] and o[2] for o in out)

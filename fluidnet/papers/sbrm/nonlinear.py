"""The nonlinear SBRM and Reno+RED fluid models integrated over the delay grid, each run classified.

:func:`nonlinear_sweep` integrates one (protocol, N, c) over a list of delays as one ensemble and
classifies every run (sustained oscillation, amplitude, frequency, means, time with an empty queue);
:func:`oscillation_onset` reads off where sustained oscillation sets in.
"""

from __future__ import annotations

import math

import numpy as np

import fluidnet as fn

from ...models.reno import reno_red, reno_red_steady_state
from ...models.single_bit import sbrm, sbrm_steady_state

TRACE_DELAYS_MS = (50, 62, 70, 78, 90, 102)  # the subplots of Figs 6.6.8/6.6.9
T_END = {"SBRM": 80.0, "RED": 120.0}

#: :func:`nonlinear_sweep` results by (protocol, N, c, delays), computed once per process.
_SWEEP_CACHE: dict[tuple, dict] = {}


def _nonlinear_model(proto: str, N: int, c: int) -> fn.Model:
    base = sbrm() if proto == "SBRM" else reno_red()
    return base.with_params(N=float(N), c=1000.0 * c)


def _start_queue(proto: str, N: int, c: int, delays_ms) -> float:
    """A common initial queue for every delay: 10 packets above the largest equilibrium queue."""
    if proto == "SBRM":
        return sbrm_steady_state(N, 1000.0 * c, 0.05)["b"] + 10.0
    return max(reno_red_steady_state(N, 1000.0 * c, d / 1e3)["b"] for d in delays_ms) + 10.0


def _classify(t: np.ndarray, series: np.ndarray, t_end: float):
    """``fn.oscillation`` on the second half of a run: (oscillating, amplitude, frequency)."""
    osc = fn.oscillation((t, series), "b", after=0.5 * t_end)
    sustained = bool(osc.sustained)
    amp = float(getattr(osc, "amplitude", math.nan) or 0.0)
    freq = float(getattr(osc, "frequency", math.nan) or math.nan)
    return sustained, amp, freq


def nonlinear_sweep(proto: str, N: int, c: int, delays_ms, n_points: int = 20_001) -> dict:
    """Integrate the nonlinear model over the delay grid (one ensemble) and classify each run."""
    key = (proto, N, c, tuple(delays_ms))
    if key in _SWEEP_CACHE:
        return _SWEEP_CACHE[key]
    t_end = T_END[proto]
    m = _nonlinear_model(proto, N, c)
    ds = fn.simulate_ensemble(
        m,
        t_end,
        params={"d": np.asarray(delays_ms, dtype=float) / 1e3},
        history={"b": _start_queue(proto, N, c, delays_ms)},
        n_points=n_points,
        progress=False,
    )
    t = ds["time"].values
    late = t >= 0.5 * t_end
    out = {"t": t, "b": ds["b"].values, "W": ds["W"].values, "delays_ms": list(delays_ms)}
    rows = []
    for i, d in enumerate(delays_ms):
        sustained, amp, freq = _classify(t, out["b"][i], t_end)
        ss = (sbrm_steady_state if proto == "SBRM" else reno_red_steady_state)(
            N, 1000.0 * c, d / 1e3
        )
        rows.append(
            {
                "protocol": proto, "N": N, "c_pkts_per_ms": c, "d_ms": d,
                "oscillating": sustained, "amplitude_pkts": amp, "frequency_hz": freq,
                "mean_b": float(out["b"][i][late].mean()), "model_b": ss["b"],
                "mean_W": float(out["W"][i][late].mean()), "model_W": ss["W"],
                "time_on_boundary_s": float(ds["time_on_boundary_b"].values[i]),
            }
        )  # fmt: skip
    out["rows"] = rows
    _SWEEP_CACHE[key] = out
    return out


def oscillation_onset(rows) -> int | None:
    """The first grid delay with a sustained oscillation after which every delay oscillates."""
    flags = [r["oscillating"] for r in rows]
    for i in range(len(flags)):
        if all(flags[i:]) and (i == 0 or not flags[i - 1]):
            return rows[i]["d_ms"]
    return None

"""The paper's critical-delay rule (Sec 6.6.1) on the printed loop gains, and its Table 6.6.2 rows.

:func:`loop_gain_factory` gives ``d -> L(s)`` for (6.5.21) (SBRM) or (6.5.22) (Reno+RED);
:func:`grid_rule` applies the paper's rule on the 4 ms delay grid, :func:`exact_critical` finds the
continuous crossing, and :func:`table_results` computes both for the rows of Table 6.6.2.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import fluidnet as fn

from ...models.reno import reno_red_printed_loop_gain
from ...models.single_bit import sbrm_printed_loop_gain
from ...sweep import ProcessExecutor
from .data import GRID_MS, PROTOCOLS, TABLE_6_6_2_PRINTED, is_number

#: :func:`table_results` per run mode (``quick``), computed once per process.
_TABLE_CACHE: dict[bool, list[dict]] = {}


def sbrm_printed(N: float, c: float, d: float, form: str = "printed", **kw) -> fn.DelayTF:
    return sbrm_printed_loop_gain(N, c, d, form=form, **kw)


def red_printed(N: float, c: float, d: float, delay: str = "rtt", **kw) -> fn.DelayTF:
    return reno_red_printed_loop_gain(N, c, d, delay=delay, **kw)


def loop_gain_factory(protocol: str, N: float, c_pkts_per_ms: float, **kw) -> Callable:
    """``d -> L(s)``: the printed loop gain of ``protocol`` ("SBRM" or "RED") at N, c."""
    c = 1000.0 * c_pkts_per_ms
    if protocol == "SBRM":
        return partial(_sbrm_factory, N, c, kw)
    if protocol == "RED":
        return partial(_red_factory, N, c, kw)
    raise ValueError(f"protocol must be 'SBRM' or 'RED', got {protocol!r}")


def _sbrm_factory(N, c, kw, d):
    return sbrm_printed(N, c, d, **kw)


def _red_factory(N, c, kw, d):
    return red_printed(N, c, d, **kw)


def grid_rule(factory: Callable, grid_ms=GRID_MS) -> tuple[int, float, list]:
    """The paper's rule (Sec 6.6.1) on a delay grid.

    ``d_crit`` is the grid delay whose Nyquist curve comes closest to -1 (the stability margin
    ``min |1 + L(jw)|`` of :func:`fluidnet.margins`); ``f_crit`` is the frequency where that
    curve crosses the negative real axis closest to -1 (the phase crossover of
    :func:`fluidnet.margins`), in Hz.

    Returns
    -------
    (d_crit [ms], f_crit [Hz], list of (d, Margins))
    """
    rows = [(d, fn.margins(factory(d / 1000.0))) for d in grid_ms]
    d_best, m_best = min(rows, key=lambda r: r[1].stability_margin)
    return int(d_best), m_best.phase_crossover / (2 * math.pi), rows


def phase_crossover_hz(factory: Callable, d_ms: float) -> float:
    """The phase crossover (closest to -1) of ``factory(d)`` in Hz."""
    return fn.margins(factory(d_ms / 1000.0)).phase_crossover / (2 * math.pi)


def exact_critical(factory: Callable, lo: float = 0.01, hi: float = 0.2, near_ms=None):
    """The continuous critical delay (:func:`fluidnet.critical_value` on ``d``).

    ``near_ms`` (e.g. the grid-rule delay) first tries the bracket ``near_ms +- 6 ms``, which
    holds the crossing whenever the grid rule picked its neighbour, then (at a grid edge) the
    interval beyond that edge; otherwise ``[lo, hi]`` is scanned.
    """
    tries = []
    if near_ms is not None:
        tries.append(((near_ms - 6) / 1e3, (near_ms + 6) / 1e3))
        if near_ms <= GRID_MS[0]:
            tries.append((lo, (near_ms + 6) / 1e3))
        if near_ms >= GRID_MS[-1]:
            tries.append(((near_ms - 6) / 1e3, hi))
    for a, b in tries:
        try:
            return fn.critical_value(factory, "d", a, b)
        except fn.AnalysisError:
            continue
    return fn.critical_value(factory, "d", lo, hi)


def _table_rows(quick: bool) -> list[tuple[int, int, str, str, str, str]]:
    if quick:
        return [r for r in TABLE_6_6_2_PRINTED if r[0] == 30 and r[1] in (9, 10, 11, 13)]
    return list(TABLE_6_6_2_PRINTED)


def _table_row(job: tuple) -> dict:
    proto, (N, c, red_d, sbrm_d, red_f, sbrm_f) = job
    fac = loop_gain_factory(proto, N, c)
    d_grid, f_grid, _ = grid_rule(fac)
    cv = exact_critical(fac, near_ms=d_grid)
    d_pr, f_pr = (sbrm_d, sbrm_f) if proto == "SBRM" else (red_d, red_f)
    return {
        "protocol": proto,
        "N": N,
        "c_pkts_per_ms": c,
        "d_crit_printed_ms": d_pr,
        "f_crit_printed_hz": f_pr,
        "d_crit_grid_ms": d_grid,
        "f_crit_grid_hz": round(f_grid, 4),
        "d_crit_exact_ms": round(1000.0 * cv.value, 4),
        "f_crit_exact_hz": round(cv.frequency, 4),
        # at the printed delay, for the frequency comparison
        "f_at_printed_d_hz": phase_crossover_hz(fac, float(d_pr)) if is_number(d_pr) else None,
    }


def table_results(quick: bool, workers: int = 2) -> list[dict]:
    """Grid-rule and exact critical delays for the rows of Table 6.6.2 (cached per run mode).

    The full table runs on ``workers`` processes of :class:`fluidnet.sweep.ProcessExecutor`
    (workers exit with their parent; Ctrl-C stops them and raises :class:`KeyboardInterrupt`),
    with a progress bar.
    """
    if quick in _TABLE_CACHE:
        return _TABLE_CACHE[quick]
    jobs = [(proto, r) for r in _table_rows(quick) for proto in PROTOCOLS]
    if quick or workers <= 1:
        out = [_table_row(j) for j in jobs]
    else:
        pool = ProcessExecutor(max_workers=workers, chunksize=1)
        out = pool.map(_table_row, jobs, desc="Table 6.6.2", progress_options={"min_items": 0})
    _TABLE_CACHE[quick] = out
    return out

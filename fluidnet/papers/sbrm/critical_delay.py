"""The paper's critical-delay rule (Sec 6.6.1) on the printed loop gains, and its Table 6.6.2 rows.

:func:`loop_gain_factory` gives ``d -> L(s)`` for (6.5.21) (SBRM) or (6.5.22) (Reno+RED);
:func:`grid_rule` applies the paper's rule on the 4 ms delay grid, :func:`exact_critical` finds the
continuous crossing, and :func:`table_results` computes both for the rows of Table 6.6.2.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np

import fluidnet as fn

from ...models.reno import reno_red_printed_loop_gain, reno_red_steady_state
from ...models.single_bit import sbrm_printed_loop_gain
from ...sweep import ProcessExecutor
from .data import GRID_MS, PROTOCOLS, TABLE_6_6_2_PRINTED, is_number

#: :func:`table_results` per tuple of table rows, computed once per process.
_TABLE_CACHE: dict[tuple, list[dict]] = {}


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


class TableLoopGains:
    """The printed loop gains of Table 6.6.2 as one factory ``(protocol, N, c, d) -> L(s)``.

    ``protocol`` is an index into :data:`~.data.PROTOCOLS` (0 for SBRM (6.5.21), 1 for
    Reno+RED (6.5.22)), ``c`` in pkts/ms and ``d`` in s, so that
    :func:`fluidnet.critical_value` can take ``protocol``, ``N`` and ``c`` as arrays. The
    method :meth:`stacked` builds the closed loops ``den + num`` of many sets at once in the
    companion form of :meth:`fluidnet.QuasiPolynomial.companion` (a vectorized factory, see
    :mod:`fluidnet.stability.system`).
    """

    __name__ = "table_6_6_2_loop_gains"

    def __call__(self, protocol: float, N: float, c: float, d: float) -> fn.DelayTF:
        return loop_gain_factory(PROTOCOLS[int(protocol)], N, c)(d)

    def stacked(self, protocol, N, c, d):
        """The companion systems of ``den + num`` for arrays of one protocol."""
        from fluidnet.linear.stacked import Stack

        proto = np.asarray(protocol)
        if proto.size == 0 or np.any(proto != proto.flat[0]):
            raise fn.ParameterError("stacked() takes systems of one protocol at a time")
        N, d = np.asarray(N, dtype=float), np.asarray(d, dtype=float)
        c = 1000.0 * np.asarray(c, dtype=float)
        K = d.size
        if PROTOCOLS[int(proto.flat[0])] == "SBRM":
            # (6.5.21) printed at the Table 5.5.1 steady state (see sbrm_printed_loop_gain):
            # s^2 + a s + g s e^{-tf s} + a g e^{-tf s} + c0 e^{-R s}, tf = R / 2
            kappa, w, gamma, b0 = 0.2, 20.0, 0.006, 50.0
            p = N * w / c
            if np.any(p >= 1):
                raise fn.ParameterError("N w / c >= 1 in a set: no equilibrium")
            b = b0 - np.log1p(-p) / gamma
            R = d + b / c
            W = c * R / N
            paqm = gamma * np.exp(-gamma * np.maximum(b - b0, 0.0))
            a = kappa * w / W
            g = N / c * W / R**2
            c0 = (N * kappa * W * paqm - N * kappa * w / c * paqm) / R**2
            A0 = np.zeros((K, 2, 2))
            A0[:, 0, 1] = 1.0
            A0[:, 1, 1] = -a
            A = np.zeros((K, 2, 2, 2))
            A[:, 0, 1, 0] = -a * g
            A[:, 0, 1, 1] = -g
            A[:, 1, 1, 0] = -c0
        else:
            # (6.5.22) with the loop delay RTT* (see reno_red_printed_loop_gain):
            # (s + u)(s + v)(s + g e^{-tf s}) + c0 e^{-R s}, u = p W / R, v = alpha c
            alpha, rho = 1e-4, 0.1 / 500.0
            R, p, W = np.empty(K), np.empty(K), np.empty(K)
            for k in range(K):
                ss = reno_red_steady_state(float(N[k]), float(c[k]), float(d[k]))
                R[k], p[k], W[k] = ss["rtt"], ss["p"], ss["W"]
            u, v = p * W / R, alpha * c
            g = N / c * W / R**2
            c0 = N * alpha * c * rho / (R**2 * p)
            A0 = np.zeros((K, 3, 3))
            A0[:, 0, 1] = A0[:, 1, 2] = 1.0
            A0[:, 2, 1] = -u * v
            A0[:, 2, 2] = -(u + v)
            A = np.zeros((K, 2, 3, 3))
            A[:, 0, 2, 0] = -g * u * v
            A[:, 0, 2, 1] = -g * (u + v)
            A[:, 0, 2, 2] = -g
            A[:, 1, 2, 0] = -c0
        return Stack(A0, A, np.stack([0.5 * R, R], axis=1))


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


def _brackets(near_ms, lo: float, hi: float) -> list[tuple[float, float]]:
    """The intervals :func:`exact_critical` tries, in order."""
    tries = []
    if near_ms is not None:
        tries.append(((near_ms - 6) / 1e3, (near_ms + 6) / 1e3))
        if near_ms <= GRID_MS[0]:
            tries.append((lo, (near_ms + 6) / 1e3))
        if near_ms >= GRID_MS[-1]:
            tries.append(((near_ms - 6) / 1e3, hi))
    tries.append((lo, hi))
    return tries


def exact_critical(factory: Callable, lo: float = 0.01, hi: float = 0.2, near_ms=None):
    """The continuous critical delay (:func:`fluidnet.critical_value` on ``d``).

    ``near_ms`` (e.g. the grid-rule delay) first tries the bracket ``near_ms +- 6 ms``, which
    holds the crossing whenever the grid rule picked its neighbour, then (at a grid edge) the
    interval beyond that edge; otherwise ``[lo, hi]`` is scanned.
    """
    *tries, last = _brackets(near_ms, lo, hi)
    for a, b in tries:
        try:
            return fn.critical_value(factory, "d", a, b)
        except fn.AnalysisError:
            continue
    return fn.critical_value(factory, "d", *last)


def exact_critical_many(jobs, lo: float = 0.01, hi: float = 0.2) -> list[tuple[float, float]]:
    """:func:`exact_critical` for many ``(protocol, N, c [pkts/ms], near_ms)`` at once.

    One call of :func:`fluidnet.critical_value` with ``protocol``, ``N`` and ``c`` as arrays
    (:class:`TableLoopGains`, solved as one batched continuation) on each set's first bracket;
    a set without a switch there tries its other brackets alone, as :func:`exact_critical`
    does. Returns ``(d* [s], f* [Hz])`` per job.
    """
    protos = sorted({PROTOCOLS.index(j[0]) for j in jobs})
    Ns = sorted({float(j[1]) for j in jobs})
    cs = sorted({float(j[2]) for j in jobs})
    shape = (len(protos), len(Ns), len(cs))
    where = [(protos.index(PROTOCOLS.index(p)), Ns.index(N), cs.index(c)) for p, N, c, _ in jobs]
    a, b = np.full(shape, lo), np.full(shape, hi)
    for ix, job in zip(where, jobs, strict=True):
        a[ix], b[ix] = _brackets(job[3], lo, hi)[0]
    ds = fn.critical_value(
        TableLoopGains(), "d", a, b, grid={"protocol": protos, "N": Ns, "c": cs}, on_error="nan"
    )
    value, freq, err = ds["value"].values, ds["frequency"].values, ds["error"].values
    out = []
    for ix, (proto, N, c, near) in zip(where, jobs, strict=True):
        if not err[ix]:
            out.append((float(value[ix]), float(freq[ix])))
            continue
        factory = loop_gain_factory(proto, N, c)
        _, *tries = _brackets(near, lo, hi)
        if not tries:
            raise fn.AnalysisError(f"{proto} N={N:g} c={c:g}: {err[ix]}")
        *tries, last = tries
        for x, y in tries:
            try:
                cv = fn.critical_value(factory, "d", x, y)
                break
            except fn.AnalysisError:
                continue
        else:
            cv = fn.critical_value(factory, "d", *last)
        out.append((cv.value, cv.frequency))
    return out


def _grid_row(job: tuple) -> dict:
    """A row of the table without its exact critical delay (the grid rule, and the phase
    crossover at the printed delay)."""
    proto, (N, c, red_d, sbrm_d, red_f, sbrm_f) = job
    fac = loop_gain_factory(proto, N, c)
    d_grid, f_grid, _ = grid_rule(fac)
    d_pr, f_pr = (sbrm_d, sbrm_f) if proto == "SBRM" else (red_d, red_f)
    return {
        "protocol": proto,
        "N": N,
        "c_pkts_per_ms": c,
        "d_crit_printed_ms": d_pr,
        "f_crit_printed_hz": f_pr,
        "d_crit_grid_ms": d_grid,
        "f_crit_grid_hz": round(f_grid, 4),
        # at the printed delay, for the frequency comparison
        "f_at_printed_d_hz": phase_crossover_hz(fac, float(d_pr)) if is_number(d_pr) else None,
    }


def _with_exact(rows: list[dict]) -> list[dict]:
    """The rows with the exact critical delays near their grid-rule delays (one batched
    :func:`exact_critical_many`)."""
    jobs = [(r["protocol"], r["N"], r["c_pkts_per_ms"], r["d_crit_grid_ms"]) for r in rows]
    out = []
    for r, (d, f) in zip(rows, exact_critical_many(jobs), strict=True):
        row = dict(r)
        f_printed = row.pop("f_at_printed_d_hz")
        row["d_crit_exact_ms"] = round(1000.0 * d, 4)
        row["f_crit_exact_hz"] = round(f, 4)
        row["f_at_printed_d_hz"] = f_printed
        out.append(row)
    return out


def table_results(rows=TABLE_6_6_2_PRINTED, workers: int = 2) -> list[dict]:
    """Grid-rule and exact critical delays for ``rows`` of Table 6.6.2 (cached per rows).

    The grid rule runs on ``workers`` processes of :class:`fluidnet.sweep.ProcessExecutor`
    (workers exit with their parent; Ctrl-C stops them and raises :class:`KeyboardInterrupt`),
    with a progress bar, or in this process when ``workers`` is 1. The exact critical delays of
    all rows are one batched computation.
    """
    rows = tuple(rows)
    if rows in _TABLE_CACHE:
        return _TABLE_CACHE[rows]
    jobs = [(proto, r) for r in rows for proto in PROTOCOLS]
    if workers <= 1:
        results = [_grid_row(j) for j in jobs]
    else:
        pool = ProcessExecutor(max_workers=workers, chunksize=1)
        results = pool.map(_grid_row, jobs, desc="Table 6.6.2", progress_options={"min_items": 0})
    out = _with_exact(list(results))
    _TABLE_CACHE[rows] = out
    return out

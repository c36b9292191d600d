"""Table 6.6.2 proved: every critical delay bracketed by intervals proved stable and unstable.

For each (N, c) row and both protocols, :func:`fluidnet.certify_region` proves the delay range
of the table, ``50 <= d <= 102`` ms, cell by cell: SBRM on :func:`sbrm_printed_linear` (the
printed loop gain (6.5.21), whose delays depend on d), Reno+RED on the nonlinear model
:func:`fluidnet.models.reno_red` (equilibrium enclosed over each cell, RED's piecewise marking
decided between its thresholds, state-dependent delays frozen at the equilibrium: its
linearization is (6.5.22) with the loop delay RTT*, M2). The cells proved stable from 50 ms up
and unstable from 102 ms down bracket the critical delay, where stability is first lost; a row
proved stable (unstable) throughout has its crossing above 102 (below 50) ms. Each bracket is
checked against the continuous crossing computed independently with numpy/scipy
(``CONT_DCRIT_NOTE``, to 0.1 ms).
"""

from __future__ import annotations

import fluidnet as fn

from ...models.single_bit import sbrm_printed_linear
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import C_VALUES, CONT_DCRIT_NOTE, PROTOCOLS, QUICK_TABLE_ROWS, TABLE_6_6_2_PRINTED

#: The delay range of Table 6.6.2 [s].
D_RANGE = (0.05, 0.102)


def table_model(protocol: str, N: int, c_pkts_per_ms: float) -> fn.Model:
    c = 1000 * c_pkts_per_ms
    if protocol == "SBRM":
        return sbrm_printed_linear("printed", N=N, c=c)
    return fn.models.reno_red(N=N, c=c)


def bracket(cert: fn.RegionCertificate) -> tuple[float, float, int | None]:
    """``(lo, hi, count)`` in ms: proved stable on ``[50, lo]``, unstable with ``count`` roots
    in the right half-plane on ``[hi, 102]``."""
    leaves = sorted(cert.leaves, key=lambda leaf: leaf.box["d"][0])
    lo, hi, count = D_RANGE[0], D_RANGE[1], None
    for leaf in leaves:
        if leaf.verdict != "stable" or leaf.box["d"][0] > lo:
            break
        lo = leaf.box["d"][1]
    for leaf in reversed(leaves):
        if leaf.verdict != "unstable" or leaf.box["d"][1] < hi:
            break
        hi, count = leaf.box["d"][0], leaf.count
    return 1e3 * lo, 1e3 * hi, count


def brackets_crossing(lo: float, hi: float, d_star: float, tol: float = 0.05) -> bool:
    """Whether the crossing ``d_star`` (ms, rounded to ``tol``) lies in the bracket, or beyond
    the range on the proved side."""
    if lo >= 1e3 * D_RANGE[1]:
        return d_star > 1e3 * D_RANGE[1] - tol
    if hi <= 1e3 * D_RANGE[0]:
        return d_star < 1e3 * D_RANGE[0] + tol
    return lo - tol <= d_star <= hi + tol


@PAPER.item(
    title="Table 6.6.2 proved: critical delays bracketed in interval arithmetic",
    quick={"rows": QUICK_TABLE_ROWS},
)
def proved_critical_delays(ctx: Context, rows=TABLE_6_6_2_PRINTED, depth: int = 10) -> dict:
    """Certify ``50 <= d <= 102`` ms to ``depth`` bisection levels for every row and protocol."""
    table, values = [], {}
    found: dict[str, list[dict]] = {p: [] for p in PROTOCOLS}
    for N, c, *printed in rows:
        for proto in PROTOCOLS:
            model = table_model(proto, N, c)
            cert = fn.certify_region(model, {"d": D_RANGE}, depth=depth)
            lo, hi, count = bracket(cert)
            d_star = CONT_DCRIT_NOTE[proto][N][C_VALUES.index(c)]
            row = {
                "protocol": proto,
                "N": N,
                "c_pkts_per_ms": c,
                "stable_up_to_ms": round(lo, 4),
                "unstable_from_ms": round(hi, 4),
                "rhp_roots_above": count,
                "d_crit_continuous_ms": d_star,
                "d_crit_printed_ms": printed[1] if proto == "SBRM" else printed[0],
                "ok": brackets_crossing(lo, hi, d_star),
                "cpu_s": cert.work["cpu_seconds"],
            }
            found[proto].append(row)
            table.append(row)
            if (N, c) == (30, 10):
                values["N=30, c=10", proto] = 0.5 * (lo + hi)
                if proto == "SBRM":
                    path = ctx.tables_dir / "table_6_6_2_sbrm_30_10_certificate.json"
                    cert.save(path)
                    ctx.files.append(path)
                    checked = fn.check_certificate(path, model=model)
                    values["rechecked"] = Value(
                        checked.checked
                        and checked.work["check_evaluations"] <= cert.work["evaluations"]
                    )
    ctx.table("table_6_6_2_proved", table)
    for proto, rs in found.items():
        ok = sum(r["ok"] for r in rs)
        inner = [r for r in rs if D_RANGE[0] * 1e3 < r["unstable_from_ms"] and
                 r["stable_up_to_ms"] < D_RANGE[1] * 1e3]  # fmt: skip
        width = max((r["unstable_from_ms"] - r["stable_up_to_ms"] for r in inner), default=0.0)
        counts = sorted({r["rhp_roots_above"] for r in rs if r["rhp_roots_above"] is not None})
        values[proto, "bracket"] = Value(ok == len(rs), f"{ok}/{len(rs)}")
        values[proto, "width"] = Value(width <= 0.5, f"widest {width:.3f} ms")
        values[proto, "counts"] = Value(counts == [2], str(counts))
    return values

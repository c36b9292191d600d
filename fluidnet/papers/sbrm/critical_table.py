"""Table 6.6.2: the critical delays and frequencies by the paper's rule against the printed ones."""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import Context
from ..targets import Value
from . import PAPER
from .critical_delay import grid_rule, loop_gain_factory, table_results
from .data import (
    AGREEMENT_BARS,
    C_VALUES,
    CONT_DCRIT_NOTE,
    MISMATCH_NOTES,
    PROTOCOLS,
    QUICK_TABLE_ROWS,
    TABLE_6_6_2_PRINTED,
    is_number,
)

TABLE_COLUMNS = [
    "protocol",
    "N",
    "c_pkts_per_ms",
    "d_crit_printed_ms",
    "f_crit_printed_hz",
    "d_crit_grid_ms",
    "f_crit_grid_hz",
    "d_crit_exact_ms",
    "f_crit_exact_hz",
]
MISMATCH_COLUMNS = [
    "protocol",
    "N",
    "c_pkts_per_ms",
    "what",
    "d_crit_printed_ms",
    "d_crit_grid_ms",
    "d_crit_exact_ms",
    "f_crit_printed_hz",
    "f_crit_grid_hz",
    "explanation",
]


@dataclass
class Agreement:
    """The rows of one protocol (from :func:`table_results`) sorted by what agrees with the print.

    Attributes
    ----------
    rows : list of dict
        All rows of the protocol.
    finite : list of dict
        Rows with a printed d_crit (not ``<<50`` or ``>>102``).
    d_ok : list of dict
        Finite rows whose grid-rule d_crit equals the printed one.
    f_rows : list of dict
        Finite rows with a printed f_crit.
    f_ok : list of dict
        ``f_rows`` whose grid-rule f_crit is within 0.01 Hz of the printed one.
    f_ok_pd : list of dict
        ``f_rows`` whose f_crit at the printed d_crit is within 0.01 Hz of the printed one.
    below, above : list of dict
        Rows printed ``<<50`` and ``>>102``.
    below_ok, above_ok : list of dict
        Those whose continuous d* lies outside the grid on the printed side.
    exact_ok : list of dict
        Rows whose continuous d* equals the independent computation (``CONT_DCRIT_NOTE``) to
        0.05 ms.
    """

    rows: list[dict]
    finite: list[dict]
    d_ok: list[dict]
    f_rows: list[dict]
    f_ok: list[dict]
    f_ok_pd: list[dict]
    below: list[dict]
    above: list[dict]
    below_ok: list[dict]
    above_ok: list[dict]
    exact_ok: list[dict]


def agreement(res: list[dict], proto: str) -> Agreement:
    """Which rows of ``proto`` in ``res`` agree with the printed Table 6.6.2 and independent d*."""
    rows = [r for r in res if r["protocol"] == proto]
    finite = [r for r in rows if is_number(r["d_crit_printed_ms"])]
    d_ok = [r for r in finite if r["d_crit_grid_ms"] == int(r["d_crit_printed_ms"])]
    f_rows = [r for r in finite if is_number(r["f_crit_printed_hz"])]
    f_ok = [r for r in f_rows if abs(r["f_crit_grid_hz"] - float(r["f_crit_printed_hz"])) <= 0.01]
    f_ok_pd = [
        r for r in f_rows if abs(r["f_at_printed_d_hz"] - float(r["f_crit_printed_hz"])) <= 0.01
    ]
    # rows printed outside the grid: the continuous crossing must lie outside it too
    below = [r for r in rows if r["d_crit_printed_ms"] == "<<50"]
    above = [r for r in rows if r["d_crit_printed_ms"] == ">>102"]
    below_ok = [r for r in below if r["d_crit_exact_ms"] < 50.0]
    above_ok = [r for r in above if r["d_crit_exact_ms"] > 102.0]
    # the exact crossing against an independent numpy/scipy computation
    exact_ok = [
        r
        for r in rows
        if abs(
            r["d_crit_exact_ms"]
            - CONT_DCRIT_NOTE[proto][r["N"]][C_VALUES.index(r["c_pkts_per_ms"])]
        )
        <= 0.051
    ]
    return Agreement(
        rows, finite, d_ok, f_rows, f_ok, f_ok_pd, below, above, below_ok, above_ok, exact_ok
    )


def mismatch_rows(proto: str, a: Agreement) -> list[dict]:
    """The rows of ``proto`` that disagree with the print, with their explanation."""
    mismatches = []
    for r in a.finite:
        bad_d = r not in a.d_ok
        bad_f = r in a.f_rows and r not in a.f_ok
        if bad_d or bad_f:
            mismatches.append(
                {
                    **r,
                    "what": "d_crit" if bad_d else "f_crit",
                    "explanation": MISMATCH_NOTES.get(
                        (proto, r["N"], r["c_pkts_per_ms"]), "not explained"
                    ),
                }
            )
    for r in a.below + a.above:
        if r not in a.below_ok + a.above_ok:
            mismatches.append(
                {
                    **r,
                    "what": "outside-grid entry",
                    "explanation": MISMATCH_NOTES.get(
                        (proto, r["N"], r["c_pkts_per_ms"]), "not explained"
                    ),
                }
            )
    return mismatches


def corrected_form_grid_hits() -> int:
    """Finite SBRM rows where the grid rule on the corrected (6.5.21) gives the printed d_crit."""
    finite = [r for r in TABLE_6_6_2_PRINTED if is_number(r[3])]
    return sum(
        grid_rule(loop_gain_factory("SBRM", r[0], r[1], form="corrected"))[0] == int(r[3])
        for r in finite
    )


@PAPER.item(
    title="Table 6.6.2: critical delays and frequencies, SBRM and Reno+RED",
    quick={"rows": QUICK_TABLE_ROWS, "workers": 1, "corrected_form": False},
)
def table_6_6_2(
    ctx: Context, rows=TABLE_6_6_2_PRINTED, workers: int = 2, corrected_form: bool = True
) -> dict:
    """The (N, c) ``rows`` by the paper's grid rule (on ``workers`` processes) and by the exact
    continuous crossing (and the grid rule on the corrected (6.5.21) when ``corrected_form``)."""
    res = table_results(rows, workers)
    ordered = sorted(res, key=lambda r: (r["protocol"] != "SBRM", r["N"], r["c_pkts_per_ms"]))
    ctx.table("table_6_6_2", ordered, columns=TABLE_COLUMNS)
    mismatches, values = [], {}
    for proto in PROTOCOLS:
        a = agreement(res, proto)
        mismatches += mismatch_rows(proto, a)
        values |= agreement_values(proto, a)
    if corrected_form:
        values["M1"] = corrected_form_grid_hits()
    for proto, N, c in (("SBRM", 30, 10), ("RED", 30, 10)):
        r = next(x for x in res if (x["protocol"], x["N"], x["c_pkts_per_ms"]) == (proto, N, c))
        values["N=30, c=10", proto] = r["d_crit_grid_ms"]
    ctx.table("table_6_6_2_mismatches", mismatches, columns=MISMATCH_COLUMNS)
    return values


def agreement_values(proto: str, a: Agreement) -> dict:
    """The scorecard of one protocol: delays, frequencies, outside-grid rows, independent d*
    (against the full table's bars)."""
    need_d, need_fg = AGREEMENT_BARS[proto]
    n_finite, n_f = len(a.finite), len(a.f_rows)
    wrong = "; ".join(
        f"N={r['N']}, c={r['c_pkts_per_ms']}: printed {r['d_crit_printed_ms']}, "
        f"grid {r['d_crit_grid_ms']}"
        for r in a.finite
        if r not in a.d_ok
    )
    values = {
        (proto, "d"): Value(len(a.d_ok) >= need_d, f"{len(a.d_ok)}/{n_finite}", note=wrong),
        (proto, "f printed d"): Value(len(a.f_ok_pd) >= need_d, f"{len(a.f_ok_pd)}/{n_f}"),
        (proto, "f grid d"): Value(len(a.f_ok) >= need_fg, f"{len(a.f_ok)}/{n_f}"),
        (proto, "exact"): Value(len(a.exact_ok) == len(a.rows), f"{len(a.exact_ok)}/{len(a.rows)}"),
    }
    if a.below:
        # RED N=50, c=15 is printed <<50 but its crossing is at 53.7 ms
        need = len(a.below) - (1 if proto == "RED" else 0)
        values[proto, "<<50"] = Value(len(a.below_ok) >= need, f"{len(a.below_ok)}/{len(a.below)}")
    if a.above:
        shown = f"{len(a.above_ok)}/{len(a.above)}"
        values[proto, ">>102"] = Value(len(a.above_ok) == len(a.above), shown)
    return values

"""What a run of :func:`fluidnet.reproduce` leaves behind: ``<out>/<paper>/targets.json`` and
``<out>/REPORT.md``, and the :class:`Report` it returns.

A paper's ``targets.json`` holds one row per checked target (:class:`~.targets.Target`); a run
of some items replaces their rows and keeps the others'. ``REPORT.md`` lists the rows of every
registered paper with results under ``<out>``; nothing else under ``<out>`` is read.
"""

from __future__ import annotations

import json
import math
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..errors import StoreError
from .output import lstat_mode, output_dir, read_regular, write_file
from .targets import Target, status

__all__ = ["Report"]


@dataclass
class Report:
    """What :func:`~fluidnet.papers.registry.reproduce` ran: targets and written files."""

    targets: list[Target]
    files: list[Path]
    errors: list[str]
    seconds: float

    @property
    def failed(self) -> list[Target]:
        """Targets that fail the run: mismatches not documented, and unexpected matches."""
        return [t for t in self.targets if not t.ok]

    @property
    def documented_mismatches(self) -> list[Target]:
        return [t for t in self.targets if t.mismatch and not t.passed]

    @property
    def ok(self) -> bool:
        return not self.failed and not self.errors

    def summary(self) -> str:
        lines = []
        by_paper: dict[str, list[Target]] = {}
        for t in self.targets:
            by_paper.setdefault(t.paper, []).append(t)
        for key, ts in by_paper.items():
            lines.append(f"{key:>8}: {counts(ts)}")
        for t in self.documented_mismatches:
            lines.append(
                f"  documented mismatch {t.paper} {t.ref} — {t.name}: paper "
                f"{fmt(t.expected)}, ours {fmt(t.value)} ({t.mismatch})"
            )
        for t in self.failed:
            lines.append(
                f"  {t.status} {t.paper} {t.ref} — {t.name}: expected {fmt(t.expected)}, "
                f"got {fmt(t.value)}" + (f" ({t.note})" if t.note else "")
            )
        lines += [f"  ERROR {e}" for e in self.errors]
        lines.append(
            f"{counts(self.targets)}, {len(self.errors)} item errors, "
            f"{len(self.files)} files, {self.seconds:.1f} s"
        )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def fmt(v: Any) -> str:
    """A value as the report shows it."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def counts(targets) -> str:
    """``"157/160 targets pass, 3 documented mismatches"`` (and failures, if any)."""
    rows = [t.row() if isinstance(t, Target) else t for t in targets]
    statuses = [status(bool(r["passed"]), r.get("mismatch", "")) for r in rows]
    out = f"{statuses.count('pass')}/{len(rows)} targets pass"
    if statuses.count("documented mismatch"):
        out += f", {statuses.count('documented mismatch')} documented mismatches"
    bad = len(rows) - statuses.count("pass") - statuses.count("documented mismatch")
    if bad:
        out += f", {bad} FAIL"
    return out


def _jsonable(v: Any) -> Any:
    if isinstance(v, (bool, int, str)) or v is None:
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    return str(v)


_ROW_FIELDS = {f.name for f in fields(Target)}


def write_targets(
    out: Path, key: str, item: str, targets: list[Target], items: Sequence[str]
) -> None:
    """Put the ``targets`` of ``item`` into ``<out>/<paper>/targets.json`` in place of its old
    rows (the rows of the paper's other registered ``items`` are kept), the rows in the order
    of ``items`` (the registry's): the file does not depend on the order items finish in."""
    path = output_dir(out, key) / "targets.json"
    order = {name: i for i, name in enumerate(items)}
    old = [r for r in stored_targets(path, key) if r["item"] != item and r["item"] in order]
    rows = old + [{k: _jsonable(v) for k, v in t.row().items()} for t in targets]
    rows.sort(key=lambda r: order.get(r["item"], len(order)))  # stable: rows keep their order
    data = {"updated": time.strftime("%Y-%m-%d %H:%M:%S"), "targets": rows}
    write_file(path, json.dumps(data, indent=1).encode())


def check_targets_files(out: Path, keys: set[str]) -> None:
    """Before any work: refuse a ``targets.json`` of a paper about to run that this run would
    merge into but cannot read (corrupt, not a file, or another paper's), naming the file and
    why. Directories of papers not in the registry are never read."""
    for key in sorted(keys):
        path = Path(out) / key / "targets.json"
        mode = lstat_mode(path)
        if not mode or stat.S_ISLNK(mode):
            continue  # absent, or a link: replaced by the new file, never read or followed

        def refuse(why: str, path=path) -> StoreError:
            return StoreError(
                f"{path}: {why}; fluidnet reproduce will not read or overwrite it: move it "
                "away or delete it"
            )

        if not stat.S_ISREG(mode):
            raise refuse("not a regular file")
        try:
            data = json.loads(path.read_bytes().decode())
        except UnicodeDecodeError as exc:
            raise refuse(f"not text ({exc.reason})") from exc
        except ValueError as exc:
            raise refuse(f"not valid JSON ({exc})") from exc
        rows = data.get("targets") if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise refuse("not a fluidnet targets file (no list 'targets')")
        for i, row in enumerate(rows):
            missing = _ROW_FIELDS - set(row) if isinstance(row, dict) else _ROW_FIELDS
            if missing:
                raise refuse(f"row {i} is not a target (missing {', '.join(sorted(missing))})")
            if row["paper"] != key:
                raise refuse(f"row {i} belongs to paper {row['paper']!r}, not {key!r}")


def stored_targets(path: Path, key: str) -> list[dict]:
    """The well-formed rows of paper ``key`` in a ``targets.json`` (none if it is unreadable,
    a link, or not ours)."""
    text = read_regular(path)
    if text is None:
        return []
    try:
        rows = json.loads(text)["targets"]
    except (ValueError, KeyError, TypeError):
        return []
    if not isinstance(rows, list):
        return []
    return [
        r for r in rows if isinstance(r, dict) and _ROW_FIELDS <= set(r) and r.get("paper") == key
    ]


def _status_md(verdict: str) -> str:
    return verdict if verdict in ("pass", "documented mismatch") else f"**{verdict}**"


def write_report(out: Path, papers: dict) -> Path:
    """``REPORT.md``: one row per target of every registered paper (``papers``: key -> paper)
    with results under ``out`` (other directories of ``out`` are not read)."""
    lines = [
        "# fluidnet reproduction report",
        "",
        "Generated by `fluidnet reproduce`. One row per target: the paper's value (printed in",
        "the paper, or derived from its equations independently of fluidnet), ours, the",
        "tolerance and the verdict. A *documented mismatch* is a number known not to be",
        "reproducible, with the reason; it fails the run only if it unexpectedly matches.",
        "",
    ]
    everything: list[dict] = []
    for key in sorted(papers):
        sub = out / key
        if not stat.S_ISDIR(lstat_mode(sub)):
            continue
        registered = set(papers[key].items)
        rows = [r for r in stored_targets(sub / "targets.json", key) if r["item"] in registered]
        if not rows:
            continue
        try:
            updated = str(json.loads(read_regular(sub / "targets.json") or "{}")["updated"])
        except (ValueError, KeyError, TypeError):
            updated = "unknown"
        everything += rows
        lines += [
            f"## {key}: {papers[key].title}",
            "",
            f"{counts(rows)} (updated {updated}).",
            "",
            "| item | where | target | paper | ours | source | tolerance | result | note |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            cells = [
                r.get("item", ""),
                r["ref"],
                r["name"],
                fmt(r["expected"]),
                fmt(r["value"]),
                r["source"],
                tolerance(r["tol"], r["rel"]),
                _status_md(status(bool(r["passed"]), r.get("mismatch", ""))),
                "; ".join(x for x in (r.get("mismatch", ""), r["note"]) if x),
            ]
            lines.append(markdown_row(cells))
        lines.append("")
    lines.insert(7, f"**{counts(everything)}.**\n")
    path = output_dir(out) / "REPORT.md"
    write_file(path, "\n".join(lines).encode())
    return path


def tolerance(tol: float | None, rel: bool) -> str:
    """A tolerance as the report shows it: ``""``, ``"1e-06"`` or ``"0.01 rel"``."""
    return "" if tol is None else f"{tol:g}" + (" rel" if rel else "")


def markdown_row(cells) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

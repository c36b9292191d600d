"""Reproduction registry: each paper module registers figures, tables and checked targets.

A *paper* (``rcp``, ``sbrm``, ...) has *items* (a figure, a table, a group of equations). Running an
item writes ``papers/<paper>/figures/*.png`` and ``papers/<paper>/tables/*.csv`` and records
*targets*: a paper's number (printed, or derived from its equations) next to ours, with a tolerance
and a verdict. :func:`reproduce` runs items, writes ``papers/<paper>/targets.json`` and the combined
``papers/REPORT.md``, and returns a :class:`Report`.

Example
-------
>>> import fluidnet as fn
>>> report = fn.reproduce("rcp:linearization", out="/tmp/papers", progress=False)  # doctest: +SKIP
>>> report.ok  # doctest: +SKIP
True
"""

from __future__ import annotations

import contextlib
import csv
import importlib
import io
import json
import math
import os
import pkgutil
import stat
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..errors import OptionError

__all__ = ["Target", "Context", "Paper", "Report", "paper", "papers", "reproduce"]


_REGISTRY: dict[str, Paper] = {}


@dataclass
class Target:
    """One checked number (or statement) of a paper.

    Attributes
    ----------
    paper : str
        Registry key of the paper.
    ref : str
        Where the number lives in the paper: ``"eq (9)"``, ``"Fig 34"``, ``"Table 6.6.2"``.
    name : str
        What it is.
    expected : float, str or bool
        The paper's value (or a closed form, or a statement).
    value : float, str or bool
        Ours.
    source : str
        ``"printed"`` (the number is printed in the paper) or ``"derived"`` (derived from the
        paper's equations independently of fluidnet; ``note`` says from what).
    tol : float or None
        Tolerance for numbers (``None`` for exact/symbolic/boolean targets).
    rel : bool
        Whether ``tol`` is relative.
    passed : bool
        Whether our value matches the paper's within the tolerance.
    note : str
        Misprint, convention or explanation of a mismatch.
    mismatch : str
        Non-empty when the target is a *documented mismatch*: the paper's number is known, before
        the run, not to be reproducible (a misread plot, a program detail the paper omits), and
        this says why. Such a target does not fail the run while it mismatches, and fails it if
        it unexpectedly matches (then the explanation is stale).
    """

    paper: str
    ref: str
    name: str
    expected: Any
    value: Any
    source: str
    tol: float | None
    rel: bool
    passed: bool
    note: str = ""
    item: str = ""
    mismatch: str = ""

    @property
    def status(self) -> str:
        """``"pass"``, ``"FAIL"``, ``"documented mismatch"`` or ``"UNEXPECTED MATCH"``."""
        return _status(self.passed, self.mismatch)

    @property
    def ok(self) -> bool:
        """True for ``"pass"`` and ``"documented mismatch"``."""
        return self.passed != bool(self.mismatch)

    def row(self) -> dict[str, Any]:
        return asdict(self)


def _status(passed: bool, mismatch: str) -> str:
    if mismatch:
        return "UNEXPECTED MATCH" if passed else "documented mismatch"
    return "pass" if passed else "FAIL"


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


class Context:
    """What a paper item receives: output locations and the ``check`` API.

    Attributes
    ----------
    paper : str
    outdir : pathlib.Path
        ``<out>/<paper>``.
    quick : bool
        True when a reduced (fast) version is requested, e.g. by the tests.
    """

    def __init__(self, paper: str, item: str, out: Path, quick: bool = False):
        self.paper = paper
        self.item = item
        self.out = Path(out)
        self.outdir = self.out / paper
        self.quick = quick
        self.targets: list[Target] = []
        self.files: list[Path] = []

    @property
    def figures_dir(self) -> Path:
        return _output_dir(self.out, self.paper, "figures")

    @property
    def tables_dir(self) -> Path:
        return _output_dir(self.out, self.paper, "tables")

    # ------------------------------------------------------------------ outputs
    def new_figure(self, nrows: int = 1, ncols: int = 1, **kw):
        """A matplotlib ``(Figure, axes)`` pair that does not touch pyplot's global state."""
        from matplotlib.figure import Figure

        kw.setdefault("figsize", (6.4 * ncols, 4.2 * nrows))
        fig = Figure(**{k: v for k, v in kw.items() if k in ("figsize", "dpi")})
        axes = fig.subplots(nrows, ncols, squeeze=True)
        return fig, axes

    def figure(self, name: str, fig, dpi: int = 110) -> Path:
        """Save ``fig`` as ``figures/<name>.png`` and return its path."""
        path = self.figures_dir / f"{_file_name(name)}.png"
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
        _write_file(path, buffer.getvalue())
        try:  # release pyplot-managed figures too
            import matplotlib.pyplot as plt

            plt.close(fig)
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
        self.files.append(path)
        return path

    def table(
        self, name: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None
    ) -> Path:
        """Write ``rows`` (dicts) to ``tables/<name>.csv`` (``None`` → empty cell)."""
        rows = list(rows)
        cols = list(columns) if columns is not None else list(rows[0]) if rows else []
        path = self.tables_dir / f"{_file_name(name)}.csv"
        fh = io.StringIO(newline="")
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="raise")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})
        _write_file(path, fh.getvalue().encode())
        self.files.append(path)
        return path

    # ------------------------------------------------------------------ checks
    def check(
        self,
        ref: str,
        name: str,
        expected: float,
        value: float,
        *,
        tol: float,
        rel: bool = False,
        source: str = "printed",
        note: str = "",
        mismatch: str = "",
    ) -> Target:
        """Compare a number with the paper's: passes when ``|value - expected| <= tol``
        (times ``|expected|`` when ``rel``).

        ``mismatch`` declares, with its reason, a documented mismatch (see :class:`Target`); it
        must be decided before the run, never from the value obtained.
        """
        _check_source(source)
        try:
            v = float(value)
            e = float(expected)
        except (TypeError, ValueError):
            passed = False
            v, e = value, expected
        else:
            bound = tol * abs(e) if rel else tol
            passed = math.isfinite(v) and abs(v - e) <= bound
        return self._add(ref, name, e, v, source, tol, rel, passed, note, mismatch)

    def check_equal(
        self,
        ref: str,
        name: str,
        expected: Any,
        value: Any,
        *,
        source: str = "printed",
        note: str = "",
        mismatch: str = "",
    ) -> Target:
        """Exact comparison (strings, integers, booleans)."""
        _check_source(source)
        return self._add(
            ref, name, expected, value, source, None, False, expected == value, note, mismatch
        )

    def check_expr(
        self,
        ref: str,
        name: str,
        expected,
        value,
        *,
        source: str = "printed",
        note: str = "",
        mismatch: str = "",
    ) -> Target:
        """Symbolic identity ``simplify(value - expected) == 0`` (sympy expressions)."""
        import sympy

        _check_source(source)
        e, v = sympy.sympify(expected), sympy.sympify(value)
        passed = bool(sympy.simplify(v - e) == 0)
        return self._add(ref, name, str(e), str(v), source, None, False, passed, note, mismatch)

    def check_true(
        self,
        ref: str,
        name: str,
        condition: bool,
        *,
        expected: str = "true",
        value: str | None = None,
        source: str = "printed",
        note: str = "",
        mismatch: str = "",
    ) -> Target:
        """A qualitative statement of the paper, checked by ``condition``."""
        _check_source(source)
        return self._add(
            ref,
            name,
            expected,
            value if value is not None else bool(condition),
            source,
            None,
            False,
            bool(condition),
            note,
            mismatch,
        )

    def _add(self, ref, name, expected, value, source, tol, rel, passed, note, mismatch) -> Target:
        t = Target(
            self.paper,
            ref,
            name,
            expected,
            value,
            source,
            tol,
            rel,
            bool(passed),
            note,
            self.item,
            str(mismatch or ""),
        )
        self.targets.append(t)
        return t


# ----------------------------------------------------------------------------- output files
def _output_dir(root: Path, *parts: str) -> Path:
    """``root/parts...``, created as needed; refuses a part that is a symbolic link (or not a
    directory), so that nothing is written outside ``root`` through a link planted in it."""
    d = Path(root)
    d.mkdir(parents=True, exist_ok=True)
    for part in parts:
        d = d / part
        try:
            os.mkdir(d)
        except FileExistsError:
            pass
        st = os.lstat(d)
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise OptionError(
                f"output directory {d} is a symbolic link or not a directory: fluidnet "
                f"reproduce writes only inside {root} and does not follow links; remove it"
            )
    return d


def _write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a new file renamed over it: a link at ``path`` is
    replaced, never followed."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _umask()  # read once, at import (setting it later would race with other threads)


def _file_name(name: str) -> str:
    """A figure or table name as one file name (no directories, no leading dot)."""
    if not name or "/" in name or "\\" in name or name.startswith(".") or "\0" in name:
        raise OptionError(f"output name {name!r} must be a plain file name")
    return name


def _read_regular(path: Path) -> str | None:
    """The text of ``path`` if it is a regular file (not a link), else ``None``."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return path.read_text()


def _check_source(source: str) -> None:
    if source not in ("printed", "derived"):
        raise ValueError(f"target source must be 'printed' or 'derived', got {source!r}")


@dataclass
class Item:
    paper: str
    name: str
    title: str
    func: Callable[[Context], None]


@dataclass
class Paper:
    """A registered paper: key, citation and its items."""

    key: str
    title: str
    citation: str
    items: dict[str, Item] = field(default_factory=dict)

    def item(self, name: str, title: str = "") -> Callable:
        """Decorator registering ``func(ctx)`` as item ``name`` of this paper."""

        def deco(func: Callable[[Context], None]):
            if name in self.items:
                raise ValueError(f"item {name!r} of paper {self.key!r} registered twice")
            self.items[name] = Item(self.key, name, title or name, func)
            return func

        return deco


def paper(key: str, title: str, citation: str) -> Paper:
    """Register (or return the already registered) paper ``key``."""
    if key not in _REGISTRY:
        _REGISTRY[key] = Paper(key, title, citation)
    return _REGISTRY[key]


def papers() -> dict[str, Paper]:
    """All registered papers (imports the paper modules)."""
    import fluidnet.papers as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"fluidnet.papers.{info.name}")
    return dict(_REGISTRY)


@dataclass
class Report:
    """What :func:`reproduce` ran: targets and written files."""

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
            lines.append(f"{key:>8}: {_counts(ts)}")
        for t in self.documented_mismatches:
            lines.append(
                f"  documented mismatch {t.paper} {t.ref} — {t.name}: paper "
                f"{_fmt(t.expected)}, ours {_fmt(t.value)} ({t.mismatch})"
            )
        for t in self.failed:
            lines.append(
                f"  {t.status} {t.paper} {t.ref} — {t.name}: expected {_fmt(t.expected)}, "
                f"got {_fmt(t.value)}" + (f" ({t.note})" if t.note else "")
            )
        for e in self.errors:
            lines.append(f"  ERROR {e}")
        lines.append(
            f"{_counts(self.targets)}, {len(self.errors)} item errors, "
            f"{len(self.files)} files, {self.seconds:.1f} s"
        )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _counts(targets) -> str:
    """``"157/160 targets pass, 3 documented mismatches"`` (and failures, if any)."""
    rows = [t.row() if isinstance(t, Target) else t for t in targets]
    statuses = [_status(bool(r["passed"]), r.get("mismatch", "")) for r in rows]
    out = f"{statuses.count('pass')}/{len(rows)} targets pass"
    if statuses.count("documented mismatch"):
        out += f", {statuses.count('documented mismatch')} documented mismatches"
    bad = len(rows) - statuses.count("pass") - statuses.count("documented mismatch")
    if bad:
        out += f", {bad} FAIL"
    return out


def _select(names: Iterable[str]) -> list[Item]:
    reg = papers()
    names = list(names)
    if not names or names == ["all"] or "--all" in names:
        return [it for p in reg.values() for it in p.items.values()]
    out: list[Item] = []
    for n in names:
        key, _, item = n.partition(":")
        if key not in reg:
            raise KeyError(f"unknown paper {key!r}; registered: {', '.join(sorted(reg))}")
        p = reg[key]
        if item:
            if item not in p.items:
                raise KeyError(f"paper {key!r} has no item {item!r}; items: {', '.join(p.items)}")
            out.append(p.items[item])
        else:
            out.extend(p.items.values())
    return out


def reproduce(
    *names: str, out: str | Path = "papers", quick: bool = False, progress: bool = True
) -> Report:
    """Regenerate papers' figures and tables and check their targets.

    Parameters
    ----------
    *names : str
        Paper keys (``"rcp"``), single items (``"rcp:linearization"``), or nothing / ``"all"``
        for everything registered.
    out : path
        Output root; each paper writes under ``<out>/<paper>/`` and ``<out>/REPORT.md`` lists
        every target of every paper with results on disk.
    quick : bool
        Reduced grids (used by the tests); targets that need the full grids are still checked
        where the reduced run supports them.
    progress : bool
        Print one line per item.

    Returns
    -------
    Report
    """
    t0 = time.perf_counter()
    items = _select(names)
    out = Path(out)
    targets: list[Target] = []
    files: list[Path] = []
    errors: list[str] = []
    per_paper: dict[str, list[Target]] = {}
    _check_targets_files(out, {it.paper for it in items})
    try:
        for it in items:
            ctx = Context(it.paper, it.name, out, quick=quick)
            t1 = time.perf_counter()
            try:
                it.func(ctx)
            except Exception as exc:  # noqa: BLE001 - reported, not swallowed
                msg = f"{it.paper}:{it.name} raised {type(exc).__name__}: {exc}"
                errors.append(msg)
                if progress:
                    traceback.print_exc(file=sys.stderr)
            dt = time.perf_counter() - t1
            targets.extend(ctx.targets)
            files.extend(ctx.files)
            per_paper.setdefault(it.paper, []).extend(ctx.targets)
            # written as each item finishes (atomically): an interrupted run keeps what finished
            _write_targets(out, it.paper, ctx.targets, items=[it.name])
            if progress:
                print(
                    f"[{it.paper}:{it.name}] {_counts(ctx.targets)}, "
                    f"{len(ctx.files)} files, {dt:.1f} s",
                    flush=True,
                )
    finally:
        if per_paper:
            _write_report(out)
    report = Report(targets, files, errors, time.perf_counter() - t0)
    if progress:
        print(report.summary(), flush=True)
    return report


def _jsonable(v: Any) -> Any:
    if isinstance(v, (bool, int, str)) or v is None:
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    return str(v)


def _write_targets(out: Path, key: str, targets: list[Target], items: list[str]) -> None:
    """Merge this run's targets into ``<out>/<paper>/targets.json`` (the targets of the paper's
    other registered items are kept)."""
    path = _output_dir(out, key) / "targets.json"
    registered = set(papers()[key].items)
    old = [
        r
        for r in _stored_targets(path, key)
        if r.get("item") not in items and r.get("item") in registered
    ]
    rows = old + [{k: _jsonable(v) for k, v in t.row().items()} for t in targets]
    data = {"updated": time.strftime("%Y-%m-%d %H:%M:%S"), "targets": rows}
    _write_file(path, json.dumps(data, indent=1).encode())


_ROW_FIELDS = {f.name for f in fields(Target)}


def _check_targets_files(out: Path, keys: set[str]) -> None:
    """Before any work: refuse a ``targets.json`` of a paper about to run that this run would
    merge into but cannot read (corrupt, not a file, or another paper's), naming the file and
    why. Directories of papers not in the registry are never read."""
    from ..errors import StoreError

    for key in sorted(keys):
        path = Path(out) / key / "targets.json"
        mode = _lstat_mode(path)
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


def _stored_targets(path: Path, key: str) -> list[dict]:
    """The well-formed rows of paper ``key`` in a ``targets.json`` (none if it is unreadable,
    a link, or not ours)."""
    text = _read_regular(path)
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


def _status_md(status: str) -> str:
    return status if status in ("pass", "documented mismatch") else f"**{status}**"


def _write_report(out: Path) -> Path:
    """``REPORT.md``: one row per target of every registered paper with results under ``out``
    (other directories of ``out`` are not read)."""
    reg = papers()
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
    for key in sorted(reg):
        sub = out / key
        if not stat.S_ISDIR(_lstat_mode(sub)):
            continue
        rows = _stored_targets(sub / "targets.json", key)
        registered = set(reg[key].items)
        rows = [r for r in rows if r.get("item") in registered]
        if not rows:
            continue
        try:
            updated = str(json.loads(_read_regular(sub / "targets.json") or "{}")["updated"])
        except (ValueError, KeyError, TypeError):
            updated = "unknown"
        title = reg[key].title
        everything += rows
        lines += [
            f"## {key}: {title}",
            "",
            f"{_counts(rows)} (updated {updated}).",
            "",
            "| item | where | target | paper | ours | source | tolerance | result | note |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            tol = "" if r["tol"] is None else (f"{r['tol']:g}" + (" rel" if r["rel"] else ""))
            cells = [
                r.get("item", ""),
                r["ref"],
                r["name"],
                _fmt(r["expected"]),
                _fmt(r["value"]),
                r["source"],
                tol,
                _status_md(_status(bool(r["passed"]), r.get("mismatch", ""))),
                "; ".join(x for x in (r.get("mismatch", ""), r["note"]) if x),
            ]
            lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    lines.insert(7, f"**{_counts(everything)}.**\n")
    path = _output_dir(out) / "REPORT.md"
    _write_file(path, "\n".join(lines).encode())
    return path


def _lstat_mode(path: Path) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0

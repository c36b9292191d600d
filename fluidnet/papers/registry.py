"""Reproduction registry: papers, their items, and :func:`reproduce`, which runs the items and
checks what they return against the papers' target tables.

A *paper* (``rcp``, ``sbrm``, ...) is a package ``fluidnet/papers/<paper>/`` with

- ``data.py``: the paper's printed values, values derived from its equations independently
  of fluidnet, and the parameter grids (nothing in it is computed by fluidnet);
- ``targets.py``: ``TARGETS``, its target table: item name -> rows made by
  :func:`~fluidnet.papers.targets.near`, :func:`~fluidnet.papers.targets.equal`,
  :func:`~fluidnet.papers.targets.identity` and :func:`~fluidnet.papers.targets.claim`;
- one module per group of items; an *item* (a figure, a table, a group of equations) is a
  function named like its entry in the table that writes figures and tables through its
  :class:`~fluidnet.papers.output.Context` and returns its values, keyed like its rows.

:func:`reproduce` runs items, checks their values against the table, writes
``<out>/<paper>/targets.json`` and the combined ``<out>/REPORT.md``, and returns a
:class:`~fluidnet.papers.report.Report`. ``python -m fluidnet.papers.readme`` writes each
paper's README table of targets from the same table.

Adding an item
--------------
Add its rows to the paper's table, and register a function of the same name that returns a
value for every row::

    # fluidnet/papers/rcp/targets.py
    TARGETS = {
        ...,
        "hopf_onset": [
            near("alpha*", "Fig 40", "onset alpha* at beta = 0.4", 1.3, tol=0.05),
            near("alpha* roots", "eq (15)", "onset alpha* = crossing of the characteristic "
                 "roots", RUN, rel=1e-6, source=DERIVED, note="second method: ..."),
            claim("supercritical", "Sec V", "the Hopf bifurcation is supercritical",
                  source=DERIVED),
            near("period", "Fig 41", "period of the cycle at alpha = 1.5 [s]", 2.4, tol=0.05,
                 quick=False, mismatch="why the printed value cannot be reproduced"),
        ],
    }

    # fluidnet/papers/rcp/hopf_onset.py (imported by fluidnet/papers/rcp/__init__.py)
    @PAPER.item(title="Onset of the limit cycle", quick={"n_points": 10})
    def hopf_onset(ctx: Context, n_points: int = 40) -> dict:
        ...  # compute; write figures and tables with ctx.figure() and ctx.table()
        return {
            "alpha*": alpha_star,
            "alpha* roots": Value(alpha_star, expected=alpha_from_roots),
            "supercritical": Value(hp.lyapunov < 0, shown=f"l1 = {hp.lyapunov:.3g}"),
            "period": period,  # not checked in a quick run, which may leave it out
        }

The rows' vocabulary (:func:`~fluidnet.papers.targets.near`, ``equal``, ``identity``,
``claim``, ``RUN``, ``DERIVED``, :class:`~fluidnet.papers.targets.Value`) is described in
:mod:`fluidnet.papers.targets`. Nothing in a row is computed by fluidnet: a reference that a
second method computes in the run is ``RUN``, and the item returns it with the value; a
documented mismatch (``mismatch=``) is declared with its reason before the run, and fails the
run if it ever matches. The function's keyword defaults are the full sizes; ``quick`` declares
the reduced ones that a quick run (the tests) passes instead. A row that only the full sizes
can check says ``quick=False``. ``python -m fluidnet.papers.readme`` then rewrites the paper's
README table (a test fails while it is stale). A new paper is a new package with ``PAPER =
paper(key, title=, citation=, targets=TARGETS)`` in its ``__init__.py``, which imports its item
modules; it is found automatically.

Example
-------
>>> import fluidnet as fn
>>> report = fn.reproduce("rcp:linearization", out="/tmp/papers", progress=False)  # doctest: +SKIP
>>> report.ok  # doctest: +SKIP
True
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import OptionError
from .output import Context
from .report import Report, check_targets_files, counts, write_report, write_targets
from .targets import Target, TargetRow, check

__all__ = ["Context", "Paper", "Report", "Target", "paper", "papers", "reproduce"]


_REGISTRY: dict[str, Paper] = {}


@dataclass
class Item:
    """A registered item: the function and the sizes of a quick run."""

    paper: str
    name: str
    title: str
    func: Callable[..., Mapping[Any, Any] | None]
    quick: dict[str, Any]


@dataclass
class Paper:
    """A registered paper: key, citation, its target table and its items."""

    key: str
    title: str
    citation: str
    targets: dict[str, list[TargetRow]] = field(default_factory=dict)
    items: dict[str, Item] = field(default_factory=dict)

    def item(self, *, title: str, quick: Mapping[str, Any] | None = None) -> Callable:
        """Decorator registering ``func(ctx, **sizes)`` as the item named like the function.

        ``quick`` gives the keyword arguments (sizes) of a quick run; the function's defaults
        are the full sizes.
        """

        def deco(func: Callable):
            name = func.__name__
            if name in self.items:
                raise OptionError(f"item {name!r} of paper {self.key!r} registered twice")
            if name not in self.targets:
                raise OptionError(
                    f"item {name!r} of paper {self.key!r} has no entry in the paper's target "
                    "table (TARGETS in its targets.py)"
                )
            params = inspect.signature(func).parameters
            unknown = [k for k in quick or {} if k not in params or k == next(iter(params))]
            if unknown:
                raise OptionError(
                    f"item {name!r}: quick sizes {unknown} are not keyword arguments of it"
                )
            self.items[name] = Item(self.key, name, title, func, dict(quick or {}))
            return func

        return deco


def paper(key: str, title: str, citation: str, targets: Mapping[str, Sequence[TargetRow]]) -> Paper:
    """Register (or return the already registered) paper ``key`` with its target table."""
    if key not in _REGISTRY:
        table = {item: list(rows) for item, rows in targets.items()}
        for item, rows in table.items():
            keys = [r.key for r in rows]
            dup = {k for k in keys if keys.count(k) > 1}
            if dup:
                raise OptionError(f"paper {key!r}, item {item!r}: target keys {dup} repeated")
        _REGISTRY[key] = Paper(key, title, citation, table)
    return _REGISTRY[key]


def papers() -> dict[str, Paper]:
    """All registered papers (imports the paper packages); each table entry has its item."""
    import fluidnet.papers as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.ispkg:
            importlib.import_module(f"fluidnet.papers.{info.name}")
    for p in _REGISTRY.values():
        missing = [name for name in p.targets if name not in p.items]
        if missing:
            raise OptionError(f"paper {p.key!r}: no item registered for {missing} of its table")
    return dict(_REGISTRY)


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


def run_item(it: Item, ctx: Context, quick: bool = False) -> list[Target]:
    """Run one item and check its values against its rows.

    Raises what the item raises, and :class:`~fluidnet.errors.OptionError` naming the rows it
    returned no value for and the values it returned without a row.
    """
    values = it.func(ctx, **(it.quick if quick else {}))
    rows = _REGISTRY[it.paper].targets[it.name]
    targets, problems = check(it.paper, it.name, rows, values, quick)
    if problems:
        raise OptionError("; ".join(problems))
    return targets


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
        Run each item with its declared quick sizes (used by the tests); the targets that need
        the full sizes are not checked.
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
    check_targets_files(out, {it.paper for it in items})
    ran = False
    try:
        for it in items:
            t1 = time.perf_counter()
            ctx = Context(it.paper, it.name, out)
            done: list[Target] = []
            try:
                done = run_item(it, ctx, quick)
            except Exception as exc:  # noqa: BLE001 - reported, not swallowed
                errors.append(f"{it.paper}:{it.name} raised {type(exc).__name__}: {exc}")
                if progress:
                    traceback.print_exc(file=sys.stderr)
            ran = True
            targets += done
            files += ctx.files
            # written as each item finishes (atomically): an interrupted run keeps what finished
            write_targets(out, it.paper, it.name, done, set(_REGISTRY[it.paper].items))
            if progress:
                print(
                    f"[{it.paper}:{it.name}] {counts(done)}, {len(ctx.files)} files, "
                    f"{time.perf_counter() - t1:.1f} s",
                    flush=True,
                )
    finally:
        if ran:
            write_report(out, papers())
    report = Report(targets, files, errors, time.perf_counter() - t0)
    if progress:
        print(report.summary(), flush=True)
    return report

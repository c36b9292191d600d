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

Packet items
------------
An item that runs ns-3 calls :func:`fluidnet.packet.require_ns3` first, runs its scenarios as
one batch (:func:`fluidnet.packet.simulate_many`, or the experiments of
:mod:`fluidnet.packet.experiments`: a Dask cluster when ``fluidnet reproduce --scheduler`` names
one, and the content-keyed run store, so a rerun reads unchanged runs back), takes its
measured tail from the fluid time constants (:func:`fluidnet.packet.transient`), and shows each
packet figure beside the fluid figure it tests::

    @PAPER.item(
        title="...",
        pairs=[figure_pair("packet_queue", "fluid_queue", "what the reader compares",
                           fluid_item="the_fluid_item")],
    )

The paper's README and documentation page then show the two figures side by side
(:func:`figure_pair`); the run fails the item if it did not write its packet figure.

Runs of many items
------------------
``reproduce(jobs=N)`` (``fluidnet reproduce -j N``) runs items in worker processes
(:mod:`fluidnet.papers.parallel`); an item whose code, environment and files are unchanged since
its last run is read back from ``<out>/.cache`` (:mod:`fluidnet.papers.itemstore`).

Example
-------
>>> import fluidnet as fn
>>> report = fn.reproduce("rcp:linearization", out="/tmp/papers", progress=False)  # doctest: +SKIP
>>> report.ok  # doctest: +SKIP
True
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import pkgutil
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import OptionError
from .output import Context
from .report import Report, check_targets_files, counts, write_report, write_targets
from .targets import Target, TargetRow, check

__all__ = [
    "Context",
    "FigurePair",
    "Paper",
    "Report",
    "Target",
    "figure_pair",
    "paper",
    "papers",
    "reproduce",
]


_REGISTRY: dict[str, Paper] = {}


@dataclass(frozen=True)
class FigurePair:
    """A packet figure and the fluid prediction it is read against (see :func:`figure_pair`).

    Attributes
    ----------
    packet : str
        Name of the packet (ns-3) figure the item writes (``ctx.figure(packet, fig)``).
    fluid : str
        Name of the fluid figure of the same paper.
    caption : str
        What the pair shows, in a sentence.
    fluid_item : str
        The item that writes the fluid figure (empty: the same item).
    """

    packet: str
    fluid: str
    caption: str
    fluid_item: str = ""


def figure_pair(packet: str, fluid: str, caption: str, *, fluid_item: str = "") -> FigurePair:
    """A packet figure shown beside its fluid prediction (``pairs=`` of :meth:`Paper.item`).

    The paper's README (``python -m fluidnet.papers.readme``) and its page of the documentation
    show the two figures side by side under ``caption``. After the item runs, the registry
    checks that it wrote the packet figure (and the fluid one, when no ``fluid_item`` writes
    it).

    Parameters
    ----------
    packet : str
        Name of the packet figure (as given to ``ctx.figure``, without ``.png``).
    fluid : str
        Name of the fluid figure.
    caption : str
        One sentence: what the reader compares.
    fluid_item : str, optional
        The item of the same paper that writes the fluid figure (default: the packet item).

    Returns
    -------
    FigurePair
    """
    for what, name in (("packet", packet), ("fluid", fluid)):
        if not name or "/" in name or name.endswith(".png"):
            raise OptionError(f"figure_pair: {what} = {name!r} must be a figure name (no .png)")
    if not caption:
        raise OptionError("figure_pair: give a caption (what the two figures show)")
    return FigurePair(packet, fluid, caption, fluid_item)


@dataclass
class Item:
    """A registered item: the function, the sizes of a quick run and its figure pairs."""

    paper: str
    name: str
    title: str
    func: Callable[..., Mapping[Any, Any] | None]
    quick: dict[str, Any]
    pairs: tuple[FigurePair, ...] = ()


@dataclass
class Paper:
    """A registered paper: key, citation, its target table and its items."""

    key: str
    title: str
    citation: str
    targets: dict[str, list[TargetRow]] = field(default_factory=dict)
    items: dict[str, Item] = field(default_factory=dict)

    def item(
        self,
        *,
        title: str,
        quick: Mapping[str, Any] | None = None,
        pairs: Sequence[FigurePair] = (),
    ) -> Callable:
        """Decorator registering ``func(ctx, **sizes)`` as the item named like the function.

        ``quick`` gives the keyword arguments (sizes) of a quick run; the function's defaults
        are the full sizes. ``pairs`` (:func:`figure_pair`) are the item's packet figures
        with the fluid figures they are read against.
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
            for pair in pairs:
                if not isinstance(pair, FigurePair):
                    raise OptionError(f"item {name!r}: pairs holds {pair!r}, not a figure_pair")
                if pair.fluid_item and pair.fluid_item not in self.targets:
                    raise OptionError(
                        f"item {name!r}: figure pair {pair.packet!r} names fluid_item "
                        f"{pair.fluid_item!r}, which is not an item of paper {self.key!r}"
                    )
            self.items[name] = Item(self.key, name, title, func, dict(quick or {}), tuple(pairs))
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
    written = {p.stem for p in ctx.files if p.suffix == ".png"}
    for pair in it.pairs:
        own = [pair.packet] + ([] if pair.fluid_item else [pair.fluid])
        missing = [name for name in own if name not in written]
        if missing:
            problems.append(
                f"{it.paper}:{it.name} did not write the figure(s) {missing} of its figure pair "
                f"{pair.packet!r}"
            )
    if problems:
        raise OptionError("; ".join(problems))
    return targets


def reproduce(
    *names: str,
    out: str | Path = "papers",
    quick: bool = False,
    progress: bool = True,
    jobs: int = 1,
    reuse: bool = True,
    store: str | Path | None = None,
    scheduler: str | None = None,
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
        Print one line per item (and, with ``jobs > 1``, what the item printed, after it).
    jobs : int
        Items run at the same time, each in a worker process (:mod:`fluidnet.papers.parallel`);
        1 runs them here, one after the other. The targets, report and figures do not depend
        on it.
    reuse : bool
        Read back what the stores hold: an item whose code, environment and files are as
        when it last ran is not run again (:mod:`fluidnet.papers.itemstore`), and an ns-3 run
        already made is read back (:mod:`fluidnet.packet.store`). ``False`` runs everything
        (the records are written again).
    store : path, optional
        Directory of both stores (default ``<out>/.cache``): item records in ``items/``, ns-3
        runs in ``packet-runs/`` (unless ``$FLUIDNET_PACKET_STORE`` names another directory).
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://host:8786``; default ``$FLUIDNET_SCHEDULER``):
        the items' ns-3 runs and agreement maps run there, one task per run
        (:func:`fluidnet.packet.batch.packet_executor`).

    Returns
    -------
    Report

    Raises
    ------
    KeyError
        For an unknown paper or item.
    OptionError
        For a bad ``jobs``.
    StoreError
        For a ``targets.json`` under ``out`` that cannot be read, before any work.
    """
    from .itemstore import ItemStore, item_key
    from .parallel import Outcome, attempt, run_items

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise OptionError(f"jobs = {jobs!r} must be a whole number >= 1")
    t0 = time.perf_counter()
    items = _select(names)
    out = Path(out)
    check_targets_files(out, {it.paper for it in items})
    root = Path(store) if store is not None else out / ".cache"
    records = ItemStore(root, out)
    environ = {"FLUIDNET_PACKET_STORE": str(root / "packet-runs") if reuse else ""}
    if os.environ.get("FLUIDNET_PACKET_STORE") and reuse:
        environ.pop("FLUIDNET_PACKET_STORE")  # the user's own store
    if scheduler is not None:
        environ["FLUIDNET_SCHEDULER"] = str(scheduler)
    results: dict[int, Outcome] = {}
    ran = False

    def finish(index: int, outcome: Outcome, reused: str = "") -> None:
        nonlocal ran
        it = items[index]
        ran = True
        results[index] = outcome
        order = list(_REGISTRY[it.paper].items)
        # written as each item finishes (atomically): an interrupted run keeps what finished
        write_targets(out, it.paper, it.name, outcome.targets, order)
        if progress:
            how = reused or f"{outcome.seconds:.1f} s"
            print(
                f"[{it.paper}:{it.name}] {counts(outcome.targets)}, {len(outcome.files)} "
                f"files, {how}",
                flush=True,
            )
            if outcome.log.strip():
                print(outcome.log.rstrip("\n"), flush=True)
        if not reused and outcome.error is None and all(t.ok for t in outcome.targets):
            records.put(it, quick, keys[index], outcome.targets, outcome.files, outcome.seconds)

    keys = [item_key(it, quick) for it in items]
    with _environment(environ):
        try:
            todo = []
            for index, it in enumerate(items):
                found = records.get(it, quick, keys[index]) if reuse else None
                if found is None:
                    todo.append(index)
                    continue
                outcome = Outcome(found.targets, found.files, seconds=0.0)
                finish(
                    index,
                    outcome,
                    f"reused (unchanged since {found.created}, took {found.seconds:.1f} s)",
                )
            if jobs == 1 or len(todo) <= 1:
                for index in todo:
                    outcome = attempt(items[index], out, quick, run_item)
                    if outcome.traceback and progress:
                        sys.stderr.write(outcome.traceback)
                    finish(index, outcome)
            else:
                run_items(
                    [items[i] for i in todo],
                    out,
                    quick,
                    min(jobs, len(todo)),
                    lambda k, outcome: finish(todo[k], outcome),
                    run_item,
                )
        finally:
            if ran:
                write_report(out, papers())
    targets: list[Target] = []
    files: list[Path] = []
    errors: list[str] = []
    for index in sorted(results):
        targets += results[index].targets
        files += results[index].files
        if results[index].error:
            errors.append(results[index].error or "")
    report = Report(targets, files, errors, time.perf_counter() - t0)
    if progress:
        print(report.summary(), flush=True)
    return report


@contextlib.contextmanager
def _environment(values: Mapping[str, str]):
    """Environment variables set inside the block (the workers forked in it inherit them)."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

"""Targets as data: the rows of a paper's target table, and how a value is checked against one.

Each paper declares every number (or statement) it checks in one table,
``fluidnet/papers/<paper>/targets.py``: a dict from item name to a list of rows, each made by
one of four constructors:

=================  ======================================================================
:func:`near`       a number within ``tol`` (absolute) or ``rel`` (relative) of ``expected``
:func:`equal`      an exact value: an integer, a string, a boolean
:func:`identity`   a sympy expression, checked by ``simplify(value - expected) == 0``
:func:`claim`      a statement of the paper; the item decides whether it holds
=================  ======================================================================

A row names the target (``ref``, ``name``), the paper's value (``expected``), whether that
value is printed in the paper or derived from its equations independently of fluidnet
(``source``), a ``note``, and, for a number the paper prints but that cannot be reproduced, the
reason as ``mismatch``. The item of the same name computes the values and returns them in a
dict keyed like the rows; :func:`check` pairs each row with its value. Nothing in a row is
computed by fluidnet, and a documented mismatch is declared before the run, never decided from
the value obtained: it does not fail the run while it mismatches, and fails it if it
unexpectedly matches (then the explanation is stale).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import OptionError

__all__ = [
    "DERIVED",
    "RUN",
    "TargetRow",
    "Value",
    "Target",
    "near",
    "equal",
    "identity",
    "claim",
    "check",
]

_SOURCES = ("printed", "derived")
#: ``source=DERIVED``: the expected value is derived from the paper's equations independently of
#: fluidnet (the note says from what), not printed in it.
DERIVED = "derived"


class _FromRun:
    """The cell of a row whose number the run supplies (see :data:`RUN`)."""

    def __repr__(self) -> str:
        return "RUN"


#: A cell (``expected=`` or ``tol=`` of :func:`near`) that the run supplies with the value, as
#: ``Value(x, expected=...)`` or ``Value(x, tol=...)``: for a reference computed by a second,
#: independent method in the same run, or a statistical tolerance from the run's own standard
#: error. The row's note says how.
RUN = _FromRun()


@dataclass(frozen=True)
class TargetRow:
    """One row of a paper's target table (made by :func:`near`, :func:`equal`,
    :func:`identity` or :func:`claim`).

    Attributes
    ----------
    key : hashable
        What the item returns the value under (a string or a tuple), unique within the item.
    ref, name : str
        Where the number lives in the paper (``"eq (9)"``, ``"Table 6.6.2"``) and what it is.
    expected : float, int, str, bool or sympy expression
        The paper's value (or a closed form, or the statement checked).
    kind : str
        ``"near"``, ``"equal"``, ``"identity"`` or ``"claim"``.
    tol : float or None
        Tolerance of a ``"near"`` row; relative to ``|expected|`` when ``rel``.
    rel : bool
    source : str
        ``"printed"`` or ``"derived"`` (the note says from what).
    note : str
        Misprint, convention or explanation. A ``{}`` in it is filled with the note the item
        returns with the value (:class:`Value`), for what only the run knows.
    mismatch : str
        Non-empty for a documented mismatch: why the paper's value cannot be reproduced.
    quick : bool
        Whether the row is checked in a quick run (``False``: it needs the full sizes).
    """

    key: Hashable
    ref: str
    name: str
    expected: Any
    kind: str
    tol: float | None = None
    rel: bool = False
    source: str = "printed"
    note: str = ""
    mismatch: str = ""
    quick: bool = True

    def __post_init__(self):
        if self.source not in _SOURCES:
            raise OptionError(
                f"target {self.name!r}: source must be 'printed' or 'derived', got {self.source!r}"
            )
        if (
            self.kind == "near"
            and self.tol is not RUN
            and not (self.tol is not None and self.tol >= 0)
        ):
            raise OptionError(f"target {self.name!r}: a tolerance tol >= 0 (or rel) is needed")


def near(
    key: Hashable,
    ref: str,
    name: str,
    expected: float,
    *,
    tol: float | None = None,
    rel: float | None = None,
    **kw: Any,
) -> TargetRow:
    """A number that passes when ``|value - expected| <= tol`` (absolute ``tol=``) or
    ``<= rel |expected|`` (relative ``rel=``); a value that is not a finite number fails.

    ``kw``: ``source``, ``note``, ``mismatch``, ``quick`` (see :class:`TargetRow`).
    """
    if (tol is None) == (rel is None):
        raise OptionError(f"target {name!r}: give exactly one of tol= and rel=")
    return TargetRow(
        key, ref, name, expected, "near", tol if rel is None else rel, rel is not None, **kw
    )


def equal(key: Hashable, ref: str, name: str, expected: Any, **kw: Any) -> TargetRow:
    """A value that passes when ``value == expected`` (integers, strings, booleans)."""
    return TargetRow(key, ref, name, expected, "equal", **kw)


def identity(key: Hashable, ref: str, name: str, expected: Any, **kw: Any) -> TargetRow:
    """A sympy expression that passes when ``simplify(value - expected) == 0``."""
    return TargetRow(key, ref, name, expected, "identity", **kw)


def claim(key: Hashable, ref: str, name: str, expected: str = "true", **kw: Any) -> TargetRow:
    """A qualitative statement of the paper (``expected`` describes it); the item returns
    whether it holds, as a bool or as ``Value(holds, shown=...)``."""
    return TargetRow(key, ref, name, expected, "claim", **kw)


@dataclass(frozen=True)
class Value:
    """What an item returns for a row when the report should show more than the value.

    Parameters
    ----------
    value : any
        The value checked (for a claim: whether the statement holds).
    shown : any, optional
        What the report shows as ours instead of ``value`` (e.g. ``"34/36"`` for a claim).
    note : str or tuple of str, optional
        Fills the ``{}`` of the row's note, in order (e.g. a root the run found).
    expected : float or str, optional
        The reference of a row declared ``expected=RUN``, or the text filling the ``{}`` of a
        claim's statement (e.g. ``"<= {}"`` with a bound a second computation gives).
    tol : float, optional
        The tolerance of a row declared ``tol=RUN``.
    name : str, optional
        Fills the ``{}`` of the row's name (e.g. the delay where an oscillation set in).
    """

    value: Any
    shown: Any = None
    note: str | tuple[str, ...] | None = None
    expected: Any = None
    tol: float | None = None
    name: str | None = None


@dataclass
class Target:
    """One checked row: the paper's value next to ours, with the verdict.

    Attributes
    ----------
    paper, item, ref, name, expected, source, tol, rel, note, mismatch
        As in the table (:class:`TargetRow`).
    value : float, str or bool
        Ours.
    passed : bool
        Whether our value matches the paper's within the tolerance.
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
        return status(self.passed, self.mismatch)

    @property
    def ok(self) -> bool:
        """True for ``"pass"`` and ``"documented mismatch"``."""
        return self.passed != bool(self.mismatch)

    def row(self) -> dict[str, Any]:
        return asdict(self)


def status(passed: bool, mismatch: str) -> str:
    """The verdict: a documented mismatch fails the run only if it unexpectedly matches."""
    if mismatch:
        return "UNEXPECTED MATCH" if passed else "documented mismatch"
    return "pass" if passed else "FAIL"


def check(
    paper: str, item: str, rows: Sequence[TargetRow], values: Mapping, quick: bool = False
) -> tuple[list[Target], list[str]]:
    """Check an item's returned ``values`` against its ``rows``, in the table's order.

    Rows not checked in a quick run (``quick=False``) are skipped when ``quick``. Returns the
    targets and the problems of the item's answer (a row without a value, which also fails as
    a target, or a value without a row).
    """
    problems = []
    values = dict(values or {})
    targets = []
    for row in rows:
        if quick and not row.quick:
            values.pop(row.key, None)
            continue
        if row.key in values:
            try:
                targets.append(_checked(paper, item, row, values.pop(row.key)))
            except OptionError as exc:
                problems.append(f"{paper}:{item}: {exc}")
                targets.append(_target(paper, item, row, row.expected, "bad value", False, ""))
        else:
            problems.append(f"{paper}:{item} returned no value for target {row.key!r}")
            targets.append(_target(paper, item, row, row.expected, "no value", False, row.note))
    problems += [f"{paper}:{item} returned {k!r}, which is not in its target table" for k in values]
    return targets, problems


def _checked(paper: str, item: str, row: TargetRow, got: Any) -> Target:
    got = got if isinstance(got, Value) else Value(got)
    note = _fill(row, "note", row.note, got.note)
    expected, tol = _from_run(row, "expected", got.expected), _from_run(row, "tol", got.tol)
    if row.kind == "claim":
        expected = _fill(row, "statement", row.expected, got.expected)
    name = _fill(row, "name", row.name, got.name)
    shown, got = got.shown, got.value
    if row.kind == "near":
        try:
            v, e = float(got), float(expected)
        except (TypeError, ValueError):
            passed, v, e = False, got, expected
        else:
            bound = tol * abs(e) if row.rel else tol
            passed = math.isfinite(v) and abs(v - e) <= bound
        expected, got = e, v
    elif row.kind == "equal":
        passed = expected == got
    elif row.kind == "identity":
        import sympy

        e, v = sympy.sympify(expected), sympy.sympify(got)
        passed = bool(sympy.simplify(v - e) == 0)
        expected, got = str(e), str(v)
    else:  # claim
        passed = bool(got)
        got = bool(got)
    value = got if shown is None else shown
    return _target(paper, item, row, expected, value, passed, note, tol, name)


def _from_run(row: TargetRow, what: str, given: Any) -> Any:
    declared = getattr(row, what)
    if declared is RUN and given is None:
        raise OptionError(f"target {row.name!r}: its {what} comes from the run; none was given")
    if declared is not RUN and given is not None and row.kind != "claim":
        raise OptionError(f"target {row.name!r}: the item gave a {what}, the table has one")
    return given if declared is RUN else declared


def _fill(row: TargetRow, what: str, text: str, fill: str | tuple[str, ...] | None) -> str:
    """``text`` with its ``{}`` replaced, in order, by ``fill`` (a string or a tuple)."""
    fills = () if fill is None else (fill,) if isinstance(fill, str) else tuple(fill)
    if text.count("{}") != len(fills):
        raise OptionError(
            f"target {row.name!r}: its {what} has {text.count('{}')} {{}} for the item to fill, "
            f"the item gave {fills}"
        )
    for f in fills:
        text = text.replace("{}", f, 1)
    return text


def _target(paper, item, row, expected, value, passed, note, tol=None, name=None) -> Target:
    tol = row.tol if tol is None else tol
    return Target(
        paper, row.ref, name or row.name, expected, value, row.source, None if tol is RUN else tol,
        row.rel, bool(passed), note, item, row.mismatch,
    )  # fmt: skip

"""TEMPORARY: the old ``ctx.check*`` API for papers not yet converted to target tables.

Removed once every paper declares its targets in a table.
"""

from __future__ import annotations

import math
from typing import Any

from .output import Context
from .targets import Target


class LegacyContext(Context):
    def __init__(self, paper: str, item: str, out, quick: bool = False):
        super().__init__(paper, item, out)
        self.quick = quick
        self.targets: list[Target] = []

    def check(
        self, ref, name, expected, value, *, tol, rel=False, source="printed", note="", mismatch=""
    ):
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

    def check_equal(self, ref, name, expected, value, *, source="printed", note="", mismatch=""):
        return self._add(
            ref, name, expected, value, source, None, False, expected == value, note, mismatch
        )

    def check_expr(self, ref, name, expected, value, *, source="printed", note="", mismatch=""):
        import sympy

        e, v = sympy.sympify(expected), sympy.sympify(value)
        passed = bool(sympy.simplify(v - e) == 0)
        return self._add(ref, name, str(e), str(v), source, None, False, passed, note, mismatch)

    def check_true(
        self,
        ref,
        name,
        condition,
        *,
        expected="true",
        value: Any = None,
        source="printed",
        note="",
        mismatch="",
    ):
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

    def _add(self, ref, name, expected, value, source, tol, rel, passed, note, mismatch):
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

"""How generated statements are written: Python for numba, and C.

Both backends print the same symbolic preparation (:mod:`fluidnet.codegen.arrayform`) through
the same statement generator (:mod:`fluidnet.codegen.statements`); a *language* object says how
a statement, a loop, a table or a temporary array is written (:class:`PyLang`,
:class:`CLang`), and its printer writes expressions with the same arithmetic:

* numba (:class:`NumbaPrinter`): ``math`` functions, floats for rationals;
* C (:class:`CPrinter`): integer powers by the repeated squaring numba uses, ``max``/``min``
  with Python's rule (an argument replaces the running value only when strictly
  greater/smaller), ``Heaviside`` with its value at zero, ``sign``, Python's ``%``, rationals
  as doubles (the helper functions ``fn_*`` are defined by the prelude of
  :mod:`fluidnet.codegen.csource`).
"""

from __future__ import annotations

import math
from typing import Any, TypeAlias, cast

import numpy as np
import sympy
from sympy.printing.c import C99CodePrinter
from sympy.printing.precedence import precedence
from sympy.printing.pycode import PythonCodePrinter

__all__ = ["CLang", "CPrinter", "Lang", "NumbaPrinter", "PY", "PyLang", "STACK_DOUBLES"]


# --------------------------------------------------------------------------------- printing
class NumbaPrinter(PythonCodePrinter):
    """Python source that numba compiles: ``math`` functions, floats for rationals."""

    def __init__(self):
        super().__init__({"standard": "python3", "fully_qualified_modules": True})

    def doprint(self, expr: Any, assign_to: Any = None) -> str:
        """The code of ``expr`` (a string: the tuple of sympy's ``human=False`` is never asked
        for)."""
        return cast(str, super().doprint(expr, assign_to))

    def _print_Rational(self, expr):
        return repr(float(expr))

    def _print_Half(self, expr):
        return "0.5"

    def _print_Integer(self, expr):
        return str(int(expr)) if abs(int(expr)) < 2**53 else repr(float(expr))

    def _print_Float(self, expr):
        return repr(float(expr))

    def _print_Heaviside(self, expr):
        a = self._print(expr.args[0])
        h0 = float(expr.args[1]) if len(expr.args) > 1 else 0.5
        return f"(1.0 if ({a}) > 0.0 else (0.0 if ({a}) < 0.0 else {h0!r}))"

    def _print_sign(self, expr):
        a = self._print(expr.args[0])
        return f"(1.0 if ({a}) > 0.0 else (-1.0 if ({a}) < 0.0 else 0.0))"

    def _print_Max(self, expr):
        return "max(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Min(self, expr):
        return "min(" + ", ".join(self._print(a) for a in expr.args) + ")"


class PyLang:
    """How generated statements are written in Python for numba (see :class:`CLang` for C): the
    statement generator is shared by both."""

    def printer(self):
        return NumbaPrinter()

    def assign(self, target: str, code: str, indent: str = "    ", temp: bool = False) -> str:
        """``target = code`` (``temp``: a new local scalar)."""
        return f"{indent}{target} = {code}"

    def entry(self, table: str, k: int) -> str:
        """Column ``k`` of row ``r`` of a two-dimensional index table."""
        return f"{table}[r, {k}]"

    def temp_array(self, name: str, count: int) -> list[str]:
        """A local array of ``count`` doubles."""
        return [f"    {name} = np.empty({count})"]

    def loop(self, count: int, target: str, code: str) -> list[str]:
        """``target = code`` for ``r`` in ``0 .. count - 1``."""
        return [f"    for r in range({count}):", f"        {target} = {code}"]

    def table(self, name: str, arr: np.ndarray) -> str:
        """The module-level declaration of an integer table."""
        return f"{name} = np.array({arr.tolist()!r}, dtype=np.int64)"


#: The Python (numba) language, the default of the statement generator.
PY = PyLang()


#: Looped temporaries of a function up to this many doubles live on the stack, beyond it in
#: one heap block (a large network's per-flow values).
STACK_DOUBLES = 16_384


# --------------------------------------------------------------------------------- printing
class CPrinter(C99CodePrinter):
    """C expressions with the numba printer's semantics (see the module docstring)."""

    def __init__(self):
        super().__init__({"strict": True})

    def doprint(self, expr: Any, assign_to: Any = None) -> str:
        """The code of ``expr`` (a string: the tuple of sympy's ``human=False`` is never asked
        for)."""
        return cast(str, super().doprint(expr, assign_to))

    def _print_Integer(self, expr):
        return repr(float(int(expr)))  # doubles: no integer division or overflow in C

    def _print_Rational(self, expr):
        return self._print_Float(expr)

    def _print_Half(self, expr):
        return "0.5"

    def _print_Float(self, expr):
        v = float(expr)
        if math.isnan(v):
            return "NAN"
        if math.isinf(v):
            return "INFINITY" if v > 0 else "(-INFINITY)"
        return repr(v)

    def _print_NumberSymbol(self, expr):
        return self._print_Float(sympy.Float(expr.evalf(20)))

    _print_Pi = _print_Exp1 = _print_GoldenRatio = _print_EulerGamma = _print_NumberSymbol
    _print_Catalan = _print_NumberSymbol

    def _print_Infinity(self, expr):
        return "INFINITY"

    def _print_NegativeInfinity(self, expr):
        return "(-INFINITY)"

    def _print_NaN(self, expr):
        return "NAN"

    def _print_Pow(self, expr):
        # the cases of sympy's Python printer, which the numba backend uses
        prec = precedence(expr)
        base, exp = expr.base, expr.exp
        if exp == sympy.S.Half:
            return f"sqrt({self._print(base)})"
        if expr.is_commutative:
            if -exp is sympy.S.Half:
                return f"1.0/sqrt({self._print(base)})"
            if exp is sympy.S.NegativeOne:
                return f"1.0/{self.parenthesize(base, prec, strict=False)}"
        if exp.is_Integer and abs(int(exp)) <= 0x10000:
            return f"fn_powi({self._print(base)}, {int(exp)})"
        return f"pow({self._print(base)}, {self._print(exp)})"

    def _print_Heaviside(self, expr):
        h0 = float(expr.args[1]) if len(expr.args) > 1 else 0.5
        return f"fn_heaviside({self._print(expr.args[0])}, {self._print_Float(h0)})"

    def _print_sign(self, expr):
        return f"fn_sign({self._print(expr.args[0])})"

    def _minmax(self, func: str, args) -> str:
        acc = self._print(args[0])
        for a in args[1:]:
            acc = f"{func}({acc}, {self._print(a)})"
        return acc

    def _print_Max(self, expr):
        return self._minmax("fn_max", expr.args)

    def _print_Min(self, expr):
        return self._minmax("fn_min", expr.args)

    def _print_Mod(self, expr):
        a, b = expr.args
        return f"fn_mod({self._print(a)}, {self._print(b)})"

    def _print_Piecewise(self, expr):
        acc = "NAN" if expr.args[-1].cond is not sympy.true else None
        pieces = list(expr.args)
        if acc is None:
            acc = f"({self._print(pieces.pop().expr)})"
        for e, c in reversed(pieces):
            acc = f"(({self._print(c)}) ? ({self._print(e)}) : {acc})"
        return acc

    def _print_BooleanTrue(self, expr):
        return "1"

    def _print_BooleanFalse(self, expr):
        return "0"


class CLang:
    """How generated statements are written in C (the counterpart of :class:`PyLang`).

    Looped temporaries are slices of one workspace ``_wk`` of the function; :meth:`wrap`
    declares it (on the stack, or on the heap when large) once the body is known.
    """

    def __init__(self):
        self.workspace = 0

    def printer(self):
        return CPrinter()

    def assign(self, target: str, code: str, indent: str = "    ", temp: bool = False) -> str:
        return f"{indent}{'const double ' if temp else ''}{target} = {code};"

    def entry(self, table: str, k: int) -> str:
        return f"{table}[r][{k}]"

    def temp_array(self, name: str, count: int) -> list[str]:
        line = f"    double *const {name} = _wk + {self.workspace};"
        self.workspace += count
        return [line]

    def loop(self, count: int, target: str, code: str) -> list[str]:
        return [f"    for (int r = 0; r < {count}; r++)", f"        {target} = {code};"]

    def table(self, name: str, arr: np.ndarray) -> str:
        flat = ", ".join(str(int(v)) for v in arr.reshape(-1))
        dims = "".join(f"[{d}]" for d in arr.shape)
        return f"static const int {name}{dims} = {{{flat}}};"

    def wrap(self, body: list[str], nout: int) -> list[str]:
        """``body`` with the workspace of its looped temporaries declared and released."""
        if not self.workspace:
            return body
        if self.workspace <= STACK_DOUBLES:
            return [f"    double _wk[{self.workspace}];", *body]
        return [
            f"    double *const _wk = (double *)malloc({self.workspace} * sizeof(double));",
            "    if (_wk == NULL) {",
            f"        for (int i = 0; i < {nout}; i++)",
            "            out[i] = NAN;",
            "        return;",
            "    }",
            *body,
            "    free(_wk);",
        ]


#: A language object: how statements are written in Python for numba or in C.
Lang: TypeAlias = "PyLang | CLang"

"""Sympy expressions compiled into Python functions over arb/acb balls (python-flint).

:func:`compile_balls` turns a list of sympy expressions into one function ``f(values) -> list``
that evaluates them, with common subexpressions shared, in ball arithmetic: every result
contains the exact value of the expression for every point of the input balls. The generated
code is built from the expression tree node by node (symbols become positions in ``values``,
numbers become constants made exactly), so no text from a certificate is ever executed.

Functions that are not continuous, or whose derivative is not, are *decided* on the balls:
``Heaviside(s)``, ``sign(s)``, ``DiracDelta(s)`` and the conditions of ``Piecewise`` evaluate
when the sign of ``s`` (the condition's truth) is the same over the whole input, and raise
:class:`NotProved` otherwise — a switching surface (a non-smooth point) may cross the box.
``Abs``, ``Max`` and ``Min`` are continuous and enclosed directly. Integer powers are products
(an even power of a ball around 0 is ``[0, r^n]``, not the NaN of a general power).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import sympy

from .exact import as_arb, ball, fixed_interval

__all__ = ["NotProved", "compile_balls"]


class NotProved(Exception):
    """A step of a proof did not go through on the given balls (the message says which);
    a smaller box may succeed."""


def _flint():
    import flint

    return flint


# ---------------------------------------------------------------------- helpers (run time)
def _sqr(x):
    """``x**2``: for a real ball, ``[|x|_lo^2, |x|_hi^2]`` from the bounds of ``|x|`` (the product
    of a wide ball by itself would reach below 0)."""
    flint = _flint()
    if isinstance(x, flint.arb):
        if not x.is_finite():
            return x * x
        lo, hi = x.abs_lower(), x.abs_upper()
        return (lo * lo).lower().union((hi * hi).upper())
    return x * x


def _powi(x, n: int):
    """``x**n`` for an integer ``n >= 0`` by squares and products."""
    if n == 0:
        return 1
    if n == 1:
        return x
    half = _powi(x, n // 2)
    sq = _sqr(half)
    return sq * x if n % 2 else sq


def _pos(x, text: str):
    flint = _flint()
    if isinstance(x, flint.arb):
        if not x > 0:
            raise NotProved(f"{text} is not proved positive over the box (it encloses {x})")
    return x


def _sign_of(s, text: str) -> int:
    if s > 0:
        return 1
    if s < 0:
        return -1
    raise NotProved(
        f"the switching function {text} is not of one sign over the box (it encloses {s}): "
        "a non-smooth point may lie inside"
    )


def _make_helpers() -> dict[str, Any]:
    flint = _flint()

    def real(name: str):
        def f(x, text: str = ""):
            if name in ("log", "sqrt"):
                _pos(x, text)
            if name in ("asin", "acos") and not (abs(x) < 1):
                raise NotProved(f"{text} is not proved inside (-1, 1) over the box")
            return getattr(x, name)()

        return f

    helpers: dict[str, Any] = {
        name: real(name)
        for name in ("exp", "log", "sqrt", "sin", "cos", "tan", "atan", "asin", "acos")
        + ("sinh", "cosh", "tanh")
    }

    def heaviside(s, *rest, text=""):
        return 1 if _sign_of(s, text) > 0 else 0

    def sign(s, text=""):
        return _sign_of(s, text)

    def dirac(s, *rest, text=""):
        _sign_of(s, text)
        return 0

    def absolute(x, text=""):
        return abs(x)

    def maximum(*xs, text=""):
        out = xs[0]
        for x in xs[1:]:
            out = out.max(x) if isinstance(out, flint.arb) else flint.arb(out).max(x)
        return out

    def minimum(*xs, text=""):
        out = xs[0]
        for x in xs[1:]:
            out = out.min(x) if isinstance(out, flint.arb) else flint.arb(out).min(x)
        return out

    def power(b, e, text=""):
        _pos(b, text)
        return (b.log() * e).exp()

    def sqrt(x, text=""):
        _pos(x, text)
        return x.sqrt()

    def less(a, b, strict, text=""):
        d = b - a
        if strict:
            if d > 0:
                return True
            if d <= 0:
                return False
        else:
            if d >= 0:
                return True
            if d < 0:
                return False
        raise NotProved(f"the condition {text} is not decided over the box")

    def piecewise(*pairs, text=""):
        for cond, value in pairs:
            if cond():
                return value()
        raise NotProved(f"no piece of {text} applies")

    helpers.update(
        Heaviside=heaviside,
        sign=sign,
        DiracDelta=dirac,
        Abs=absolute,
        Max=maximum,
        Min=minimum,
        _pow=power,
        _sqrt=sqrt,
        _powi=_powi,
        _less=less,
        _pw=piecewise,
    )
    return helpers


# ---------------------------------------------------------------------- code generation
#: sympy function classes the printer calls helpers for (by class name)
_FUNCTION_NAMES = frozenset(
    ("exp", "log", "sin", "cos", "tan", "atan", "asin", "acos", "sinh", "cosh", "tanh")
    + ("Abs", "sign", "Heaviside", "DiracDelta", "Max", "Min")
)


class _Printer:
    """Python source of sympy expressions over balls: constants are exact balls in ``C``,
    texts for messages in ``T``, inputs in ``v``."""

    def __init__(self, args: Sequence[sympy.Symbol], complex_mode: bool):
        self.index = {a: i for i, a in enumerate(args)}
        self.temps: dict[sympy.Symbol, str] = {}
        self.full: dict[sympy.Symbol, Any] = {}  # each temporary's expression, for messages
        self.consts: list[Any] = []
        self.const_key: dict[Any, int] = {}
        self.texts: list[str] = []
        self.complex_mode = complex_mode

    def const(self, key, make) -> str:
        if key not in self.const_key:
            self.const_key[key] = len(self.consts)
            self.consts.append(make())
        return f"C[{self.const_key[key]}]"

    def text(self, e) -> str:
        self.texts.append(str(e.xreplace(self.full)))
        return f"T[{len(self.texts) - 1}]"

    def __call__(self, e) -> str:  # noqa: C901 - one branch per node kind
        if e in self.temps:
            return self.temps[e]
        if isinstance(e, sympy.Symbol):
            if e not in self.index:
                raise NotProved(f"the symbol {e} has no value")
            return f"v[{self.index[e]}]"
        if e is sympy.true:
            return "True"
        if e is sympy.false:
            return "False"
        if isinstance(e, sympy.Integer):
            return f"({int(e)})"
        if isinstance(e, sympy.Rational):
            q = Fraction(int(e.p), int(e.q))
            return self.const(("q", q), lambda: as_arb(q))
        if isinstance(e, sympy.Float):
            iv = fixed_interval("a constant of the model", float(e))
            return self.const(("f", iv), lambda: ball(iv))
        if e is sympy.pi:
            return self.const("pi", lambda: _flint().arb.pi())
        if e is sympy.E:
            return self.const("E", lambda: _flint().arb(1).exp())
        if isinstance(e, sympy.Add):
            return "(" + " + ".join(self(a) for a in e.args) + ")"
        if isinstance(e, sympy.Mul):
            num, den = [], []
            for a in e.args:
                if isinstance(a, sympy.Pow) and a.exp.is_Integer and int(a.exp) < 0:
                    den.append(self._pow(a.base, -int(a.exp)))
                else:
                    num.append(self(a))
            top = "*".join(num) if num else "1"
            return f"({top})" if not den else f"(({top})/({'*'.join(den)}))"
        if isinstance(e, sympy.Pow):
            b, x = e.base, e.exp
            if x.is_Integer:
                n = int(x)
                return self._pow(b, n) if n >= 0 else f"(1/{self._pow(b, -n)})"
            if x == sympy.Rational(1, 2):
                return f"H['_sqrt']({self(b)}, text={self.text(b)})"
            if x == sympy.Rational(-1, 2):
                return f"(1/H['_sqrt']({self(b)}, text={self.text(b)}))"
            return f"H['_pow']({self(b)}, {self(x)}, text={self.text(b)})"
        if isinstance(e, sympy.Piecewise):
            pairs = ", ".join(
                f"((lambda: {self(a.args[1])}), (lambda: {self(a.args[0])}))" for a in e.args
            )
            return f"H['_pw']({pairs}, text={self.text(e)})"
        if isinstance(e, (sympy.StrictLessThan, sympy.LessThan)):
            strict = isinstance(e, sympy.StrictLessThan)
            return f"H['_less']({self(e.lhs)}, {self(e.rhs)}, {strict}, text={self.text(e)})"
        if isinstance(e, (sympy.StrictGreaterThan, sympy.GreaterThan)):
            strict = isinstance(e, sympy.StrictGreaterThan)
            return f"H['_less']({self(e.rhs)}, {self(e.lhs)}, {strict}, text={self.text(e)})"
        if isinstance(e, sympy.And):
            return "(" + " and ".join(self(a) for a in e.args) + ")"
        if isinstance(e, sympy.Or):
            return "(" + " or ".join(self(a) for a in e.args) + ")"
        if isinstance(e, sympy.Not):
            return f"(not {self(e.args[0])})"
        name = type(e).__name__
        if name in _FUNCTION_NAMES:
            if self.complex_mode and name != "exp":
                raise NotProved(f"{name} is not supported in complex enclosures")
            args = ", ".join(self(a) for a in e.args)
            return f"H[{name!r}]({args}, text={self.text(e.args[0])})"
        raise NotProved(f"{e} ({name}) cannot be enclosed")

    def _pow(self, b, n: int) -> str:
        if n == 1:
            return self(b)
        return f"H['_powi']({self(b)}, {n})"


def compile_balls(
    exprs: Sequence[Any], args: Sequence[sympy.Symbol], *, complex_mode: bool = False
) -> Callable[[Sequence[Any]], list]:
    """One function ``f(values)`` returning the balls of ``exprs`` at balls ``values`` of
    ``args`` (arb, or acb where ``complex_mode``).

    Raises
    ------
    NotProved
        At compile time, for a node that cannot be enclosed; at run time, for a switch or a
        domain condition not decided on the given balls.
    """
    exprs = [sympy.sympify(e) for e in exprs]
    replacements, reduced = sympy.cse(exprs, symbols=sympy.numbered_symbols("_cse"))
    printer = _Printer(args, complex_mode)
    lines = ["def _f(v):"]
    for k, (sym, sub) in enumerate(replacements):
        lines.append(f"    t{k} = {printer(sub)}")
        printer.temps[sym] = f"t{k}"
        printer.full[sym] = sub.xreplace(printer.full)
    lines.append("    return [" + ", ".join(printer(e) for e in reduced) + "]")
    namespace: dict[str, Any] = {
        "C": printer.consts,
        "T": printer.texts,
        "H": _make_helpers(),
    }
    exec(compile("\n".join(lines), "<fluidnet.proof>", "exec"), namespace)  # noqa: S102
    return namespace["_f"]

"""Code generation: a model's canonical form compiled to machine code, cached on disk.

The nonlinear integrator (:mod:`fluidnet.dde`) is one generic compiled stepping loop. What is
specific to a model is generated here from its canonical form
(:class:`~fluidnet.symbolic.canonical.DDEForm`) as four small C-callable functions, all with
the same signature ``void f(double t, double *x, double *z, double *p, double *w, double *aux,
double *out)``:

``rhs``
    ``out[i] = f_i(t, x, z, p, w)``: the unprojected right-hand sides, with every switching term
    replaced by its *mode weight* ``w[j]`` (see :func:`extract_switches`).
``delay``
    ``out[0] = tau_k(t, x, z, p)`` for ``k = int(aux[0])``; lags are evaluated in order, so
    ``tau_k`` may use the values ``z[0..k-1]`` of earlier lags (nested, state-dependent delays).
``switch``
    ``out[j] = s_j(t, x, z, p, w)``: the switching functions (surface ``s_j = 0``).
``sgrad``
    ``out[j*(n+1) + i] = ds_j/dx_i`` and ``out[j*(n+1) + n] = ds_j/dt + sum_k ds_j/dz_k aux[k]``
    (``aux`` holds the time derivatives of the lagged values): what the integrator needs for the
    Filippov equivalent control on a switching surface.

Two backends compile them from the same symbolic preparation: the system C compiler
(:mod:`fluidnet.dde.ccodegen`; a shared library loaded with :mod:`ctypes`, no numba needed) and
numba (``cfunc``; Python source written here). The C backend is used when a compiler works,
numba otherwise; ``FLUIDNET_BACKEND=c|numba`` forces one (see :func:`compile_form`).

Parameters enter as a runtime vector ``p``: one compilation serves every parameter value. The
generated code is written to a cache directory (``$FLUIDNET_CACHE``, default
``~/.cache/fluidnet``) under a name derived from a hash of the form and the backend: a C library
``fluidnet_cgen_<key>.so`` next to its source, or a Python module ``fluidnet_gen_<key>.py`` run
from there so that numba's on-disk cache (``cache=True``) lets a second process load the machine
code without compiling (numba's files checked against the same index as the modules:
:mod:`fluidnet.dde.numbacache`). Since that directory holds code this process runs, it must be
private: it is created with mode 0700, refused when it belongs to another user or is writable by
others, and a module or library is run only when its bytes match the hash recorded in the
directory's index when it was written (see :func:`cache_dir` and :func:`compile_form`).
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import sys
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType

import numpy as np
import sympy
from sympy.printing.pycode import PythonCodePrinter

from ..errors import CacheError, ModelError, OptionError
from .cache import (  # noqa: F401 - re-exported: the cache of generated code lives there
    _FALLBACK,
    _INDEX,
    _check_private,
    _digest,
    _discard,
    _file_lock,
    _private_dir,
    _read_index,
    _record,
    _write_atomic,
    cache_dir,
)
from .compiled import CompiledModel

__all__ = [
    "CompiledModel",
    "Switch",
    "cache_dir",
    "compile_form",
    "compile_model",
    "extract_switches",
    "generate_jacobian_source",
    "generate_source",
    "jacobian_address",
    "load_generated",
]

#: Bump when the generated code changes meaning (invalidates every cached module).
CODEGEN_VERSION = "1"

_SWITCH_FUNCS = (sympy.Heaviside, sympy.sign, sympy.Abs, sympy.Max, sympy.Min, sympy.Piecewise)


# --------------------------------------------------------------------------------- switches
@dataclass(frozen=True)
class Switch:
    """A switching surface ``s(t, x, z, p) = 0`` and the weight symbol that replaces it.

    Attributes
    ----------
    weight : sympy.Symbol
        ``w_j``: 1 on the side ``s > 0``, 0 on the side ``s < 0``; a Filippov convex weight in
        between while the solution slides on the surface.
    surface : sympy.Expr
        ``s_j``, an expression of ``t``, current states, lags, parameters and the weights of
        switches nested inside it.
    source : sympy.Expr
        The term of the model it was extracted from (for messages).
    """

    weight: sympy.Symbol
    surface: sympy.Expr
    source: sympy.Expr


def extract_switches(exprs, prefix: str = "w") -> tuple[list[sympy.Expr], list[Switch]]:
    """Replace every switching term of ``exprs`` by an expression linear in a mode weight.

    ``Heaviside(s)`` becomes ``w``, ``sign(s)`` becomes ``2w - 1``, ``Abs(s)`` becomes
    ``(2w - 1) s``, ``Max(a, b)`` becomes ``w a + (1 - w) b`` with ``s = a - b`` (``Min``
    likewise), and ``Piecewise((e1, c1), ..., (en, True))`` becomes nested convex combinations
    with ``s = lhs - rhs`` of each relational condition. Inner switches are extracted first, so a
    surface may depend on the weights of switches nested inside it. Identical surfaces share a
    weight; a surface ``-s`` reuses the weight of ``s`` as ``1 - w``.

    Returns
    -------
    new_exprs : list of sympy.Expr
    switches : list of Switch
        In evaluation order (inner before outer).

    Raises
    ------
    ModelError
        For a ``Piecewise`` without a final ``(value, True)`` branch or with a condition that is
        not a single inequality (``==``, ``!=``, ``And``, ``Or`` ...).
    """
    switches: list[Switch] = []
    by_surface: dict[sympy.Expr, sympy.Expr] = {}

    def weight_for(s: sympy.Expr, source: sympy.Expr) -> sympy.Expr:
        s = sympy.expand(s) if s.is_Add else s
        if s in by_surface:
            return by_surface[s]
        neg = sympy.expand(-s) if (-s).is_Add else -s
        if neg in by_surface:
            return 1 - by_surface[neg]
        w = sympy.Symbol(f"{prefix}[{len(switches)}]", real=True)
        switches.append(Switch(w, s, source))
        by_surface[s] = w
        return w

    def condition_surface(cond, where) -> sympy.Expr:
        if isinstance(cond, (sympy.StrictGreaterThan, sympy.GreaterThan)):
            return cond.lhs - cond.rhs
        if isinstance(cond, (sympy.StrictLessThan, sympy.LessThan)):
            return cond.rhs - cond.lhs
        raise ModelError(
            f"unsupported condition {cond} in {where}: a switching condition must be a single "
            "inequality such as x > y (nest Piecewise terms for compound conditions)"
        )

    def rebuild(e: sympy.Expr) -> sympy.Expr:
        if not e.args or e.is_Atom:
            return e
        if isinstance(e, sympy.Piecewise):
            pieces = [(rebuild(v), c) for v, c in e.args]
            if pieces[-1][1] is not sympy.true:
                raise ModelError(f"{e}: a Piecewise must end with a (value, True) branch")
            acc = pieces[-1][0]
            for value, cond in reversed(pieces[:-1]):
                cond = cond.func(*[rebuild(a) for a in cond.args])
                w = weight_for(condition_surface(cond, e), e)
                acc = w * value + (1 - w) * acc
            return acc
        args = [rebuild(a) for a in e.args]
        if isinstance(e, sympy.Heaviside):
            return weight_for(args[0], e)
        if isinstance(e, sympy.sign):
            return 2 * weight_for(args[0], e) - 1
        if isinstance(e, sympy.Abs):
            return (2 * weight_for(args[0], e) - 1) * args[0]
        if isinstance(e, (sympy.Max, sympy.Min)):
            acc = args[0]
            for b in args[1:]:
                w = weight_for(acc - b, e)
                acc = w * acc + (1 - w) * b if isinstance(e, sympy.Max) else w * b + (1 - w) * acc
            return acc
        if all(a is b for a, b in zip(args, e.args, strict=True)):
            return e
        return e.func(*args)

    return [rebuild(sympy.sympify(e)) for e in exprs], switches


# --------------------------------------------------------------------------------- printing
class _NumbaPrinter(PythonCodePrinter):
    """Python source that numba compiles: ``math`` functions, floats for rationals."""

    def __init__(self):
        super().__init__({"standard": "python3", "fully_qualified_modules": True})

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


class _PyLang:
    """How generated statements are written in Python for numba (see :class:`_CLang` of
    :mod:`fluidnet.dde.ccodegen` for C): the loop generator is shared by both."""

    def printer(self):
        return _NumbaPrinter()

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


_PY = _PyLang()


def _code_lines(exprs, targets: list[str], indent: str = "    ", lang=_PY) -> list[str]:
    """Assignments ``target = expr`` with common subexpressions hoisted."""
    printer = lang.printer()
    exprs = [sympy.sympify(e) for e in exprs]
    if not exprs:
        return []
    subs, reduced = sympy.cse(exprs, symbols=sympy.numbered_symbols("_c"), optimizations="basic")
    lines = [
        lang.assign(printer.doprint(sym), printer.doprint(val), indent, temp=True)
        for sym, val in subs
    ]
    lines += [
        lang.assign(tgt, printer.doprint(e), indent)
        for tgt, e in zip(targets, reduced, strict=True)
    ]
    return lines


# ------------------------------------------------------------------ repeated structure (loops)
#: A function with more statements than this is generated with loops over repeated structure.
LOOP_MIN_STATEMENTS = 32
#: Statements of one shape are looped over when there are at least this many of them.
LOOP_MIN_GROUP = 4

_INDEXED = re.compile(r"^(x|z|p|w|aux)\[(\d+)\]$")


class _Tables:
    """Module-level integer tables of the looped code (one name per table)."""

    def __init__(self, prefix: str, lang=_PY):
        self.prefix = prefix
        self.lang = lang
        self.lines: list[str] = []

    def add(self, rows) -> str:
        name = f"_{self.prefix}{len(self.lines)}"
        self.lines.append(self.lang.table(name, np.asarray(rows, dtype=np.int64)))
        return name


def _shape_key(e: sympy.Basic, storage: dict) -> str:
    """A description of ``e`` that ignores indices (the order key of commutative arguments)."""
    if e.is_Symbol:
        m = _INDEXED.match(e.name)
        if m:
            return m.group(1)
        where = storage.get(e)
        return where[0] if isinstance(where, tuple) else e.name
    if not e.args:
        return str(e)
    keys = [_shape_key(a, storage) for a in e.args]
    if e.is_Add or e.is_Mul:
        keys.sort()
    return f"{type(e).__name__}({','.join(keys)})"


def _number_key(e: sympy.Basic) -> str:
    """A number as the printer writes it (equal keys print equal code)."""
    if e.is_Integer:
        return str(int(e)) if abs(int(e)) < 2**53 else repr(float(e))
    if e.is_Rational or e.is_Float:
        return repr(float(e))
    return sympy.srepr(e)


def _template(e: sympy.Expr, storage: dict) -> tuple[str, list[int], dict]:
    """The shape of ``e`` with every indexed value replaced by a numbered placeholder
    ``name[@k]``: its key, the index of each placeholder, and the replacement (to print it).

    Statements with the same key compute the same formula of different entries, so one loop
    over a table of their indices computes them all. The key is built in one pass: arguments
    of sums and products are visited in the order of their index-free shape, so that most
    statements of one shape number their placeholders alike whatever their indices.
    """
    rep: dict[sympy.Symbol, sympy.Symbol] = {}
    index: list[int] = []

    def key(node) -> str:
        if node.is_Symbol:
            m = _INDEXED.match(node.name)
            if m:
                cls, i = m.group(1), int(m.group(2))
            elif isinstance(storage.get(node), tuple):
                cls, i = storage[node]
            else:
                return node.name
            ph = rep.get(node)
            if ph is None:
                ph = rep[node] = sympy.Symbol(f"{cls}[@{len(index)}]", real=True)
                index.append(i)
            return ph.name
        if node.is_Number or node.is_NumberSymbol:
            return _number_key(node)
        if not node.args:
            return sympy.srepr(node)
        args = list(node.args)
        if node.is_Add or node.is_Mul:
            args.sort(key=lambda a: _shape_key(a, storage))  # stable: ties keep sympy's order
        return f"{type(node).__name__}({','.join(key(a) for a in args)})"

    return key(e), index, rep


def _fill(template: str, index: list[int], table: str | None = None, lang=_PY) -> str:
    """The template with placeholder ``k`` replaced by ``index[k]`` (or by column ``k`` of row
    ``r`` of ``table``)."""

    def sub(m):
        k = int(m.group(2))
        return f"{m.group(1)}[{lang.entry(table, k)}]" if table else f"{m.group(1)}[{index[k]}]"

    return re.sub(r"(\w+)\[@(\d+)\]", sub, template)


def _tree_cse(exprs: list[sympy.Expr]) -> tuple[list[tuple[sympy.Symbol, sympy.Expr]], list]:
    """Common subexpressions: every compound subtree occurring more than once is computed once.

    A linear-time stand-in for :func:`sympy.cse` for large models (whose preprocessing and
    search for partial sums and products take minutes on thousands of expressions): a link's
    load or price shared by the equations of its flows is found, ``a*b`` inside ``a*b*c`` is
    not.
    """
    counts: dict[sympy.Expr, int] = {}
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if e.is_Atom:
            continue
        seen = counts.get(e, 0)
        counts[e] = seen + 1
        if not seen:
            stack.extend(e.args)

    def trivial(e):  # an atom or its negative: nothing to save
        return e.is_Atom or (
            e.is_Mul and len(e.args) == 2 and e.args[0] == -1 and e.args[1].is_Atom
        )

    repeated = {e for e, c in counts.items() if c > 1 and not trivial(e)}
    names = sympy.numbered_symbols("_c")
    subs: list[tuple[sympy.Symbol, sympy.Expr]] = []
    memo: dict[sympy.Expr, sympy.Expr] = {}

    def rebuild(e):
        if e.is_Atom:
            return e
        got = memo.get(e)
        if got is not None:
            return got
        args = [rebuild(a) for a in e.args]
        new = e if all(a is b for a, b in zip(args, e.args, strict=True)) else e.func(*args)
        if e in repeated:
            sym = next(names)
            subs.append((sym, new))
            new = sym
        memo[e] = new
        return new

    return subs, [rebuild(e) for e in exprs]


def _looped_lines(
    exprs, targets: list[int], tables: _Tables, out: str = "out", lang=_PY
) -> list[str]:
    """Statements ``out[targets[i]] = exprs[i]`` with common subexpressions hoisted and every
    set of at least :data:`LOOP_MIN_GROUP` statements of the same shape computed by one loop
    over a table of indices (numba compiles a loop once; its time grows with the number of
    statements it types, so unrolled code for thousands of flows takes minutes)."""
    printer = lang.printer()
    exprs = [sympy.sympify(e) for e in exprs]
    if not exprs:
        return []
    subs, reduced = _tree_cse(exprs)

    def printed(val, rep) -> str:
        return printer.doprint(val.xreplace(rep) if rep else val)

    level: dict[sympy.Symbol, int] = {}
    for sym, val in subs:
        level[sym] = 1 + max((level[d] for d in val.free_symbols if d in level), default=-1)
    statements: dict[int, list] = {}
    for sym, val in subs:
        statements.setdefault(level[sym], []).append((sym, val))
    top = 1 + max(level.values(), default=-1)
    statements[top] = [(t, e) for t, e in zip(targets, reduced, strict=True)]
    storage: dict[sympy.Symbol, str | tuple[str, int]] = {}
    lines: list[str] = []
    for lev in range(top + 1):
        groups: dict[str, list] = {}
        for target, val in statements.get(lev, []):
            key, index, rep = _template(val, storage)
            groups.setdefault(key, []).append((target, index, val, rep))
        for members in groups.values():
            temps = lev < top
            if len(members) < LOOP_MIN_GROUP:
                for target, index, val, rep in members:
                    code = _fill(printed(val, rep), index, lang=lang)
                    if temps:
                        storage[target] = printer.doprint(target)
                        lines.append(lang.assign(storage[target], code, temp=True))
                    else:
                        lines.append(lang.assign(f"{out}[{target}]", code))
                continue
            count = len(members)
            _, index0, val0, rep0 = members[0]
            template = printed(val0, rep0)
            table = tables.add([m[1] for m in members]) if index0 else None
            body = _fill(template, [], table, lang) if table else template
            if temps:
                arr = f"_g{len(tables.lines)}_{lev}_{len(lines)}"
                lines += lang.temp_array(arr, count)
                lines += lang.loop(count, f"{arr}[r]", body)
                for r, member in enumerate(members):
                    storage[member[0]] = (arr, r)
            else:
                where = tables.add([m[0] for m in members])
                lines += lang.loop(count, f"{out}[{where}[r]]", body)
    return lines


def _delay_groups(delays, tables: _Tables, lang=_PY) -> tuple[str, str, list[str]]:
    """Lags of the same shape, for a ``delay`` function of many lags: the tables of the group
    and row of each lag, and the code of each group (reading the indices of lag ``k`` from row
    ``r`` of the group's table)."""
    printer = lang.printer()
    groups: dict[str, list] = {}
    for k, d in enumerate(delays):
        d = sympy.sympify(d)
        key, index, rep = _template(d, {})
        groups.setdefault(key, []).append((k, index, d, rep))
    group_of = np.zeros(len(delays), dtype=np.int64)
    row_of = np.zeros(len(delays), dtype=np.int64)
    bodies = []
    for g, members in enumerate(groups.values()):
        for r, member in enumerate(members):
            group_of[member[0]], row_of[member[0]] = g, r
        _, index0, d0, rep0 = members[0]
        template = printer.doprint(d0.xreplace(rep0) if rep0 else d0)
        table = tables.add([m[1] for m in members]) if index0 else None
        bodies.append(_fill(template, [], table, lang) if table else template)
    return tables.add(group_of), tables.add(row_of), bodies


def _looped_delay_lines(delays, tables: _Tables) -> list[str]:
    """The ``delay`` body for many lags: lags of the same shape share one branch that reads
    the indices of lag ``k`` from a table."""
    group_of, row_of, bodies = _delay_groups(delays, tables)
    lines = [f"    g = {group_of}[k]", f"    r = {row_of}[k]"]
    for g, body in enumerate(bodies):
        lines.append(f"    {'if' if g == 0 else 'elif'} g == {g}:")
        lines.append(f"        out[0] = {body}")
    return lines + ["    else:", "        out[0] = math.nan"]


# --------------------------------------------------------------------------------- generation
@dataclass(frozen=True)
class _Symbolic:
    """The form rewritten in array symbols, ready to print."""

    rhs: list[sympy.Expr]
    delays: list[sympy.Expr]
    switches: list[Switch]
    grads: list[list[sympy.Expr]]
    lag_state: list[int]
    lag_statedep: list[int]
    switch_lagdep: list[int]


def _symbolic(form) -> _Symbolic:
    n = form.n
    xs = [sympy.Symbol(f"x[{i}]", real=True) for i in range(n)]
    zs = [sympy.Symbol(f"z[{k}]", real=True) for k in range(len(form.lags))]
    ps = [sympy.Symbol(f"p[{j}]", real=True) for j in range(len(form.p))]
    if form.inputs:
        raise ModelError("cannot integrate a loop-gain form (it has external inputs)")
    rep = dict(zip(form.x, xs, strict=True))
    rep.update(zip(form.p, ps, strict=True))
    rep.update({lag.symbol: z for lag, z in zip(form.lags, zs, strict=True)})
    rhs = [e.xreplace(rep) for e in form.rhs]
    delays = [lag.delay.xreplace(rep) for lag in form.lags]
    rhs, switches = extract_switches(rhs)
    aux = [sympy.Symbol(f"aux[{k}]", real=True) for k in range(len(form.lags))]
    grads = []
    lagdep = []
    for sw in switches:
        row = [sympy.diff(sw.surface, x) for x in xs]
        dt = sympy.diff(sw.surface, form.t)
        used = [k for k, z in enumerate(zs) if sw.surface.has(z)]
        dt += sum((sympy.diff(sw.surface, zs[k]) * aux[k] for k in used), sympy.S.Zero)
        grads.append(row + [dt])
        lagdep.append(1 if used else 0)
    statedep = [0 if lag.kind in ("constant", "parameter") else 1 for lag in form.lags]
    return _Symbolic(
        rhs=rhs,
        delays=delays,
        switches=switches,
        grads=grads,
        lag_state=[lag.state for lag in form.lags],
        lag_statedep=statedep,
        switch_lagdep=lagdep,
    )


_HEADER = """# Generated by fluidnet.dde.codegen ({version}) for model {name!r}; do not edit.
import math

from numba import carray, cfunc, types

_D = types.float64
_P = types.CPointer(types.float64)
_SIG = types.void(_D, _P, _P, _P, _P, _P, _P)

N_STATES = {n}
N_LAGS = {nlag}
N_SWITCHES = {nsw}
N_PARAMS = {npar}
LAG_STATE = {lag_state!r}
LAG_STATEDEP = {lag_statedep!r}
SWITCH_LAGDEP = {switch_lagdep!r}
"""

_DEF = """

@cfunc(_SIG, cache=True, error_model="numpy", nogil=True)
def {name}(t, x_, z_, p_, w_, aux_, out_):
    x = carray(x_, ({n},))
    z = carray(z_, ({nlag},))
    p = carray(p_, ({npar},))
    w = carray(w_, ({nsw},))
    aux = carray(aux_, ({naux},))
    out = carray(out_, ({nout},))
"""


def _header(form, sym: _Symbolic) -> str:
    """The module header of a generated module (version, sizes, lag and switch tables)."""
    return _HEADER.format(
        version=CODEGEN_VERSION,
        name=form.name,
        n=form.n,
        nlag=len(form.lags),
        nsw=len(sym.switches),
        npar=len(form.p),
        lag_state=tuple(sym.lag_state),
        lag_statedep=tuple(sym.lag_statedep),
        switch_lagdep=tuple(sym.switch_lagdep),
    )


def generate_source(form, sym: _Symbolic | None = None) -> str:
    """The Python source of the compiled module of a canonical form (a
    :class:`~fluidnet.symbolic.canonical.DDEForm`)."""
    sym = sym or _symbolic(form)
    n, nlag, nsw, npar = form.n, len(form.lags), len(sym.switches), len(form.p)
    dims = {"n": n, "nlag": max(nlag, 1), "nsw": max(nsw, 1), "npar": max(npar, 1)}
    src = [_header(form, sym)]
    tables = _Tables("T")

    def block(exprs, targets: list[int]) -> list[str]:
        if len(exprs) > LOOP_MIN_STATEMENTS:
            return _looped_lines(exprs, targets, tables)
        return _code_lines(exprs, [f"out[{i}]" for i in targets])

    # rhs
    src.append(_DEF.format(name="rhs", naux=1, nout=n, **dims))
    src += block(sym.rhs, list(range(n)))
    # delays: one branch per lag (or per shape of lag)
    src.append(_DEF.format(name="delay", naux=1, nout=1, **dims))
    src.append("    k = int(aux[0])")
    if nlag == 0:
        src.append("    out[0] = 0.0")
    elif nlag > LOOP_MIN_STATEMENTS:
        src += _looped_delay_lines(sym.delays, tables)
    else:
        for k, d in enumerate(sym.delays):
            src.append(f"    {'if' if k == 0 else 'elif'} k == {k}:")
            src += _code_lines([d], ["out[0]"], indent="        ")
        src.append("    else:\n        out[0] = math.nan")
    # switching functions and their gradients
    src.append(_DEF.format(name="switch", naux=1, nout=max(nsw, 1), **dims))
    src += block([s.surface for s in sym.switches], list(range(nsw)))
    if not nsw:
        src.append("    out[0] = 0.0")
    width = n + 1
    src.append(_DEF.format(name="sgrad", naux=max(nlag, 1), nout=max(nsw * width, 1), **dims))
    flat = [g for row in sym.grads for g in row]
    if len(flat) > LOOP_MIN_STATEMENTS:
        # most entries of a gradient are zero: clear the output once, then set the others
        src.append(f"    for i in range({len(flat)}):\n        out[i] = 0.0")
        nonzero = [i for i, g in enumerate(flat) if g != 0]
        src += block([flat[i] for i in nonzero], nonzero)
    else:
        src += _code_lines(flat, [f"out[{i}]" for i in range(len(flat))])
    if not nsw:
        src.append("    out[0] = 0.0")
    if tables.lines:
        src.insert(1, "\n".join(["import numpy as np", "", *tables.lines, ""]))
    return "\n".join(src) + "\n"


def _jacobian_entries(form, sym: _Symbolic) -> tuple[list[int], list[sympy.Expr]]:
    """The nonzero entries of the Jacobian (see :func:`generate_jacobian_source`): their flat
    indices ``i * (n + 1) + j`` in increasing order and their expressions."""
    n = form.n
    xs = {f"x[{i}]": i for i in range(n)}
    entries: dict[int, sympy.Expr] = {}
    for i, e in enumerate(sym.rhs):
        for x in sorted(e.free_symbols, key=lambda v: v.name):
            j = n if x == form.t else xs.get(x.name)
            if j is None:
                continue
            d = sympy.diff(e, x)
            if d.has(sympy.Derivative, sympy.Subs):
                raise ModelError(
                    f"model {form.name!r}: the right-hand side of state {form.states[i]!r} "
                    f"cannot be differentiated in {x.name if j == n else form.states[j]!r} "
                    f"(needed by a linearly implicit method): {d}"
                )
            if d != 0:
                entries[i * (n + 1) + j] = d
    keys = sorted(entries)
    return keys, [entries[k] for k in keys]


def generate_jacobian_source(form, sym: _Symbolic | None = None) -> str:
    """The Python source of a module with one compiled function ``jac``: the Jacobian
    ``out[i * (n + 1) + j] = d rhs_i / d x_j`` of a canonical form's right-hand side with
    respect to the current state, and ``out[i * (n + 1) + n] = d rhs_i / d t``, lagged values
    and mode weights held fixed (for linearly implicit methods).

    Raises
    ------
    ModelError
        When sympy cannot differentiate a right-hand side (it names the state).
    """
    sym = sym or _symbolic(form)
    n, nlag, nsw, npar = form.n, len(form.lags), len(sym.switches), len(form.p)
    dims = {"n": n, "nlag": max(nlag, 1), "nsw": max(nsw, 1), "npar": max(npar, 1)}
    keys, exprs = _jacobian_entries(form, sym)
    src = [
        _header(form, sym),
        _DEF.format(name="jac", naux=1, nout=n * (n + 1), **dims),
        f"    for i in range({n * (n + 1)}):\n        out[i] = 0.0",
    ]
    tables = _Tables("T")
    if len(exprs) > LOOP_MIN_STATEMENTS:
        src += _looped_lines(exprs, keys, tables)
    else:
        src += _code_lines(exprs, [f"out[{k}]" for k in keys])
    if tables.lines:
        src.insert(1, "\n".join(["import numpy as np", "", *tables.lines, ""]))
    return "\n".join(src) + "\n"


_JACOBIANS: dict[str, object] = {}


def jacobian_address(cm: CompiledModel) -> int:
    """Machine address of the compiled Jacobian of a compiled model (generated, cached and
    verified like the model's own functions, on first use; see :func:`load_generated`).

    A model of the C backend gets a C Jacobian; when the compiler stopped working since the
    model's library was cached, a numba one (unless ``FLUIDNET_BACKEND=c``).

    Raises
    ------
    OptionError
        When ``FLUIDNET_BACKEND=c`` and the C compiler does not work.
    """
    if cm.jacobian is not None:  # a saved model's, loaded with it
        return int(cm.jacobian.jac.address)
    with _LOCK:
        lib = _JACOBIANS.get(cm.key)
        if lib is None and cm.backend == "c":
            from . import ccodegen

            try:
                lib = _c_library(
                    f"fluidnet_cjac_{cm.key}",
                    lambda: ccodegen.generate_c_jacobian_source(cm.form),
                    cm.key,
                    f"Jacobian of {cm.form.name}",
                    ("jac",),
                )
            except ccodegen.CompilerUnavailable as exc:
                if _backend_request(None) == "c":
                    raise _forced_c_error(cm.form, exc) from None
        if lib is None:
            lib = load_generated(
                f"fluidnet_jac_{_form_key(cm.form, 'numba')}",
                lambda: generate_jacobian_source(cm.form),
                f"Jacobian of {cm.form.name}",
            )
        _JACOBIANS[cm.key] = lib
        return int(lib.jac.address)


# --------------------------------------------------------------------------------- cache
@lru_cache(maxsize=2)
def _generator_digest(backend: str = "numba") -> str:
    """Hash of the generator's source (this module, and :mod:`~fluidnet.dde.ccodegen` for C): a
    change of the generator regenerates every module of its backend."""
    files = [Path(__file__)]
    if backend == "c":
        files.append(Path(__file__).with_name("ccodegen.py"))
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:16]


def _structure(e: sympy.Basic, atoms: dict) -> str:
    """A deterministic description of an expression tree: ``srepr`` of its atoms joined by
    the classes of its nodes in sympy's canonical argument order (a process-independent
    order), 15x faster than ``srepr`` of a large network's equations (which sorts terms for
    printing)."""
    if e.is_Atom:
        text = atoms.get(e)
        if text is None:
            text = atoms[e] = sympy.srepr(e)
        return text
    return f"{type(e).__name__}({','.join(_structure(a, atoms) for a in e.args)})"


def _form_key(form, backend: str = "numba") -> str:
    """Hash of everything that determines the generated code of ``backend`` (``"c"`` or
    ``"numba"``; not the parameter values)."""
    parts = [CODEGEN_VERSION, _generator_digest(backend), backend]
    if backend == "numba":
        import numba

        parts += [numba.__version__, sys.version.split()[0]]
    else:
        parts += [sys.platform, platform.machine()]
    parts += [
        repr(form.states),
        repr(form.params),
        repr(form.nonnegative),
        repr(form.inputs),
    ]
    atoms: dict = {}
    parts += [f"{lag.symbol.name}|{lag.state}|{_structure(lag.delay, atoms)}" for lag in form.lags]
    parts += [_structure(e, atoms) for e in form.rhs]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


_LOCK = threading.Lock()
_MEMO: dict[str, CompiledModel] = {}
_WARNED: set[str] = set()


def _warn_corrupt(key: str, name: str, path: Path, what: str) -> None:
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(
        f"fluidnet: the compile cache of model {name!r} in {path.parent} was corrupt ({what}); "
        "discarded it and compiled again",
        RuntimeWarning,
        stacklevel=4,
    )


def _exec_generated(name: str, path: Path, source: bytes) -> ModuleType:
    """Run the verified bytes ``source`` as module ``name`` (file name ``path``, so that numba
    finds its on-disk cache next to it, itself verified: see :mod:`.numbacache`); the file is
    not read again."""
    from . import numbacache

    numbacache.install()
    module = ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - our own code
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _verified_source(path: Path, generate: Callable[[], str], key: str, label: str) -> tuple:
    """``(bytes, fresh)``: the module's source if it matches the hash recorded in the cache
    index, else newly generated (and recorded). Called with the module's file lock held."""
    directory = path.parent
    index = _read_index(directory)
    recorded = None if index is None else index.get(path.name)
    try:
        source = path.read_bytes()
    except OSError:
        source = None
    if source is not None and recorded is not None and _digest(source) == recorded:
        return source, False
    if source is not None and index is None:
        _warn_corrupt(key, label, path, f"its index {directory / _INDEX} is unreadable")
    elif source is not None and recorded is not None:
        _warn_corrupt(key, label, path, f"{path.name} does not match its recorded hash")
    # unknown or altered code is never run: regenerate it (and drop machine code for it)
    return _regenerate(path, generate), True


def _regenerate(path: Path, generate: Callable[[], str]) -> bytes:
    _discard(path)
    source = generate().encode()
    _write_atomic(path, source)
    _record(path.parent, path.name, _digest(source))
    return source


def load_generated(name: str, generate: Callable[[], str], label: str = "") -> ModuleType:
    """The generated module ``name`` of the cache directory, made by ``generate()`` when it is
    missing or does not match the hash recorded when it was written (a planted or damaged file
    is never run). Concurrent processes generate it once (a file lock). For generated code
    other than the integrator's (e.g. compiled Monte Carlo loops).

    Raises
    ------
    CacheError
        When the cache directory is unsafe (see :func:`cache_dir`).
    """
    if name in sys.modules:
        return sys.modules[name]
    directory = cache_dir()
    path = directory / f"{name}.py"
    with _file_lock(directory / f"{name}.lock"):
        source, _ = _verified_source(path, generate, name, label or name)
        return _exec_generated(name, path, source)


def _load(form, key: str, path: Path) -> tuple[ModuleType, np.ndarray]:
    """The generated module of ``form``, verified against the cache index, and the addresses
    of its compiled functions. Called with the file lock of ``key`` held."""
    import numba

    def generate() -> str:
        return generate_source(form)

    source, fresh = _verified_source(path, generate, key, form.name)
    for attempt in range(2):
        try:
            module = _exec_generated(f"fluidnet_gen_{key}", path, source)
            functions = (module.rhs, module.delay, module.switch, module.sgrad)
            return module, np.array([f.address for f in functions], dtype=np.int64)
        except CacheError:  # a full disk, say: not a damaged file
            raise
        except (numba.core.errors.NumbaError, SyntaxError, NameError) as exc:
            if fresh or attempt:
                raise ModelError(
                    f"model {form.name!r} could not be compiled ({type(exc).__name__}: "
                    f"{str(exc).splitlines()[0] if str(exc) else ''}); generated source: {path}"
                ) from exc
            reason = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # noqa: BLE001 - numba's machine-code cache could not be read
            if attempt:
                raise
            reason = f"{type(exc).__name__} while loading machine code: {exc}"
        _warn_corrupt(key, form.name, path, reason.splitlines()[0])
        source, fresh = _regenerate(path, generate), True
    raise AssertionError("unreachable")  # pragma: no cover


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _c_library(stem: str, generate: Callable[[], str], key: str, label: str, names):
    """The C library ``<stem>.so`` of the cache directory, loaded only when its bytes match the
    digest recorded in the cache index; else compiled again from ``<stem>.c`` (itself verified
    the same way, else generated by ``generate()``), with one warning when a file was found
    altered. Concurrent processes compile it once (a file lock).

    Raises
    ------
    CompilerUnavailable
        When it has to be compiled and the C compiler does not work, or a library just compiled
        cannot be loaded (e.g. a cache directory on a ``noexec`` file system).
    ModelError
        When the compiler rejects the generated source.
    """
    from . import ccodegen

    directory = cache_dir()
    so_path, c_path = directory / f"{stem}.so", directory / f"{stem}.c"
    with _file_lock(directory / f"{stem}.lock"):
        index = _read_index(directory)
        recorded = None if index is None else index.get(so_path.name)
        data = _read_bytes(so_path)
        if data is not None and recorded is not None and _digest(data) == recorded:
            try:
                return ccodegen.open_library(data, so_path, names)
            except OSError as exc:
                _warn_corrupt(key, label, so_path, f"{so_path.name} cannot be loaded: {exc}")
        elif data is not None and index is None:
            _warn_corrupt(key, label, so_path, f"its index {directory / _INDEX} is unreadable")
        elif data is not None and recorded is not None:
            _warn_corrupt(key, label, so_path, f"{so_path.name} does not match its recorded hash")
        # unknown or altered machine code is never run: compile the (verified) source again
        _discard(so_path)
        source, _ = _verified_source(c_path, generate, key, label)
        data = ccodegen.compile_library(source, directory, label, c_path)
        _write_atomic(so_path, data)
        _record(directory, so_path.name, _digest(data))
        try:
            return ccodegen.open_library(data, so_path, names)
        except OSError as exc:
            raise ccodegen.CompilerUnavailable(
                f"the library compiled for {label} cannot be loaded from {directory} ({exc})"
            ) from exc


def _backend_request(backend: str | None) -> str:
    """``"auto"``, ``"c"`` or ``"numba"``: ``backend`` if given, else ``$FLUIDNET_BACKEND``."""
    where = "FLUIDNET_BACKEND" if backend is None else "backend"
    value = os.environ.get("FLUIDNET_BACKEND", "") if backend is None else backend
    if not isinstance(value, str):
        raise OptionError(f"{where} must be 'c', 'numba' or 'auto', not {value!r}")
    value = value.strip().lower() or "auto"
    if value not in ("auto", "c", "numba"):
        raise OptionError(f"{where} must be 'c', 'numba' or 'auto', not {value!r}")
    return value


def _forced_c_error(form, exc: Exception) -> OptionError:
    return OptionError(
        f"the C backend was requested (FLUIDNET_BACKEND=c or backend='c') but model "
        f"{form.name!r} cannot be compiled with it: {exc}. Set CC to a working C compiler, "
        "or use FLUIDNET_BACKEND=numba"
    )


def _compile_c(form, key: str, forced: bool) -> CompiledModel | None:
    """The model compiled by the C backend; ``None`` (to use numba) when the compiler does not
    work or C cannot express the model, unless ``forced``. Called with ``_LOCK`` held."""
    from . import ccodegen

    if form.inputs:
        raise ModelError("cannot integrate a loop-gain form (it has external inputs)")
    stem = f"fluidnet_cgen_{key}"
    if not forced and ccodegen.known_broken():
        # no compiler: only a library cached by an earlier process can serve
        index = _read_index(cache_dir())
        if not index or f"{stem}.so" not in index:
            return None
    try:
        lib = _c_library(
            stem, lambda: ccodegen.generate_c_source(form), key, form.name, ccodegen.MODEL_NAMES
        )
    except ccodegen.CompilerUnavailable as exc:
        if forced:
            raise _forced_c_error(form, exc) from None
        return None
    except ccodegen.Untranslatable:
        if forced:
            raise
        return None
    if (lib.N_STATES, lib.N_LAGS, lib.N_PARAMS) != (form.n, len(form.lags), len(form.p)):
        raise CacheError(f"{lib.path} does not describe model {form.name!r} (sizes differ)")
    return CompiledModel.of(form, key, lib, cache_dir() / f"{stem}.c", "c")


def compile_form(form, backend: str | None = None) -> CompiledModel:
    """Generate, cache and compile the functions of a :class:`~fluidnet.symbolic.canonical.DDEForm`.

    Two backends compile the same functions: the system C compiler (``"c"``: about 0.1 s for
    a small model, and loading a cached library needs neither a compiler nor numba) and numba
    (``"numba"``: 1-3 s for a small model). By default (``"auto"``) C is used when a compiler
    works (``$CC``, else ``cc`` or ``gcc``) and numba otherwise; the environment variable
    ``FLUIDNET_BACKEND`` or ``backend`` chooses one. The result records the backend used.

    The result is memoized per process; the generated code and machine code are cached on disk
    (see :func:`cache_dir`), so another process with the same model structure does not
    recompile. Generated code is run only when its bytes match the hash recorded when it was
    written; a file found corrupt is discarded and compiled again (with one warning). A file
    lock makes concurrent processes compile a model once.

    Parameters
    ----------
    form : DDEForm
    backend : {"auto", "c", "numba"}, optional
        Default: ``$FLUIDNET_BACKEND``, else ``"auto"``.

    Raises
    ------
    ModelError
        For a form that cannot be integrated (external inputs, unsupported switching
        conditions) or generated code the compiler rejects (the message names the file).
    OptionError
        For an unknown backend, or ``"c"`` requested when the C compiler does not work (the
        message names the command and what it printed).
    CacheError
        When the cache directory is unsafe (see :func:`cache_dir`).
    """
    want = _backend_request(backend)
    with _LOCK:
        if want != "numba":
            key = _form_key(form, "c")
            if key in _MEMO:
                return _MEMO[key]
            compiled = _compile_c(form, key, forced=want == "c")
            if compiled is not None:
                _MEMO[key] = compiled
                return compiled
        key = _form_key(form, "numba")
        if key in _MEMO:
            return _MEMO[key]
        directory = cache_dir()
        path = directory / f"fluidnet_gen_{key}.py"
        with _file_lock(directory / f"fluidnet_gen_{key}.lock"):
            module, _ = _load(form, key, path)
        compiled = CompiledModel.of(form, key, module, path, "numba")
        _MEMO[key] = compiled
        return compiled


def compile_model(model, backend: str | None = None) -> CompiledModel:
    """The :class:`CompiledModel` of a :class:`fluidnet.Model` (see :func:`compile_form`)."""
    want = _backend_request(backend)
    return model.cached(f"compiled integrator ({want})", lambda: compile_form(model.form, want))

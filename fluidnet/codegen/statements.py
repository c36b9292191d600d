"""Statements of generated code: common subexpressions, and loops over repeated structure.

:func:`code_lines` writes assignments with common subexpressions hoisted (:func:`sympy.cse`).
A large model (a network of thousands of flows) repeats a few formulas over many entries:
:func:`looped_lines` finds the statements of one shape (the same formula of different
indices) and computes each set by one loop over a table of indices, so that
the compiler types a loop once. The language (Python for numba, or C) is an argument:
:class:`~fluidnet.codegen.printers.PyLang` or :class:`~fluidnet.codegen.printers.CLang`.
"""

from __future__ import annotations

import re
from typing import cast

import numpy as np
import sympy

from .printers import PY, Lang

__all__ = [
    "LOOP_MIN_GROUP",
    "LOOP_MIN_STATEMENTS",
    "Tables",
    "code_lines",
    "delay_groups",
    "looped_lines",
]


def code_lines(exprs, targets: list[str], indent: str = "    ", lang: Lang = PY) -> list[str]:
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


class Tables:
    """Module-level integer tables of the looped code (one name per table)."""

    def __init__(self, prefix: str, lang: Lang = PY):
        self.prefix = prefix
        self.lang = lang
        self.lines: list[str] = []

    def add(self, rows) -> str:
        name = f"_{self.prefix}{len(self.lines)}"
        self.lines.append(self.lang.table(name, np.asarray(rows, dtype=np.int64)))
        return name


def _shape_key(e: sympy.Basic, storage: dict) -> str:
    """A description of ``e`` that ignores indices (the order key of commutative arguments)."""
    if isinstance(e, sympy.Symbol):
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


def _number_key(e: sympy.Expr) -> str:
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


def _fill(template: str, index: list[int], table: str | None = None, lang: Lang = PY) -> str:
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
            stack.extend(cast("tuple[sympy.Expr, ...]", e.args))

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


def looped_lines(
    exprs, targets: list[int], tables: Tables, out: str = "out", lang: Lang = PY
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
        used = cast("set[sympy.Symbol]", val.free_symbols)
        level[sym] = 1 + max((level[d] for d in used if d in level), default=-1)
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
                        name = printer.doprint(target)
                        storage[target] = name
                        lines.append(lang.assign(name, code, temp=True))
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


def delay_groups(delays, tables: Tables, lang: Lang = PY) -> tuple[str, str, list[str]]:
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

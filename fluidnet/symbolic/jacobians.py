"""Sparse Jacobians of large symbolic systems, differentiated forward through shared
subexpressions (for linearization, :mod:`fluidnet.symbolic.linearize`, and Newton's method on
large models, :mod:`fluidnet.symbolic.newton`)."""

from __future__ import annotations

import sympy

__all__ = ["forward_jacobian", "sparse_jacobian"]


def sparse_jacobian(exprs, variables) -> tuple[list, list]:
    """Nonzero first derivatives of ``exprs`` with respect to ``variables``, sparsely.

    The expressions are split into one definition per operation,
    ``w_i = op(variables, w_<i)`` (shared subtrees defined once), and differentiated forward
    through them: ``dw_i/dv`` is kept only for the variables ``w_i`` depends on, and each step
    differentiates one operation. The cost grows with the number of nonzero entries and the
    size of the expressions, not with the size of a dense Jacobian (``n x (n + lags)``), and a
    large sum (the load of a link, a path price) is not differentiated again for every entry.

    Returns
    -------
    definitions : list of (Symbol, Expr)
        The subexpressions, in order; the derivatives use their symbols.
    entries : list of (int, int, Expr)
        ``(row, variable index, derivative)`` for every derivative that is not zero.
    """
    values, derivs, _, entries = forward_jacobian(exprs, variables)
    return values + derivs, entries


def forward_jacobian(exprs, variables) -> tuple[list, list, list, list]:
    """The single-assignment form of ``exprs`` and their nonzero derivatives (see
    :func:`sparse_jacobian`).

    Returns
    -------
    values : list of (Symbol, Expr)
        One definition per operation on the variables, in order.
    derivatives : list of (Symbol, Expr)
        Definitions of derivatives used by the entries (after ``values``).
    outputs : list of Expr
        ``exprs`` in the symbols of ``values``.
    entries : list of (int, int, Expr)
        ``(row, variable index, derivative)`` for every derivative that is not zero.
    """
    index = {v: k for k, v in enumerate(variables)}
    defs, reduced = _single_assignment(list(exprs), set(variables))
    grads: dict = {}

    def gradient(e) -> dict:
        out: dict = {}
        for u in e.free_symbols:
            if u in index:
                du = {index[u]: sympy.S.One}
            elif u in grads:
                du = grads[u]
            else:
                continue
            if not du:
                continue
            pe = _partial(e, u)
            if pe == 0:
                continue
            if len(du) > 1 and not (pe.is_Atom or pe.is_Symbol):
                # used for every variable u depends on: defined once, by name
                name = next(names)
                derivs.append((name, pe))
                pe = name
            for v, dv in du.items():
                # unevaluated products and sums: sympy's canonical ordering of large
                # expressions is the expensive part, and lambdify prints them as they are
                if dv is sympy.S.One:
                    term = pe
                elif pe is sympy.S.One:
                    term = dv
                else:
                    term = sympy.Mul(pe, dv, evaluate=False)
                out.setdefault(v, []).append(term)
        return {v: t[0] if len(t) == 1 else sympy.Add(*t, evaluate=False) for v, t in out.items()}

    names = sympy.numbered_symbols("_d")
    derivs: list = []
    for w, e in defs:
        g = gradient(e)
        for v, d in g.items():
            if not (d.is_Atom or d.is_Symbol):
                # a derivative used further up is defined once, by name: expressions stay
                # small however deep the model is
                name = next(names)
                derivs.append((name, d))
                g[v] = name
        grads[w] = g
    entries = []
    for i, e in enumerate(reduced):
        g = gradient(e)
        for v in sorted(g):
            if g[v] != 0:
                entries.append((i, v, g[v]))
    return defs, derivs, reduced, entries


def _partial(e, u):
    """``de/du`` for one operation ``e`` of :func:`_single_assignment` (its arguments are
    symbols or constants), without sympy's general machinery for sums and products."""
    args = e.args
    if isinstance(e, (sympy.Abs, sympy.sign)) and args[0] == u:
        # the model's quantities are real: |u|' = sign(u), sign(u)' = 0 off u = 0 (sympy's
        # derivative of Abs for a symbol not declared real is re/im terms nothing can print);
        # on the kink u = 0 the linearization refuses (a switching surface)
        return sympy.sign(u) if isinstance(e, sympy.Abs) else sympy.S.Zero
    if e.is_Add and args.count(u) == 1:
        return sympy.S.One
    if e.is_Mul and args.count(u) == 1:
        return sympy.Mul(*[a for a in args if a != u], evaluate=False)
    if e.is_Pow and args[0] == u and u not in args[1].free_symbols:
        b, k = args
        return sympy.Mul(k, sympy.Pow(b, k - 1, evaluate=False), evaluate=False)
    return e.diff(u)


def _single_assignment(exprs: list, variables: set) -> tuple[list, list]:
    """``exprs`` as a list of definitions ``(w, op(args))``, one per operation on an expression
    that depends on ``variables`` (subtrees free of them stay inline), and the outputs."""
    defs: list = []
    memo: dict = {}
    depends: dict = {}
    names = sympy.numbered_symbols("_w")

    def uses(e) -> bool:
        # e.free_symbols & variables, memoized over shared subtrees (free_symbols is computed
        # afresh at every node: quadratic in the depth of a large model's expressions)
        if e.is_Atom:
            return e in variables
        got = depends.get(e)
        if got is None:
            got = depends[e] = any(uses(a) for a in e.args)
        return got

    def visit(e):
        if e.is_Atom or not isinstance(e, sympy.Expr):
            return e
        if e in memo:
            return memo[e]
        if not uses(e):
            return e
        if all(isinstance(a, sympy.Expr) for a in e.args):
            node = e.func(*[visit(a) for a in e.args])
        else:  # Piecewise and other nodes with non-expression arguments: one block
            node = e
        w = next(names)
        defs.append((w, node))
        memo[e] = w
        return w

    return defs, [visit(e) for e in exprs]

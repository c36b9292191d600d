"""Stationary laws of window Markov chains with state-dependent marking.

A congestion window that grows by ``increase(w)`` on each unmarked acknowledgement and shrinks
by ``decrease(w)`` on each marked one, marked with a probability ``mark(w)`` that depends on
the window (through the queue it builds), is a Markov chain (Misra, Baras & Ott 2000, eqs
(1)-(2), (17)). A fluid model gives only its zero-drift point; this package gives its whole
stationary law, by three independent methods:

* :func:`stationary_distribution`: the piecewise-deterministic (small-increment) limit, solved
  on a geometric grid by backward marching (Misra, Baras & Ott 2000, Sec IV-B; multiplicative
  decrease);
* :func:`constant_mark_distribution`: the exact series for a constant marking probability (the
  test oracle; generalizes Ott, Kemperman & Mathis 1996);
* :func:`monte_carlo`: the exact chain, many seeded chains compiled by numba, with confidence
  intervals.

Each returns a :class:`WindowDistribution`: moments, CoV, skew, mode, quantiles and the
marking rate per ACK, the per-time law (``.time_average``) and ``.plot()``. The chain itself
is a :class:`WindowChain` built from sympy expressions.

Example
-------
>>> import fluidnet as fn
>>> w, p = fn.sympy.symbols("w p")
>>> chain = fn.WindowChain(increase=1 / w, decrease=w / 2, mark=p, params={p: 0.01})
>>> d = chain.stationary()
>>> round(d.cov, 4)
0.3792
"""

from __future__ import annotations

from .._lazy import attach_stub

# Public names: the stub __init__.pyi lists them once (for type checkers too); each is
# imported from its module on first access (see fluidnet._lazy).
__getattr__, __dir__, __all__ = attach_stub(globals())

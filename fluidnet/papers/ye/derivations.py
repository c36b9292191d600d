"""The paper's derivations as sympy identities (residual 0): the reverse engineering of the law
family (3)-(4) gives (8)-(9) for slow start, (12)-(13) for congestion avoidance, (14) for
continuity, (19) for the approximate law (18), and (22) for the MRG law (20)-(21).

The printed sides are typed from the paper (:func:`.data.printed`, the target table); the other
sides come from :mod:`fluidnet.models.sliding_mode` (the laws and
:func:`~fluidnet.models.reverse_engineer`).
"""

from __future__ import annotations

import sympy

from ...models.sliding_mode import (
    RATE,
    approximate_law,
    approximate_utility,
    continuity_constant,
    mrg_law,
    reverse_engineer,
    tcp_law,
    tcp_utility,
)
from ..registry import Context
from . import PAPER
from .data import printed

x = RATE
al, be, mu, xs, r = sympy.symbols("alpha beta mu x_s r_max", positive=True)


def _law_symbols(law) -> dict:
    """The law's parameter symbols replaced by the symbols used here."""
    names = {"alpha": al, "beta": be, "mu": mu, "x_s": xs, "r_max": r}
    return {law.symbol(k): names[k] for k in law.params if k in names}


@PAPER.item(title="(3)-(22): the reverse engineering as sympy identities")
def derivations(ctx: Context) -> dict:
    """Every symbolic step of Sec II, IV and V, reverse-engineered from the library's laws (the
    printed side of each identity is in the target table)."""
    P = printed()
    ss = reverse_engineer(al * x, be * x)
    ca = reverse_engineer(mu, be * x)
    # (14): U continuous at x_s, and the library's C equals the printed one
    U = tcp_utility(mu, be, al, xs)
    # the TCP law's branches reverse-engineer to the same utility slopes
    law = tcp_law(0.1, x_s=1.0)
    rep = _law_symbols(law)
    ap = approximate_law(0.1, 1.0)
    apr = reverse_engineer(ap.increase, ap.decrease).marginal_utility.xreplace(_law_symbols(ap))
    # (22): MRG increase without congestion, alpha = 1, beta = 1/2
    mg = mrg_law(0.1, 5.0, 2.0, x_s=1.0)
    th = mg.symbol("theta")
    a_mrg = mg.increase.xreplace(_law_symbols(mg)).subs({al: 1, be: sympy.Rational(1, 2)})
    # averaging (20) over the sliding motion: duty fraction p below theta
    p, f, rr = sympy.symbols("p f r", positive=True)
    z = sympy.Symbol("z", positive=True)
    avg = (f * z + (rr - 1) * z) * (1 - p) - (1 - f) * z * p  # a_mrg (1 - p) - d p
    p_star = sympy.solve(sympy.Eq(avg, 0), p)[0]
    return {
        "slow start: z = alpha x / f = (alpha + beta) x": ss.z,
        "slow start: U' = log(1 + a/d) = d(8)/dx": ss.marginal_utility,
        "congestion avoidance: z = mu + beta x": ca.z,
        "congestion avoidance: U' = d(12)/dx": ca.marginal_utility,
        "U'' = -mu / (x (mu + beta x)) < 0 (strictly concave)": ca.marginal_utility.diff(x),
        "C = (8) - (12) at x_s (continuity)": P["(8)"].subs(x, xs) - P["(12)"].subs(x, xs),
        "library continuity_constant = (14)": continuity_constant(mu, be, al, xs),
        "tcp_utility below x_s": U.args[0][0],
        "tcp_utility above x_s": U.args[1][0],
        "tcp_law increase: alpha x below x_s, mu above": law.increase.xreplace(rep),
        "tcp_law decrease: beta x": law.decrease.xreplace(rep),
        "approximate law (10)+(18): exp(U') = exp(d(19)/dx)": sympy.exp(apr),
        "U' of the law (10)+(18) from reverse_engineer": apr,
        "library approximate_utility = (19)": approximate_utility(mu, xs),
        "MRG increase in slow start (x < x_s < theta)": a_mrg.subs({xs: 2 * x, th: 4 * x}),
        "MRG increase in congestion avoidance (x_s < x < theta)": a_mrg.subs(
            {xs: x / 2, th: 2 * x}
        ),
        "MRG above theta is the TCP law": a_mrg.subs({xs: x / 2, th: x / 2}),
        "sliding average: -log(1 - p) = U' + log r_max": sympy.expand_log(
            -sympy.log(1 - p_star), force=True
        ),
    }

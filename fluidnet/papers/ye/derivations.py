"""The paper's derivations as sympy identities (residual 0): the reverse engineering of the law
family (3)-(4) gives (8)-(9) for slow start, (12)-(13) for congestion avoidance, (14) for
continuity, (19) for the approximate law (18), and (22) for the MRG law (20)-(21).

The right-hand sides ("printed") are typed here from the paper; the left-hand sides come from
:mod:`fluidnet.models.sliding_mode` (the laws and :func:`~fluidnet.models.reverse_engineer`).
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

x = RATE
al, be, mu, xs, r = sympy.symbols("alpha beta mu x_s r_max", positive=True)


def printed() -> dict[str, sympy.Expr]:
    """The formulas as printed in the paper (with the (18) misprint fixed, see the README)."""
    return {
        "(8)": x * sympy.log(1 + al / be),
        "(9)": (al + be) * x,
        "(12)": (mu / be + x) * (sympy.log(mu + be * x) - 1) - x * (sympy.log(be * x) - 1),
        "(13)": mu + be * x,
        "(14)": xs * sympy.log((al + be) * xs / (mu + be * xs))
        - mu / be * sympy.log(mu + be * xs)
        + mu / be,
        "(19)": (mu + x - xs) * sympy.log(mu + x - xs) - (x - xs) * sympy.log(x - xs),
        "(22) slow start": (3 * r - 1) * x / 2,
        "(22) congestion avoidance": (r - 1) * x / 2 + mu * r,
    }


def _law_symbols(law) -> dict:
    """The law's parameter symbols replaced by the symbols used here."""
    names = {"alpha": al, "beta": be, "mu": mu, "x_s": xs, "r_max": r}
    return {law.symbol(k): names[k] for k in law.params if k in names}


def identities() -> list[tuple[str, str, sympy.Expr, sympy.Expr]]:
    """``(ref, what, expected, ours)`` for every derivation."""
    P = printed()
    out = []
    ss = reverse_engineer(al * x, be * x)
    out.append(("(9)", "slow start: z = alpha x / f = (alpha + beta) x", P["(9)"], ss.z))
    out.append(
        ("(8)", "slow start: U' = log(1 + a/d) = d(8)/dx", P["(8)"].diff(x), ss.marginal_utility)
    )
    ca = reverse_engineer(mu, be * x)
    out.append(("(13)", "congestion avoidance: z = mu + beta x", P["(13)"], ca.z))
    out.append(
        ("(12)", "congestion avoidance: U' = d(12)/dx", P["(12)"].diff(x), ca.marginal_utility)
    )
    out.append(
        (
            "(12)",
            "U'' = -mu / (x (mu + beta x)) < 0 (strictly concave)",
            -mu / (x * (mu + be * x)),
            ca.marginal_utility.diff(x),
        )
    )
    # (14): U continuous at x_s, and the library's C equals the printed one
    cont = P["(8)"].subs(x, xs) - P["(12)"].subs(x, xs)
    out.append(("(14)", "C = (8) - (12) at x_s (continuity)", P["(14)"], cont))
    out.append(
        (
            "(14)",
            "library continuity_constant = (14)",
            P["(14)"],
            continuity_constant(mu, be, al, xs),
        )
    )
    # the library's composite utility: each branch is the printed formula
    U = tcp_utility(mu, be, al, xs)
    out.append(("(8)", "tcp_utility below x_s", P["(8)"], U.args[0][0]))
    out.append(("(12)+(14)", "tcp_utility above x_s", P["(12)"] + P["(14)"], U.args[1][0]))
    # the TCP law's branches reverse-engineer to the same utility slopes
    law = tcp_law(0.1, x_s=1.0)
    rep = _law_symbols(law)
    inc = law.increase.xreplace(rep)
    dec = law.decrease.xreplace(rep)
    out.append(
        (
            "(6),(10)",
            "tcp_law increase: alpha x below x_s, mu above",
            sympy.Piecewise((al * x, x < xs), (mu, True)),
            inc,
        )
    )
    out.append(("(7),(11)", "tcp_law decrease: beta x", be * x, dec))
    # (18)/(19)
    ap = approximate_law(0.1, 1.0)
    apr = reverse_engineer(ap.increase, ap.decrease).marginal_utility.xreplace(_law_symbols(ap))
    out.append(
        (
            "(19)",
            "approximate law (10)+(18): exp(U') = exp(d(19)/dx)",
            sympy.exp(P["(19)"].diff(x)),
            sympy.exp(apr),
        )
    )
    out.append(
        ("(19)", "U' of the law (10)+(18) from reverse_engineer", sympy.log(1 + mu / (x - xs)), apr)
    )
    out.append(
        ("(19)", "library approximate_utility = (19)", P["(19)"], approximate_utility(mu, xs))
    )
    # (22): MRG increase without congestion, alpha = 1, beta = 1/2
    mg = mrg_law(0.1, 5.0, 2.0, x_s=1.0)
    rep = _law_symbols(mg)
    th = mg.symbol("theta")
    a_mrg = mg.increase.xreplace(rep).subs({al: 1, be: sympy.Rational(1, 2)})
    out.append(
        (
            "(22)",
            "MRG increase in slow start (x < x_s < theta)",
            P["(22) slow start"],
            a_mrg.subs({xs: 2 * x, th: 4 * x}),
        )
    )
    out.append(
        (
            "(22)",
            "MRG increase in congestion avoidance (x_s < x < theta)",
            P["(22) congestion avoidance"],
            a_mrg.subs({xs: x / 2, th: 2 * x}),
        )
    )
    out.append(
        ("(20)-(21)", "MRG above theta is the TCP law", mu, a_mrg.subs({xs: x / 2, th: x / 2}))
    )
    # averaging (20) over the sliding motion: duty fraction p below theta
    p, f, rr = sympy.symbols("p f r", positive=True)
    z = sympy.Symbol("z", positive=True)
    avg = (f * z + (rr - 1) * z) * (1 - p) - (1 - f) * z * p  # a_mrg (1 - p) - d p
    p_star = sympy.solve(sympy.Eq(avg, 0), p)[0]
    Up = -sympy.log(1 - f)
    out.append(
        (
            "(20)",
            "sliding average: -log(1 - p) = U' + log r_max",
            Up + sympy.log(rr),
            sympy.expand_log(-sympy.log(1 - p_star), force=True),
        )
    )
    return out


@PAPER.item("derivations", title="(3)-(22): the reverse engineering as sympy identities")
def derivations(ctx: Context) -> None:
    """Every symbolic step of Sec II, IV and V, checked as an identity with residual 0."""
    for ref, what, expected, ours in identities():
        ctx.check_expr(ref, what, expected, ours, source="printed" if "(" in ref else "derived")

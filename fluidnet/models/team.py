"""The team problems of Kunniyur & Srikant (2003), solved as convex programs (scipy).

Source: S. Kunniyur and R. Srikant, "End-to-End Congestion Control Schemes: Utility Functions,
Random Losses and ECN Marks", IEEE/ACM Trans. Networking 11(5), 2003:

* (3) (Prop 1) ``max sum_r [w_r/(alpha_r beta_r) U_r(x_r) - beta (1 - alpha_r)/alpha_r x_r]
  - beta sum_l int_0^{y_l} p(C_l, u) du`` over ``x >= 0``. As printed, the random-loss term
  stands outside ``sum_r``; it is a term per user and belongs inside the sum (its first-order
  condition, printed in the proof, has it per user);
* (5) (Cor 1): (3) without random losses;
* (6)-(8): ``max sum_r (w_r/beta_r) U_r(x_r)`` subject to ``y_l <= C_l``, the ``beta -> inf``
  limit of (5);
* (42) (Prop 6): with ECN marks at levels ``C~_l`` and users reacting only to marks, the weights
  are ``w_r/(beta_r alpha_r)`` and the random-loss term disappears. Printed with ``C_l`` in the
  penalty; the marks are at ``C~_l`` (Sec V-A) so ``C~_l`` is meant.

These solvers do not use the ODE models: they maximise the objectives directly, so that the
equilibria of :func:`fluidnet.models.utility_primal` can be checked against them (the paper's
claim, Prop 2). A route with ``N_r`` users contributes ``N_r`` times its user's terms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AnalysisError, OptionError, ParameterError
from .penalty import fluid_penalty, penalty_integral
from .user_network import UserNetwork

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "CapacityOptimum",
    "capacity_optimum",
    "penalty_optimum",
    "team_gradient",
    "team_objective",
    "team_weights",
]

_FEEDBACK = ("loss", "ecn")


def _levels(net: UserNetwork, levels) -> np.ndarray:
    if levels is None:
        return net.C
    lv = np.broadcast_to(np.asarray(levels, dtype=float), (net.n_links,)).astype(float)
    for i, v in enumerate(lv):
        if not (np.isfinite(v) and v >= 0):
            raise ParameterError(f"levels[{i}] = {v!r} (link {i + 1}) must be finite and >= 0")
    return lv


def _check(beta: float, feedback: str) -> float:
    if feedback not in _FEEDBACK:
        raise OptionError(f"feedback = {feedback!r} must be one of {_FEEDBACK}")
    b = float(beta)
    if not (np.isfinite(b) and b > 0):
        raise ParameterError(f"beta = {beta!r} must be finite and > 0")
    return b


def team_weights(net: UserNetwork, *, rtt_weighted: bool = False) -> np.ndarray:
    """The utility weights of (3)/(42): ``w_r/(alpha_r beta_r)``.

    With ``rtt_weighted`` the weights of Remark 3 (26) and Remark 4 (43), for window laws that
    ignore the round-trip delay: divided by ``d_r`` for ``log`` and by ``d_r^(nu+1)`` for
    ``-1/x^nu`` users.

    Parameters
    ----------
    net : UserNetwork
    rtt_weighted : bool
        Use the RTT-weighted weights.

    Returns
    -------
    numpy.ndarray
        One weight per route.

    Raises
    ------
    ParameterError
        With ``rtt_weighted`` for a utility outside the two families (no ``nu``).
    """
    W = net.w / (net.alpha * net.beta_r)
    if rtt_weighted:
        for r, u in enumerate(net.utilities):
            if u.nu is None:
                assert net.names is not None  # set by UserNetwork.__post_init__
                raise ParameterError(
                    f"rtt_weighted: route {net.names[r]} has utility {u.name}, outside the "
                    "log / -1/x^nu families of (26)"
                )
            W[r] /= net.d[r] ** (u.nu + 1.0)
    return W


def team_objective(
    net: UserNetwork,
    x: ArrayLike,
    beta: float,
    *,
    levels: ArrayLike | None = None,
    feedback: str = "loss",
    rtt_weighted: bool = False,
) -> float:
    """The team objective (3) (``feedback="loss"``) or (42) (``"ecn"``) at per-user rates ``x``.

    Parameters
    ----------
    net : UserNetwork
    x : array_like
        Per-user rate of each route (> 0).
    beta : float
        Network penalty (price) ``beta``.
    levels : array_like, optional
        The rate at which each link's penalty starts: the marking levels ``C~_l`` (default the
        capacities ``C_l``).
    feedback : {"loss", "ecn"}
        Users react to losses (random and congestion: (3)) or only to marks ((42)).
    rtt_weighted : bool
        Use the RTT-weighted utilities of (26)/(43).

    Returns
    -------
    float
        It increases along every trajectory of the rate laws (9)/(10) (a Lyapunov function).
    """
    b = _check(beta, feedback)
    x = np.asarray(x, dtype=float)
    W = team_weights(net, rtt_weighted=rtt_weighted)
    util = np.array([float(u.value(xr)) for u, xr in zip(net.utilities, x, strict=True)])
    per_user = W * util
    if feedback == "loss":
        per_user = per_user - b * (1.0 - net.alpha) / net.alpha * x
    y = net.loads(x)
    return float(net.N @ per_user - b * penalty_integral(y, _levels(net, levels)).sum())


def team_gradient(
    net: UserNetwork,
    x: ArrayLike,
    beta: float,
    *,
    levels: ArrayLike | None = None,
    feedback: str = "loss",
    rtt_weighted: bool = False,
) -> np.ndarray:
    """``(1/N_r) dV/dx_r`` of :func:`team_objective`: the first-order conditions (4).

    ``w_r/(alpha_r beta_r) U_r'(x_r) - beta sum_{l in r} p_l(y_l) - beta (1 - alpha_r)/alpha_r``
    (the last term only with ``feedback="loss"``).

    Parameters
    ----------
    net, x, beta, levels, feedback, rtt_weighted
        As in :func:`team_objective`.

    Returns
    -------
    numpy.ndarray
        One entry per route.
    """
    b = _check(beta, feedback)
    x = np.asarray(x, dtype=float)
    W = team_weights(net, rtt_weighted=rtt_weighted)
    marg = np.array([float(u.marginal(xr)) for u, xr in zip(net.utilities, x, strict=True)])
    p = fluid_penalty(net.loads(x), _levels(net, levels))
    g = W * marg - b * (net.A.T @ p)
    if feedback == "loss":
        g = g - b * (1.0 - net.alpha) / net.alpha
    return g


def penalty_optimum(
    net: UserNetwork,
    beta: float,
    *,
    levels: ArrayLike | None = None,
    feedback: str = "loss",
    rtt_weighted: bool = False,
    x0: ArrayLike | None = None,
) -> np.ndarray:
    """The unique maximiser of (3), (5) or (42): the Nash equilibrium of Prop 1 / Prop 6.

    The strictly concave objective is maximised over ``log x`` by L-BFGS-B and the first-order
    conditions are then solved to rounding accuracy from that point (scipy ``root``).

    Parameters
    ----------
    net, beta, levels, feedback, rtt_weighted
        As for :func:`team_objective`.
    x0 : array_like, optional
        Starting rates (default: each route's share of its tightest link).

    Returns
    -------
    numpy.ndarray
        Per-user rates.

    Raises
    ------
    AnalysisError
        When the first-order conditions are not met to ``1e-9`` relative at the result.
    """
    from scipy import optimize

    b = _check(beta, feedback)
    lv = _levels(net, levels)
    S = net.n_routes
    if x0 is None:
        share = np.array(
            [min(net.C[ll] / net.loads(np.ones(S))[ll] for ll in net.links_of(r)) for r in range(S)]
        )
        x0 = share
    z0 = np.log(np.asarray(x0, dtype=float))
    kw: dict[str, Any] = {"levels": lv, "feedback": feedback, "rtt_weighted": rtt_weighted}

    def negv(z):
        return -team_objective(net, np.exp(z), b, **kw)

    def neggrad(z):
        x = np.exp(z)
        return -net.N * team_gradient(net, x, b, **kw) * x

    # the optimum has every x_r > 0 and below a large multiple of the largest capacity
    hi = float(np.log(1e6 * net.C.max()))
    bounds = [(float(z) - 40.0, hi) for z in z0]
    res = optimize.minimize(
        negv,
        z0,
        jac=neggrad,
        method="L-BFGS-B",
        bounds=bounds,
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000},
    )
    # polish: Newton's method on the first-order conditions with the one-sided Hessian of the
    # penalty at its kink (semismooth Newton; negative definite everywhere); steps are
    # halved until the objective (or, near the optimum,
    # the gradient) improves and the rates stay positive.
    x = np.exp(res.x)
    W = team_weights(net, rtt_weighted=rtt_weighted)
    v = team_objective(net, x, b, **kw)
    for _ in range(200):
        g = team_gradient(net, x, b, **kw)
        gn = np.linalg.norm(g / (W * _marginals(net, x)))
        if gn < 1e-13:
            break
        y = net.loads(x)
        dp = np.where(y > lv, lv / y**2, 0.0)
        H = np.diag(W * _curvatures(net, x)) - b * (net.A.T * dp) @ net.A * net.N
        step = np.linalg.solve(H, -g)
        lam = 1.0
        while lam > 1e-14:
            xn = x + lam * step
            if np.all(xn > 0):
                vn = team_objective(net, xn, b, **kw)
                gnew = team_gradient(net, xn, b, **kw) / (W * _marginals(net, xn))
                if vn > v or np.linalg.norm(gnew) < gn:  # rounding hides V's increase near x*
                    break
            lam /= 2
        else:
            break
        x, v = xn, vn
    resid = np.max(np.abs(team_gradient(net, x, b, **kw) / (W * _marginals(net, x))))
    if not resid < 1e-9:
        raise AnalysisError(
            f"penalty_optimum: first-order conditions (4) not met, relative residual {resid:.3g}"
        )
    return x


def _marginals(net: UserNetwork, x) -> np.ndarray:
    return np.array([float(u.marginal(v)) for u, v in zip(net.utilities, x, strict=True)])


def _curvatures(net: UserNetwork, x) -> np.ndarray:
    return np.array([float(u.curvature(v)) for u, v in zip(net.utilities, x, strict=True)])


@dataclass(frozen=True)
class CapacityOptimum:
    """The solution of (6)-(8): rates and the links' Lagrange multipliers.

    Attributes
    ----------
    x : numpy.ndarray
        Per-user rate of each route.
    multipliers : numpy.ndarray
        ``lambda_l >= 0`` with ``(w_r/beta_r) U_r'(x_r) = sum_{l in r} lambda_l`` and
        ``lambda_l (y_l - C_l) = 0``.
    loads : numpy.ndarray
        ``y_l``.
    """

    x: np.ndarray
    multipliers: np.ndarray
    loads: np.ndarray

    def to_xarray(self) -> Any:
        """Rates along ``route``, multipliers and loads along ``link``, as an
        :class:`xarray.Dataset`.

        Returns
        -------
        xarray.Dataset
        """
        import xarray as xr

        return xr.Dataset(
            {
                "x": ("route", np.asarray(self.x, dtype=float)),
                "multipliers": ("link", np.asarray(self.multipliers, dtype=float)),
                "loads": ("link", np.asarray(self.loads, dtype=float)),
            }
        )

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The rate of each route (bars).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (a new figure by default).
        **kwargs
            Passed to ``ax.bar``.

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        x = np.asarray(self.x, dtype=float)
        ax.bar(np.arange(x.size), x, **kwargs)
        ax.set_xlabel("route")
        ax.set_ylabel("rate at the optimum")
        return ax


def capacity_optimum(net: UserNetwork, *, rtt_weighted: bool = False) -> CapacityOptimum:
    """The optimum of (6)-(8): ``max sum_r N_r (w_r/beta_r) U_r(x_r)`` s.t. ``y_l <= C_l``.

    Solved by SLSQP, then the Karush-Kuhn-Tucker system on the active links is solved by
    Newton's method (scipy ``root``) for the rates and the multipliers together.

    Parameters
    ----------
    net : UserNetwork
        ``alpha`` is ignored: (6) is the problem without random losses.
    rtt_weighted : bool
        Weights of (26) instead of (6).

    Returns
    -------
    CapacityOptimum

    Raises
    ------
    AnalysisError
        When the KKT conditions are not met to ``1e-9`` (relative) at the result.

    Examples
    --------
    >>> from fluidnet.models import UserNetwork, capacity_optimum, log_utility, power_utility
    >>> net = UserNetwork([[1, 1]], [log_utility(), power_utility(1)], C=300, N=50)
    >>> capacity_optimum(net).x.round(6)      # Sec IV: 4.0 and 2.0
    array([4., 2.])
    """
    from scipy import optimize

    ones = net.replace(alpha=1.0)
    W = team_weights(ones, rtt_weighted=rtt_weighted)
    A, N, C = net.A, net.N, net.C
    S = net.n_routes
    share = np.array(
        [min(C[ll] / net.loads(np.ones(S))[ll] for ll in net.links_of(r)) for r in range(S)]
    )
    xs = share  # scale of the variables
    utils = net.utilities

    def f(v):
        x = v * xs
        return -float(sum(N[r] * W[r] * float(utils[r].value(x[r])) for r in range(S)))

    def g(v):
        x = v * xs
        return -np.array([N[r] * W[r] * float(utils[r].marginal(x[r])) for r in range(S)]) * xs

    cons = {
        "type": "ineq",
        "fun": lambda v: (C - A @ (N * v * xs)) / C,
        "jac": lambda v: -(A * (N * xs)) / C[:, None],
    }
    res = optimize.minimize(
        f,
        0.5 * np.ones(S),
        jac=g,
        constraints=[cons],
        bounds=[(1e-9, None)] * S,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    x = res.x * xs
    y = A @ (N * x)
    active = np.flatnonzero(y >= C * (1 - 1e-6))
    if active.size == 0:
        raise AnalysisError("capacity_optimum: no link is saturated; the utilities are bounded?")
    Aa = A[active]

    def kkt(v):
        xx, lam = np.exp(v[:S]), v[S:]
        marg = np.array([float(utils[r].marginal(xx[r])) for r in range(S)])
        return np.concatenate(
            [(W * marg - Aa.T @ lam) / (W * marg), (Aa @ (N * xx) - C[active]) / C[active]]
        )

    lam0, *_ = np.linalg.lstsq(
        Aa.T.astype(float),
        W * np.array([float(utils[r].marginal(x[r])) for r in range(S)]),
        rcond=None,
    )
    sol = optimize.root(
        kkt, np.concatenate([np.log(x), lam0]), method="hybr", options={"xtol": 1e-15}
    )
    resid = np.max(np.abs(kkt(sol.x)))
    xx, lam_a = np.exp(sol.x[:S]), sol.x[S:]
    lam = np.zeros(net.n_links)
    lam[active] = lam_a
    y = A @ (N * xx)
    if not (resid < 1e-9 and np.all(lam >= 0) and np.all(y <= C * (1 + 1e-9))):
        raise AnalysisError(
            f"capacity_optimum: KKT conditions of (6)-(8) not met (residual {resid:.3g}, "
            f"multipliers {lam}, loads {y} against capacities {C})"
        )
    return CapacityOptimum(xx, lam, y)

"""Normal forms on the center manifold of an equilibrium of a delay equation, to any order.

At an equilibrium whose characteristic roots on the imaginary axis ``lambda_1, ..., lambda_m``
are simple (a Hopf pair; two pairs at a Hopf-Hopf point; 0 and a pair at a zero-Hopf point),
the dynamics on the center manifold reduce to the normal form

``z_j' = lambda_j z_j + sum_alpha g_{j, alpha} z^alpha``,

with only *resonant* monomials (``<alpha, lambda> = lambda_j``). The manifold is the history
``W(z)(theta) = sum_j z_j phi_j(theta) + sum_{|alpha| >= 2} h_alpha(theta) z^alpha / alpha!``,
``phi_j(theta) = exp(lambda_j theta) q_j``, and each coefficient is a *polynomial-exponential*
function of ``theta`` (sums of ``theta^k exp(nu theta) w``).

Invariance of the manifold, order by order in ``z`` (the characteristic-matrix formulation of
the center-manifold reduction of delay equations: Faria & Magalhaes 1995; Janssens 2010;
Bosschaert, Janssens & Kuznetsov 2020), gives for each ``alpha`` with ``mu = <alpha, lambda>``

* along the history: ``h_alpha'(theta) = mu h_alpha(theta) + alpha! T_alpha(theta)``, with
  ``T_alpha`` the ``z^alpha`` coefficient of ``D_z W(z) N(z)`` (``N`` the normal form's
  nonlinear part) from lower orders; so ``h_alpha = exp(mu theta) v + P(theta)`` with ``P``
  the particular solution vanishing at 0;
* at ``theta = 0``: ``h_alpha'(0) = L h_alpha + alpha! R_alpha`` (``L`` the linear part,
  ``R_alpha`` the ``z^alpha`` coefficient of the nonlinear part of ``f(W(z))``), i.e.
  ``Delta(mu) v = alpha! (R_alpha - T_alpha(0)) + L P``.

Where ``mu = lambda_j`` the matrix is singular, and solvability with the left null vector
``p_j`` (``p_j Delta'(lambda_j) q_j = 1``) gives the normal-form coefficient; the particular
solution then has a ``theta exp(mu theta) q_j`` term, and ``v`` is fixed by ``p_j v = 0``.

``R_alpha`` is computed without derivative tensors: the model's right-hand side is evaluated
(:func:`fluidnet.bifurcation.jets.evaluate`) on truncated power series in ``z``
(:mod:`fluidnet.bifurcation.series`), every delayed value read from ``W(z)`` at its delay. For
a state-dependent delay ``tau_k(z)`` (itself a series) the history is expanded about the
equilibrium delay, ``W(z)(-tau*-d) = sum_r (-d)^r / r! d^r W/dtheta^r (-tau*)`` (the expansion
of Sieber 2017 for normal forms of state-dependent delay equations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import AnalysisError
from .jets import evaluate
from .series import Series, ring

__all__ = ["PolyExp", "Mode", "NormalForm", "normal_form"]

#: Two exponents closer than this (relative) are the same (resonance).
RESONANCE_TOL = 1e-9


class PolyExp:
    """A vector function ``sum_{nu, k} w_{nu,k} theta^k exp(nu theta)`` of ``theta``."""

    __slots__ = ("terms", "n")

    def __init__(self, n: int, terms=None):
        self.n = n
        self.terms: list[tuple[complex, list[np.ndarray]]] = terms or []

    @staticmethod
    def exponential(nu: complex, v: np.ndarray) -> PolyExp:
        v = np.asarray(v, dtype=complex)
        return PolyExp(v.size, [(complex(nu), [v.copy()])])

    def _slot(self, nu: complex) -> list[np.ndarray]:
        for mu, coefs in self.terms:
            if abs(mu - nu) <= RESONANCE_TOL * (1.0 + abs(nu)):
                return coefs
        coefs: list[np.ndarray] = []
        self.terms.append((complex(nu), coefs))
        return coefs

    def add_term(self, nu: complex, k: int, w: np.ndarray) -> None:
        coefs = self._slot(nu)
        while len(coefs) <= k:
            coefs.append(np.zeros(self.n, dtype=complex))
        coefs[k] = coefs[k] + w

    def __add__(self, other: PolyExp) -> PolyExp:
        out = self.copy()
        for nu, coefs in other.terms:
            for k, w in enumerate(coefs):
                out.add_term(nu, k, w)
        return out

    def scaled(self, c: complex) -> PolyExp:
        return PolyExp(self.n, [(nu, [c * w for w in coefs]) for nu, coefs in self.terms])

    def copy(self) -> PolyExp:
        return PolyExp(self.n, [(nu, [w.copy() for w in coefs]) for nu, coefs in self.terms])

    def at(self, theta: float) -> np.ndarray:
        out = np.zeros(self.n, dtype=complex)
        for nu, coefs in self.terms:
            e = np.exp(nu * theta)
            for k, w in enumerate(coefs):
                out += w * (theta**k if k else 1.0) * e
        return out

    def derivative(self, r: int = 1) -> PolyExp:
        f = self
        for _ in range(r):
            g = PolyExp(self.n)
            for nu, coefs in f.terms:
                for k, w in enumerate(coefs):
                    g.add_term(nu, k, nu * w)
                    if k:
                        g.add_term(nu, k - 1, k * w)
            f = g
        return f

    def integrate_from_zero(self, mu: complex) -> PolyExp:
        """``P`` with ``P' = mu P + self`` and ``P(0) = 0``."""
        out = PolyExp(self.n)
        c0 = np.zeros(self.n, dtype=complex)
        for nu, coefs in self.terms:
            if abs(nu - mu) <= RESONANCE_TOL * (1.0 + abs(mu)):
                # resonant: exp(mu theta) sum_j c_{j+1} theta^{j+1}, (j+1) c_{j+1} = w_j
                for j, w in enumerate(coefs):
                    out.add_term(mu, j + 1, w / (j + 1))
            else:
                d = nu - mu
                c = [np.zeros(self.n, dtype=complex) for _ in coefs]
                for j in range(len(coefs) - 1, -1, -1):
                    nxt = (j + 1) * c[j + 1] if j + 1 < len(coefs) else 0.0
                    c[j] = (coefs[j] - nxt) / d
                for j, w in enumerate(c):
                    out.add_term(nu, j, w)
                c0 = c0 + c[0]
        if np.any(c0 != 0):
            out.add_term(mu, 0, -c0)
        return out


@dataclass
class Mode:
    """A critical characteristic root ``lam`` with right and left null vectors of
    ``Delta(lam)``, normalized ``p Delta'(lam) q = 1``."""

    lam: complex
    q: np.ndarray
    p: np.ndarray


@dataclass
class NormalForm:
    """The result of :func:`normal_form`.

    Attributes
    ----------
    coefficients : dict
        ``{(j, alpha): g}``: the coefficient of ``z^alpha`` (plain, not divided by
        ``alpha!``) in the equation of ``z_j``.
    manifold : dict
        ``{alpha: PolyExp}``: the center-manifold coefficients ``h_alpha``.
    conditioning : float
        The smallest ``sigma_min(Delta(mu)) / (1 + |mu|)`` met at a non-resonant ``mu``: small
        values mean a near resonance (the coefficients are then large and inaccurate).
    """

    modes: list
    order: int
    coefficients: dict = field(default_factory=dict)
    manifold: dict = field(default_factory=dict)
    conditioning: float = math.inf

    def g(self, j: int, alpha) -> complex:
        """The coefficient of ``z^alpha`` in the equation of ``z_j`` (0 when absent)."""
        return self.coefficients.get((j, tuple(alpha)), 0.0)


def _unit(m: int, j: int) -> tuple[int, ...]:
    e = [0] * m
    e[j] = 1
    return tuple(e)


def _fact(alpha) -> int:
    return math.prod(math.factorial(a) for a in alpha)


def normal_form(model, x, P, lin, modes: list[Mode], order: int) -> NormalForm:
    """The normal form on the center manifold of the equilibrium ``x`` to ``order``.

    Parameters
    ----------
    model : fluidnet.Model
    x : ndarray
        The equilibrium (state order).
    P : ndarray
        Parameter values (model order).
    lin : Linearization
        Its linearization (:mod:`fluidnet.bifurcation.steady`).
    modes : list of Mode
        The critical roots (a real system's complex roots with their conjugates as separate
        modes).
    order : int
        Highest order of the normal form (3 for Hopf-Hopf and zero-Hopf, 5 for the second
        Lyapunov coefficient).
    """
    form = model.form
    n = len(form.states)
    m = len(modes)
    lams = np.array([md.lam for md in modes], dtype=complex)
    nf = NormalForm(modes=modes, order=order)
    h: dict[tuple[int, ...], PolyExp] = {}
    for j, md in enumerate(modes):
        h[_unit(m, j)] = PolyExp.exponential(md.lam, md.q)
    lag_state = [lag.state for lag in form.lags]
    fz = lin.fz
    for k in range(2, order + 1):
        R = _nonlinear_coefficients(form, x, P, h, m, k)
        rg = ring(m, k)
        for alpha in rg.of_degree(k):
            mu = complex(np.dot(alpha, lams))
            fact = _fact(alpha)
            # T_alpha from lower orders (normal form terms acting on h_beta, |beta| >= 2)
            T = PolyExp(n)
            for (i, gamma), gval in nf.coefficients.items():
                for beta, hb in h.items():
                    if sum(beta) < 2 or beta[i] == 0:
                        continue
                    reduced = list(beta)
                    reduced[i] -= 1
                    if tuple(r + c for r, c in zip(reduced, gamma, strict=True)) != tuple(alpha):
                        continue
                    T = T + hb.scaled(gval / _fact(reduced))
            Pp = T.scaled(fact).integrate_from_zero(mu)
            rhs = fact * (R[alpha] - T.at(0.0)) + _apply_linear(lin, Pp, lag_state, fz)
            resonant = [j for j in range(m) if abs(lams[j] - mu) <= RESONANCE_TOL * (1.0 + abs(mu))]
            D = lin.delta(mu)
            extra = PolyExp(n)
            for j in resonant:
                g = complex(modes[j].p @ rhs) / fact
                nf.coefficients[j, tuple(alpha)] = g
                rhs = rhs - fact * g * (lin.ddelta(mu) @ modes[j].q)
                extra.add_term(mu, 1, fact * g * modes[j].q)
            if resonant:
                v = _bordered(D, [modes[j] for j in resonant], rhs)
            else:
                sv = np.linalg.svd(D, compute_uv=False)
                nf.conditioning = min(nf.conditioning, float(sv[-1]) / (1.0 + abs(mu)))
                v = np.linalg.solve(D, rhs)
            h[tuple(alpha)] = PolyExp.exponential(mu, v) + Pp + extra
    nf.manifold = h
    return nf


def _bordered(D: np.ndarray, modes: list[Mode], rhs: np.ndarray) -> np.ndarray:
    """``Delta v = rhs`` with ``p_j v = 0`` for the resonant modes (rhs made solvable)."""
    n = D.shape[0]
    r = len(modes)
    A = np.zeros((n + r, n + r), dtype=complex)
    A[:n, :n] = D
    for i, md in enumerate(modes):
        A[:n, n + i] = md.q
        A[n + i, :n] = md.p
    b = np.concatenate([rhs, np.zeros(r, dtype=complex)])
    sol = np.linalg.solve(A, b)
    return sol[:n]


def _apply_linear(lin, f: PolyExp, lag_state, fz) -> np.ndarray:
    """``L f = f_x f(0) + sum_k f_{z_k} f_{s_k}(-tau_k)``."""
    out = lin.fx @ f.at(0.0)
    for k, s in enumerate(lag_state):
        out = out + fz[:, k] * f.at(-lin.tau[k])[s]
    return out


def _nonlinear_coefficients(form, x, P, h, m: int, k: int) -> dict:
    """``R_alpha`` for ``|alpha| = k``: the ``z^alpha`` coefficients of ``f(W(z))`` with ``W``
    truncated below order ``k`` (the linear part contributes nothing there)."""
    rg = ring(m, k)
    n = len(form.states)

    def series(value_of) -> list[np.ndarray]:
        out = []
        for s in range(n):
            c = np.zeros(rg.size, dtype=complex)
            for beta, hb in h.items():
                if sum(beta) < k:
                    c[rg.index[beta]] = value_of(hb, s) / _fact(beta)
            out.append(c)
        return out

    env: dict = {sym: float(v) for sym, v in zip(form.p, P, strict=True)}
    X = series(lambda hb, s: hb.at(0.0)[s])
    for s, xsym in enumerate(form.x):
        c = X[s].copy()
        c[0] = x[s]
        env[xsym] = Series(c, rg)
    for lag in form.lags:
        s = lag.state
        tau = evaluate(lag.delay, env)
        tau0 = tau.base if isinstance(tau, Series) else complex(tau)
        if abs(tau0.imag) > 1e-12 * max(1.0, abs(tau0.real)):
            raise AnalysisError(f"the delay {lag.delay} is not real at the equilibrium")
        tau0 = tau0.real
        c = np.zeros(rg.size, dtype=complex)
        for beta, hb in h.items():
            if sum(beta) < k:
                c[rg.index[beta]] = hb.at(-tau0)[s] / _fact(beta)
        c[0] = x[s]
        z = Series(c, rg)
        if isinstance(tau, Series) and tau.nilpotent_part_nonzero():
            d = tau - tau0
            term = rg.const(1.0)
            for r in range(1, k + 1):
                term = term * (d * (-1.0 / r))
                cr = np.zeros(rg.size, dtype=complex)
                for beta, hb in h.items():
                    if sum(beta) < k:
                        cr[rg.index[beta]] = hb.derivative(r).at(-tau0)[s] / _fact(beta)
                z = z + term * Series(cr, rg)
        env[lag.symbol] = z
    R = {}
    out = []
    for e in form.rhs:
        v = evaluate(e, env)
        out.append(v.c if isinstance(v, Series) else rg.const(v).c)
    for alpha in rg.of_degree(k):
        i = rg.index[alpha]
        R[alpha] = np.array([o[i] for o in out], dtype=complex)
    return R

"""The RCP paper's printed values, values derived from its equations independently of fluidnet
(plain numpy/scipy), and the parameter grids of the full and the quick runs.

Nothing here is computed by fluidnet: the target table (:mod:`~fluidnet.papers.rcp.targets`) and the
items read it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

# --- linear analysis (Sec IV-C/D)

#: The exact stable alpha interval per beta, from the D-subdivision boundary of eq (15):
#: lambda = jw in lambda^2 + (alpha lambda + beta) e^{-lambda} = 0 gives alpha = w sin w,
#: beta = w^2 cos w, 0 < w < pi/2, solved for w at each beta (derived independently of fluidnet).
EXACT_ALPHA_RANGE = {
    0.05: (0.0509, 1.5496),
    0.1: (0.1037, 1.5265),
    0.2: (0.2165, 1.4731),
    0.3: (0.3427, 1.4061),
    0.4: (0.4916, 1.3163),
    0.5: (0.6954, 1.1715),
}
#: Top of the linear region, the maximum of w^2 cos w on that boundary: beta_max = 0.54977 at
#: alpha = w sin w = 0.94817.
EXACT_BETA_MAX = (0.94817, 0.54977)
#: Sample points of Secs IV-E/F and App. III: (alpha, beta) -> (the paper's verdict "linearly
#: stable", where it is stated).
LINEAR_VERDICTS = {
    (0.2, 0.4): (False, "Fig 47"),
    (0.4, 0.2): (True, "Fig 48"),
    (0.6, 0.2): (True, "Fig 41"),
    (0.6, 0.8): (False, "Fig 42"),
    (1.4, 0.8): (False, "Fig 43"),
    (0.1, 1.0): (False, "Sec III-A"),
}

# Independent values for Fig 34 (beta = 0.3): G1 evaluated directly with numpy from its closed
# form (exact delay, and the [2/2] Padé form with the corrected denominator), crossings found by
# bracketing.
FIG34 = {
    "exact": {"A": -2.918251, "B": -0.711181, "alpha": (0.342671, 1.406112)},
    "pade": {"A": -2.918971, "B": -0.706367, "alpha": (0.342586, 1.415695)},
}
#: RHP poles of G1 at beta = 0.3 in lambda = s d0: the roots of its denominator
#: lambda^2 + 0.3 e^{-lambda}, computed independently of fluidnet.
FIG34_POLE = complex(0.12674, 0.49822)
#: The frequency grid of the Bode plots of App. III (d0 = 0.2 s), rad/s.
BODE_FREQS = np.geomspace(1e-2 / 0.2, 20.0 / 0.2, 3000)


def omega_z(alpha: float, beta: float, d0: float = 1.0) -> float:
    """Gain-crossover frequency of eq (9) in closed form, eq (12)."""
    return float(np.sqrt((alpha**2 + np.sqrt(alpha**4 + 4 * beta**2)) / 2) / d0)


def omega_c(alpha: float, beta: float, d0: float = 1.0) -> float | None:
    """Phase-crossover frequency of eq (9): the nonzero root of eq (13), ``None`` if none.

    ``omega d0 alpha / beta = tan(omega d0)`` has a root in ``(0, pi/2)`` exactly when
    ``alpha/beta > 1`` (eq (14), Appendix III); it is found by bracketing, as the paper does
    numerically ("we did this in Matlab").
    """
    if beta <= 0 or alpha <= beta:
        return None
    k = alpha / beta

    def f(x):
        return np.sin(x) - k * x * np.cos(x)

    return float(optimize.brentq(f, 1e-9, np.pi / 2, xtol=1e-15) / d0)


def omega_m(alpha: float, beta: float) -> float:
    """Frequency ``w_m d0`` of the phase maximum of eq (9) (App. III), for ``alpha > beta``."""
    return (beta / alpha) * np.sqrt(alpha / beta - 1)


def rightmost_root_closed_form(alpha: float, beta: float) -> complex:
    """Rightmost root of ``lambda^2 + (alpha lambda + beta) e^{-lambda} = 0`` (eq (15), s d0).

    Independent of fluidnet: Newton (scipy) from a grid of starting points, keeping the root
    with the largest real part.
    """

    def f(z):
        return z * z + (alpha * z + beta) * np.exp(-z)

    def fp(z):
        return 2 * z + alpha * np.exp(-z) - (alpha * z + beta) * np.exp(-z)

    best = None
    for re in np.linspace(-1.0, 1.0, 9):
        for im in np.linspace(0.1, 3.0, 12):
            try:
                z = optimize.newton(f, complex(re, im), fprime=fp, tol=1e-14, maxiter=100)
            except RuntimeError:
                continue
            if abs(f(z)) < 1e-10 and (best is None or z.real > best.real + 1e-9):
                best = z
    return best


#: The rightmost root s d0 at Sec III-A's operating point (alpha, beta) = (0.1, 1.0).
OPERATING_ROOT = rightmost_root_closed_form(0.1, 1.0)


def boundary_beta(alpha: float) -> tuple[float, float]:
    """``(beta, w)`` on the D-subdivision curve ``alpha = w sin w``, ``beta = w^2 cos w``."""
    w = optimize.brentq(lambda w: w * math.sin(w) - alpha, 1.0, math.pi / 2)
    return w * w * math.cos(w), w


#: alpha of the Hopf point continued along the boundary (Fig 43's alpha).
HOPF_ALPHA = 1.4

# --- the nonlinear fluid model (Sec IV-E/F)

#: The router's update interval T of the phase-plane study [s].
T_UPDATE = 0.01
#: Initial conditions of the phase-plane study (Sec IV-F): gamma = R/C and q in units of C d0.
GAMMA_INIT = (0.5, 0.1, 0.01)
QUEUE_INIT = (2.0, 0.0)
#: The paper's onset of instability alpha*(beta) (Figs 37-40, printed).
PAPER_ONSET = {0.1: 1.6, 0.4: 1.3, 0.6: 1.2}
#: Onsets alpha*(beta) from a fixed-step Euler integration of the dimensionless form of (4)-(7)
#: (step 0.002 d0, T/d0 = 0.05, queue projected at 0), written independently of fluidnet.
NOTE_ONSET = {0.2: 1.5, 0.3: 1.5, 0.5: 1.3, 0.7: 1.2, 0.8: 1.1, 1.0: 1.0, 1.5: 0.9, 2.0: 0.8}
#: Simulated time of a phase-plane trajectory, in propagation RTTs d0.
T_END_RTT = 400.0
#: ... and on the full (alpha, beta) grid, where the 5x-overloaded starts at small alpha and
#: beta drain their queue over hundreds of RTTs. Much longer horizons do not
#: help: near the linear boundary (e.g. (1.4, 0.3)) the oscillation, whose queue touches 0,
#: decays only like 1/t, and after ~1000 RTTs it decays by less than fn.oscillation's 0.5 %
#: per cycle and is taken for a sustained one.
T_END_RTT_REGION = 1000.0
#: The C, d0 and N values of Sec IV-F's invariance check (C in bits/s).
INVARIANCE = {
    "C": (5.6e3, 0.15e9, 2.5e9, 10e9, 1000e9),
    "d0": (0.01, 0.5, 1.0, 2.0),
    "N": (10.0, 100.0, 1000.0, 5000.0),
}


def parameter_grid(step: float = 0.1, lo: float = 0.1, hi: float = 2.0) -> np.ndarray:
    """The values ``lo, lo + step, ..., hi``, rounded to 10 digits (default: the paper's grid)."""
    return np.round(np.arange(lo, hi + 1e-9, step), 10)


#: The paper's grid of alpha and of beta, 0.1 ... 2.0.
GRID = parameter_grid()


def invariance_label(name: str, x: float) -> str:
    """``x`` as the paper writes it: C in Gb/s or kb/s, d0 and N as they are."""
    if name == "C":
        return f"{x / 1e9:g} Gb/s" if x >= 1e8 else f"{x / 1e3:g} kb/s"
    return f"{x:g}"


# --- the grids of a quick run (the tests): fewer points near the onset, shorter runs
#: The phase-plane grid of the quick run (near the onset only, so the shorter horizon serves).
QUICK_REGION = {"alphas": parameter_grid(0.1, 1.0, 2.0), "betas": (0.1, 0.4, 0.6, 1.0)}
#: The invariance cases of the quick run.
QUICK_INVARIANCE = (("C", 5.6e3), ("d0", 2.0), ("d0", 0.01), ("N", 5000.0))

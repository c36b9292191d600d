"""The exact linearized TCP/queue loop of the MGT model, derived by hand (independent of fluidnet).

Linearizing Misra, Gong & Towsley's window equation at ``W0 = R0 C/N``, ``p0 = 2/W0^2`` gives
(Hollot et al. 2002)

``dW' = -(N/(R0^2 C)) (dW + dW(t - R0)) - (1/(R0^2 C)) (dq - dq(t - R0))``
``      - (R0 C^2/(2 N^2)) dp(t - R0)``,
``dq' = (N/R0) dW - dq/R0``.

With ``e = exp(-s R0)`` and a controller ``p = K(s) q`` the loop gain is

``L(s) = (C^2/(2N)) e K(s) / [(s + a (1 + e))(s + 1/R0) + (N/R0) b (1 - e)]``,
``a = N/(R0^2 C)``, ``b = 1/(R0^2 C)``.

Hollot et al.'s plant drops ``a e`` and ``b (1 - e)``: ``(C^2/(2N)) e / ((s + 2a)(s + 1/R0))``.
Plain numpy: the items compare fluidnet's symbolic loop gains with these.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from .data import HOLLOT_GAINS, HOLLOT_NETWORK


def plant_exact(s, N: float, C: float, R0: float):
    """``dq/dp`` of the exact linearization, times -1 (so that ``L = plant * K``)."""
    s = np.asarray(s, dtype=complex)
    e = np.exp(-s * R0)
    a, b = N / (R0 * R0 * C), 1.0 / (R0 * R0 * C)
    return C * C / (2 * N) * e / ((s + a * (1 + e)) * (s + 1 / R0) + N / R0 * b * (1 - e))


def plant_hollot(s, N: float, C: float, R0: float):
    """Hollot et al.'s approximate plant."""
    s = np.asarray(s, dtype=complex)
    return C * C / (2 * N) * np.exp(-s * R0) / ((s + 2 * N / (R0 * R0 * C)) * (s + 1 / R0))


def pi_controller(s, K: float, z: float):
    """``K (s/z + 1)/s``."""
    s = np.asarray(s, dtype=complex)
    return K * (s / z + 1) / s


def red_controller(s, L_red: float, K: float):
    """RED's averaging and slope: ``L_red K/(s + K)``."""
    s = np.asarray(s, dtype=complex)
    return L_red * K / (s + K)


def margins_numpy(L, w_lo: float, w_hi: float, n: int = 20001) -> dict[str, float]:
    """Gain crossover, phase margin (deg), phase crossover and gain margin of ``L(jw)`` by
    bracketing on a log grid and Brent's method (first crossover of each kind)."""
    w = np.logspace(np.log10(w_lo), np.log10(w_hi), n)

    def mag(x):
        return np.log(np.abs(L(1j * x)))

    def phase(x):
        v = L(1j * x)
        return v.imag / np.abs(v)

    out = {}
    m = mag(w)
    i = int(np.flatnonzero(np.sign(m[:-1]) != np.sign(m[1:]))[0])
    wgc = brentq(mag, w[i], w[i + 1], xtol=1e-14, rtol=1e-14)
    out["w_gc"] = wgc
    out["phase_margin"] = float(np.degrees(np.angle(L(1j * wgc))) % 360.0 - 180.0)
    ph = phase(w)
    idx = np.flatnonzero((np.sign(ph[:-1]) != np.sign(ph[1:])) & (L(1j * w[:-1]).real < 0))
    if idx.size:
        wpc = brentq(phase, w[idx[0]], w[idx[0] + 1], xtol=1e-14, rtol=1e-14)
        out["w_pc"] = wpc
        out["gain_margin"] = float(1.0 / np.abs(L(1j * wpc)))
    return out


def operating_point() -> dict[str, float]:
    """``R0``, ``W0``, ``p0`` of Hollot et al.'s design example from its definition (plain
    arithmetic)."""
    N, C, Tp, q0 = (HOLLOT_NETWORK[k] for k in ("N", "C", "Tp", "q_ref"))
    R0 = Tp + q0 / C
    W0 = R0 * C / N
    return {"R0": R0, "W0": W0, "p0": 2.0 / W0**2}


def exact_pi_loop(s, K: float, z: float):
    """The exact linearized loop of the design example with the PI controller (numpy)."""
    N, C = HOLLOT_NETWORK["N"], HOLLOT_NETWORK["C"]
    R0 = operating_point()["R0"]
    return plant_exact(s, N, C, R0) * pi_controller(s, K, z)


def pi_margins(plant) -> dict[str, float]:
    """:func:`margins_numpy` of ``plant(s, N, C, R0)`` times the printed PI controller."""
    N, C = HOLLOT_NETWORK["N"], HOLLOT_NETWORK["C"]
    R0 = operating_point()["R0"]
    K, z = HOLLOT_GAINS["K_pi"], HOLLOT_GAINS["z"]
    return margins_numpy(lambda s: plant(s, N, C, R0) * pi_controller(s, K, z), 1e-2, 1e2)

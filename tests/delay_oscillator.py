"""The delayed oscillator of Cooke and Grossman (1982), with its crossings in closed form: a
second method for the tests of crossings, critical values and root paths."""

import math

import numpy as np

import fluidnet as fn


def oscillator(K, tau, zeta=0.1):
    """``x'' + 2 zeta x' + x = -K x(t - tau)``."""
    A0 = np.array([[0.0, 1.0], [-1.0, -2.0 * zeta]])
    return fn.LinearDDE(A0, [(tau, np.array([[0.0, 0.0], [-K, 0.0]]))])


def oscillator_crossings(K, zeta=0.1):
    """The first unstable window ``[(tau+, w+), (tau-, w-)]``: ``|1 - w^2 + 2 j zeta w| = K``
    gives ``w^2 = 1 - 2 zeta^2 +- sqrt((1 - 2 zeta^2)^2 - 1 + K^2)``, and the phase
    ``e^{-j w tau} = -(1 - w^2 + 2 j zeta w) / K`` the delays."""
    b = 1.0 - 2.0 * zeta**2
    out = []
    for sign in (1.0, -1.0):
        w = math.sqrt(b + sign * math.sqrt(b * b - 1.0 + K * K))
        theta = (-np.angle(-(1.0 - w * w + 2j * zeta * w) / K)) % (2.0 * math.pi)
        out.append((theta / w, w))
    return out

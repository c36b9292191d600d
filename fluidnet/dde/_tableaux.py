"""Butcher tableaux of the embedded Runge-Kutta pairs and their continuous extensions.

* Bogacki-Shampine 3(2) (P. Bogacki, L. F. Shampine, Appl. Math. Lett. 2 (1989) 321-325): four
  stages, first same as last; the continuous extension is the cubic Hermite interpolant of the
  step's end values and derivatives (third order, matching the method).
* Dormand-Prince 5(4) (J. R. Dormand, P. J. Prince, J. Comput. Appl. Math. 6 (1980) 19-26):
  seven stages, first same as last; continuous extension of order four from Hairer, Norsett and
  Wanner, *Solving ODEs I*, 2nd ed., Sec. II.6 (the DOPRI5 dense output).

Coefficients are kept as exact fractions and converted to float64 arrays that the compiled
integrator reads as constants. Dense output is stored in the power basis of the local variable
``theta = (t - t_n)/h`` in ``[0, 1]``: ``y(theta) = sum_j c_j theta**j``, ``j = 0..4``.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np

__all__ = ["BS3", "DP5", "NCOEF", "METHODS"]

#: Coefficients stored per state and step (degree <= 4).
NCOEF = 5


def _arr(rows):
    return np.array([[float(v) for v in row] for row in rows], dtype=np.float64)


def _vec(vals):
    return np.array([float(v) for v in vals], dtype=np.float64)


class BS3:
    """Bogacki-Shampine 3(2)."""

    order = 3
    error_order = 2
    stages = 4
    C = _vec([0, F(1, 2), F(3, 4), 1])
    A = _arr(
        [
            [0, 0, 0, 0],
            [F(1, 2), 0, 0, 0],
            [0, F(3, 4), 0, 0],
            [F(2, 9), F(1, 3), F(4, 9), 0],
        ]
    )
    B = _vec([F(2, 9), F(1, 3), F(4, 9), 0])
    B_LOW = [F(7, 24), F(1, 4), F(1, 3), F(1, 8)]
    E = _vec([b - bl for b, bl in zip([F(2, 9), F(1, 3), F(4, 9), 0], B_LOW, strict=True)])


class DP5:
    """Dormand-Prince 5(4)."""

    order = 5
    error_order = 4
    stages = 7
    C = _vec([0, F(1, 5), F(3, 10), F(4, 5), F(8, 9), 1, 1])
    _B = [F(35, 384), 0, F(500, 1113), F(125, 192), F(-2187, 6784), F(11, 84), 0]
    A = _arr(
        [
            [0] * 7,
            [F(1, 5)] + [0] * 6,
            [F(3, 40), F(9, 40)] + [0] * 5,
            [F(44, 45), F(-56, 15), F(32, 9)] + [0] * 4,
            [F(19372, 6561), F(-25360, 2187), F(64448, 6561), F(-212, 729)] + [0] * 3,
            [F(9017, 3168), F(-355, 33), F(46732, 5247), F(49, 176), F(-5103, 18656), 0, 0],
            _B,
        ]
    )
    B = _vec(_B)
    B_LOW = [
        F(5179, 57600),
        0,
        F(7571, 16695),
        F(393, 640),
        F(-92097, 339200),
        F(187, 2100),
        F(1, 40),
    ]
    E = _vec([b - bl for b, bl in zip(_B, B_LOW, strict=True)])
    #: Dense-output weights d_i of the fourth-order continuous extension.
    D = _vec(
        [
            F(-12715105075, 11282082432),
            0,
            F(87487479700, 32700410799),
            F(-10690763975, 1880347072),
            F(701980252875, 199316789632),
            F(-1453857185, 822651844),
            F(69997945, 29380423),
        ]
    )


#: Method names accepted by :func:`fluidnet.simulate` and their integer codes in the kernel.
METHODS = {"BS3": 0, "DP5": 1}

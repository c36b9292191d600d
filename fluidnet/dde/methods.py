"""Embedded explicit Runge-Kutta pairs, as data.

A method is its Butcher tableau ``(A, b, c)``, the error weights ``e = b - b_hat`` of its
embedded lower-order solution, and a dense-output matrix ``P`` such that the continuous
extension of a step from ``(t, y)`` with stage derivatives ``K`` (one row per stage) is

    y(t + theta h) = y + h * sum_j (K.T @ P)[:, j] * theta**(j + 1),   0 <= theta <= 1.

Every continuous extension used here is linear in the stages, so one generic stepper serves all
methods: adding a method is one :class:`RungeKutta` entry in :data:`METHODS` (and a test that
measures its order).

* ``"BS3"``: Bogacki-Shampine 3(2) (P. Bogacki, L. F. Shampine, Appl. Math. Lett. 2 (1989)
  321-325); four stages, first same as last; continuous extension: the cubic Hermite
  interpolant of the step's end values and derivatives (order 3).
* ``"DP5"``: Dormand-Prince 5(4) (J. R. Dormand, P. J. Prince, J. Comput. Appl. Math. 6 (1980)
  19-26); seven stages, first same as last; the fourth-order continuous extension of Hairer,
  Norsett and Wanner, *Solving Ordinary Differential Equations I*, 2nd ed. (1993), Sec. II.6.
* ``"Tsit5"``: Tsitouras 5(4) (Ch. Tsitouras, Comput. Math. Appl. 62 (2011) 770-775); seven
  stages, first same as last, with the paper's free fourth-order interpolant.

The tableaux of BS3 and DP5 are exact fractions; Tsitouras gives his coefficients as decimals
(they satisfy the order conditions to rounding, which the tests check).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction as F

import numpy as np
from numpy.polynomial import polynomial as npoly

__all__ = ["RungeKutta", "METHODS", "NCOEF", "BS3", "DP5", "TSIT5"]

#: Power-basis coefficients stored per state and step (continuous extensions of degree <= 4).
NCOEF = 5


@dataclass(frozen=True)
class RungeKutta:
    """An embedded explicit Runge-Kutta pair with a continuous extension linear in its stages.

    Attributes
    ----------
    name : str
        The ``method`` name :func:`fluidnet.simulate` accepts.
    order : int
        Order of the propagated solution (the error estimate is of order ``error_order``).
    error_order : int
    A : ndarray, shape (S, S)
        Strictly lower triangular stage coefficients.
    B : ndarray, shape (S,)
        Weights of the propagated solution.
    C : ndarray, shape (S,)
        Stage times (``C[0] = 0``).
    E : ndarray, shape (S,)
        Weights of the local error estimate ``h * E @ K``.
    P : ndarray, shape (S, NCOEF - 1)
        Dense output: ``P[s, j]`` is the weight of stage ``s`` in the coefficient of
        ``theta**(j+1)``.
    fsal : bool
        The last stage is the derivative at the step's end (first same as last).
    dense_order : int
        Order of the continuous extension.
    reference : str
    """

    name: str
    order: int
    error_order: int
    A: np.ndarray = field(repr=False)
    B: np.ndarray = field(repr=False)
    C: np.ndarray = field(repr=False)
    E: np.ndarray = field(repr=False)
    P: np.ndarray = field(repr=False)
    fsal: bool
    dense_order: int
    reference: str

    def __post_init__(self) -> None:
        s = self.C.shape[0]
        shapes = {"A": (s, s), "B": (s,), "E": (s,)}
        for key, shape in shapes.items():
            if getattr(self, key).shape != shape:
                raise ValueError(f"{self.name}: {key} must have shape {shape}")
        if self.P.shape[0] != s or self.P.shape[1] > NCOEF - 1:
            raise ValueError(f"{self.name}: P must have {s} rows and at most {NCOEF - 1} columns")
        if self.P.shape[1] < NCOEF - 1:
            pad = np.zeros((s, NCOEF - 1 - self.P.shape[1]))
            object.__setattr__(self, "P", np.hstack([self.P, pad]))
        if self.fsal and not (self.C[-1] == 1.0 and np.array_equal(self.A[-1], self.B)):
            raise ValueError(f"{self.name}: a first-same-as-last method ends with the row B")
        for key in ("A", "B", "C", "E", "P"):
            getattr(self, key).setflags(write=False)

    @property
    def stages(self) -> int:
        """Number of stages."""
        return int(self.C.shape[0])


def _vec(values) -> np.ndarray:
    return np.array([float(v) for v in values], dtype=np.float64)


def _mat(rows) -> np.ndarray:
    return np.array([[float(v) for v in row] for row in rows], dtype=np.float64)


def _unit(s: int, i: int) -> np.ndarray:
    e = np.zeros(s)
    e[i] = 1.0
    return e


def _hermite_extension(b: np.ndarray) -> np.ndarray:
    """Cubic Hermite interpolant of an FSAL step: matches ``y, f`` at both ends.

    With ``d = sum b_s K_s`` (the mean slope) and ``f0 = K_0``, ``f1 = K_{S-1}``:
    ``y(theta) = y + h [theta f0 + theta^2 (3d - 2 f0 - f1) + theta^3 (f0 + f1 - 2d)]``.
    """
    s = b.shape[0]
    e0, e1 = _unit(s, 0), _unit(s, s - 1)
    return np.stack([e0, 3.0 * b - 2.0 * e0 - e1, e0 + e1 - 2.0 * b], axis=1)


def _bs3() -> RungeKutta:
    b = [F(2, 9), F(1, 3), F(4, 9), 0]
    b_low = [F(7, 24), F(1, 4), F(1, 3), F(1, 8)]
    B = _vec(b)
    return RungeKutta(
        name="BS3",
        order=3,
        error_order=2,
        A=_mat([[0, 0, 0, 0], [F(1, 2), 0, 0, 0], [0, F(3, 4), 0, 0], b]),
        B=B,
        C=_vec([0, F(1, 2), F(3, 4), 1]),
        E=_vec([x - y for x, y in zip(b, b_low, strict=True)]),
        P=_hermite_extension(B),
        fsal=True,
        dense_order=3,
        reference="Bogacki and Shampine (1989)",
    )


def _dp5() -> RungeKutta:
    b = [F(35, 384), 0, F(500, 1113), F(125, 192), F(-2187, 6784), F(11, 84), 0]
    b_low = [F(5179, 57600), 0, F(7571, 16695), F(393, 640), F(-92097, 339200), F(187, 2100)]
    b_low.append(F(1, 40))
    # the dense-output weights d_s of Hairer, Norsett and Wanner (Sec. II.6)
    d = _vec(
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
    B = _vec(b)
    e0, e6 = _unit(7, 0), _unit(7, 6)
    # y(theta) = y + h [theta f0 + theta^2 (3b - 2 f0 - f1 + d) + theta^3 (f0 + f1 - 2b - 2d)
    #                   + theta^4 d], f1 = K_6: the Hermite cubic plus d theta^2 (1 - theta)^2
    P = np.stack([e0, 3.0 * B - 2.0 * e0 - e6 + d, e0 + e6 - 2.0 * B - 2.0 * d, d], axis=1)
    return RungeKutta(
        name="DP5",
        order=5,
        error_order=4,
        A=_mat(
            [
                [0] * 7,
                [F(1, 5)] + [0] * 6,
                [F(3, 40), F(9, 40)] + [0] * 5,
                [F(44, 45), F(-56, 15), F(32, 9)] + [0] * 4,
                [F(19372, 6561), F(-25360, 2187), F(64448, 6561), F(-212, 729)] + [0] * 3,
                [F(9017, 3168), F(-355, 33), F(46732, 5247), F(49, 176), F(-5103, 18656), 0, 0],
                b,
            ]
        ),
        B=B,
        C=_vec([0, F(1, 5), F(3, 10), F(4, 5), F(8, 9), 1, 1]),
        E=_vec([x - y for x, y in zip(b, b_low, strict=True)]),
        P=P,
        fsal=True,
        dense_order=4,
        reference="Dormand and Prince (1980); dense output: Hairer, Norsett and Wanner (1993)",
    )


def _tsit5() -> RungeKutta:
    A = np.zeros((7, 7))
    A[1, :1] = [0.161]
    A[2, :2] = [-0.008480655492356989, 0.335480655492357]
    A[3, :3] = [2.897153057105493, -6.359448489975075, 4.3622954328695815]
    A[4, :4] = [5.325864828439257, -11.748883564062828, 7.4955393428898365, -0.09249506636175525]
    A[5, :5] = [
        5.86145544294642,
        -12.92096931784711,
        8.159367898576159,
        -0.071584973281401,
        -0.028269050394068383,
    ]
    A[6, :6] = [
        0.09646076681806523,
        0.01,
        0.4798896504144996,
        1.379008574103742,
        -3.290069515436081,
        2.324710524099774,
    ]
    E = np.array(
        [
            -0.00178001105222577714,
            -0.0008164344596567469,
            0.007880878010261995,
            -0.1447110071732629,
            0.5823571654525552,
            -0.45808210592918697,
            1.0 / 66.0,
        ]
    )
    # the free interpolant b_s(theta) of the paper, as products of its printed factors
    lin = npoly.polyfromroots
    theta2 = np.array([0.0, 0.0, 1.0])
    weights = [
        -1.0530884977290216
        * npoly.polymul(
            npoly.polymul([0.0, 1.0], lin([1.3299890189751412])),
            [0.7139816917074209, -1.4364028541716351, 1.0],
        ),
        0.1017 * npoly.polymul(theta2, [1.2949852507374631, -2.1966568338249754, 1.0]),
        2.490627285651252793
        * npoly.polymul(theta2, [1.57803468208092486, -2.38535645472061657, 1.0]),
        -16.54810288924490272
        * npoly.polymul(theta2, lin([1.21712927295533244, 0.61620406037800089])),
        47.37952196281928122
        * npoly.polymul(theta2, lin([1.203071208372362603, 0.658047292653547382])),
        -34.87065786149660974 * npoly.polymul(theta2, lin([1.2, 2.0 / 3.0])),
        2.5 * npoly.polymul(theta2, lin([1.0, 0.6])),
    ]
    P = np.zeros((7, NCOEF - 1))
    for s, w in enumerate(weights):
        w = np.trim_zeros(np.asarray(w, dtype=float), "b")
        P[s, : w.size - 1] = w[1:]  # no constant term
    # the expanded products end at b_s to ~1e-14: end the extension exactly at the step's end
    P[:, -1] += A[6] - P.sum(axis=1)
    return RungeKutta(
        name="Tsit5",
        order=5,
        error_order=4,
        A=A,
        B=A[6].copy(),
        C=np.array([0.0, 0.161, 0.327, 0.9, 0.9800255409045097, 1.0, 1.0]),
        E=E,
        P=P,
        fsal=True,
        dense_order=4,
        reference="Tsitouras (2011)",
    )


BS3 = _bs3()
DP5 = _dp5()
TSIT5 = _tsit5()

#: The methods :func:`fluidnet.simulate` accepts, by name.
METHODS: dict[str, RungeKutta] = {m.name: m for m in (BS3, DP5, TSIT5)}

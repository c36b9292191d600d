"""Embedded Runge-Kutta pairs (explicit, and one linearly implicit), as data.

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

* ``"ROS2"``: the L-stable two-stage Rosenbrock-W method of order 2 of J. G. Verwer, E. J.
  Spee, J. G. Blom and W. Hundsdorfer, SIAM J. Sci. Comput. 20 (1999) 1456-1480, for stiff
  models: each stage solves a linear system with ``I - gamma h J``, ``J`` the Jacobian of the
  field with respect to the current state (generated from the model's symbolic derivatives;
  lagged values and the mode are held fixed). As a W-method its order does not depend on how
  exact ``J`` is, so the lag terms, switches and projections left out of ``J`` cost no accuracy.
  First-order embedded estimate (the linearly implicit Euler step); a continuous extension in
  the two implicit stages (second order with the exact Jacobian).

The tableaux of BS3 and DP5 are exact fractions; Tsitouras gives his coefficients as decimals
(they satisfy the order conditions to rounding, which the tests check).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction as F

import numpy as np
from numpy.polynomial import polynomial as npoly

__all__ = ["RungeKutta", "METHODS", "NCOEF", "BS3", "DP5", "TSIT5", "ROS2"]

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
    G : ndarray, shape (S, S), optional
        Rosenbrock coupling (zero for explicit methods): a stage ``s`` with ``G[s, s] =
        gamma > 0`` is ``K_s = (I - gamma h J)^{-1} (f(t + C_s h, Y_s) + sum_{j<s} G[s, j]
        K_j + T_s h df/dt)``, with ``J`` the Jacobian of the field in the current state and
        ``df/dt`` its time derivative at the step's start (see :attr:`T`).
    Q : ndarray, shape (S,), optional
        Quadrature weights over the stages for averages of the step (the sliding weights'
        counters); ``B`` by default.
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
    G: np.ndarray | None = field(default=None, repr=False)
    Q: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        s = self.C.shape[0]
        G = np.zeros((s, s)) if self.G is None else self.G
        object.__setattr__(self, "G", G)
        if self.Q is None:
            object.__setattr__(self, "Q", np.array(self.B, dtype=np.float64))
        shapes = {"A": (s, s), "B": (s,), "E": (s,), "G": (s, s), "Q": (s,)}
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
        if np.any(np.triu(G, 1)) or np.any(np.diag(G) < 0.0):
            raise ValueError(f"{self.name}: G must be lower triangular with gamma >= 0")
        if any(G[k, k] not in (0.0, self.gamma) for k in range(s)):
            raise ValueError(f"{self.name}: the linearly implicit stages share one gamma")
        for key in ("A", "B", "C", "E", "P", "G", "Q"):
            getattr(self, key).setflags(write=False)

    @property
    def gamma(self) -> float:
        """The diagonal coefficient of the linearly implicit stages (0 for explicit methods)."""
        assert self.G is not None  # set by __post_init__
        return float(np.max(np.diag(self.G)))

    @property
    def T(self) -> np.ndarray:
        """Weights of ``h df/dt`` in the linearly implicit stages: ``G[s, s] kappa_s``, with
        ``kappa`` the stages of the time variable ``tau' = 1`` (the method applied to the
        autonomous form, whose Jacobian has the column ``df/dt``)."""
        G = self.G
        assert G is not None  # set by __post_init__
        s = self.C.shape[0]
        kappa = np.zeros(s)
        for k in range(s):
            if G[k, k] > 0.0:
                kappa[k] = 1.0 + G[k, :k] @ kappa[:k]
        return np.diag(G) * kappa

    @property
    def implicit(self) -> bool:
        """True for a Rosenbrock (linearly implicit) method: it uses the model's Jacobian."""
        return self.gamma > 0.0

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


def _ros2() -> RungeKutta:
    """ROS2 with an explicit first and last stage, so that its steps chain like FSAL pairs.

    The two linearly implicit stages of Verwer et al. (1999), ``W k1 = f(t, y) + gamma h
    f_t``, ``W k2 = f(t + h, y + h k1) - 2 k1 - gamma h f_t``, ``y1 = y + h (3/2 k1 + 1/2
    k2)`` with ``W = I - gamma h J`` and ``gamma = 1 + 1/sqrt(2)``, are stages 1 and 2; stage
    0 is ``f(t, y)`` and stage 3 ``f(t + h, y1)``, the first stage of the next step. Error
    estimate: ``y1`` against the linearly implicit Euler value ``y + h k1`` (first order; the
    only second-order value of these stages where the field depends on time alone, e.g.
    through lags, is the trapezoidal rule, which ROS2 then equals: its estimate would vanish).
    """
    g = 1.0 + 1.0 / np.sqrt(2.0)
    B = np.array([0.0, 1.5, 0.5, 0.0])
    A = np.zeros((4, 4))
    A[2, 1] = 1.0
    A[3] = B
    G = np.zeros((4, 4))
    G[1, 1] = G[2, 2] = g
    G[2, 1] = -2.0
    # y(theta) = y + h (b1(theta) k1 + b2(theta) k2): second order when J is the Jacobian,
    # b1 - b2 = theta, gamma b1 + (1 - 3 gamma) b2 = theta^2 / 2; the stages are filtered by
    # W^{-1}, so stiff components stay on their slow manifold between mesh points (a Hermite
    # interpolant of f(t, y) and f(t + h, y1) would amplify their small offsets by h |lambda|)
    P = np.zeros((4, NCOEF - 1))
    P[2, :2] = [-g / (1.0 - 2.0 * g), 0.5 / (1.0 - 2.0 * g)]
    P[1, :2] = [1.0 + P[2, 0], P[2, 1]]
    return RungeKutta(
        name="ROS2",
        order=2,
        error_order=1,
        A=A,
        B=B,
        C=np.array([0.0, 0.0, 1.0, 1.0]),
        E=B - np.array([0.0, 1.0, 0.0, 0.0]),
        P=P,
        fsal=True,
        dense_order=2,
        reference="Verwer, Spee, Blom and Hundsdorfer (1999)",
        G=G,
        Q=np.array([0.5, 0.0, 0.0, 0.5]),
    )


BS3 = _bs3()
DP5 = _dp5()
TSIT5 = _tsit5()
ROS2 = _ros2()

#: The methods :func:`fluidnet.simulate` accepts, by name.
METHODS: dict[str, RungeKutta] = {m.name: m for m in (BS3, DP5, TSIT5, ROS2)}

"""A network of users with utilities: routing matrix, capacities and per-route constants.

Source: S. Kunniyur and R. Srikant, "End-to-End Congestion Control Schemes: Utility Functions,
Random Losses and ECN Marks", IEEE/ACM Trans. Networking 11(5), 2003, Sec II: links ``l`` with
capacities ``C_l``, users ``r`` each with a route (a set of links), a utility ``U_r``, weights
``w_r`` and ``beta_r`` in its objective (1), and a random-loss fraction ``1 - alpha_r`` (the
received rate is ``z_r = alpha_r y_r``).

A *route* here may carry ``N_r`` identical users (a class): the load of link ``l`` is
``y_l = sum_r A[l, r] N_r x_r``. The paper's Sec IV example (50 + 50 users) and Experiment 3
(300 users in 6 classes) are networks of two and six routes.

Units: the constants are not unit-free. At an equilibrium ``(w_r/beta_r) U_r'(x_r) = beta p``
with ``p`` a fraction, so ``w_r/(beta beta_r)`` has the unit of ``1/U_r'``: a rate for ``log``,
a rate to the power ``nu + 1`` for ``-1/x^nu``. Changing the rate unit (packets per second to
packets per 0.02 s) with the same numbers is a different network (the paper's Experiment 3 has
no feasible marking level in the second unit with ``beta = 0.5``). :attr:`UserNetwork.rate_unit`
and :attr:`UserNetwork.time_unit` name the units; the models' parameters carry them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ModelError, ParameterError
from ..options import index_option
from .network import routing_matrix
from .utility import Utility

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["UserNetwork"]


def bounded_per_element(
    name: str, value: Any, count: int, what: str, *, low: float, low_open: bool, high=None
) -> np.ndarray:
    """Like :func:`fluidnet.models.network.per_element`, with a range check naming the entry."""
    try:
        arr = np.atleast_1d(np.asarray(value, dtype=float))
    except (TypeError, ValueError) as exc:
        raise ParameterError(
            f"{name} = {value!r} is not a number or a sequence of numbers"
        ) from exc
    if arr.ndim != 1 or arr.size not in (1, count):
        raise ParameterError(
            f"{name} must be a number or a sequence of {count} values (one per {what}), "
            f"got {value!r}"
        )
    arr = np.broadcast_to(arr, (count,)).astype(float)
    for i, v in enumerate(arr):
        bad = not math.isfinite(v) or (v <= low if low_open else v < low)
        if high is not None and v > high:
            bad = True
        if bad:
            rng = f"{'>' if low_open else '>='} {low:g}" + (
                f" and <= {high:g}" if high is not None else ""
            )
            raise ParameterError(f"{name}[{i}] = {v!r} ({what} {i + 1}) must be finite and {rng}")
    return arr


@dataclass(frozen=True)
class UserNetwork:
    """Links, routes and the users' constants of Kunniyur & Srikant (2003), Sec II.

    Parameters
    ----------
    A : array_like, shape (links, routes)
        Routing matrix of zeros and ones: ``A[l, r] = 1`` when route ``r`` uses link ``l``.
    utilities : Utility or sequence of Utility
        ``U_r`` per route (one object is used for every route).
    C : float or sequence
        Link capacities ``C_l`` [``rate_unit``].
    w, beta_r : float or sequence, default 1
        The weights of objective (1) per route, ``w_r > 0`` and ``beta_r > 0``.
    alpha : float or sequence, default 1
        Fraction ``alpha_r`` in ``(0, 1]`` of packets that survive random (non-congestion)
        losses; 1 means no random loss.
    N : float or sequence, default 1
        Number of identical users on each route.
    d : float or sequence, default 1
        Round-trip delay per route [``time_unit``], used by the window laws (12)/(13),
        (20)-(25).
    names : sequence of str, optional
        Route labels used in state and parameter names (default ``"1"``, ``"2"``, ...); each
        must be a valid identifier suffix (letters, digits, underscores).
    rate_unit, time_unit : str
        Units of rates and of time (default packets per second and seconds).

    Raises
    ------
    ModelError
        For a bad routing matrix or utilities.
    ParameterError
        For a value of the wrong length, not finite or out of range (the message names it).

    Examples
    --------
    >>> from fluidnet.models import UserNetwork, log_utility, power_utility
    >>> net = UserNetwork([[1, 1, 0], [1, 0, 1]],
    ...                   [power_utility(0.5), log_utility(), power_utility(1)],
    ...                   C=[156.25, 78.125])           # Experiment 1 (Fig 1)
    >>> net.n_links, net.n_routes
    (2, 3)
    """

    A: Any
    utilities: Any
    C: Any
    w: Any = 1.0
    beta_r: Any = 1.0
    alpha: Any = 1.0
    N: Any = 1.0
    d: Any = 1.0
    names: Sequence[str] | None = None
    rate_unit: str = "pkts/s"
    time_unit: str = "s"

    def __post_init__(self) -> None:
        A = routing_matrix(self.A)
        L, S = A.shape
        us = self.utilities
        if isinstance(us, Utility):
            us = [us] * S
        us = tuple(us)
        if len(us) != S:
            raise ModelError(f"utilities: need one per route ({S}), got {len(us)}")
        for i, u in enumerate(us):
            if not isinstance(u, Utility):
                raise ModelError(f"utilities[{i}] = {u!r} is not a Utility")
        set_ = object.__setattr__
        set_(self, "A", A)
        set_(self, "utilities", us)
        set_(self, "C", bounded_per_element("C", self.C, L, "link", low=0.0, low_open=True))
        set_(self, "w", bounded_per_element("w", self.w, S, "route", low=0.0, low_open=True))
        set_(
            self,
            "beta_r",
            bounded_per_element("beta_r", self.beta_r, S, "route", low=0.0, low_open=True),
        )
        set_(
            self,
            "alpha",
            bounded_per_element("alpha", self.alpha, S, "route", low=0, low_open=True, high=1),
        )
        set_(self, "N", bounded_per_element("N", self.N, S, "route", low=0.0, low_open=True))
        set_(self, "d", bounded_per_element("d", self.d, S, "route", low=0.0, low_open=True))
        names = tuple(str(n) for n in self.names) if self.names is not None else None
        if names is None:
            names = tuple(str(i + 1) for i in range(S))
        if len(names) != S or len(set(names)) != S:
            raise ModelError(f"names: need {S} distinct route labels, got {self.names!r}")
        for n in names:
            if not ("x_" + n).isidentifier():
                raise ModelError(f"route label {n!r} cannot be part of an identifier")
        set_(self, "names", names)

    # ------------------------------------------------------------------ sizes
    @property
    def n_links(self) -> int:
        """Number of links."""
        return int(self.A.shape[0])

    @property
    def n_routes(self) -> int:
        """Number of routes."""
        return int(self.A.shape[1])

    def routes_of(self, link: int) -> list[int]:
        """Indices of the routes through ``link`` (0-based).

        Parameters
        ----------
        link : int
            Link index, 0-based (a row of ``A``).

        Returns
        -------
        list of int
        """
        link = index_option("link", link, self.n_links, where="routes_of")
        return [r for r in range(self.n_routes) if self.A[link, r]]

    def links_of(self, route: int) -> list[int]:
        """Indices of the links of ``route`` (0-based).

        Parameters
        ----------
        route : int
            Route index, 0-based (a column of ``A``).

        Returns
        -------
        list of int
        """
        route = index_option("route", route, self.n_routes, where="links_of")
        return [ll for ll in range(self.n_links) if self.A[ll, route]]

    # ------------------------------------------------------------------ numbers
    def loads(self, x: ArrayLike) -> np.ndarray:
        """Link loads ``y_l = sum_r A[l, r] N_r x_r`` for per-user rates ``x``.

        Parameters
        ----------
        x : array_like
            Rate of one user of each route, length ``n_routes`` (in the network's rate unit).

        Returns
        -------
        numpy.ndarray
            Load of each link, length ``n_links``.
        """
        return self.A @ (self.N * np.asarray(x, dtype=float))

    def replace(self, **changes: Any) -> UserNetwork:
        """A copy with some fields changed (validated again).

        Parameters
        ----------
        **changes
            ``field=value`` for fields of the network (e.g. ``C``, ``d``, ``utilities``).

        Returns
        -------
        UserNetwork

        Raises
        ------
        ParameterError
            For a value out of its range (e.g. a capacity that is not positive).
        ModelError
            For a changed routing matrix, utilities or route names that do not fit together.
        TypeError
            For a name that is not a field.
        """
        return replace(self, **changes)

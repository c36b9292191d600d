"""Flows with identical dynamics: the characteristic determinant factored exactly.

In a network model, flows on the same route with the same delay and the same gain are alike:
each sees ``Delta_ii(s) = d(s)`` and acts on every other state in the same way (equal columns of
every matrix ``A_j`` outside the class). For such a class ``C`` of ``c`` states, with a common
coupling ``b(s) = Delta_ij(s)`` between any two of them (often 0), subtracting column ``i1``
from the others and adding their rows to row ``i1`` (unimodular operations) leaves the columns
``(d - b)(e_i - ...)``, whence

    det Delta(s) = (d(s) - b(s))^(c - 1) * det Delta_red(s),

with ``Delta_red`` the system in which the class is one state (row: the sum of the class's
rows; column: the common one). The roots of the scalar factor ``d - b`` (a one-state delay
system) are roots of the whole system with multiplicity ``c - 1`` at least: the differences
between alike flows, which the links never see. A ring of 90 flows on 30 routes has 30 such
classes of 3: its 100-state system is a 40-state one and 30 scalar factors with double roots,
where the roots of the full system cluster and coincide.

The same holds for rows (flows that receive the same feedback): ``det Delta = det Delta^T``,
and the classes of the transposed system are used when those of the system give none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .stacked import Stack

__all__ = ["Aggregation", "aggregation"]

#: Smallest number of states for which classes are looked for (smaller systems are cheap).
AGGREGATE_MIN_STATES = 8


@dataclass(frozen=True)
class Aggregation:
    """``det Delta = prod_g factor_g^multiplicity_g * det reduced`` for every system of a stack.

    Attributes
    ----------
    reduced : Stack
        ``K`` systems with one state per class (and the states in no class).
    factors : Stack
        ``G * K`` one-state systems ``d_g - b_g``: system ``g * K + k`` is class ``g`` of
        system ``k``.
    multiplicity : numpy.ndarray of int
        ``(G,)``: ``c_g - 1``.
    classes : list of numpy.ndarray
        The states of each class (its first state stands for the class in ``reduced``).
    """

    reduced: Stack
    factors: Stack
    multiplicity: np.ndarray
    classes: list[np.ndarray]

    @property
    def G(self) -> int:
        return len(self.classes)


def _all_matrices(stack: Stack) -> np.ndarray:
    """``(K, m + 1, n, n)``: ``A0`` then each ``A_j``."""
    return np.concatenate([stack.A0[:, None], stack.A], axis=1)


def _labels(rows: np.ndarray) -> np.ndarray:
    """A label per row of ``rows`` ``(r, w)``: equal rows (exactly), equal labels."""
    keys: dict[bytes, int] = {}
    rows = np.ascontiguousarray(rows + 0.0)  # -0.0 and 0.0 alike
    return np.array([keys.setdefault(r.tobytes(), len(keys)) for r in rows], dtype=int)


def _classes(M: np.ndarray) -> list[np.ndarray]:
    """Classes of alike states (at least two each) of the matrices ``M`` ``(K, m + 1, n, n)``:
    equal diagonal entries, equal columns outside the class, and one common entry between any
    two members, in every matrix of every system (exact equality). Candidates come from the
    first system and are checked on all."""
    n = M.shape[-1]
    first = M[0]  # (m + 1, n, n)
    diag = np.diagonal(M, axis1=-2, axis2=-1)  # (K, m + 1, n)
    label = _labels(np.diagonal(first, axis1=-2, axis2=-1).T)
    classes: list[np.ndarray] = []
    for lab in np.unique(label):
        group = np.flatnonzero(label == lab)
        if group.size < 2:
            continue
        outside = np.setdiff1d(np.arange(n), group)
        cols = first[:, outside][:, :, group]  # (m + 1, |outside|, |group|)
        sub = _labels(cols.reshape(-1, group.size).T)
        for s in np.unique(sub):
            cls = group[sub == s]
            if cls.size < 2:
                continue
            if not np.all(diag[..., cls] == diag[..., cls[:1]]):
                continue
            others = np.setdiff1d(np.arange(n), cls)
            block = M[:, :, others][..., cls]  # (K, m + 1, n - c, c)
            if not np.all(block == block[..., :1]):
                continue
            off = ~np.eye(cls.size, dtype=bool)
            values = M[:, :, cls][..., cls][..., off]  # (K, m + 1, c (c - 1))
            if not np.all(values == values[..., :1]):
                continue
            classes.append(cls)
    return classes


def _reduce(stack: Stack, M: np.ndarray, classes: list[np.ndarray]) -> tuple[Stack, Stack]:
    K, n = stack.K, stack.n
    rows = M.copy()
    drop = np.zeros(n, dtype=bool)
    for cls in classes:
        rows[:, :, cls[0], :] = np.sum(M[:, :, cls, :], axis=2)
        drop[cls[1:]] = True
    keep = np.flatnonzero(~drop)
    R = rows[:, :, keep][..., keep]
    # the leader's own entry: its diagonal plus (c - 1) times the common coupling
    reduced = Stack(R[:, 0].copy(), R[:, 1:].copy(), stack.tau)
    G = len(classes)
    f0 = np.empty((G, K), dtype=M.dtype)
    f = np.empty((G, K, stack.m), dtype=M.dtype)
    for g, cls in enumerate(classes):
        a, b = cls[0], cls[1]
        f0[g] = M[:, 0, a, a] - M[:, 0, b, a]
        f[g] = M[:, 1:, a, a] - M[:, 1:, b, a]
    factors = Stack(
        f0.reshape(G * K, 1, 1),
        f.reshape(G * K, stack.m, 1, 1),
        np.tile(stack.tau, (G, 1)),
    )
    return reduced, factors


def aggregation(stack: Stack, live: np.ndarray | None = None) -> Aggregation | None:
    """The exact factorization of the module docstring, or ``None`` when no two states are
    alike (or the systems are small).

    Parameters
    ----------
    stack : Stack
    live : numpy.ndarray of bool, optional
        ``(K,)``: the systems whose states must be alike (the others, left out by the caller,
        are reduced alike but carry no meaning).
    """
    if stack.n < AGGREGATE_MIN_STATES or stack.K == 0:
        return None
    M = _all_matrices(stack)
    sample = M if live is None else M[np.asarray(live, dtype=bool)]
    if sample.shape[0] == 0:
        return None
    transposed = False
    classes = _classes(sample)
    if not classes:
        M = np.swapaxes(M, -1, -2)
        classes = _classes(np.swapaxes(sample, -1, -2))
        transposed = True
    if not classes:
        return None
    base = stack if not transposed else Stack(M[:, 0], M[:, 1:], stack.tau)
    reduced, factors = _reduce(base, M, classes)
    if transposed:
        reduced = Stack(
            np.swapaxes(reduced.A0, -1, -2), np.swapaxes(reduced.A, -1, -2), reduced.tau
        )
    mult = np.array([c.size - 1 for c in classes], dtype=int)
    return Aggregation(reduced, factors, mult, classes)

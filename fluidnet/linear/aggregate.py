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

Row-coupled classes. The same operations need less: equal columns outside the class, and
inside it a coupling ``Delta_ki(s) = b_k(s)`` that may differ from row to row (``k != i``)
with ``Delta_kk - b_k = phi(s)`` common to the class. The columns of the class then differ by
``phi (e_i - e_1)`` only, and ``det Delta = phi^(c - 1) det Delta_red`` with the same reduced
system. This is a route's flows with unequal weights: each is fed back the route's price in
proportion to its own rate, so the flows' rows differ, but their differences still obey
``e' = -kappa P e(t - T)`` (a ring of 30 such flows on 6 links has a four-fold root for each
route's). These classes are looked for when no classes of alike states are found (in the systems or
their transposes). The entries
are compared exactly as above, except ``phi``: computed as ``Delta_kk - b_k`` from entries
that the linearization rounds separately, it agrees between rows only to a few units of
rounding (5e-16 relative measured on that ring), and is taken as common within
:data:`PHI_ULPS` units of the largest entry it is computed from -- a perturbation of the
diagonal entries of that size, the size of their own rounding.

Groups without a common factor. Where the rows' factors ``phi_k = Delta_kk - b_k`` differ (a
route's flows with unequal delays: ``phi_k = s + kappa P exp(-s T_k)``), the determinant does
not factor, but the same operations still pay: after them, the column of a member ``i`` other
than the first, ``i1``, is ``phi_i e_i + (phi_i - phi_i1) e_i1`` (zero in every other row), so
those members act on no other such member, and ``Delta_SS`` is diagonal for ``S`` the members
but the first of every group. The operations are a similarity ``T^{-1} A_j T`` of every
matrix (``T`` subtracts column ``i1`` from the others, ``T^{-1}`` adds their rows to row
``i1``): :func:`grouped` returns those systems with that split, whose determinant the Schur
complement on the groups' first states and the other states gives (:meth:`Stack.split`). A
30-flow ring of six routes with five delays is a 6 x 6 Schur complement instead of a 30 x 30
determinant: 1.9 us a sample instead of 33. Every entry is compared exactly.

Columns that are sums. A flow whose route crosses several links acts on the others through
each of them: outside its own row, its column is the sum of the columns of the one-link
routes of those links (in every matrix, delayed or not), and ``T`` subtracting those columns
from it (``T^{-1}`` adding its row to theirs) leaves its column nonzero only in its own row
and theirs. With ``S`` every such member and the *leaders* (the columns the others are
combined from) left to the Schur complement, ``Delta_SS`` is again diagonal: a ring of 20
flows on 5 links, 15 states once its alike flows are factored, is a 5 x 5 complement (1.3 us
a sample instead of 4.1). The leaders are the columns whose nonzero rows (with their own)
contain no other column's; a column containing some is fitted to theirs by least squares
on the first system, every row but its own and its leaders', and the fit is checked on every
matrix of every system. A sum of entries the linearization rounds separately agrees with the
entry computed at once only to rounding (two units measured on that ring), so the check, and
the entries of ``Delta_SS`` off its diagonal after the similarity, are taken as 0 within
:data:`SUM_ULPS` units of the largest term: a perturbation of those entries of the size of
their own rounding, as for a row-coupled class's common factor.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .stacked import SCHUR_MAX_FRACTION, SCHUR_MIN_STATES, Stack

__all__ = ["Aggregation", "aggregation", "aggregation_by", "grouped"]

#: Smallest number of states for which classes are looked for (smaller systems are cheap).
AGGREGATE_MIN_STATES = 8
#: Largest number of states for which row-coupled classes are looked for (the search screens
#: every pair of columns: ``(m + 1) n^2`` operations and as many numbers in memory).
ROW_COUPLED_MAX_STATES = 256
#: Relative agreement of two columns' sums (without their two rows) that screens the pairs of
#: states a row-coupled class may hold (exactly equal columns agree to the sums' rounding).
SCREEN_RTOL = 1e-9
#: Agreement of a row-coupled class's common factor ``Delta_kk - Delta_ki`` between its rows,
#: in units of rounding (``numpy.finfo(float).eps``) of the largest of the entries involved.
PHI_ULPS = 8.0
#: Agreement of a column with the sum of its leaders' (module notes: columns that are sums), in
#: units of rounding of the largest term of each entry.
SUM_ULPS = 8.0
#: Smallest number of states for which columns that are sums are looked for (the groups of
#: :func:`grouped` from :data:`~fluidnet.linear.stacked.SCHUR_MIN_STATES` on).
SUMS_MIN_STATES = AGGREGATE_MIN_STATES


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
    transposed : bool
        True when the classes are those of the transposed systems (alike rows).
    """

    reduced: Stack
    factors: Stack
    multiplicity: np.ndarray
    classes: list[np.ndarray]
    transposed: bool = False

    @property
    def G(self) -> int:
        return len(self.classes)


class _Matrices:
    """``A0`` and the ``A_j`` of a stack (or of its transposed systems) as blocks
    ``(K, m + 1, rows, cols)``, gathered without copying the whole stack."""

    def __init__(self, stack: Stack, transposed: bool, live: np.ndarray | None):
        self.A0, self.A = stack.A0, stack.A
        if live is not None:
            self.A0, self.A = self.A0[live], self.A[live]
        self.transposed = transposed

    def block(self, rows, cols) -> np.ndarray:
        if self.transposed:
            return np.swapaxes(self._block(cols, rows), -1, -2)
        return self._block(rows, cols)

    def _block(self, rows, cols) -> np.ndarray:
        rows, cols = np.atleast_1d(rows), np.atleast_1d(cols)
        # one gather of the block's entries (rows by columns broadcast): taking the rows of
        # every matrix first and then their columns copied a (K, m, rows, n) array on the way,
        # 2.5-3.5 times slower (a 100-state network's 400 systems: 16-17 -> 5-6.5 ms a block)
        r = rows[:, None]
        return np.concatenate([self.A0[:, r, cols][:, None], self.A[:, :, r, cols]], axis=1)

    def entries(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """``(K, m + 1, len(i))``: the entries ``(i, j)`` of every matrix."""
        if self.transposed:
            i, j = j, i
        return np.concatenate([self.A0[:, i, j][:, None], self.A[:, :, i, j]], axis=1)

    def diagonal(self, states) -> np.ndarray:
        """``(K, m + 1, |states|)``."""
        states = np.atleast_1d(states)
        a0 = self.A0[:, states, states]
        a = self.A[:, :, states, states]
        return np.concatenate([a0[:, None], a], axis=1)

    def first(self) -> np.ndarray:
        """``(m + 1, n, n)``: every matrix of the first system."""
        M = np.concatenate([self.A0[:1, None], self.A[:1]], axis=1)[0]
        return np.swapaxes(M, -1, -2) if self.transposed else M


def _labels(rows: np.ndarray) -> np.ndarray:
    """A label per row of ``rows`` ``(r, w)``: equal rows (exactly), equal labels."""
    keys: dict[bytes, int] = {}
    rows = np.ascontiguousarray(rows + 0.0)  # -0.0 and 0.0 alike
    return np.array([keys.setdefault(r.tobytes(), len(keys)) for r in rows], dtype=int)


def _count(labels: np.ndarray) -> int:
    """How many labels :func:`_labels` gave (they are ``0 .. count - 1``)."""
    return int(labels.max()) + 1 if labels.size else 0


def _rest(n: int, S: np.ndarray) -> np.ndarray:
    """The indices ``0 .. n - 1`` not in ``S``, in order (np.setdiff1d without numpy.ma)."""
    rest = np.ones(n, dtype=bool)
    rest[S] = False
    return np.flatnonzero(rest)


def _classes(mats: _Matrices) -> list[np.ndarray]:
    """Classes of alike states (at least two each): equal diagonal entries, equal columns
    outside the class, and one common entry between any two members, in every matrix of every
    system (exact equality). Candidates come from the first system and are checked on all."""
    first = mats.first()  # (m + 1, n, n)
    n = first.shape[-1]
    label = _labels(np.diagonal(first, axis1=-2, axis2=-1).T)
    classes: list[np.ndarray] = []
    # labels are 0, 1, ... in order of first appearance (np.unique and np.setdiff1d are not
    # used: their first call imports numpy.ma, 11-14 ms of a network's first analysis)
    for lab in range(_count(label)):
        group = np.flatnonzero(label == lab)
        if group.size < 2:
            continue
        outside = _rest(n, group)
        cols = first[:, outside][:, :, group]  # (m + 1, |outside|, |group|)
        sub = _labels(cols.reshape(-1, group.size).T)
        for s in range(_count(sub)):
            cls = group[sub == s]
            if cls.size >= 2:
                classes.append(cls)
    return _checked(mats, classes, n)


def _row_coupled_classes(mats: _Matrices, common: bool = True) -> list[np.ndarray]:
    """Row-coupled classes (module notes): candidates from the first system -- pairs of states
    whose columns agree outside their two rows in every matrix and whose common factors agree
    -- grouped into cliques, then checked on every system. Without ``common``, the factors
    ``Delta_kk - b_k`` are not compared: the groups of :func:`grouped`.

    Pairs are screened first by their common factors and their column sums without those two
    rows (equal to rounding for a pair whose columns agree there), so that a system without
    such classes costs ``(m + 1) n^2`` operations, not a comparison of every pair of columns
    (100 states: 2.5 ms instead of 7; 256 states: 9 ms instead of 73)."""
    first = mats.first()  # (m + 1, n, n)
    n = first.shape[-1]
    diag = np.diagonal(first, axis1=-2, axis2=-1)  # (m + 1, n)
    across = np.swapaxes(first, -1, -2)  # across[., i, j] = Delta_ji
    # column i's sum without rows i and j, against column j's without the same rows
    rest = first.sum(axis=1)[:, :, None] - diag[:, :, None] - across
    scale = np.abs(first).sum(axis=1)
    near = np.abs(rest - np.swapaxes(rest, -1, -2)) <= SCREEN_RTOL * (
        scale[:, :, None] + scale[:, None, :]
    )
    if common:  # and the common factor Delta_ii - Delta_ij of each against Delta_jj - Delta_ji
        phi = diag[:, :, None] - first
        size = np.maximum(np.abs(diag)[:, :, None], np.abs(first))
        near &= np.abs(phi - np.swapaxes(phi, -1, -2)) <= _phi_tol(
            np.maximum(size, np.swapaxes(size, -1, -2))
        )
    near = np.all(near, axis=0)
    np.fill_diagonal(near, False)
    if not near.any():
        return []
    # the screened pairs, compared exactly outside their two rows
    pair = np.zeros((n, n), dtype=bool)
    rows = np.arange(n)
    for i, j in zip(*np.nonzero(np.triu(near)), strict=True):
        keep = (rows != i) & (rows != j)
        pair[i, j] = pair[j, i] = np.array_equal(first[:, keep, i], first[:, keep, j])
    classes: list[np.ndarray] = []
    free = np.ones(n, dtype=bool)
    for i in range(n):
        if not free[i] or not pair[i].any():
            continue
        cls = [i]
        for j in np.flatnonzero(pair[i] & free):
            if j > i and all(pair[j, k] for k in cls):
                cls.append(int(j))
        if len(cls) >= 2:
            free[cls] = False
            classes.append(np.array(cls))
    return _checked(mats, classes, n, common)


def _checked(
    mats: _Matrices, classes: list[np.ndarray], n: int, common: bool = True
) -> list[np.ndarray]:
    """The candidate classes that hold in every system (:func:`_alike_all`): all at once where
    they all do, else one by one."""
    if classes and _alike_all(mats, classes, n, common):
        return classes
    return [cls for cls in classes if _alike_all(mats, [cls], n, common)]


def _phi_tol(size: np.ndarray) -> np.ndarray:
    """How far two rows' common factors may differ, for entries of magnitude ``size``."""
    return PHI_ULPS * np.finfo(float).eps * size


#: Systems compared at once by :func:`_alike_all` (a few: the gathered columns stay in cache).
ALIKE_CHUNK = 8


def _alike_all(mats: _Matrices, classes: list[np.ndarray], n: int, common: bool = True) -> bool:
    """Whether every class is alike in every system (see :func:`_classes`), all classes at once
    and a few systems at a time (one pass over the matrices instead of one per class: 100
    states, 256 systems, 30 classes: 12 ms instead of 48). Without ``common``, the factors
    ``Delta_kk - b_k`` need not be common to a class (the groups of :func:`grouped`)."""
    key = tuple(tuple(int(i) for i in c) for c in classes)
    member, leader, inside, (i, j, i0, j0), rows = _class_indices(key, n)
    # equal columns outside the class (the class's own rows are compared below); of the
    # transposed systems, equal rows
    for M in (mats.A0, mats.A):
        for k in range(0, len(M), ALIKE_CHUNK):
            m = M[k : k + ALIKE_CHUNK]
            if mats.transposed:
                same = m[..., member, :] == m[..., leader, :]
                ok = np.all(same | inside.T)
            else:
                ok = np.all((m[..., member] == m[..., leader]) | inside)
            if not ok:
                return False
    # inside the class, each row's coupling one entry (b_k: the entries (k, i) equal the
    # (k, j_k)); and Delta_kk - b_k common (exactly, or to rounding: module notes)
    if not np.all(mats.entries(i, j) == mats.entries(i0, j0)):
        return False
    if not common:
        return True
    k, jk, lead, second = rows
    bk, bl = mats.entries(k, jk), mats.entries(lead, second)
    dk, dl = mats.diagonal(k), mats.diagonal(lead)
    size = np.maximum(np.maximum(np.abs(dk), np.abs(bk)), np.maximum(np.abs(dl), np.abs(bl)))
    return bool(np.all(np.abs((dk - bk) - (dl - bl)) <= _phi_tol(size)))


def _reduce(stack: Stack, mats: _Matrices, classes: list[np.ndarray]) -> tuple[Stack, Stack]:
    K, n = stack.K, stack.n
    drop = np.zeros(n, dtype=bool)
    for cls in classes:
        drop[cls[1:]] = True
    keep = np.flatnonzero(~drop)
    R = mats.block(keep, keep)  # (K, m + 1, k, k)
    at = np.searchsorted(keep, [cls[0] for cls in classes])
    # the leader's row: the sum of the class's rows (its own entry: its diagonal plus (c - 1)
    # times the common coupling), the classes of one size at once, summed in the order of
    # their states
    for size in sorted({cls.size for cls in classes}):
        which = [g for g, cls in enumerate(classes) if cls.size == size]
        members = np.array([classes[g] for g in which])  # (classes, size)
        rows = mats.block(members[:, 0], keep)
        for j in range(1, size):
            rows = rows + mats.block(members[:, j], keep)
        R[:, :, at[which], :] = rows
    reduced = Stack(R[:, 0].copy(), R[:, 1:].copy(), stack.tau)
    G = len(classes)
    first = np.array([cls[0] for cls in classes])
    second = np.array([cls[1] for cls in classes])

    # Delta_aa - Delta_ab of each class, a and b its first two states (of the transposed
    # systems: Delta_aa - Delta_ba); for alike states Delta_ab = Delta_ba
    def entries(r: np.ndarray, c: np.ndarray) -> np.ndarray:
        """``(K, m + 1, G)``: the entries ``(r_g, c_g)`` of every matrix of every system."""
        return np.concatenate([stack.A0[:, r, c][:, None], stack.A[:, :, r, c]], axis=1)

    pair = entries(second, first) if mats.transposed else entries(first, second)
    f = np.moveaxis(entries(first, first) - pair, -1, 0)  # (G, K, m + 1)
    factors = Stack(
        f[..., 0].reshape(G * K, 1, 1),
        f[..., 1:].reshape(G * K, stack.m, 1, 1),
        np.tile(stack.tau, (G, 1)),
    )
    return reduced, factors


def aggregation(stack: Stack, live: np.ndarray | None = None) -> Aggregation | None:
    """The factorization of the module docstring, or ``None`` when no two states are alike or
    row-coupled (or the systems are small). Classes of alike states are looked for first (in
    the systems, then in their transposes), row-coupled ones only where there are none.

    Parameters
    ----------
    stack : Stack
    live : numpy.ndarray of bool, optional
        ``(K,)``: the systems whose states must be alike (the others, left out by the caller,
        are reduced alike but carry no meaning).
    """
    if stack.n < AGGREGATE_MIN_STATES or stack.K == 0:
        return None
    live = None if live is None else np.asarray(live, dtype=bool)
    if live is not None and not live.any():
        return None
    if live is not None and live.all():
        live = None  # no copy of the live systems: they are all of them
    searches = [(_classes, False), (_classes, True)]
    if stack.n <= ROW_COUPLED_MAX_STATES:  # only where no states are alike (module notes)
        searches += [(_row_coupled_classes, False), (_row_coupled_classes, True)]
    for search, transposed in searches:
        classes = search(_Matrices(stack, transposed, live))
        if classes:
            return _factored(stack, classes, transposed)
    return None


def aggregation_by(stack: Stack, classes: list[np.ndarray], transposed: bool) -> Aggregation | None:
    """The factorization of :func:`aggregation` by given classes of alike or row-coupled states
    (of the transposed systems with ``transposed``), or ``None`` when one of them is not such
    a class in every system of the stack (compared as there: exactly, but for a row-coupled
    class's common factor).

    A caller that found the classes on one system checks them on another at the cost of the
    checks alone (no search for classes).
    """
    if not classes or stack.K == 0:
        return None
    classes = [np.asarray(c) for c in classes]
    if not _alike_all(_Matrices(stack, transposed, None), classes, stack.n):
        return None
    return _factored(stack, classes, transposed)


def _factored(stack: Stack, classes: list[np.ndarray], transposed: bool) -> Aggregation:
    """The :class:`Aggregation` of ``stack`` by its classes of alike states."""
    reduced, factors = _reduce(stack, _Matrices(stack, transposed, None), classes)
    if transposed:
        reduced = Stack(
            np.swapaxes(reduced.A0, -1, -2), np.swapaxes(reduced.A, -1, -2), reduced.tau
        )
    mult = np.array([c.size - 1 for c in classes], dtype=int)
    return Aggregation(reduced, factors, mult, classes, transposed)


@lru_cache(maxsize=32)
def _class_indices(key: tuple[tuple[int, ...], ...], n: int):
    """Index arrays of the checks of :func:`_alike_all` for the classes ``key`` (kept: a
    caller checks the same classes at many parameter values)."""
    classes = [np.array(c) for c in key]
    member = np.concatenate([c[1:] for c in classes])
    leader = np.concatenate([np.full(c.size - 1, c[0]) for c in classes])
    label = np.full(n, -1)
    for g, c in enumerate(classes):
        label[c] = g
    inside = label[:, None] == label[member][None, :]  # (n, members)

    # every off-diagonal entry (k, i) of a class against the one (k, j_k) of its row, j_k the
    # class's first state (its second in the first state's row)
    def partner(c, k):
        return c[1] if k == c[0] else c[0]

    pairs = [(k, i, k, partner(c, k)) for c in key for k in c for i in c if i != k]
    pairs = [q for q in pairs if q[1] != q[3]]
    i, j, i0, j0 = np.array(pairs, dtype=int).reshape(-1, 4).T
    # each member's (k, j_k) against the first state's (c_0, c_1)
    rows = np.array([(k, partner(c, k), c[0], c[1]) for c in key for k in c], dtype=int).T
    return member, leader, inside, (i, j, i0, j0), rows


def grouped(stack: Stack) -> Stack | None:
    """Systems similar to ``stack`` whose Schur complement is small (module notes: groups
    without a common factor, and columns that are sums), with the split that gives it; ``None``
    where the stack already has such a split, is small or complex, or has neither structure (in
    its systems or their transposes) with at most
    :data:`~fluidnet.linear.stacked.SCHUR_MAX_FRACTION` of the states left to the complement.

    The systems returned are those of ``stack`` (or of its transposes) after a similarity: the
    same characteristic determinants and roots, other matrices (with sums, the entries of
    ``Delta_SS`` off its diagonal that cancel to rounding set to 0).
    """
    n = stack.n
    if n < SUMS_MIN_STATES or n > ROW_COUPLED_MAX_STATES or stack.K == 0:
        return None
    if stack.is_complex() or stack.split[0].size:
        return None
    for transposed in (False, True):
        A0, A = stack.A0, stack.A
        if transposed:
            A0, A = np.swapaxes(A0, -1, -2), np.swapaxes(A, -1, -2)
        found = None
        if n >= SCHUR_MIN_STATES:
            found = _groups_split(_Matrices(stack, transposed, None), A0, A, stack.tau)
        found = found or _sums_split(A0, A, stack.tau)
        if found is not None:
            return found
    return None


def _groups_split(mats: _Matrices, A0: np.ndarray, A: np.ndarray, tau: np.ndarray) -> Stack | None:
    """The similar systems of the groups without a common factor with their split, or
    ``None``."""
    n = A0.shape[-1]
    groups = _row_coupled_classes(mats, common=False)
    others = np.concatenate([g[1:] for g in groups]) if groups else np.zeros(0, int)
    if n - others.size > SCHUR_MAX_FRACTION * n:
        return None
    A0, A = _similar(A0, groups), _similar(A, groups)
    S = np.sort(others)
    T = _rest(n, S)
    # the members but the first act on no other (exact zeros): checked, not assumed
    pattern = np.any(A0[:, S][..., S] != 0, axis=0) | np.any(A[..., S, :][..., S] != 0, axis=(0, 1))
    np.fill_diagonal(pattern, False)
    if pattern.any():
        return None
    return Stack(A0, A, tau, (S, T))


def _similar(M: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """``T^{-1} M T`` for every matrix of ``M`` (``(..., n, n)``; module notes)."""
    M = M.copy()
    for g in groups:
        M[..., g[1:]] -= M[..., g[:1]]  # columns: minus the first member's
    for g in groups:
        M[..., g[0], :] += M[..., g[1:], :].sum(axis=-2)  # the first's row: plus the others'
    return M


def _sums_split(A0: np.ndarray, A: np.ndarray, tau: np.ndarray) -> Stack | None:
    """The similar systems of the columns that are sums (module notes) with their split, or
    ``None``: the members ``S`` are found on the first system and checked on every system."""
    n = A0.shape[-1]
    sums = _sums_of(np.concatenate([A0[:1, None], A[:1]], axis=1)[0])
    if len(sums) < n - SCHUR_MAX_FRACTION * n:
        return None
    for s in list(sums):  # the fits, checked on every matrix of every system
        if not (_fits(A0, s, *sums[s]) and _fits(A, s, *sums[s])):
            del sums[s]
    if len(sums) < n - SCHUR_MAX_FRACTION * n:
        return None
    S = np.array(sorted(sums), dtype=np.intp)
    T = _rest(n, S)
    # Delta_SS off its diagonal: the fits' residues, within SUM_ULPS of their terms (checked)
    inside = np.zeros((n, n), dtype=bool)
    inside[np.ix_(S, S)] = True
    np.fill_diagonal(inside, False)
    out = []
    for M in (A0, A):
        M = M.copy()
        for s, (J, c) in sums.items():  # columns: minus the combination of the leaders'
            M[..., s] -= M[..., J] @ c
        for s, (J, c) in sums.items():  # the leaders' rows: plus the member's, as many times
            M[..., J, :] += c[:, None] * M[..., s : s + 1, :]
        M[..., inside] = 0.0
        out.append(M)
    return Stack(out[0], out[1], tau, (S, T))


def _sums_of(first: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """``{member: (leaders, coefficients)}``: the columns of the system ``first``
    (``(m + 1, n, n)``, every matrix) that are combinations of their leaders' outside their
    own rows and theirs (module notes), to :data:`SUM_ULPS`."""
    n = first.shape[-1]
    if not np.all(np.isfinite(first)):
        return {}
    support = (np.any(first != 0, axis=0) | np.eye(n, dtype=bool)).astype(np.float32)
    # within[i, j]: column i's nonzero rows are among column j's (counts: exact in float32)
    within = (support.T @ (1.0 - support)) == 0
    np.fill_diagonal(within, False)
    strict = within & ~within.T
    leader = ~strict.any(axis=0)
    sums: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for s in map(int, np.flatnonzero(~leader)):
        J = np.flatnonzero(leader & strict[:, s])
        if not J.size:
            continue
        rows = _outside(n, s, J)
        B = first[:, rows][:, :, J].reshape(-1, J.size)
        c = np.linalg.lstsq(B, first[:, rows, s].reshape(-1), rcond=None)[0]
        if _fits(first, s, J, c):
            sums[s] = (J, c)
    return sums


def _outside(n: int, s: int, J: np.ndarray) -> np.ndarray:
    """The rows a member's fit is taken on: all but its own and its leaders'."""
    rows = np.ones(n, dtype=bool)
    rows[s] = False
    rows[J] = False
    return rows


def _fits(M: np.ndarray, s: int, J: np.ndarray, c: np.ndarray) -> bool:
    """Whether column ``s`` of every matrix of ``M`` (``(..., n, n)``) is the combination ``c``
    of the columns ``J`` outside their rows and its own, to :data:`SUM_ULPS`."""
    rows = _outside(M.shape[-1], s, J)
    B = M[..., rows, :][..., J]  # (..., r, |J|)
    b = M[..., rows, s]
    return bool(np.all(np.abs(b - B @ c) <= _sum_tol(np.abs(b) + np.abs(B) @ np.abs(c))))


def _sum_tol(size: np.ndarray) -> np.ndarray:
    """How far a column may be from its fit, for terms of magnitude ``size``."""
    return SUM_ULPS * np.finfo(float).eps * size

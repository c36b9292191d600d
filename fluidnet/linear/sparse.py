"""The characteristic matrix of a large linear delay system, held sparse.

A network model has one matrix per distinct delay, each with a few nonzero rows (a flow sees
its own delay): a 200-flow parking lot has 200 matrices of 200 x 200 with about 600 nonzero
entries in all. :class:`SparseSystem` keeps only those entries, as terms ``(i, j, k, a)``
(entry ``(i, j)`` of ``A_k``; ``k = -1`` for ``A0``), so that

* ``Delta(s) = s I - A0 - sum_k A_k exp(-s tau_k)`` and ``Delta'(s)`` are assembled in
  ``O(nnz)`` as sparse matrices, and factored by SuperLU;
* ``det Delta(s)`` is returned by its **phase** ``det / |det|`` (the determinant of a
  200-state system overflows a double far out on a certificate line, and only its argument
  counts roots), and ``(det Delta)'/det Delta = trace(Delta^{-1} Delta')`` from the same
  factorization.

It offers the methods of :class:`~fluidnet.linear.stacked.Stack` that the certificate
(:func:`~fluidnet.linear.certificate.count_right_of`) and the inclusion discs
(:mod:`~fluidnet.linear.inclusion`) use, for one system (``K = 1``).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Literal, overload

import numpy as np

if TYPE_CHECKING:
    from .lineardde import LinearDDE
    from .stacked import Stack

__all__ = ["SparseSystem"]

#: Up to this many states, Delta is factored by dense LAPACK (less overhead than SuperLU).
DENSE_STATES = 400


class SparseSystem:
    """One linear delay system as sparse terms (see the module docstring).

    Parameters
    ----------
    n : int
        States.
    rows, cols : numpy.ndarray of int
        Entry of each term.
    which : numpy.ndarray of int
        Its matrix: ``-1`` for ``A0``, ``k`` for ``A_k``.
    values : numpy.ndarray
        Its value.
    tau : numpy.ndarray
        ``(m,)`` delays.
    """

    def __init__(self, n, rows, cols, which, values, tau):
        self._n = int(n)
        self.rows = np.asarray(rows, dtype=np.int64)
        self.cols = np.asarray(cols, dtype=np.int64)
        self.which = np.asarray(which, dtype=np.int64)
        self.values = np.asarray(values)
        self.tau = np.asarray(tau, dtype=float)
        n = self._n
        # the pattern of Delta: every term's entry and the diagonal, in CSC order
        keys = np.concatenate([self.cols * n + self.rows, np.arange(n) * (n + 1)])
        uniq, inv = np.unique(keys, return_inverse=True)
        self._indices = (uniq % n).astype(np.int32)
        self._indptr = np.searchsorted(uniq // n, np.arange(n + 1)).astype(np.int32)
        self._pos = inv[: self.rows.size]
        self._diag = inv[self.rows.size :]
        self._nnz = uniq.size
        self._flat = (uniq % n) * n + uniq // n  # row-major position of each pattern entry

    @classmethod
    def from_lineardde(cls, lin: LinearDDE) -> SparseSystem:
        parts = []
        for k, a in enumerate((lin.A0, *lin.A)):
            i, j = np.nonzero(a)
            parts.append((i, j, np.full(i.size, k - 1), a[i, j]))
        rows, cols, which, values = (np.concatenate(p) for p in zip(*parts, strict=True))
        return cls(lin.n, rows, cols, which, values, np.asarray(lin.delays, dtype=float))

    # ------------------------------------------------------------------ Stack's interface
    @property
    def K(self) -> int:
        return 1

    @property
    def n(self) -> int:
        return self._n

    @property
    def m(self) -> int:
        return self.tau.size

    @property
    def nnz(self) -> int:
        """Entries of the pattern of ``Delta`` (the diagonal included)."""
        return self._nnz

    def is_complex(self) -> bool:
        return bool(np.iscomplexobj(self.values))

    def magnitude(self) -> np.ndarray:
        """``|A0| + sum_k |A_k|`` as a dense ``(1, n, n)`` array (for balancing)."""
        M = np.zeros((self.n, self.n))
        np.add.at(M, (self.rows, self.cols), np.abs(self.values))
        return M[None]

    def scaled(self, d: np.ndarray) -> SparseSystem:
        """The similar system ``D^{-1} A D`` for the diagonal ``d`` ``(1, n)``."""
        d = np.asarray(d).reshape(-1)
        vals = self.values * (d[self.cols] / d[self.rows])
        return SparseSystem(self.n, self.rows, self.cols, self.which, vals, self.tau)

    def max_delay(self) -> np.ndarray:
        live = np.unique(self.which[self.which >= 0])
        return np.array([float(np.max(self.tau[live], initial=0.0))])

    def matrix_norms(self) -> tuple[float, np.ndarray]:
        """Frobenius norms of ``A0`` and of each ``A_k`` (upper bounds of their 2-norms)."""
        sq = np.bincount(self.which + 1, weights=np.abs(self.values) ** 2, minlength=self.m + 1)
        return float(np.sqrt(sq[0])), np.sqrt(sq[1:])

    def norm_bound(self, sigma, idx=None) -> np.ndarray:
        """``||A0|| + sum_k ||A_k|| exp(-sigma tau_k)`` (Frobenius norms)."""
        n0, nk = self.matrix_norms()
        sigma = np.asarray(sigma, dtype=float)
        with np.errstate(over="ignore"):
            return n0 + np.sum(nk * np.exp(-sigma[..., None] * self.tau), axis=-1)

    # ------------------------------------------------------------------ evaluations
    def combination(self, weights: np.ndarray, diagonal: complex = 0.0) -> np.ndarray:
        """Entries (in the pattern of ``Delta``) of ``A0 + sum_k weights_k A_k + diagonal I``."""
        w = np.ones(self.m + 1, dtype=complex)
        w[1:] = weights
        c = self.values * w[self.which + 1]
        data = np.bincount(self._pos, weights=np.real(c), minlength=self._nnz).astype(complex)
        data.imag = np.bincount(self._pos, weights=np.imag(c), minlength=self._nnz)
        data[self._diag] += diagonal
        return data

    def _coefficients(self, s: complex, derivative: bool):
        e = np.exp(-s * self.tau)
        data = -self.combination(e, -s)
        if not derivative:
            return data, None
        t = np.zeros(self.m + 1, dtype=complex)
        t[1:] = self.tau * e
        c = self.values * t[self.which + 1]
        ddata = np.bincount(self._pos, weights=np.real(c), minlength=self._nnz).astype(complex)
        ddata.imag = np.bincount(self._pos, weights=np.imag(c), minlength=self._nnz)
        ddata[self._diag] += 1.0
        return data, ddata

    def delayed_product(self, Z: np.ndarray) -> np.ndarray:
        """``sum_k A_k z_k`` for the rows ``z_k = Z[k]`` of ``Z`` ``(m, n)``."""
        d = self.which >= 0
        c = self.values[d] * Z[self.which[d], self.cols[d]]
        out = np.bincount(self.rows[d], weights=np.real(c), minlength=self.n).astype(complex)
        out.imag = np.bincount(self.rows[d], weights=np.imag(c), minlength=self.n)
        return out

    def _dense(self, data: np.ndarray) -> np.ndarray:
        D = np.zeros(self.n * self.n, dtype=complex)
        D[self._flat] = data
        return D.reshape(self.n, self.n)

    def matrix(self, data: np.ndarray):
        """A sparse CSC matrix with the pattern of ``Delta`` and the given entries."""
        from scipy.sparse import csc_matrix

        return csc_matrix((data, self._indices, self._indptr), shape=(self.n, self.n))

    @overload
    def delta(
        self, s: np.ndarray, idx: object = None, derivative: Literal[False] = False
    ) -> np.ndarray: ...
    @overload
    def delta(
        self, s: np.ndarray, idx: object, derivative: Literal[True]
    ) -> tuple[np.ndarray, np.ndarray]: ...
    def delta(
        self, s: np.ndarray, idx: object = None, derivative: bool = False
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Dense ``Delta(s_q)`` (and ``Delta'(s_q)``), shape ``(Q, n, n)``."""
        s = np.asarray(s, dtype=complex).ravel()
        D = np.empty((s.size, self.n, self.n), dtype=complex)
        dD = np.empty_like(D) if derivative else None
        for q, sq in enumerate(s):
            data, ddata = self._coefficients(sq, derivative)
            D[q] = self._dense(data)
            if dD is not None:
                assert ddata is not None  # asked for with derivative=True
                dD[q] = self._dense(ddata)
        return (D, dD) if dD is not None else D

    def _factor(self, s: complex, data: np.ndarray | None = None):
        """A factorization of ``Delta(s)``: ``(solve, log |det|, det / |det|)``, or None when
        it is singular. Dense LAPACK up to :data:`DENSE_STATES` states (a 200 x 200 LU costs
        about a millisecond, less than SuperLU's overhead), SuperLU beyond."""
        if data is None:
            data = self._coefficients(s, False)[0]
        if self.n <= DENSE_STATES:
            from scipy.linalg import get_lapack_funcs

            D = self._dense(data)
            getrf, getrs = get_lapack_funcs(("getrf", "getrs"), (D,))
            with np.errstate(all="ignore"):
                lu, piv, info = getrf(D, overwrite_a=True)
            if info > 0:
                return None
            u = np.diagonal(lu)
            swaps = int(np.count_nonzero(piv != np.arange(self.n)))
            sign = -1.0 if swaps % 2 else 1.0

            def solve(b):
                return getrs(lu, piv, b)[0]
        else:
            from scipy.sparse.linalg import splu

            try:
                with np.errstate(all="ignore"):
                    lu_s = splu(self.matrix(data), permc_spec="COLAMD")
            except RuntimeError:  # exactly singular
                return None
            u = lu_s.U.diagonal()
            sign = _permutation_sign(lu_s.perm_r) * _permutation_sign(lu_s.perm_c)
            solve = lu_s.solve
        a = np.abs(u)
        if not np.all(np.isfinite(u)) or np.any(a == 0):
            return None
        return solve, float(np.sum(np.log(a))), complex(np.prod(u / a) * sign)

    @cached_property
    def schur(self) -> Stack | None:
        """The system as a one-system :class:`~fluidnet.linear.stacked.Stack` when its
        structure allows the Schur complement of :meth:`~fluidnet.linear.stacked.Stack.split`
        (a network whose flows act on each other only through a few links): ``det Delta``
        then costs that of a matrix of the links' size, for all samples at once. ``None``
        otherwise."""
        from .stacked import SCHUR_MIN_STATES

        if not SCHUR_MIN_STATES <= self.n <= DENSE_STATES:
            return None
        stack = self._stack()
        return stack if stack.split[0].size else None

    def _stack(self) -> Stack:
        """The system as a one-system dense :class:`~fluidnet.linear.stacked.Stack`."""
        from .stacked import Stack

        m = self.tau.size
        A = np.zeros((1, m + 1, self.n, self.n), dtype=self.values.dtype)
        np.add.at(A[0], (self.which + 1, self.rows, self.cols), self.values)
        return Stack(A[:, 0], A[:, 1:], self.tau[None, :])

    @cached_property
    def whole(self) -> Stack | None:
        """The system as a one-system :class:`~fluidnet.linear.stacked.Stack` whose samples
        the compiled kernel takes on whole matrices, where there is no Schur complement
        (:attr:`schur`) and the kernel pays (up to ``KERNEL_MAX_ROWS`` states): one sample of
        a 30-state ring with five delays costs tens of microseconds there, against two
        LAPACK factorizations assembled in Python here. ``None`` otherwise."""
        from .samples import compiled_samples
        from .stacked import DENSE_KERNEL_STATES, KERNEL_MAX_ROWS

        if self.schur is not None or not DENSE_KERNEL_STATES <= self.n <= KERNEL_MAX_ROWS:
            return None
        if compiled_samples() is None:
            return None
        return self._stack()

    def _compiled_det_logderiv(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`det_logderiv` by compiled code, through the Schur complement (:attr:`schur`)
        or on whole matrices (:attr:`whole`): the phase of the determinant, and its exact
        ``(det Delta)'/det Delta``."""
        f = np.zeros(s.size, dtype=complex)
        g = np.full(s.size, np.inf, dtype=complex)
        ok = np.isfinite(s)
        if ok.any():
            idx = np.zeros(int(ok.sum()), int)
            if self.schur is not None:
                f[ok], g[ok] = self.schur._det_logderiv_schur(s[ok], idx, True)
            else:
                from .samples import compiled_samples

                assert self.whole is not None
                det, g[ok] = self.whole._dense_kernel(compiled_samples(), s[ok], idx, 0)
                with np.errstate(all="ignore"):
                    f[ok] = det / np.abs(det)
        bad = ~np.isfinite(g) | ~np.isfinite(f)
        f[bad] = 0.0
        g[bad] = np.inf
        return f, g

    def det_logderiv(self, s: np.ndarray, idx=None) -> tuple[np.ndarray, np.ndarray]:
        """The phase ``det / |det|`` of ``det Delta(s_q)`` (0 where singular) and
        ``(det Delta)'/det Delta = trace(Delta^{-1} Delta')`` (``inf`` where singular)."""
        s = np.asarray(s, dtype=complex).ravel()
        if self.schur is not None or self.whole is not None:
            return self._compiled_det_logderiv(s)
        f = np.zeros(s.size, dtype=complex)
        g = np.full(s.size, np.inf, dtype=complex)
        for q, sq in enumerate(s):
            if not np.isfinite(sq):
                continue
            data, ddata = self._coefficients(sq, True)
            assert ddata is not None  # asked for with derivative=True
            got = self._factor(sq, data)
            if got is None:
                continue
            solve, _, f[q] = got
            with np.errstate(all="ignore"):
                g[q] = np.trace(solve(self._dense(ddata)))
        bad = ~np.isfinite(g)
        f[bad] = 0.0
        g[bad] = np.inf
        return f, g

    def det_logderiv_fast(self, s: np.ndarray, idx=None) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`det_logderiv`, with ``(det Delta)'/det Delta`` from the difference of
        ``log det Delta`` between ``s`` and ``s + eps``, ``eps = 1e-7 (1 + |s|)`` (one more
        factorization instead of ``n`` solves; its relative error is about ``eps / d``, ``d``
        the distance to the nearest root): for sampling contours, where ``|f'/f|`` only
        sizes the steps and seeds the power sums. (Through the Schur complement, where the
        structure allows, or the compiled kernel on whole matrices (:attr:`whole`), it is
        exact and as cheap.)"""
        s = np.asarray(s, dtype=complex).ravel()
        if self.schur is not None or self.whole is not None:
            return self._compiled_det_logderiv(s)
        f = np.zeros(s.size, dtype=complex)
        g = np.full(s.size, np.inf, dtype=complex)
        for q, sq in enumerate(s):
            if not np.isfinite(sq):
                continue
            got = self._factor(sq)
            if got is None:
                continue
            eps = 1e-7 * (1.0 + abs(sq))
            plus = self._factor(sq + eps)
            if plus is None:
                continue
            f[q] = got[2]
            dlog = (plus[1] - got[1]) + 1j * np.angle(plus[2] / got[2])
            g[q] = dlog / eps
        bad = ~np.isfinite(g)
        f[bad] = 0.0
        g[bad] = np.inf
        return f, g

    def logderiv(self, s: np.ndarray, idx=None) -> np.ndarray:
        return self.det_logderiv(s)[1]

    def min_singular(self, s: np.ndarray) -> np.ndarray:
        """Smallest singular value of ``Delta(s_q)`` (dense SVD)."""
        s = np.asarray(s, dtype=complex).ravel()
        if s.size == 0:
            return np.zeros(0)
        return np.linalg.svd(self.delta(s), compute_uv=False)[:, -1]

    def residual(self, s: np.ndarray, norms: tuple[float, np.ndarray]) -> np.ndarray:
        """``sigma_min(Delta(s))`` over ``|s| + ||A0|| + sum_k ||A_k|| |exp(-s tau_k)|``."""
        s = np.asarray(s, dtype=complex).ravel()
        n0, nk = norms
        with np.errstate(over="ignore", invalid="ignore"):
            scale = np.abs(s) + n0 + np.sum(nk * np.abs(np.exp(-s[:, None] * self.tau)), axis=1)
            return self.min_singular(s) / np.maximum(scale, np.finfo(float).tiny)


def _permutation_sign(p: np.ndarray) -> float:
    """+1 or -1: the sign of the permutation ``p`` (by its cycles)."""
    perm = p.tolist()
    seen = [False] * len(perm)
    transpositions = 0
    for start in range(len(perm)):
        if seen[start]:
            continue
        j = start
        while not seen[j]:
            seen[j] = True
            j = perm[j]
            transpositions += 1
        transpositions -= 1
    return -1.0 if transpositions % 2 else 1.0

"""Characteristic functions of many linear delay systems at once (stacked arrays).

A stack of ``K`` systems ``x' = A0 x + sum_j A_j x(t - tau_j)`` with the same number of states
``n`` and delays ``m`` (pad with zero matrices) is held as arrays ``A0`` ``(K, n, n)``, ``A``
``(K, m, n, n)`` and ``tau`` ``(K, m)``. The functions here evaluate, at points ``s`` each tied to
one system by an index array, the characteristic matrix
``Delta(s) = s I - A0 - sum_j A_j exp(-s tau_j)``, its determinant, the logarithmic derivative
``(det Delta)'/det Delta = trace(Delta^{-1} Delta')`` and the smallest singular value: the
building blocks of the batched root finder (:mod:`fluidnet.linear.batch`) and of the root
certificate (:mod:`fluidnet.linear.certificate`). Up to four states by cofactor expansion over
the entries; more by the compiled kernel of :mod:`fluidnet.linear.samples` (through a Schur
complement where the structure allows), NumPy's LAPACK where it is not built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Literal, overload

import numpy as np

from .samples import compiled_samples

__all__ = [
    "DenseKernel",
    "Stack",
    "aberth",
    "balance_scales",
    "dense_kernel",
    "schur_segment",
    "singular_values",
]

#: Systems of at least this many states are evaluated through a Schur complement where their
#: structure allows (:meth:`Stack.split`).
SCHUR_MIN_STATES = 16
#: ... when the complement keeps at most this fraction of the states.
SCHUR_MAX_FRACTION = 0.5
#: Points evaluated at once by the Schur path (bounds the memory of the gathered blocks; the
#: 100-state network's samples cost 7.4, 7.7, 8.4, 9.7 us in blocks of 128, 256, 512, 1024: the
#: blocks' arrays then stay in the cache).
SCHUR_CHUNK = 256
#: Points evaluated at once by :meth:`Stack.det_logderiv` (the certificate samples hundreds of
#: thousands at once): blocks of temporaries that stay in the processor's caches. Half a
#: million 4 x 4 points at once cost 1.7 s of CPU, most of it the kernel's page faults on the
#: fresh arrays (``Delta``, ``Delta'``, their solve: 125 MB each), against 0.4 s in blocks.
EVAL_CHUNK = 4096
#: ... and at most this many matrix entries a block for larger systems (at least 256 points):
#: a 15-state system's samples cost 8.7, 9.7, 10.0, 14.4 and 13.6 us in blocks of 128, 256,
#: 512, 1024 and 4096 points.
EVAL_ENTRIES = 65536
#: Systems of at least this many states without a Schur complement get their samples from the
#: compiled kernel (:mod:`.samples`) where it is built, smaller ones from NumPy's LAPACK ...
DENSE_KERNEL_STATES = 5
#: ... and so do matrices (whole, or a Schur complement) of at most this many rows: the kernel's
#: unblocked LU costs n^3 where LAPACK's blocked one runs at the processor's full speed (one
#: sample at 20, 40, 60, 100 states: 9.7, 69, 219, 973 us against 31, 101, 241, 663 us).
KERNEL_MAX_ROWS = 48
#: Systems of at most this many states get ``det Delta`` and its
#: derivative by cofactor expansion (:meth:`Stack._det_logderiv_expanded`), larger ones by LU.
EXPANSION_MAX_STATES = 4


@dataclass(frozen=True)
class Stack:
    """``K`` systems of ``n`` states and ``m`` delays as arrays (see the module docstring)."""

    A0: np.ndarray  # (K, n, n)
    A: np.ndarray  # (K, m, n, n)
    tau: np.ndarray  # (K, m)
    #: the states' split for the Schur complement (see :meth:`split`), handed on by
    #: :meth:`take` and :meth:`scaled` (a pattern of the whole stack holds for any part of it)
    given_split: tuple[np.ndarray, np.ndarray] | None = field(
        default=None, compare=False, repr=False
    )

    @property
    def K(self) -> int:
        return self.A0.shape[0]

    @property
    def n(self) -> int:
        return self.A0.shape[1]

    @property
    def m(self) -> int:
        return self.tau.shape[1]

    @classmethod
    def from_systems(cls, systems) -> Stack:
        """Stack :class:`~fluidnet.linear.lineardde.LinearDDE` objects of equal size ``n``
        (fewer delays are padded with zero matrices)."""
        n = systems[0].n
        m = max(len(s.delays) for s in systems)
        K = len(systems)
        dtype = np.result_type(*(s.A0 for s in systems), *(a for s in systems for a in s.A))
        A0 = np.empty((K, n, n), dtype=dtype)
        A = np.zeros((K, m, n, n), dtype=dtype)
        tau = np.zeros((K, m))
        for k, s in enumerate(systems):
            A0[k] = s.A0
            for j, (t, a) in enumerate(zip(s.delays, s.A, strict=True)):
                A[k, j] = a
                tau[k, j] = t
        return cls(A0, A, tau)

    def take(self, idx) -> Stack:
        part = Stack(self.A0[idx], self.A[idx], self.tau[idx], self.split)
        scales = self.__dict__.get("full_scales")
        if scales is not None:  # computed on the whole stack: each system's own (see there)
            part.__dict__["full_scales"] = scales[idx]
        return part

    def scaled(self, d: np.ndarray) -> Stack:
        """The similar systems ``D^{-1} A D`` for diagonal scalings ``d`` ``(K, n)``."""
        ratio = d[:, None, :] / d[:, :, None]  # (K, n, n): d_j / d_i
        return Stack(self.A0 * ratio, self.A * ratio[:, None], self.tau, self.split)

    @cached_property
    def split(self) -> tuple[np.ndarray, np.ndarray]:
        """``(S, T)``: states ``S`` none of which acts on another of ``S`` in any matrix of the
        stack (a network's flows, which act on each other only through the links), and the
        others ``T``; ``S`` empty where it would not pay (see :data:`SCHUR_MIN_STATES`).

        ``Delta_SS(s)`` is then diagonal, and ``det Delta = prod_S Delta_ii * det M`` with the
        Schur complement ``M = Delta_TT - Delta_TS Delta_SS^{-1} Delta_ST`` of size ``|T|``: the
        determinant of a 100-state network of 10 links costs that of a 10 x 10 matrix. ``S`` is
        chosen greedily, states with the fewest couplings first.
        """
        if self.given_split is not None:
            return self.given_split
        n = self.n
        none = np.zeros(0, dtype=int)
        if n < SCHUR_MIN_STATES or self.K == 0:
            return none, np.arange(n)
        pattern = np.any(self.A0 != 0, axis=0) | np.any(self.A != 0, axis=(0, 1))
        pattern |= pattern.T
        np.fill_diagonal(pattern, False)
        degree = pattern.sum(axis=1)
        taken = np.zeros(n, dtype=bool)
        blocked = np.zeros(n, dtype=bool)
        for i in np.argsort(degree, kind="stable"):
            if not blocked[i]:
                taken[i] = True
                blocked |= pattern[i]
        S, T = np.flatnonzero(taken), np.flatnonzero(~taken)
        if T.size > SCHUR_MAX_FRACTION * n:
            return none, np.arange(n)
        return S, T

    @cached_property
    def full_scales(self) -> np.ndarray:
        """:func:`balance_scales` of :meth:`magnitude` with ``mild=1`` (every system balanced),
        ``(K, n)``: the argument principle's count balances each stack it is given
        (:func:`~fluidnet.linear.certificate.count_right_of`). Each system's scales are its
        own (Osborne's iteration runs on every system apart; one that has settled does not
        change while others go on), so :meth:`take` hands on a part's scales when the whole
        stack's are known: a chart's batch computes them once for its points instead of at
        every count (0.7 of the 100-state network's 100 x 100 chart's 19 s)."""
        return balance_scales(self.magnitude(), mild=1.0)

    def magnitude(self) -> np.ndarray:
        """``|A0| + sum_j |A_j|`` per system, ``(K, n, n)`` (what balancing equilibrates)."""
        return np.abs(self.A0) + np.sum(np.abs(self.A), axis=1)

    def is_complex(self) -> bool:
        return bool(np.iscomplexobj(self.A0) or np.iscomplexobj(self.A))

    def max_delay(self) -> np.ndarray:
        """Largest delay whose matrix is not zero, per system (0 for none)."""
        live = np.any(self.A != 0, axis=(-2, -1))
        return np.max(np.where(live, self.tau, 0.0), axis=1, initial=0.0)

    def norm_bound(self, sigma: np.ndarray, idx=None) -> np.ndarray:
        """``||A0|| + sum_j ||A_j|| exp(-sigma tau_j)``, the least of three such sums, each in
        one norm: every root with ``Re >= sigma`` is an eigenvalue of
        ``A0 + sum_j A_j exp(-s tau_j)``, so its modulus is at most the sum in any induced
        norm. The three are the 1-norm, the infinity-norm and, for the 2-norm, each matrix's
        ``min(||A||_F, sqrt(||A||_1 ||A||_inf))`` (both bound the 2-norm; on a network's sparse
        matrices the second is within 10 % of it, the Frobenius norm 2.5 to 3 times it)."""
        b0, bk = self._norm_bounds
        tau = self.tau
        if idx is not None:
            b0, bk, tau = b0[:, idx], bk[:, idx], tau[idx]
        with np.errstate(over="ignore"):
            e = np.exp(-np.asarray(sigma)[..., None] * tau)
            return np.min(b0 + np.sum(bk * e, axis=-1), axis=0)

    @cached_property
    def _norm_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Upper bounds of the 2-norm, the 1-norm and the infinity-norm of ``A0`` ``(3, K)``
        and of every ``A_j`` ``(3, K, m)`` (see :meth:`norm_bound`)."""

        def bounds(M: np.ndarray) -> np.ndarray:
            a = np.abs(M)
            one = np.max(np.sum(a, axis=-2), axis=-1, initial=0.0)
            inf = np.max(np.sum(a, axis=-1), axis=-1, initial=0.0)
            fro = np.sqrt(np.sum(a**2, axis=(-2, -1)))
            return np.stack([np.minimum(fro, np.sqrt(one * inf)), one, inf])

        return bounds(self.A0), bounds(self.A)

    # ------------------------------------------------------------------ evaluations
    @overload
    def delta(
        self, s: np.ndarray, idx: np.ndarray, derivative: Literal[False] = False
    ) -> np.ndarray: ...
    @overload
    def delta(
        self, s: np.ndarray, idx: np.ndarray, derivative: Literal[True]
    ) -> tuple[np.ndarray, np.ndarray]: ...
    def delta(
        self, s: np.ndarray, idx: np.ndarray, derivative: bool = False
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """``Delta(s_q)`` of system ``idx_q`` (and ``Delta'(s_q)``), shape ``(Q, n, n)``."""
        s = np.asarray(s, dtype=complex)
        n = self.n
        D = np.empty(s.shape + (n, n), dtype=complex)
        D[...] = -self.A0[idx]
        diag = np.arange(n)
        D[:, diag, diag] += s[:, None]
        dD = None
        if derivative:
            dD = np.zeros(s.shape + (n, n), dtype=complex)
            dD[:, diag, diag] = 1.0
        if self.m:
            tau = self.tau[idx]
            E = np.exp(-s[:, None] * tau)  # (Q, m)
            for k in range(self.m):
                Ak = self.A[idx, k]
                D -= E[:, k, None, None] * Ak
                if dD is not None:
                    dD += (E[:, k] * tau[:, k])[:, None, None] * Ak
        return (D, dD) if dD is not None else D

    def det_logderiv(self, s: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``det Delta(s_q)`` and ``(det Delta)'/det Delta`` (``inf`` where Delta is singular)."""
        s = np.asarray(s, dtype=complex)
        idx = np.asarray(idx)
        chunk = min(EVAL_CHUNK, max(256, EVAL_ENTRIES // (self.n * self.n)))
        if s.ndim == 1 and s.size > chunk and not self.split[0].size:
            # point by point the same arithmetic, in blocks of ``chunk`` points
            f = np.empty(s.shape, dtype=complex)
            g = np.empty(s.shape, dtype=complex)
            for a in range(0, s.size, chunk):
                part = slice(a, a + chunk)
                f[part], g[part] = self._det_logderiv(s[part], idx[part])
            return f, g
        return self._det_logderiv(s, idx)

    def _det_logderiv(self, s: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.split[0].size:
            return self._det_logderiv_schur(s, idx)
        if self.n <= EXPANSION_MAX_STATES:
            return self._det_logderiv_expanded(s, idx)
        kernel = compiled_samples() if self._dense_kernel_pays else None
        if kernel is not None:
            return self._dense_kernel(kernel, s, idx, 0)
        return self._det_logderiv_lapack(s, idx)

    @property
    def _dense_kernel_pays(self) -> bool:
        """Whether whole matrices of this size are sampled by the compiled kernel."""
        return DENSE_KERNEL_STATES <= self.n <= KERNEL_MAX_ROWS

    def _dense_kernel(
        self, kernel, s: np.ndarray, idx: np.ndarray, mode: int, probe: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`det_logderiv` (``mode`` 0; 2: ``||Delta^{-1} probe||`` in the first array) by
        the compiled kernel on whole matrices."""
        f = np.empty(s.shape, dtype=complex)
        g = np.empty(s.shape, dtype=complex)
        kernel.dense_samples(
            np.ascontiguousarray(s, dtype=complex),
            np.ascontiguousarray(idx, dtype=np.int64),
            *self._dense_compiled,
            mode,
            np.zeros(0, dtype=complex) if probe is None else probe.astype(complex),
            f,
            g,
        )
        return f, g

    @cached_property
    def _dense_compiled(self) -> tuple:
        """The compiled kernel's arguments for whole matrices: ``tau``, ``A0`` ``(K, n n)``,
        ``A`` delay-major ``(m, K, n n)`` (complex, contiguous), the delays in use with the
        entries each reaches in some system, and the sizes."""
        K, m, n = self.K, self.m, self.n
        A = np.moveaxis(self.A.reshape(K, m, n * n), 1, 0)
        reach = [np.flatnonzero(np.any(A[k] != 0, axis=0)) for k in range(m)]
        delays = np.array([k for k in range(m) if reach[k].size], dtype=np.int64)
        dstart = np.cumsum([0] + [reach[k].size for k in delays]).astype(np.int64)
        du = np.concatenate([reach[k] for k in delays]) if delays.size else np.zeros(0)
        return (
            np.ascontiguousarray(self.tau, dtype=float),
            np.ascontiguousarray(self.A0.reshape(K, n * n), dtype=complex),
            np.ascontiguousarray(A, dtype=complex),
            delays,
            dstart,
            np.ascontiguousarray(du, dtype=np.int64),
            K,
            m,
            n,
        )

    def _det_logderiv_lapack(self, s: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`det_logderiv` by NumPy's LAPACK on whole matrices (the dense kernel's
        reference)."""
        D, dD = self.delta(s, idx, derivative=True)
        with np.errstate(all="ignore"):
            f = np.linalg.det(D)
            g = np.full(s.shape, np.inf, dtype=complex)
            ok = np.isfinite(f) & (f != 0)
            if ok.any():
                g[ok] = np.trace(np.linalg.solve(D[ok], dD[ok]), axis1=-2, axis2=-1)
        g = np.where(np.isfinite(g), g, np.inf)
        return f, g

    @cached_property
    def _schur_layout(self) -> np.ndarray:
        """The entries the Schur complement reads, as positions ``row n + col`` in ``Delta``
        (:func:`_schur_layout_of`)."""
        S, T = self.split
        return _schur_layout_of(S, T, self.n)

    def _det_logderiv_schur(
        self, s: np.ndarray, idx: np.ndarray, phase: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`det_logderiv` through the Schur complement on :meth:`split`'s ``T``:
        ``f = prod_i d_i det M`` and ``f'/f = sum_i d_i'/d_i + trace(M^{-1} M')``, with
        ``d_i = Delta_ii`` on ``S`` and
        ``M' = Delta_TT' - Delta_TS' D^{-1} Delta_ST - Delta_TS D^{-1} Delta_ST'
        + Delta_TS D^{-1} D' D^{-1} Delta_ST``. With ``phase``, ``f`` is the phase
        ``det / |det|`` (0 where singular), which does not overflow."""
        f = np.empty(s.shape, dtype=complex)
        g = np.empty(s.shape, dtype=complex)
        kernel = compiled_samples() if self.split[1].size <= KERNEL_MAX_ROWS else None
        if kernel is not None:
            args = self._schur_compiled
            s = np.ascontiguousarray(s, dtype=complex)
            idx = np.ascontiguousarray(idx, dtype=np.int64)
            kernel.schur_samples(s, idx, *args, int(phase), *_NO_SOLVE, f, g)
            return f, g
        for a in range(0, s.size, SCHUR_CHUNK):
            part = slice(a, a + SCHUR_CHUNK)
            f[part], g[part] = self._schur_part(s[part], idx[part], phase)
        g = np.where(np.isfinite(g), g, np.inf)
        return f, g

    @cached_property
    def _schur_pattern(self) -> dict[str, np.ndarray]:
        """The entries of :attr:`_schur_layout` that are not zero in every system (``used``),
        and the products ``Delta_TS[a, i] Delta_ST[i, b]`` of the Schur complement that are
        not (each as positions into the used entries, its state ``i`` and its place
        ``a nT + b`` in ``M``, sorted by place): a network's flow touches a few links, and
        the complement of a 40-state network needs 140 products instead of 3000. Made once per
        pattern of nonzero entries (:func:`_schur_pattern_of`): a boundary's or a continuation's
        stacks share it."""
        S, T = self.split
        per_delay = np.any(self.A != 0, axis=0)  # (m, n, n)
        nonzero = np.any(self.A0 != 0, axis=0) | np.any(per_delay, axis=0)
        S, T = np.asarray(S, dtype=np.intp), np.asarray(T, dtype=np.intp)
        return _schur_pattern_of(
            self.n, self.m, S.tobytes(), T.tobytes(), nonzero.tobytes(), per_delay.tobytes()
        )

    @cached_property
    def _schur_used(self) -> tuple[np.ndarray, np.ndarray]:
        """Minus the used entries (:attr:`_schur_pattern`) of ``A0``, ``base`` ``(K, |used|)``,
        and of every ``A_k``, ``per`` delay-major ``(m, K, |used|)``, so that a sample's entries
        are one contiguous gather (gathering a system's whole rows, then the used entries, was a
        third of a sample's cost at 40 states); taken from the matrices at once (laying out all
        the blocks first cost a millisecond a stack at 40 states)."""
        at = self._schur_layout[self._schur_pattern["used"]]
        K, m = self.K, self.m
        return (
            np.ascontiguousarray(-self.A0.reshape(K, -1)[:, at]),
            np.ascontiguousarray(np.moveaxis(-self.A.reshape(K, m, -1)[:, :, at], 1, 0)),
        )

    @cached_property
    def _schur_compiled(self) -> tuple:
        """The arguments of the compiled kernel (:mod:`.samples`) after ``s`` and ``idx``: the
        delays, the used entries and the Schur complement's pattern as contiguous arrays of the
        types it reads, and the sizes."""
        base, per = self._schur_used
        pat = self._schur_pattern
        S, T = self.split

        def ints(a: np.ndarray) -> np.ndarray:
            return np.ascontiguousarray(a, dtype=np.int64)

        return (
            np.ascontiguousarray(self.tau, dtype=float),
            np.ascontiguousarray(base, dtype=complex),
            np.ascontiguousarray(per, dtype=complex),
            ints(pat["delays"]),
            ints(pat["dstart"]),
            ints(pat["du"]),
            *(ints(pat[k]) for k in ("tt", "tt_at", "ts", "st", "i", "starts", "places")),
            self.K,
            self.m,
            base.shape[1],
            S.size,
            T.size,
        )

    def _solve_norms(self, s: np.ndarray, idx: np.ndarray, b: np.ndarray) -> np.ndarray | None:
        """``||Delta(s_q)^{-1} b||`` by the compiled kernel, through the Schur complement where
        the stack has one (NaN where ``Delta`` is singular or not finite), or ``None`` without
        the kernel or where it does not pay (:data:`DENSE_KERNEL_STATES`,
        :data:`KERNEL_MAX_ROWS`)."""
        kernel = compiled_samples()
        if kernel is None:
            return None
        if not self.split[0].size:
            if not self._dense_kernel_pays:
                return None
            return np.real(self._dense_kernel(kernel, s, idx, 2, b)[0])
        if self.split[1].size > KERNEL_MAX_ROWS:
            return None
        pat = self._schur_pattern
        S, T = self.split
        ints = [np.ascontiguousarray(pat[k], dtype=np.int64) for k in _SOLVE_KEYS]
        f = np.empty(s.shape, dtype=complex)
        kernel.schur_samples(
            np.ascontiguousarray(s, dtype=complex),
            np.ascontiguousarray(idx, dtype=np.int64),
            *self._schur_compiled,
            2,
            np.ascontiguousarray(np.concatenate([b[S], b[T]]), dtype=complex),
            *ints,
            f,
            np.empty(s.shape, dtype=complex),
        )
        return np.real(f)

    def _schur_part(
        self, s: np.ndarray, idx: np.ndarray, phase: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        base, per = self._schur_used
        pat = self._schur_pattern
        S, T = self.split
        nS, nT = S.size, T.size
        Q = s.size
        tau = self.tau[idx]
        with np.errstate(over="ignore", invalid="ignore"):
            E = np.exp(-s[:, None] * tau)  # (Q, m)
        Et = -E * tau  # d/ds of exp(-s tau)
        # the used entries of Delta's blocks and of their derivatives, (Q, |used|)
        V = base[idx].astype(complex)
        dV = np.zeros(V.shape, dtype=complex)
        for k in pat["delays"]:
            Pk = per[k][idx]
            V += E[:, k, None] * Pk
            dV += Et[:, k, None] * Pk
        V[:, :nS] += s[:, None]
        dV[:, :nS] += 1.0
        M = np.zeros((Q, nT * nT), dtype=complex)
        dM = np.zeros((Q, nT * nT), dtype=complex)
        M[:, pat["tt"]] = V[:, pat["tt_at"]]
        dM[:, pat["tt"]] = dV[:, pat["tt_at"]]
        eye = np.arange(nT) * (nT + 1)
        M[:, eye] += s[:, None]
        dM[:, eye] += 1.0
        d, dd = V[:, :nS], dV[:, :nS]
        with np.errstate(all="ignore"):
            inv = 1.0 / d
            if pat["places"].size:
                ts, st, i = pat["ts"], pat["st"], pat["i"]
                TS, ST, dTS, dST = V[:, ts], V[:, st], dV[:, ts], dV[:, st]
                w = inv[:, i]
                # M -= TS D^-1 ST, and its derivative term by term
                prod = TS * w * ST
                dprod = w * (dTS * ST + TS * dST - prod * dd[:, i])
                starts = pat["starts"]
                M[:, pat["places"]] -= np.add.reduceat(prod, starts, axis=1)
                dM[:, pat["places"]] -= np.add.reduceat(dprod, starts, axis=1)
            M = M.reshape(Q, nT, nT)
            dM = dM.reshape(Q, nT, nT)
            if phase:
                f = np.prod(d / np.abs(d), axis=1) * np.linalg.slogdet(M)[0]
            else:
                f = np.prod(d, axis=1) * np.linalg.det(M)
            g = np.sum(dd * inv, axis=1)
            ok = np.isfinite(f) & (f != 0) & np.all(np.isfinite(M), axis=(1, 2))
            out = np.full(s.shape, np.inf, dtype=complex)
            if ok.any():
                out[ok] = g[ok] + np.trace(np.linalg.solve(M[ok], dM[ok]), axis1=-2, axis2=-1)
        return f, out

    @cached_property
    def norms(self) -> tuple[np.ndarray, np.ndarray]:
        """2-norms of ``A0`` ``(K,)`` and of every ``A_k`` ``(K, m)``, once per stack (the
        residual test and the snap to 0 read them for every candidate root)."""
        return _norm2(self.A0), _norm2(self.A)

    @cached_property
    def _entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(A0t, At, live, zero)``: the matrices entry-major, ``(n, n, K)`` and
        ``(m, n, n, K)`` (an entry of the systems ``idx`` is one contiguous gather), which
        entries of each ``A_k`` are nonzero in some system ``(m, n, n)``, and which entries of
        ``Delta`` vanish in every system ``(n, n)``."""
        A0t = np.ascontiguousarray(np.moveaxis(self.A0, 0, -1))
        At = np.ascontiguousarray(np.moveaxis(self.A, 0, -1))
        live = np.any(At != 0, axis=-1)
        zero = ~np.any(A0t != 0, axis=-1) & ~np.any(live, axis=0)
        np.fill_diagonal(zero, False)
        return A0t, At, live, zero

    def _det_logderiv_expanded(
        self, s: np.ndarray, idx: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Up to four states: ``det Delta`` and its derivative by cofactor expansion over
        the entries as 1-D arrays (the product rule on every product), skipping the entries
        that vanish in every system. LAPACK (``det``, then ``solve`` for the trace) spends
        most of its time on per-matrix overhead at this size: the 657 000 certificate samples
        of the tandem law's chart (4 states) took 0.65 s of CPU through it, 0.18 s here."""
        n = self.n
        A0t, At, live, zero = self._entries
        D: list[list] = [[None] * n for _ in range(n)]
        dD: list[list] = [[None] * n for _ in range(n)]
        for i in range(n):
            D[i][i] = s - A0t[i, i][idx]
            dD[i][i] = np.ones(s.shape, dtype=complex)
            for j in range(n):
                if j != i and not zero[i, j]:
                    D[i][j] = -A0t[i, j][idx]
        if self.m:
            tau = self.tau[idx]
            E = np.exp(-s[:, None] * tau)
            Et = E * tau
            for k in range(self.m):
                for i, j in zip(*np.nonzero(live[k]), strict=True):
                    a = At[k, i, j][idx]
                    D[i][j] = D[i][j] - E[:, k] * a
                    t = Et[:, k] * a
                    dD[i][j] = t if dD[i][j] is None else dD[i][j] + t
        with np.errstate(all="ignore"):
            f, df = _expand(D, dD, tuple(range(n)), tuple(range(n)), {})
            assert f is not None and df is not None  # the diagonal is never skipped
            g = df / f
        g = np.where(np.isfinite(g), g, np.inf)
        return f, g

    def logderiv(self, s: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return self.det_logderiv(s, idx)[1]

    def newton(
        self,
        lam: np.ndarray,
        idx: np.ndarray,
        *,
        tol: float,
        stall_tol: float,
        keep_real: bool = False,
        maxiter: int = 40,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Newton's method on ``det Delta`` for candidates ``lam`` of the systems ``idx``.

        A candidate stops when its step is below ``tol`` (relative to ``1 + |lam|``), or when
        the steps stall (no longer shrink by 10 %) below ``stall_tol``. With ``keep_real``,
        real candidates stay real. Returns ``(lam, active)``: ``active`` marks candidates
        still iterating after ``maxiter`` steps.
        """
        lam = np.array(lam, dtype=complex)
        active = np.ones(lam.shape, dtype=bool)
        prev = np.full(lam.shape, np.inf)
        for _ in range(maxiter):
            a = np.flatnonzero(active)
            if a.size == 0:
                break
            with np.errstate(all="ignore"):
                step = 1.0 / self.logderiv(lam[a], idx[a])
            step[~np.isfinite(step)] = 0.0
            if keep_real:
                on_axis = np.imag(lam[a]) == 0.0
                step[on_axis] = step[on_axis].real
            _advance(lam, a, step, prev, active, tol, stall_tol)
        return lam, active

    def aberth(
        self,
        lam: np.ndarray,
        idx: np.ndarray,
        *,
        tol: float,
        stall_tol: float,
        maxiter: int = 40,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The Ehrlich-Aberth iteration on ``det Delta`` for candidates ``lam`` of the real
        systems ``idx``: :func:`aberth` with this stack's :meth:`logderiv`."""
        return aberth(self.logderiv, lam, idx, tol=tol, stall_tol=stall_tol, maxiter=maxiter)

    def min_singular(self, s: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Smallest singular value of ``Delta(s_q)``."""
        if s.size == 0:
            return np.zeros(0)
        return singular_values(self.delta(s, idx))[1]

    def residual(self, s: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Relative residual: ``sigma_min(Delta(s))`` over
        ``|s| + ||A0|| + sum ||A_j|| |e^{-s tau_j}|`` (2-norms), as in
        :class:`~fluidnet.linear.roots.CharacteristicRoot`."""
        s = np.asarray(s, dtype=complex)
        if s.size == 0:
            return np.zeros(0)
        with np.errstate(over="ignore", invalid="ignore"):
            res = self.min_singular(s, idx) / self._residual_scale(s, idx)
        # far left, exp(-s tau) overflows: Delta(s) is not a finite matrix, s is no root
        return np.where(np.isfinite(res), res, np.inf)

    def _residual_scale(self, s: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """The denominator of :meth:`residual`."""
        n0 = self.norms[0][idx]
        nk = self.norms[1][idx] if self.m else np.zeros((s.size, 0))
        with np.errstate(over="ignore", invalid="ignore"):
            scale = (
                np.abs(s) + n0 + np.sum(nk * np.abs(np.exp(-s[:, None] * self.tau[idx])), axis=1)
            )
        return np.maximum(scale, np.finfo(float).tiny)

    def residual_within(self, s: np.ndarray, idx: np.ndarray, tol: float) -> np.ndarray:
        """``residual(s, idx) <= tol``, decided mostly without a singular value decomposition.

        ``sigma_min(Delta) <= ||b|| / ||Delta^{-1} b||`` for every vector ``b`` (the vector
        ``x = Delta^{-1} b`` has ``||Delta x|| / ||x||`` that size): one solve with a fixed
        ``b`` bounds the residual from above, and where that bound is within ``tol`` so is the
        residual. Only the points the bound leaves open get the decomposition (at 40 states a
        dense solve costs a tenth of it, and the compiled kernel's solve through the Schur
        complement, where the stack has one, a hundredth; near a root ``Delta^{-1} b`` is
        dominated by the smallest singular direction, so the bound is within a small factor of
        the residual)."""
        s = np.asarray(s, dtype=complex)
        idx = np.asarray(idx)
        if s.size == 0:
            return np.zeros(0, dtype=bool)
        if self.n <= 2:
            return self.residual(s, idx) <= tol
        b = _probe_vector(self.n)
        norms = self._solve_norms(s, idx, b)
        if norms is not None:  # by the compiled kernel; NumPy's dense way where it failed
            with np.errstate(all="ignore"):
                within = 1.0 / norms / self._residual_scale(s, idx) <= tol
            rest = ~within
            if rest.any():
                within[rest] = self._dense_within(s[rest], idx[rest], b, tol)
            return within
        return self._dense_within(s, idx, b, tol)

    def _dense_within(
        self, s: np.ndarray, idx: np.ndarray, b: np.ndarray, tol: float
    ) -> np.ndarray:
        """:meth:`residual_within` on the whole characteristic matrices."""
        with np.errstate(over="ignore", invalid="ignore"):  # far left: not a finite matrix
            D = self.delta(s, idx)
        finite = np.all(np.isfinite(D), axis=(1, 2))
        within = np.zeros(s.size, dtype=bool)
        with np.errstate(all="ignore"):
            try:
                within[finite] = self._bound_within(D[finite], b, s[finite], idx[finite], tol)
            except np.linalg.LinAlgError:
                # a matrix exactly singular (a root at 0): solve the others
                solvable = finite & (np.linalg.det(D) != 0)
                within[solvable] = self._bound_within(
                    D[solvable], b, s[solvable], idx[solvable], tol
                )
        rest = finite & ~within
        if rest.any():
            with np.errstate(over="ignore", invalid="ignore"):
                res = singular_values(D[rest])[1] / self._residual_scale(s[rest], idx[rest])
            within[rest] = res <= tol
        return within

    def _bound_within(
        self, D: np.ndarray, b: np.ndarray, s: np.ndarray, idx: np.ndarray, tol: float
    ) -> np.ndarray:
        """:meth:`residual_within`'s bound ``||b|| / ||D^{-1} b||`` (``||b|| = 1``) within
        ``tol`` of the residual's scale."""
        x = np.linalg.solve(D, np.broadcast_to(b[:, None], (D.shape[0], self.n, 1)))[..., 0]
        return 1.0 / np.linalg.norm(x, axis=1) / self._residual_scale(s, idx) <= tol


class DenseKernel:
    """One system's matrices for Newton's method on ``det Delta`` by the compiled kernel
    (``dense_newton`` of :mod:`.samples`), from any number of starts at once.

    Newton's method on one system (a root refined after a discretization, a root path's
    corrector) takes a few points an iteration, where NumPy's batched ``solve`` and the
    iteration's array operations cost 17-80 us an iteration (3 to 10 states, 1 to 16 points)
    against 1.6-25 us for the kernel's logarithmic derivatives alone; the kernel's iterations
    run every start to its end in C. The same LU as the samples (partial pivoting on
    ``|re| + |im|``, as LAPACK's): the values agree with NumPy's to rounding. Made by
    :func:`dense_kernel`; the arrays are read when it is made (a later change of the system in
    place is not seen).

    Parameters
    ----------
    kernel : module
        The compiled module (:func:`~fluidnet.linear.samples.compiled_samples`).
    lin : LinearDDE
        The system.
    """

    def __init__(self, kernel, lin):
        self._kernel = kernel
        # the dense samples' arrays of the one-system stack (tau, A0, A, delays, dstart, du)
        # and its sizes m, n
        args = Stack.from_systems([lin])._dense_compiled
        self._newton_args = (*args[:6], args[7], args[8])

    def _newton(self, lam, mode: int, opts: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
        s = np.ascontiguousarray(lam, dtype=complex)
        f = np.empty(s.shape, dtype=complex)
        g = np.empty(s.shape, dtype=complex)
        args = self._newton_args
        self._kernel.dense_newton(s, *args, mode, np.array(opts, dtype=float), f, g)
        return f, np.real(g)

    def refine(self, lam, real: bool, maxiter: int) -> tuple[np.ndarray, np.ndarray]:
        """The iteration of :func:`~fluidnet.linear.newton.newton_roots` on this system.

        Parameters
        ----------
        lam : array_like
            Complex starts.
        real : bool
            A real system: real starts take real steps.
        maxiter : int
            Iterations at most.

        Returns
        -------
        lam : numpy.ndarray
            The final iterates.
        last : numpy.ndarray
            The size of each one's last step (``inf`` where none was taken).
        """
        return self._newton(lam, 0, (1.0 if real else 0.0, float(maxiter)))

    def follow(
        self,
        lam,
        unit: float,
        maxiter: int,
        give_up: int | None,
        tol: float,
        max_multiplicity: int,
        wander: float,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The iteration of the root paths' corrector
        (:func:`fluidnet.stability.crossing.newton_roots`) on this system.

        Parameters
        ----------
        lam : array_like
            Complex starts.
        unit : float
            The system's size floor (:func:`~fluidnet.stability.crossing.size_unit`).
        maxiter : int
            Iterations at most.
        give_up : int or None
            After this many iterations, a start still stepping farther than ``wander``
            ``(unit + |lambda|)`` is left unconverged.
        tol : float
            How close a ratio of successive steps must be to ``(m - 1) / m`` to stand for a
            root of multiplicity ``m``.
        max_multiplicity : int
            The largest ``m`` recognized.
        wander : float
            See ``give_up``.

        Returns
        -------
        lam : numpy.ndarray
            The final iterates.
        active : numpy.ndarray of bool
            The starts that did not converge.
        """
        opts = (unit, maxiter, -1 if give_up is None else give_up, tol, max_multiplicity, wander)
        lam, active = self._newton(lam, 1, tuple(float(o) for o in opts))
        return lam, active != 0.0


def dense_kernel(lin) -> DenseKernel | None:
    """:class:`DenseKernel` of ``lin``, where it applies.

    Parameters
    ----------
    lin : LinearDDE

    Returns
    -------
    DenseKernel or None
        ``None`` where the compiled kernel is not built, or the system has fewer than 2 or more
        than :data:`KERNEL_MAX_ROWS` states (the caller's NumPy code then).
    """
    if not 2 <= lin.n <= KERNEL_MAX_ROWS:
        return None
    kernel = compiled_samples()
    return None if kernel is None else DenseKernel(kernel, lin)


def _schur_layout_of(S: np.ndarray, T: np.ndarray, n: int) -> np.ndarray:
    """The entries a Schur complement on ``T`` reads, as positions ``row n + col`` in ``Delta``:
    the diagonal on ``S``, then the blocks ``ST``, ``TS`` and ``TT`` flattened row by row (the
    layout of :attr:`Stack._schur_pattern`)."""
    return np.concatenate(
        [
            S * (n + 1),
            (S[:, None] * n + T[None, :]).ravel(),
            (T[:, None] * n + S[None, :]).ravel(),
            (T[:, None] * n + T[None, :]).ravel(),
        ]
    )


@lru_cache(maxsize=64)
def _schur_pattern_of(
    n: int, m: int, S_bytes: bytes, T_bytes: bytes, nonzero_bytes: bytes, per_delay_bytes: bytes
) -> dict[str, np.ndarray]:
    """:attr:`Stack._schur_pattern` of the states ``S``, ``T`` (int arrays as bytes) and the
    nonzero entries of any matrix (``(n, n)`` bool as bytes) and of each delayed one
    (``(m, n, n)``), read-only arrays; also each delay's entries among the used ones
    (``dstart``, ``du``: delay ``j`` of ``delays`` reaches ``du[dstart[j]:dstart[j + 1]]``)."""
    S, T = np.frombuffer(S_bytes, dtype=np.intp), np.frombuffer(T_bytes, dtype=np.intp)
    nonzero = np.frombuffer(nonzero_bytes, dtype=bool).reshape(n, n)
    per_delay = np.frombuffer(per_delay_bytes, dtype=bool).reshape(m, n * n)
    nS, nT = S.size, T.size
    layout = _schur_layout_of(S, T, n)
    live = nonzero.ravel()[layout]
    live[:nS] = True  # the diagonal on S holds s
    c = nS + 2 * nS * nT
    live[c + np.arange(nT) * (nT + 1)] = True  # and that on T
    used = np.flatnonzero(live)
    where = np.full(live.size, -1)
    where[used] = np.arange(used.size)
    st = live[nS : nS + nS * nT].reshape(nS, nT)
    ts = live[nS + nS * nT : c].reshape(nT, nS)
    a, i, b = np.nonzero(ts[:, :, None] & st[None, :, :])  # (a, i) in TS, (i, b) in ST
    place = a * nT + b
    order = np.argsort(place, kind="stable")
    a, i, b, place = a[order], i[order], b[order], place[order]
    first = np.flatnonzero(np.r_[True, np.diff(place) != 0]) if place.size else place
    tt = np.flatnonzero(live[c:])
    ts_a, ts_i = np.nonzero(ts)  # the entries of Delta_TS and Delta_ST themselves
    st_i, st_b = np.nonzero(st)
    reach = per_delay[:, layout[used]]  # (m, |used|)
    delays = np.flatnonzero(np.any(reach, axis=1))
    du = [np.flatnonzero(reach[k]) for k in delays]
    out = {
        "ts_a": ts_a,
        "ts_i": ts_i,
        "ts_at": where[nS + nS * nT + ts_a * nS + ts_i],
        "st_i": st_i,
        "st_b": st_b,
        "st_at": where[nS + st_i * nT + st_b],
        "used": used,
        "delays": delays,
        "dstart": np.cumsum([0] + [r.size for r in du]),
        "du": np.concatenate(du) if du else np.zeros(0, dtype=int),
        "ts": where[nS + nS * nT + a * nS + i],
        "st": where[nS + i * nT + b],
        "i": i,
        "starts": first,
        "places": place[first] if place.size else place,
        "tt": tt,
        "tt_at": where[c + tt],
    }
    for v in out.values():
        v.setflags(write=False)
    return out


#: The compiled kernel's arguments that only its solve (mode 2) reads: none for the others.
_NO_SOLVE = (np.zeros(0, dtype=complex),) + (np.zeros(0, dtype=np.int64),) * 6
_SOLVE_KEYS = ("ts_a", "ts_i", "ts_at", "st_i", "st_b", "st_at")


def _probe_vector(n: int) -> np.ndarray:
    """A fixed unit vector of ``n`` entries with no structure a network's modes share (unequal
    moduli and phases), the right-hand side of :meth:`Stack.residual_within`'s solve: a ring's
    symmetric or alternating modes are orthogonal to a vector of ones."""
    j = np.arange(n)
    v = (1.0 + 0.5 * np.cos(2.399963 * j + 0.7)) * np.exp(1j * (1.618034 * j * j + 0.3 * j))
    return v / np.linalg.norm(v)


def aberth(
    logderiv: Callable[[np.ndarray, np.ndarray], np.ndarray],
    lam: np.ndarray,
    idx: np.ndarray,
    *,
    tol: float,
    stall_tol: float,
    maxiter: int = 40,
) -> tuple[np.ndarray, np.ndarray]:
    """The Ehrlich-Aberth iteration on ``det Delta`` for candidates ``lam`` of the real
    systems ``idx``, of which ``logderiv(s, idx)`` gives ``(det Delta)' / det Delta``: all
    candidates of one system at once, each Newton step deflated by the others (and by the
    mirror images of the complex ones), ``lam_i -= w_i / (1 - w_i sum_j 1 / (lam_i - lam_j))``
    with ``w_i = f / f'``.

    Newton's method started from several points of a cluster of roots (a network's flows
    give one root each, close together) sends them to one root, slowly; the deflation
    keeps them apart, so that they converge to distinct roots. Real candidates stay real
    (the sum over a complex candidate and its mirror image is real there). Stops per
    candidate as :meth:`Stack.newton`; returns ``(lam, active)`` likewise.
    """
    lam = np.array(lam, dtype=complex)
    P = int(idx.max()) + 1 if idx.size else 0
    order = np.argsort(idx, kind="stable")
    start = np.searchsorted(idx[order], np.arange(P))
    rank = np.empty(idx.size, dtype=int)
    rank[order] = np.arange(idx.size) - start[idx[order]]
    C = int(rank.max()) + 1 if idx.size else 0
    active = np.ones(lam.shape, dtype=bool)
    prev = np.full(lam.shape, np.inf)
    on_axis = np.imag(lam) == 0.0
    for _ in range(maxiter):
        a = np.flatnonzero(active)
        if a.size == 0:
            break
        table = np.full((P, C), np.nan + 0j)
        table[idx, rank] = lam
        with np.errstate(all="ignore"):
            w = 1.0 / logderiv(lam[a], idx[a])
            others = table[idx[a]]  # (a, C)
            mirror = np.where(np.imag(others) != 0, others.conj(), np.nan)
            near = 1.0 / (lam[a, None] - others)
            near[np.arange(a.size), rank[a]] = 0.0  # not itself
            far = 1.0 / (lam[a, None] - mirror)
            far[np.arange(a.size), rank[a]] = np.where(
                on_axis[a], 0.0, 1.0 / (lam[a] - lam[a].conj())
            )
            total = np.nansum(near, axis=1) + np.nansum(far, axis=1)
            step = w / (1.0 - w * total)
        step[~np.isfinite(step)] = 0.0
        step[on_axis[a]] = step[on_axis[a]].real
        _advance(lam, a, step, prev, active, tol, stall_tol)
    return lam, active


def schur_segment(
    a: Stack, b: Stack
) -> Callable[[float], Callable[[np.ndarray, np.ndarray], np.ndarray] | None] | None:
    """The logarithmic derivative of ``det Delta`` of the systems ``(1 - t) a + t b`` (their
    matrices and delays), for any ``t``, without forming those matrices: ``None`` unless both
    stacks sample through one Schur complement by the compiled kernel (the same split and
    pattern of entries).

    The kernel reads only the entries of :attr:`Stack._schur_pattern`, gathered from the
    matrices (:attr:`Stack._schur_used`); the systems between ``a`` and ``b`` have those
    entries interpolated, bit for bit what gathering them from the interpolated matrices gives
    (negation, and a real factor on a complex number with zero imaginary part, are exact).
    A root followed along the segment (:func:`fluidnet.linear.batch._tracked`: nine systems
    between a 100-state network's grid point and its neighbour) then costs no ``(K, m, n, n)``
    arrays a step. Returns ``at(t)``, which gives ``logderiv(s, idx)``, or ``None`` where some
    interpolated entry cancels to zero so that the systems at ``t`` have another pattern (the
    caller forms them then).
    """
    kernel = compiled_samples()
    S, T = a.split
    if (
        kernel is None
        or a.K != b.K
        or a.m != b.m
        or not S.size
        or T.size > KERNEL_MAX_ROWS
        or not (np.array_equal(S, b.split[0]) and np.array_equal(T, b.split[1]))
        or a._schur_pattern is not b._schur_pattern
    ):
        return None
    ta, base_a, per_a, *rest = a._schur_compiled
    tb, base_b, per_b, *_ = b._schur_compiled
    live = (base_a != 0) | np.any(per_a != 0, axis=0)  # (K, |used|)
    reach = np.any(per_a != 0, axis=1)  # (m, |used|)

    def at(t: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        tau = (1 - t) * ta + t * tb
        base = (1 - t) * base_a + t * base_b
        per = (1 - t) * per_a + t * per_b
        moved = (base != 0) | np.any(per != 0, axis=0)
        # the systems at t have the pattern of a (and b) unless an entry cancelled: nonzero
        # entries in some system, and the entries each delay reaches
        if not (
            np.array_equal(np.any(moved, axis=0), np.any(live, axis=0))
            and np.array_equal(np.any(per != 0, axis=1), reach)
        ):
            return None
        args = (np.ascontiguousarray(tau), base, per, *rest)

        def logderiv(s: np.ndarray, idx: np.ndarray) -> np.ndarray:
            s = np.ascontiguousarray(s, dtype=complex)
            f = np.empty(s.shape, dtype=complex)
            g = np.empty(s.shape, dtype=complex)
            kernel.schur_samples(
                s, np.ascontiguousarray(idx, dtype=np.int64), *args, 0, *_NO_SOLVE, f, g
            )
            return g

        return logderiv

    return at


def _advance(lam, a, step, prev, active, tol: float, stall_tol: float) -> None:
    """One step of an iteration on the candidates ``a`` (in place): ``lam[a] -= step``; a
    candidate stops when its step is below ``tol`` (relative to ``1 + |lam|``), when its steps
    stall (no longer shrink by 10 %) below ``stall_tol``, or when it is no longer finite."""
    lam[a] -= step
    size = np.abs(step)
    scale = 1.0 + np.abs(lam[a])
    done = (size <= tol * scale) | ((size >= 0.9 * prev[a]) & (size <= stall_tol * scale))
    done |= ~np.isfinite(lam[a])
    prev[a] = size
    active[a[done]] = False


def _times(a, da, b, db):
    """``(a b, (a b)')`` of entry arrays, ``None`` standing for zero."""
    if a is None or b is None:
        return None, None
    d1 = None if da is None else da * b
    d2 = None if db is None else a * db
    return a * b, d1 if d2 is None else d2 if d1 is None else d1 + d2


def _add(x, y, sign: float):
    """``x + sign y`` of entry arrays, ``None`` standing for zero."""
    if y is None:
        return x
    if x is None:
        return y if sign > 0 else -y
    return x + y if sign > 0 else x - y


def _expand(D, dD, rows: tuple, cols: tuple, memo: dict):
    """``(det, det')`` of the submatrix ``rows`` x ``cols`` of entry arrays ``D`` (derivatives
    ``dD``) by Laplace expansion along its first row, the minors shared through ``memo``
    (``None`` standing for zero)."""
    if len(rows) == 1:
        return D[rows[0]][cols[0]], dD[rows[0]][cols[0]]
    key = (rows, cols)
    if key in memo:
        return memo[key]
    r = rows[0]
    val = der = None
    for j, c in enumerate(cols):
        if D[r][c] is None:
            continue
        m, dm = _expand(D, dD, rows[1:], cols[:j] + cols[j + 1 :], memo)
        p, dp = _times(D[r][c], dD[r][c], m, dm)
        sign = 1.0 if j % 2 == 0 else -1.0
        val, der = _add(val, p, sign), _add(der, dp, sign)
    memo[key] = (val, der)
    return val, der


def singular_values(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Largest and smallest singular values of a stack of square matrices ``(..., n, n)``
    (closed forms for ``n <= 2``: ``s_max^2 = (F + sqrt(F^2 - 4 |det|^2)) / 2`` with ``F`` the
    squared Frobenius norm, and ``s_min = |det| / s_max``); NaN for a matrix with an entry that
    is not finite."""
    n = M.shape[-1]
    if M.size == 0:
        z = np.zeros(M.shape[:-2])
        return z, z
    if n == 1:
        a = np.abs(M[..., 0, 0])
        return a, a
    if n == 2:
        F = np.sum(np.abs(M) ** 2, axis=(-2, -1))
        det = np.abs(M[..., 0, 0] * M[..., 1, 1] - M[..., 0, 1] * M[..., 1, 0])
        with np.errstate(invalid="ignore", divide="ignore"):
            smax = np.sqrt(0.5 * (F + np.sqrt(np.maximum(F * F - 4.0 * det * det, 0.0))))
            smin = np.where(smax > 0, det / smax, 0.0)
        return smax, smin
    finite = np.all(np.isfinite(M), axis=(-2, -1))
    if finite.all():
        sv = np.linalg.svd(M, compute_uv=False)
        return sv[..., 0], sv[..., -1]
    # LAPACK's SVD does not converge on inf or NaN entries (a raw LinAlgError): NaN there
    smax, smin = np.full(M.shape[:-2], np.nan), np.full(M.shape[:-2], np.nan)
    if finite.any():
        sv = np.linalg.svd(M[finite], compute_uv=False)
        smax[finite], smin[finite] = sv[..., 0], sv[..., -1]
    return smax, smin


def _norm2(M: np.ndarray) -> np.ndarray:
    return singular_values(M)[0]


#: Scalings whose largest and smallest factors are within this ratio are not applied.
MILD_IMBALANCE = 1024.0


def balance_scales(M: np.ndarray, max_sweeps: int = 30, mild: float = MILD_IMBALANCE) -> np.ndarray:
    """Powers of two ``d`` ``(K, n)`` that balance the non-negative matrices ``M`` ``(K, n, n)``.

    Osborne's iteration (as in LAPACK's ``gebal``, without permutations): state ``i`` is
    rescaled until the off-diagonal row and column sums of ``D^{-1} M D`` are within a factor 2
    of each other. Powers of two keep the similarity exact in floating point. Systems that
    couple states with very different units (rates of 1e3 pkts/s and gains of 1e-7, say) get
    matrices of comparable entries, on which norms, residuals and discretizations are sound.
    A mild imbalance (factors within ``mild``, by default :data:`MILD_IMBALANCE`, of each
    other) costs no accuracy in a discretization and is left alone (``d = 1``): a well-scaled
    system keeps its own arithmetic. ``mild=1`` balances every system.
    """
    K, n, _ = M.shape
    d = np.ones((K, n))
    if n == 1:
        return d
    # S = D^{-1} off D, kept up to date entry by entry: the factors are powers of two, so it
    # equals off * (d_j / d_i) exactly (O(n) work per state instead of O(n^2))
    S = M * (1.0 - np.eye(n))
    for _ in range(max_sweeps):
        changed = False
        for i in range(n):
            c = S[:, :, i].sum(axis=1)  # column i
            r = S[:, i, :].sum(axis=1)  # row i
            ok = (c > 0) & (r > 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                f = np.where(ok, np.exp2(np.round(0.5 * np.log2(r / c))), 1.0)
            # accept only steps that reduce c + r by a fair amount (gebal's test)
            better = ok & (f != 1.0) & ((c * f + r / f) < 0.95 * (c + r))
            if better.any():
                b = np.flatnonzero(better)
                d[b, i] *= f[b]
                S[b, :, i] *= f[b, None]  # column i scaled by d_i
                S[b, i, :] /= f[b, None]  # row i by 1 / d_i
                changed = True
        if not changed:
            break
    keep = d.max(axis=1) <= mild * d.min(axis=1)
    d[keep] = 1.0
    return d

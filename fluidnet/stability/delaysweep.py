"""Every crossing of a delay sweep, exactly, from a finite eigenvalue problem.

When the swept parameter ``p`` enters the linear system only through its delays, and every
delay is an integer multiple of one delay ``h = r p`` (``tau_k = m_k h``: one swept delay, or a
round-trip time and its multiples), the imaginary-axis roots do not depend on ``p`` except
through ``z = exp(-j omega h)``, which lies on the unit circle. ``j omega`` is then an
eigenvalue of ``M(z) = A0 + sum_k A_k z^{m_k}`` and, for ``|z| = 1``, ``-j omega`` one of
``conj(M)(1/z)``; so ``0`` is an eigenvalue of the Kronecker sum
``M(z) (x) I + I (x) conj(M)(1/z)``. Multiplied by ``z^M`` (``M = max m_k``) this is a
polynomial eigenvalue problem of degree ``2M`` and size ``n^2`` (Louisell 2001; Jarlebring
2008), solved here through its companion linearization. Its eigenvalues on the unit circle give
every crossing frequency ``omega`` (an eigenvalue of ``M(z)`` on the imaginary axis) with its
phase ``theta = -arg z``, and the whole sequence of crossing delays
``h_k = (theta + 2 pi k) / omega``, ``k = 0, 1, ...``. For a scalar equation
``P(s) + Q(s) e^{-s tau} = 0`` this is the classical ``|P(j omega)| = |Q(j omega)|`` (Cooke and
Grossman 1982).

Each crossing is polished by Newton's method on the characteristic equation, and its direction
is the sign of ``Re d lambda / d p = -Re(u* Delta_p v / u* Delta_lambda v)`` (``u``, ``v`` the
left and right null vectors of ``Delta``).

References
----------
Cooke, K. L. and Grossman, Z. (1982). Discrete delay, distributed delay and stability
switches. *J. Math. Anal. Appl.* 86, 592-627.
Louisell, J. (2001). A matrix method for determining the imaginary axis eigenvalues of a delay
system. *IEEE Trans. Automat. Control* 46(12), 2008-2012.
Jarlebring, E. (2008). *The spectrum of delay-differential equations: numerical methods,
stability and perturbation.* PhD thesis, TU Braunschweig.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import AnalysisError, ParameterError
from ..linear.lineardde import LinearDDE
from ..linear.roots import balanced
from .crossing import count_change, newton_roots, null_vectors, size_unit

__all__ = ["DelayFamily", "delay_family", "delay_crossings"]

#: Largest multiple ``M`` of the base delay, and largest companion size ``2 M n^2``.
MAX_MULTIPLE = 8
MAX_PENCIL = 900


@dataclass(frozen=True)
class DelayFamily:
    """``x' = A0 x + sum_k A_k x(t - m_k r p)``: the system as a function of the swept ``p``."""

    A0: np.ndarray
    A: tuple[np.ndarray, ...]
    m: tuple[int, ...]
    r: float
    #: the sample ``(p, system)`` the family was read from (see :meth:`holds_at`)
    sample: tuple[float, LinearDDE] | None = field(default=None, compare=False, repr=False)

    def holds_at(self, p: float, lin: LinearDDE) -> bool:
        """Whether the system ``lin`` at ``p`` is the family's: the same matrices and delays
        proportional to ``p`` as in the sample it was read from (true without a sample)."""
        if self.sample is None:
            return True
        return _scaled_alike(self.sample[1], self.sample[0], lin, p)

    def lin(self, p: float) -> LinearDDE:
        return LinearDDE(
            self.A0, [(mk * self.r * p, Ak) for mk, Ak in zip(self.m, self.A, strict=True)]
        )

    @property
    def real(self) -> bool:
        return not (np.iscomplexobj(self.A0) or any(np.iscomplexobj(a) for a in self.A))


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal to rounding, entry by entry: a small entry is compared with itself, not with the
    largest one (at a delay of 1e12 s the entries that set the dynamics are 1e-12 beside a
    constant 10, and change with the delay)."""
    if a.shape != b.shape:
        return False
    return bool(np.all(np.abs(a - b) <= 1e-12 * np.maximum(np.abs(a), np.abs(b))))


def _scaled_alike(l1: LinearDDE, p1: float, l2: LinearDDE, p2: float) -> bool:
    """Whether two samples have delays, the same matrices, and delays proportional to ``p``."""
    if not l1.delays or len(l1.delays) != len(l2.delays) or l1.n != l2.n:
        return False
    if not _same(l1.A0, l2.A0) or not all(_same(a, b) for a, b in zip(l1.A, l2.A, strict=True)):
        return False
    ratios = np.array(l1.delays) / p1
    return bool(np.allclose(np.array(l2.delays) / p2, ratios, rtol=1e-12, atol=0))


def _varies_at_anchor(sweep, base: float, hi: float) -> bool:
    """Whether the sweep's system already fails the test of :func:`delay_family` between its
    anchor (where the equilibrium is known, see :class:`~.crossing.Sweep`) and a value
    ``1e-3 (hi - base)`` beside it, continued from there: a parameter that enters a gain (an
    RTT in a window) is told apart at the cost of one continued system, before the samples
    far inside the range (where the continuation may fail and the full equilibrium search
    run). Only ever a reason more to refuse the delay method: the samples decide as before
    when this test passes or cannot be made."""
    a = getattr(sweep, "anchor", None)
    if a is None or not (base <= a <= hi) or a <= 0.0:
        return False
    b = a + 1e-3 * (hi - base)
    if b > hi:
        b = a - 1e-3 * (hi - base)
    if not (base < b <= hi) or b <= 0.0:
        return False
    try:
        la, lb = sweep.lin(a), sweep.lin(b)
    except (AnalysisError, ParameterError):
        return False
    return not _scaled_alike(la, a, lb, b)


def delay_family(sweep, lo: float, hi: float) -> DelayFamily | None:
    """The :class:`DelayFamily` of the sweep, or ``None`` when ``p`` is not a delay scale.

    The system is sampled at two interior points of ``[max(lo, 0), hi]``: the matrices must
    agree and every delay must be proportional to ``p``, with ratios ``m_k / q`` (``q <= 12``).
    With a sweep's anchor (a model's own value of ``p``, where its equilibrium is known), the
    system there and beside it must pass the same test first (:func:`_varies_at_anchor`).
    Samples do not prove that a factory depends on ``p`` this way everywhere: the exact method
    (:func:`fluidnet.stability.critical._by_delays`) also checks that the system is the family's
    (:meth:`DelayFamily.holds_at`) at every value where it counts the right-half-plane roots,
    and gives way to continuation where it is not.
    """
    base = max(lo, 0.0)
    if hi <= base:
        return None
    if _varies_at_anchor(sweep, base, hi):
        return None
    p1, p2 = base + 0.381966 * (hi - base), base + 0.723607 * (hi - base)
    try:
        l1, l2 = sweep.lin(p1), sweep.lin(p2)
    except (AnalysisError, ParameterError):
        return None
    if not _scaled_alike(l1, p1, l2, p2):
        return None
    ratios = np.array(l1.delays) / p1
    rel = ratios / ratios[0]
    for q in range(1, 13):
        m = rel * q
        if np.all(np.abs(m - np.rint(m)) <= 1e-9 * m):
            mk = tuple(int(v) for v in np.rint(m))
            if max(mk) > MAX_MULTIPLE or 2 * max(mk) * l1.n**2 > MAX_PENCIL:
                return None
            # balanced (a diagonal similarity: the same roots) when badly scaled, so that the
            # eigenvalue problem and the tests of its results are sound; a mild imbalance is
            # left alone (see fluidnet.linear.roots.balanced)
            bal = balanced(l1)
            return DelayFamily(bal.A0, tuple(bal.A), mk, float(ratios[0] / q), (p1, l1))
    return None


def _unimodular(fam: DelayFamily) -> np.ndarray | None:
    """Eigenvalues ``z`` (``|z| ~ 1``) of the Kronecker-sum polynomial; ``None`` if singular."""
    n = fam.A0.shape[0]
    M = max(fam.m)
    eye = np.eye(n)
    dtype = complex
    C = [np.zeros((n * n, n * n), dtype=dtype) for _ in range(2 * M + 1)]
    C[M] += np.kron(fam.A0, eye) + np.kron(eye, fam.A0.conj())
    for mk, Ak in zip(fam.m, fam.A, strict=True):
        C[M + mk] += np.kron(Ak, eye)
        C[M - mk] += np.kron(eye, Ak.conj())
    # a polynomial whose determinant vanishes identically has no isolated eigenvalues
    z0 = 0.6 + 0.8j * 0.9
    P0 = sum(c * z0**j for j, c in enumerate(C))
    sv = np.linalg.svd(P0, compute_uv=False)
    if sv[-1] <= 1e-12 * max(sv[0], np.finfo(float).tiny):
        return None
    d, N2 = 2 * M, n * n
    big_a = np.zeros((d * N2, d * N2), dtype=dtype)
    big_b = np.eye(d * N2, dtype=dtype)
    for j in range(d - 1):
        big_a[j * N2 : (j + 1) * N2, (j + 1) * N2 : (j + 2) * N2] = np.eye(N2)
    for j in range(d):
        big_a[(d - 1) * N2 :, j * N2 : (j + 1) * N2] = -C[j]
    big_b[(d - 1) * N2 :, (d - 1) * N2 :] = C[d]
    z = _pencil_eigenvalues(big_a, big_b)
    z = z[np.isfinite(z)]
    return z[np.abs(np.abs(z) - 1.0) <= 1e-6]


#: Shifts tried for :func:`_pencil_eigenvalues`: inside the unit circle, away from it (the
#: eigenvalues sought are unimodular: ``|z - shift| >= 0.45``), at unrelated angles.
SHIFTS = (0.55 * np.exp(0.7j), 0.55 * np.exp(2.9j), 0.55 * np.exp(4.6j))
#: Largest 1-norm condition number of ``A - shift B`` used; beyond it, the QZ algorithm.
MAX_SHIFT_CONDITION = 1e8


def _pencil_eigenvalues(big_a: np.ndarray, big_b: np.ndarray) -> np.ndarray:
    """Eigenvalues ``z`` of ``A v = z B v``; infinite ones (``B`` singular) come back
    non-finite or of modulus near ``1 / eps`` (the callers keep ``|z|`` near 1 only).

    By a shift and invert, ``(A - s B)^-1 B v = v / (z - s)``: a standard eigenvalue problem
    of NumPy, where SciPy's QZ algorithm (``scipy.linalg.eig(A, B)``) would import
    ``scipy.linalg`` (0.25 s of CPU: most of a first critical delay, issue 34). The shift is
    the first of :data:`SHIFTS` at which ``A - s B`` is well conditioned (the eigenvalues'
    errors grow with its condition number); where none is, the QZ algorithm.
    """
    for shift in SHIFTS:
        shifted = big_a - shift * big_b
        try:
            inverse = np.linalg.inv(shifted)
        except np.linalg.LinAlgError:
            continue
        condition = np.linalg.norm(shifted, 1) * np.linalg.norm(inverse, 1)
        if not condition <= MAX_SHIFT_CONDITION:
            continue
        mu = np.linalg.eigvals(inverse @ big_b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(mu == 0, np.inf, shift + 1.0 / mu)
    from scipy.linalg import eig

    with np.errstate(all="ignore"):
        return np.asarray(eig(big_a, big_b, right=False))


def _frequencies(fam: DelayFamily, z: np.ndarray) -> list[tuple[complex, float]]:
    """``(z, omega)`` pairs: the imaginary-axis eigenvalues ``j omega`` of ``M(z)``."""
    out: list[tuple[complex, float]] = []
    unit = size_unit(fam.lin(1.0))
    for zi in z:
        zi = zi / abs(zi)
        Mz = fam.A0 + sum(Ak * zi**mk for mk, Ak in zip(fam.m, fam.A, strict=True))
        for mu in np.linalg.eigvals(Mz):
            if abs(mu.real) <= 1e-6 * max(unit, abs(mu)):
                w = float(mu.imag)
                if fam.real and w < 0:
                    continue
                if not any(
                    abs(zi - a) <= 1e-8 and abs(w - b) <= 1e-8 * max(unit, abs(w)) for a, b in out
                ):
                    out.append((complex(zi), w))
    return out


def _polish(fam: DelayFamily, p: float, w: float):
    """Newton on (p, lambda): the crossing value, the root and ``d lambda / d p`` there."""
    lam = complex(0.0, w)
    dlam = complex("nan")
    for _ in range(12):
        lin = fam.lin(p)
        roots, ok = newton_roots(lin, [lam])
        if not ok[0]:
            return None
        lam = complex(roots[0])
        u, v = null_vectors(lin.characteristic_matrix(lam))
        d_lam = np.eye(lin.n, dtype=complex)
        d_p = np.zeros((lin.n, lin.n), dtype=complex)
        for mk, Ak in zip(fam.m, fam.A, strict=True):
            e = np.exp(-lam * mk * fam.r * p)
            d_lam += mk * fam.r * p * e * Ak
            d_p += mk * fam.r * lam * e * Ak
        dlam = complex(-(u.conj() @ d_p @ v) / (u.conj() @ d_lam @ v))
        if not np.isfinite(dlam) or dlam.real == 0.0:
            return None
        step = -lam.real / dlam.real
        p += step
        if abs(step) <= 4e-16 * abs(p):
            break
    return p, lam, dlam


@dataclass(frozen=True)
class RawCrossing:
    value: float
    root: complex
    change: int


def delay_crossings(
    fam: DelayFamily, lo: float, hi: float
) -> tuple[list[RawCrossing] | None, bool]:
    """Every crossing in ``(lo, hi]`` of the delay family, sorted; and whether a root sits at
    the origin for every ``p``.

    Returns ``None`` for ``list`` when the eigenvalue problem is singular or a crossing is
    tangential (``Re d lambda / d p = 0``): the caller then follows the roots instead.
    """
    # the family is balanced where badly scaled (see delay_family): singular values of a badly
    # scaled matrix would say nothing about its determinant
    M0 = fam.A0 + sum(fam.A, np.zeros_like(fam.A0))
    sv = np.linalg.svd(M0, compute_uv=False)
    size = np.linalg.norm(fam.A0, 2) + sum(np.linalg.norm(a, 2) for a in fam.A)
    if sv[-1] <= 1e-12 * size:
        return None, True  # Delta(0) singular whatever the delays: a root at 0 throughout
    z = _unimodular(fam)
    if z is None:
        return None, False
    zero_root = False
    unit = size_unit(fam.lin(1.0))
    out: list[RawCrossing] = []
    for zi, w in _frequencies(fam, z):
        if abs(w) <= 1e-9 * size:
            continue  # z = 1 and Delta(0) regular: not a root (rounding of a double z)
        theta = (-np.angle(zi) if w > 0 else np.angle(zi)) % (2 * math.pi)
        step = 2 * math.pi / abs(w) / fam.r  # spacing of the crossing values in p
        first = theta / abs(w) / fam.r
        k0 = max(0, math.ceil((lo - first) / step) - 1)
        k = k0
        while True:
            p0 = first + k * step
            k += 1
            if p0 > hi + step:
                break
            if p0 <= 0.0:
                continue
            pol = _polish(fam, p0, w)
            if pol is None:
                return None, zero_root
            p, lam, dlam = pol
            if not (lo < p <= hi):
                continue
            if abs(dlam.real) <= 1e-10 * abs(dlam):
                return None, zero_root
            change = count_change(lam, dlam.real, fam.real, unit)
            root = complex(0.0, abs(lam.imag) if fam.real else lam.imag)
            if not any(
                abs(c.value - p) <= 1e-12 * p and abs(c.root - root) <= 1e-9 * max(unit, abs(root))
                for c in out
            ):
                out.append(RawCrossing(p, root, change))
    out.sort(key=lambda c: c.value)
    return out, zero_root

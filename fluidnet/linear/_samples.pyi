# The names of the compiled samples (fluidnet/linear/src/samples.c), for type checkers: pyright
# does not read extension modules. fluidnet.linear.samples.compiled_samples checks the digest.

from typing import Any

SOURCE_DIGEST: str

def schur_samples(
    s: Any,
    idx: Any,
    tau: Any,
    base: Any,
    per: Any,
    delays: Any,
    dstart: Any,
    du: Any,
    tt: Any,
    tt_at: Any,
    ts: Any,
    st: Any,
    i: Any,
    starts: Any,
    places: Any,
    K: int,
    m: int,
    U: int,
    nS: int,
    nT: int,
    mode: int,
    probe: Any,
    ts_a: Any,
    ts_i: Any,
    ts_at: Any,
    st_i: Any,
    st_b: Any,
    st_at: Any,
    f: Any,
    g: Any,
    /,
) -> None:
    """``det Delta`` (mode 0; its phase: 1) into ``f`` and its logarithmic derivative into
    ``g``, or (mode 2) ``||Delta^{-1} probe||`` into ``f``, at every sample ``s`` of system
    ``idx`` (see :mod:`fluidnet.linear.samples`)."""

def dense_samples(
    s: Any,
    idx: Any,
    tau: Any,
    A0: Any,
    A: Any,
    delays: Any,
    dstart: Any,
    du: Any,
    K: int,
    m: int,
    n: int,
    mode: int,
    probe: Any,
    f: Any,
    g: Any,
    /,
) -> None:
    """The same as :func:`schur_samples` on the whole ``n x n`` characteristic matrices."""

def dense_newton(
    s: Any,
    tau: Any,
    A0: Any,
    A: Any,
    delays: Any,
    dstart: Any,
    du: Any,
    m: int,
    n: int,
    mode: int,
    opts: Any,
    f: Any,
    g: Any,
    /,
) -> None:
    """Newton's method on ``det Delta`` of one whole system from every start ``s`` (mode 0: a
    refinement, 1: a root path's corrector), the iterates into ``f`` (see
    :class:`fluidnet.linear.stacked.DenseKernel`)."""

def scaled_steps(
    J: Any,
    F: Any,
    X: Any,
    dX: Any,
    r: Any,
    rows: Any,
    singular: Any,
    K: int,
    n: int,
    /,
) -> None:
    """The damped Newton steps of ``K`` real systems of ``n`` states (rows scaled by their
    sizes, columns by the states' magnitudes; ``fluidnet.symbolic.densenewton._step_in``) into
    ``dX``, ``r``, ``rows``; ``singular[k] = 1`` where the step of least norm was taken."""

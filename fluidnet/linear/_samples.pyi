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
    phase: bool,
    f: Any,
    g: Any,
    /,
) -> None:
    """``det Delta`` (or its phase) into ``f`` and its logarithmic derivative into ``g`` at
    every sample ``s`` of system ``idx`` (see :mod:`fluidnet.linear.samples`)."""

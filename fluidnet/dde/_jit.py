"""The numba options of the compiled integrator, in one place.

Every function of the kernel is compiled for one type signature (the driver passes arrays of
fixed dtypes and layouts), cached on disk, releases the GIL and allocates nothing (no reference
counting). Only :func:`fluidnet.dde._kernel.advance` is called from Python; the others skip
numba's Python and C wrappers, whose argument unboxing (tuples of arrays) would otherwise cost
more to compile than the functions themselves.

Compile time is dominated by how often code is optimized and translated: numba compiles each
function called from compiled code into a library of its own, and links (and optimizes and
translates again) the whole library of every callee into each caller. So the shared
evaluations (the field, event functions, mode changes) are ``kernel`` functions, compiled once
each, and the phases of a step, each called from one place, are ``inlined`` into their caller
(numba merges them before typing, so they are compiled once, as part of the caller).
"""

from __future__ import annotations

from numba import njit

_OPTIONS = dict(
    cache=True,
    nogil=True,
    _nrt=False,
    error_model="numpy",
    no_cpython_wrapper=True,
    no_cfunc_wrapper=True,
)

#: A function called from compiled code at several places (compiled once, linked).
kernel = njit(**_OPTIONS)
#: A function called from one place, merged into its caller.
inlined = njit(inline="always", **_OPTIONS)
#: The entry point called from Python.
entry = njit(cache=True, nogil=True, _nrt=False, error_model="numpy")

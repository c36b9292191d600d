"""BLAS threads: the analyses solve many small dense problems, where threading only costs."""

from __future__ import annotations

import contextlib
import ctypes
import functools
from collections.abc import Iterator
from typing import Any

__all__ = ["single_threaded_blas", "one_blas_thread"]

_SETTERS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


@functools.lru_cache(maxsize=1)
def _openblas_controls() -> tuple[tuple[Any, Any], ...]:
    """(get, set) thread-count functions of every OpenBLAS loaded in this process (Linux)."""
    try:
        with open("/proc/self/maps") as fh:
            paths = {line.split()[-1] for line in fh if "openblas" in line and ".so" in line}
    except OSError:
        return ()
    out = []
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _SETTERS:
            if hasattr(lib, get_name) and hasattr(lib, set_name):
                get, put = getattr(lib, get_name), getattr(lib, set_name)
                get.restype = ctypes.c_int
                put.argtypes = [ctypes.c_int]
                out.append((get, put))
                break
    return tuple(out)


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the block with single-threaded OpenBLAS (restored afterwards).

    The dense problems of the stability analysis are small (tens to a few hundred rows):
    threading them gains nothing, and on a busy machine (or with one process per core) a
    multi-threaded OpenBLAS can be tens of times slower. Uses ``threadpoolctl`` when installed,
    else the OpenBLAS libraries loaded in the process; a no-op when neither is available.
    """
    controls = _openblas_controls()
    if controls and all(get() == 1 for get, _ in controls):
        # already single-threaded (OPENBLAS_NUM_THREADS=1, a worker, or an enclosing sweep):
        # nothing to do, and no library scan per call (threadpoolctl costs milliseconds)
        yield
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        controls = _openblas_controls()
        before = [get() for get, _ in controls]
        for _, put in controls:
            put(1)
        try:
            yield
        finally:
            for (_, put), n in zip(controls, before, strict=True):
                put(n)
    else:
        with threadpool_limits(limits=1, user_api="blas"):
            yield


def one_blas_thread() -> None:
    """Process-pool initializer: one BLAS thread per worker process."""
    for _, put in _openblas_controls():
        put(1)

"""BLAS threads: the analyses solve many small dense problems, where threading only costs."""

from __future__ import annotations

import contextlib
import ctypes
import sys
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["single_threaded_blas", "one_blas_thread"]

_SETTERS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


_SCANS: dict[str, tuple[int, Any]] = {}


def _rescanned(kind: str, scan: Callable[[], Any]) -> Any:
    """``scan()``, kept until the process imports another module (which may load another BLAS).

    A scan of the loaded libraries costs milliseconds: once per call of the analyses' inner
    functions it was a third of a Hopf point's time. ``len(sys.modules)`` changes with every
    import, so a library loaded by a later import (scipy's own OpenBLAS) is found at the next
    call.
    """
    key = len(sys.modules)
    hit = _SCANS.get(kind)
    if hit is None or hit[0] != key:
        hit = (key, scan())
        _SCANS[kind] = hit
    return hit[1]


def _scan_openblas() -> tuple[tuple[Any, Any], ...]:
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


def _openblas_controls() -> tuple[tuple[Any, Any], ...]:
    return _rescanned("openblas", _scan_openblas)


def _blas_controller() -> Any:
    """threadpoolctl's controller of every BLAS loaded (OpenBLAS, MKL, BLIS...)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the block with single-threaded BLAS (restored afterwards).

    The dense problems of the stability analysis are small (tens to a few hundred rows):
    threading them gains nothing, and on a busy machine (or with one process per core) a
    multi-threaded OpenBLAS can be tens of times slower. Uses ``threadpoolctl``'s controller of
    the BLAS libraries loaded, found again only after the process imported another module.
    """
    controls = _openblas_controls()
    if controls and all(get() == 1 for get, _ in controls):
        # already single-threaded (OPENBLAS_NUM_THREADS=1, a worker, or an enclosing sweep)
        yield
        return
    with _rescanned("threadpoolctl", _blas_controller).limit(limits=1, user_api="blas"):
        yield


def one_blas_thread() -> None:
    """Process-pool initializer: one BLAS thread per worker process."""
    for _, put in _openblas_controls():
        put(1)

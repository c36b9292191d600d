"""BLAS threads: the analyses solve many small dense problems, where threading only costs.

``import fluidnet`` sets ``OPENBLAS_NUM_THREADS=1`` when NumPy is not loaded yet; a process that
imported NumPy first has an OpenBLAS with one thread per core, which multiplies the CPU time of
small dense algebra several times over (bifurcation continuation: 75 ms of CPU per orbit instead
of 4). The analyses therefore run inside :func:`single_threaded_blas` (the public entry points of
:mod:`fluidnet.linear`, :mod:`fluidnet.stability` and :mod:`fluidnet.bifurcation` are wrapped
with :func:`blas_bound`), whatever the user imported first. Nested sections cost a counter
check: the limit is set once by the outermost section and restored when it ends.

A BLAS library that loads *during* a section (SciPy's own OpenBLAS, the first time an analysis
imports ``scipy.linalg`` in a process that imported NumPy first) would start a thread per core,
which spin for about 0.1 s of CPU whether or not they get work. While any section runs,
``OPENBLAS_NUM_THREADS`` is therefore 1 unless the user set it: such a library starts, and
stays, single-threaded (as every OpenBLAS does in a process that imported fluidnet before
NumPy); set ``OPENBLAS_NUM_THREADS`` to choose otherwise.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, ParamSpec, TypeVar

__all__ = ["single_threaded_blas", "one_blas_thread", "blas_bound"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

_SETTERS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


_SCANS: dict[str, tuple[int, Any]] = {}


#: ``[len(sys.modules) when last looked at, library generation]`` (see :func:`_generation`)
_LIBRARIES = [0, 0]


def _generation() -> int:
    """A number that changes whenever the process may have loaded another shared library: when
    a module imported since the last look is not pure Python (an extension module, ``.so`` or
    ``.pyd``: how NumPy, SciPy and the others load a BLAS; anything that is not a ``.py`` or
    ``.pyc`` file counts), or when modules were removed. Pure-Python imports (fluidnet's own
    modules, loaded lazily at an analysis's first call) leave it alone: they rescanned the
    libraries before, 4 ms of the first ``critical_value`` of a process."""
    n = len(sys.modules)
    seen = _LIBRARIES[0]
    if n != seen:
        if n < seen or any(
            _not_pure_python(m) for m in itertools.islice(list(sys.modules.values()), seen, None)
        ):
            _LIBRARIES[1] += 1
        _LIBRARIES[0] = n
    return _LIBRARIES[1]


def _not_pure_python(module: Any) -> bool:
    where = getattr(module, "__file__", None)
    return isinstance(where, str) and not where.endswith((".py", ".pyc"))


def _rescanned(kind: str, scan: Callable[[], Any]) -> Any:
    """``scan()``, kept until the process imports a module that may load another BLAS
    (:func:`_generation`).

    A scan of the loaded libraries costs milliseconds: once per call of the analyses' inner
    functions it was a third of a Hopf point's time. An import of an extension module changes
    the generation, so a library loaded by a later import (scipy's own OpenBLAS) is found at
    the next call.
    """
    key = _generation()
    hit = _SCANS.get(kind)
    if hit is None or hit[0] != key:
        hit = (key, scan())
        _SCANS[kind] = hit
    return hit[1]


#: File-name beginnings of the other BLAS libraries threadpoolctl knows (BLIS, FlexiBLAS, MKL;
#: ``libblas`` a conda shim of any of them): where one is loaded, threadpoolctl limits them all.
_OTHER_BLAS = ("libblis", "libflexiblas", "libmkl_rt", "mkl_rt", "libblas")


class _Libraries(NamedTuple):
    """The OpenBLAS libraries loaded: ``controls``, the (get, set) thread-count functions of
    each, and ``alone``: whether they are every BLAS library loaded (none other, and each
    OpenBLAS with its functions found), so that they can be limited without threadpoolctl."""

    controls: tuple[tuple[Any, Any], ...]
    alone: bool


def _scan_openblas() -> _Libraries:
    """(get, set) thread-count functions of every OpenBLAS loaded in this process (Linux)."""
    try:
        with open("/proc/self/maps") as fh:
            loaded = {line.split()[-1] for line in fh if ".so" in line}
    except OSError:
        return _Libraries((), False)
    paths = {path for path in loaded if "openblas" in path}
    alone = not any(os.path.basename(path).startswith(_OTHER_BLAS) for path in loaded)
    out = []
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            alone = False
            continue
        for get_name, set_name in _SETTERS:
            if hasattr(lib, get_name) and hasattr(lib, set_name):
                get, put = getattr(lib, get_name), getattr(lib, set_name)
                get.restype = ctypes.c_int
                put.argtypes = [ctypes.c_int]
                out.append((get, put))
                break
        else:
            alone = False
    return _Libraries(tuple(out), alone)


def _openblas_controls() -> _Libraries:
    return _rescanned("openblas", _scan_openblas)


class _OpenBLASLimit:
    """One thread for every OpenBLAS of ``controls`` (through their own functions), the
    counts they had put back by :meth:`restore_original_limits` (as threadpoolctl's limiter)."""

    def __init__(self, controls: tuple) -> None:
        self._before = [(put, get()) for get, put in controls]
        for put, n in self._before:
            if n != 1:
                put(1)

    def restore_original_limits(self) -> None:
        for put, n in reversed(self._before):
            if n != 1:
                put(n)


def _blas_controller() -> Any:
    """threadpoolctl's controller of every BLAS loaded (OpenBLAS, MKL, BLIS...)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


class _Section(threading.local):
    """The outermost :func:`single_threaded_blas` section of this thread: its depth, the
    library generation (:func:`_generation`) when the libraries were last limited, and the
    limiters to undo at its end."""

    depth = 0
    modules = -1

    def __init__(self) -> None:
        self.limiters: list[Any] = []


_SECTION = _Section()


def _limit_new_libraries(section: _Section) -> None:
    """Limit every BLAS loaded to one thread (unless all already are), keeping the limiter to
    undo it when the outermost section ends."""
    section.modules = _generation()
    controls, alone = _openblas_controls()
    if controls and all(get() == 1 for get, _ in controls):
        # already single-threaded (OPENBLAS_NUM_THREADS=1, a worker, or an enclosing limit)
        return
    if alone:
        # OpenBLAS only (NumPy's and SciPy's wheels): their own functions, without building
        # threadpoolctl's controller (about 7 ms, once per process)
        section.limiters.append(_OpenBLASLimit(controls))
        return
    section.limiters.append(
        _rescanned("threadpoolctl", _blas_controller).limit(limits=1, user_api="blas")
    )


#: ``[outermost sections running in this process, whether they set OPENBLAS_NUM_THREADS]``
_ENVIRONMENT = [0, False]
_ENVIRONMENT_LOCK = threading.Lock()


def _enter_environment() -> None:
    """The first outermost section of the process sets ``OPENBLAS_NUM_THREADS=1`` (unless the
    user set it): a BLAS library loaded while sections run starts with one thread."""
    with _ENVIRONMENT_LOCK:
        if _ENVIRONMENT[0] == 0 and "OPENBLAS_NUM_THREADS" not in os.environ:
            os.environ["OPENBLAS_NUM_THREADS"] = "1"
            _ENVIRONMENT[1] = True
        _ENVIRONMENT[0] += 1


def _leave_environment() -> None:
    with _ENVIRONMENT_LOCK:
        _ENVIRONMENT[0] -= 1
        if _ENVIRONMENT[0] == 0 and _ENVIRONMENT[1]:
            if os.environ.get("OPENBLAS_NUM_THREADS") == "1":
                del os.environ["OPENBLAS_NUM_THREADS"]
            _ENVIRONMENT[1] = False


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the block with single-threaded BLAS (restored afterwards).

    The dense problems of the stability analysis are small (tens to a few hundred rows):
    threading them gains nothing, and on a busy machine (or with one process per core) a
    multi-threaded OpenBLAS can be tens of times slower. Where every BLAS loaded is an OpenBLAS
    (the wheels of NumPy and SciPy, on Linux) their own thread-count functions are used;
    otherwise ``threadpoolctl``'s controller of the BLAS libraries loaded. The libraries are
    found again only after the process imported an extension module (:func:`_generation`).

    Sections nest: an inner section costs a counter check, unless an extension module was
    imported since the libraries were limited (it may have loaded another BLAS, e.g. scipy's):
    then the new libraries are limited too. Everything is restored when the outermost section
    of the thread ends.
    """
    section = _SECTION
    if section.depth:
        if section.modules != _generation():
            _limit_new_libraries(section)
        section.depth += 1
        try:
            yield
        finally:
            section.depth -= 1
        return
    section.depth = 1
    _enter_environment()
    try:
        _limit_new_libraries(section)
        yield
    finally:
        section.depth = 0
        section.modules = -1
        limiters, section.limiters = section.limiters, []
        for limiter in reversed(limiters):
            limiter.restore_original_limits()
        _leave_environment()


def blas_bound(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """``func`` run inside :func:`single_threaded_blas` (for the analyses' entry points)."""

    @functools.wraps(func)
    def bound(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if _SECTION.depth and _SECTION.modules == _generation():
            return func(*args, **kwargs)
        with single_threaded_blas():
            return func(*args, **kwargs)

    return bound


def one_blas_thread() -> None:
    """Process-pool initializer: one BLAS thread per worker process."""
    for _, put in _openblas_controls().controls:
        put(1)

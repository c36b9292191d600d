"""The compiled integrator's entry point, loaded without numba when it was built ahead of time.

The integration loop (:func:`fluidnet.dde._kernel.advance`) is numba code. Compiled just in
time it costs a process numba's import and the loading of its cached machine code (about a
second of CPU) before the first step, more than a whole simulation of a small model. So the
install step (``python -m fluidnet.dde.warmup``) also builds it *ahead of time*, with numba's
``pycc``, into a plain CPython extension module in the private cache directory (see
:func:`fluidnet.dde.cache.cache_dir`); a later process imports that module, which needs
NumPy but not numba, in a few milliseconds.

The extension is tied to everything its machine code depends on: the bytes of the kernel's
sources, the numba and Python versions and this machine's processor (the code is compiled for
it). Its file name carries a hash of these, so a change of any of them makes it unused (the
just-in-time kernel serves until the next warm-up), and it is loaded only when its bytes match
the digest recorded in the cache index when it was built: a planted or damaged file is never
run. The engine is compiled with the kernel's own options (no reference counting, NumPy's
error model, the GIL released), so both paths return bit-identical results.

The same loop is also written in C (``fluidnet/dde/src``), compiled into the extension module
``fluidnet.dde._integrator`` when the package is built (``setup.py``), and loaded by
:func:`integrator` after a check that it matches this driver (state record, arrays, codes,
and in a source checkout the C sources it was built from).

``FLUIDNET_ENGINE`` selects the path: ``auto`` or ``c`` (default: the C integrator), ``jit``
or ``aot`` (numba's kernel; ``aot`` is an error when it is not built), or ``compare`` (the C
integrator, checked at every call against numba's kernel run on a copy of the run: every field
of the state record and every byte of every array must agree).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ..errors import CacheError

__all__ = ["Engine", "build_engine", "engine", "engine_key", "engine_path"]

#: The kernel's sources: the extension is rebuilt when any of them changes.
KERNEL_SOURCES = (
    "_codes.py",
    "_control.py",
    "_discontinuities.py",
    "_events.py",
    "_ffi.py",
    "_field.py",
    "_history.py",
    "_jit.py",
    "_kernel.py",
    "_state.py",
    "_step.py",
    "methods.py",
    "engine.py",
)

_MODES = ("auto", "c", "jit", "aot", "compare")


def _processor() -> str:
    """What identifies this processor's instruction set (the code is compiled for it)."""
    parts = [platform.machine(), platform.processor()]
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                key = line.split(":", 1)[0].strip()
                if key in ("flags", "Features", "model name", "cpu family", "model"):
                    parts.append(line.strip())
                elif not line.strip() and len(parts) > 2:
                    break  # the first processor is enough
    return "\n".join(parts)


def _numba_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("numba")
    except PackageNotFoundError:
        return "none"


@lru_cache(maxsize=1)
def engine_key() -> str:
    """Hash of what the ahead-of-time engine's machine code depends on (see the module doc)."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in KERNEL_SOURCES:
        h.update(name.encode() + b"\0" + (here / name).read_bytes() + b"\0")
    for part in (_numba_version(), sys.version, np.__version__.split(".")[0], _processor()):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:20]


def _module_name() -> str:
    return f"fluidnet_engine_{engine_key()}"


def engine_path() -> Path:
    """Where the ahead-of-time engine of this fluidnet, numba, Python and processor lives."""
    from .cache import cache_dir

    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return cache_dir() / f"{_module_name()}{suffix}"


# ------------------------------------------------------------------------------ layout check
def _layout(run: Any) -> str:
    """The dtype, rank and flags of every array of a run (the extension trusts them blindly)."""
    parts = []
    for group in run:
        for a in group:
            if isinstance(a, np.ndarray):
                ok = a.flags.c_contiguous and a.flags.aligned and a.flags.writeable
                parts.append(f"{a.dtype.str}{a.ndim}{'' if ok else '!'}")
            else:
                parts.append(type(a).__name__)
    return ",".join(parts)


def _sample_run() -> tuple[np.ndarray, Any]:
    """A state record and run arrays of the kernel's types (for the extension's signature)."""
    from ._state import ModelData, new_run
    from .methods import METHODS, NCOEF

    z1, zi = np.zeros(1), np.zeros(1, dtype=np.int64)
    md = ModelData(0, 0, 0, 0, 0, z1, zi, zi, zi, z1, zi, z1)
    return new_run(md, METHODS["DP5"], np.zeros(2), np.zeros((1, 1, NCOEF)), z1, z1, z1, 1)


# ------------------------------------------------------------------------------------ engine
@dataclass(frozen=True)
class Engine:
    """The integrator's entry point in use.

    Attributes
    ----------
    kind : {"c", "aot", "jit", "compare"}
        The C integrator, numba's kernel built ahead of time or its just-in-time dispatcher,
        or the C integrator checked against numba's at every call.
    path : Path or None
        The extension module's file (``kind == "aot"``).
    advance : callable
        ``advance(st, run, budget) -> status``, ``st`` an array of one state record (see
        :func:`fluidnet.dde._kernel.advance`).
    """

    kind: str
    path: Path | None
    advance: Callable[[Any, Any, int], int]


def _mode() -> str:
    mode = os.environ.get("FLUIDNET_ENGINE", "auto").strip().lower() or "auto"
    if mode not in _MODES:
        raise ValueError(f"FLUIDNET_ENGINE must be one of {', '.join(_MODES)} (got {mode!r})")
    return mode


def _jit_engine() -> Engine:
    from ._kernel import advance

    return Engine("jit", None, lambda st, run, budget: advance(st[0], run, budget))


# --------------------------------------------------------------------- the C integrator
def source_digest(directory: Path) -> str:
    """Hash of the integrator's C sources in ``directory`` (``setup.py`` records the same hash
    in the module it builds, as ``SOURCE_DIGEST``)."""
    h = hashlib.sha256()
    for path in sorted(directory.glob("*.[ch]")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:20]


def _layout_errors(module: ModuleType) -> list[str]:
    """What differs between the compiled integrator and this driver (record, arrays, codes)."""
    from . import _codes
    from ._state import RUN_STATE, Run

    kinds = {"f8": "d", "i8": "q", "b1": "?"}
    record = tuple(
        (name, RUN_STATE.fields[name][1], kinds.get(RUN_STATE.fields[name][0].str[1:], "!"))
        for name in RUN_STATE.names
    )
    errors = []
    if module.STATE_FIELDS != record or module.STATE_SIZE != RUN_STATE.itemsize:
        errors.append("the state record")
    from ._state import (
        Discontinuities,
        FieldWork,
        History,
        Marks,
        Method,
        ModelData,
        Output,
        StepWork,
    )

    classes = (ModelData, Method, FieldWork, History, StepWork, Marks, Discontinuities, Output)
    if module.RUN_FIELDS != tuple(zip(Run._fields, (c._fields for c in classes), strict=True)):
        errors.append("the arrays of a run")
    ours = {k: getattr(_codes, k) for k in module.CODES if hasattr(_codes, k)}
    if ours != module.CODES:
        errors.append("the status and event codes")
    from .methods import NCOEF

    if module.NCOEF != NCOEF:
        errors.append("the dense-output degree")
    src = Path(__file__).parent / "src"
    if src.is_dir() and source_digest(src) != module.SOURCE_DIGEST:
        errors.append(f"the C sources in {src} (they changed after the build)")
    return errors


@lru_cache(maxsize=1)
def integrator() -> ModuleType:
    """The compiled integrator (``fluidnet.dde._integrator``), checked against this driver.

    Raises
    ------
    ImportError
        When it is not built, or was built from other sources than this checkout's (edited C
        sources, or a module left from another version): the message says how to rebuild.
    """
    rebuild = "rebuild it with 'pip install .' (or 'pip install -e .', or make)"
    try:
        from . import _integrator
    except ImportError as exc:
        raise ImportError(
            f"fluidnet's compiled integrator is not built ({exc}): {rebuild}"
        ) from exc
    errors = _layout_errors(_integrator)
    if errors:
        raise ImportError(
            f"fluidnet's compiled integrator {_integrator.__file__} does not match this "
            f"fluidnet ({'; '.join(errors)}): {rebuild}"
        )
    return _integrator


def _c_engine() -> Engine:
    module = integrator()
    return Engine("c", Path(module.__file__), module.advance)


def _copied(run: Any) -> Any:
    return type(run)(
        *(type(g)(*(a.copy() if isinstance(a, np.ndarray) else a for a in g)) for g in run)
    )


def _differences(st_a, run_a, st_b, run_b) -> list[str]:
    """Fields of the state record and arrays of two runs whose bytes differ."""
    out = []
    for name in st_a.dtype.names:
        a, b = st_a[name], st_b[name]
        if a.tobytes() != b.tobytes():
            out.append(f"st.{name}: {a[0]!r} != {b[0]!r}")
    for gname, ga, gb in zip(run_a._fields, run_a, run_b, strict=True):
        for fname, a, b in zip(ga._fields, ga, gb, strict=True):
            same = a.tobytes() == b.tobytes() if isinstance(a, np.ndarray) else a == b
            if not same:
                out.append(f"run.{gname}.{fname}")
    return out


def _compare_engine() -> Engine:
    """The C integrator, checked at every call against numba's kernel run on a copy: every
    field of the state record and every byte of every array must agree (a test tool)."""
    c, jit = _c_engine().advance, _jit_engine().advance

    def advance(st: Any, run: Any, budget: int) -> int:
        st_b, run_b = st.copy(), _copied(run)
        status = c(st, run, budget)
        status_b = jit(st_b, run_b, budget)
        diff = _differences(st, run, st_b, run_b)
        if status != status_b or diff:
            raise AssertionError(
                f"the C and numba integrators differ (status {status} and {status_b}): "
                + "; ".join(diff[:12])
            )
        return status

    return Engine("compare", None, advance)


def _verified(path: Path) -> bytes | None:
    """The bytes of ``path`` when they match the digest the cache index recorded (a warning
    when a file is there but does not match), else None."""
    from .cache import verified_bytes

    data = verified_bytes(path)
    if data is None and path.exists():
        warnings.warn(
            f"the ahead-of-time integrator {path} does not match the digest recorded when it "
            "was built (damaged, replaced or unrecorded): not loading it; the just-in-time "
            "integrator is used until 'python -m fluidnet.dde.warmup' builds it again",
            RuntimeWarning,
            stacklevel=4,
        )
    return data


def _import_extension(name: str, data: bytes, path: Path) -> ModuleType:
    """Import the verified bytes ``data`` of the extension ``path`` (from a private copy)."""
    from .cache import private_copy

    with private_copy(data, path) as tmp:
        loader = importlib.machinery.ExtensionFileLoader(name, str(tmp))
        spec = importlib.util.spec_from_file_location(name, str(tmp), loader=loader)
        if spec is None:  # pragma: no cover - the loader was given explicitly
            raise ImportError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        return module


def _aot_engine(data: bytes, path: Path) -> Engine:
    module = _import_extension(_module_name(), data, path)
    expected = _layout(_sample_run()[1])
    aot_advance = module.advance

    checked = threading.local()  # the run last checked by this thread (by id: not kept alive)

    def advance(st: Any, run: Any, budget: int) -> int:
        if getattr(checked, "run", None) != id(run):  # 33 us: once per run, not per call
            layout = _layout(run)
            if layout != expected:  # the extension would misread the arrays: never call it
                raise TypeError(
                    "the ahead-of-time integrator was given arrays of another layout "
                    f"({layout} instead of {expected})"
                )
            checked.run = id(run)
        return aot_advance(st[0], run, budget)

    return Engine("aot", path, advance)


_ENGINES: dict[tuple[str, str], Engine] = {}
_LOCK = threading.Lock()


def engine() -> Engine:
    """The integrator entry point of this process (memoized per ``FLUIDNET_ENGINE`` mode and
    cache directory).

    Raises
    ------
    CacheError
        With ``FLUIDNET_ENGINE=aot`` when no verified ahead-of-time engine is built.
    ImportError
        When the C integrator is not built or does not match (see :func:`integrator`).
    ValueError
        For an unknown ``FLUIDNET_ENGINE``.
    """
    mode = _mode()
    memo = (mode, os.environ.get("FLUIDNET_CACHE", ""))
    with _LOCK:
        found = _ENGINES.get(memo)
        if found is not None:  # no look at the disk: a simulation of a few steps stays cheap
            return found
        path = engine_path()
        if mode in ("auto", "c"):
            found = _c_engine()
        elif mode == "compare":
            found = _compare_engine()
        elif mode == "jit":
            found = _jit_engine()
        else:
            data = _verified(path)
            if data is not None:
                found = _aot_engine(data, path)
            elif mode == "aot":
                raise CacheError(
                    f"FLUIDNET_ENGINE=aot, but no verified ahead-of-time integrator is built at "
                    f"{path}: run 'python -m fluidnet.dde.warmup' (or unset FLUIDNET_ENGINE)"
                )
            else:
                found = _jit_engine()
        _ENGINES[memo] = found
        return found


# ------------------------------------------------------------------------------------- build
@contextlib.contextmanager
def _kernel_flags():
    """pycc compiles an exported function with default flags; the kernel's are needed (no
    reference counting is set separately): NumPy's error model and the GIL released."""
    import numba.pycc.compiler as pcc

    base = pcc.Flags

    class KernelFlags(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.error_model = "numpy"
            self.release_gil = True

    pcc.Flags = KernelFlags
    try:
        yield
    finally:
        pcc.Flags = base


def build_engine(force: bool = False) -> tuple[Path, float]:
    """Build the ahead-of-time integrator into the cache directory (about 20-60 s of CPU).

    Returns its path and the seconds spent (0 when it was already built and ``force`` is
    false). The just-in-time kernel is compiled (or loaded from numba's cache) on the way.

    Raises
    ------
    RuntimeError
        When numba's ``pycc`` is unavailable or the C compiler it needs fails (the message
        says why; the just-in-time integrator keeps working).
    """
    from .cache import _digest, _file_lock, _record, _write_atomic

    path = engine_path()
    with _file_lock(path.parent / f"{_module_name()}.lock"):
        if not force and _verified(path) is not None:
            return path, 0.0
        start = time.perf_counter()
        try:
            import numba
            from numba.core.errors import NumbaPendingDeprecationWarning

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)
                from numba.pycc import CC
        except ImportError as exc:
            raise RuntimeError(f"numba's ahead-of-time compiler is unavailable ({exc})") from exc
        from ._kernel import advance

        st, run = _sample_run()
        sig = numba.types.int64(numba.typeof(st[0]), numba.typeof(run), numba.types.int64)

        def entry(st, run, budget):  # pragma: no cover - compiled, never run as Python
            return advance(st, run, budget)

        with tempfile.TemporaryDirectory(prefix="fluidnet-engine-") as tmp:
            cc = CC(_module_name())
            cc.output_dir = tmp
            cc.verbose = False
            cc.use_nrt = False
            cc.target_cpu = "host"
            cc.export("advance", sig)(entry)
            try:
                with _kernel_flags(), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cc.compile()
            except Exception as exc:  # noqa: BLE001 - distutils/compiler failures vary
                raise RuntimeError(
                    f"building the ahead-of-time integrator failed ({type(exc).__name__}: "
                    f"{str(exc).splitlines()[0] if str(exc) else ''})"
                ) from exc
            built = [p for p in Path(tmp).iterdir() if p.name.startswith(_module_name())]
            if len(built) != 1:
                raise RuntimeError(f"pycc produced {[p.name for p in Path(tmp).iterdir()]}")
            data = built[0].read_bytes()
        _write_atomic(path, data)
        _record(path.parent, path.name, _digest(data))
        with _LOCK:
            _ENGINES.clear()
        return path, time.perf_counter() - start


def discard_engine() -> None:
    """Remove this configuration's ahead-of-time integrator (tests, troubleshooting)."""
    path = engine_path()
    with contextlib.suppress(OSError):
        path.unlink()
    with _LOCK:
        _ENGINES.clear()

r"""Loading generated code from the cache: run only what matches the digest recorded for it.

:func:`load_generated` runs a generated Python module (numba ``cfunc``\ s, whose machine code
numba caches next to it: :mod:`fluidnet.codegen.numbacache`), :func:`c_library` loads a C
library (compiling its verified source again when the library is missing or altered). A file
that does not match its recorded digest is never run: it is discarded and generated again, with
one warning. A library that matches its digest but cannot be loaded here (a cache on a
``noexec`` mount) is kept, and said so (:class:`~fluidnet.codegen.build.LibrariesNotLoadable`):
the C backend gives way to numba with one warning (:func:`note_fallback`), or, when C was asked
for, an error says what to do.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ..errors import CacheError, ModelError
from . import numbacache
from .build import CompilerUnavailable, LibrariesNotLoadable, compile_library
from .cache import (
    INDEX,
    cache_dir,
    digest,
    discard,
    file_lock,
    noexec,
    read_index,
    record,
    write_atomic,
)
from .clib import open_library
from .pysource import generate_source

__all__ = ["c_library", "load_generated", "load_numba_model", "note_fallback", "not_loadable"]

_WARNED: set[str] = set()  # keys of models already warned about
_FELL_BACK: set[str] = set()  # why the C backend gave way to numba, said once each


def not_loadable(directory: Path, what: str, exc: BaseException | None = None):
    """The :class:`LibrariesNotLoadable` of ``what`` (a library) in ``directory``: a ``noexec``
    mount said as such, else the loader's own message."""
    if noexec(directory):
        return LibrariesNotLoadable(
            f"{what} cannot be loaded from {directory}: that directory is on a file system "
            "mounted noexec, where compiled code cannot run (the file is sound and kept)"
        )
    return LibrariesNotLoadable(
        f"{what} matches the digest recorded when it was compiled but the dynamic loader "
        f"refuses it here ({exc}); the file is kept"
    )


def note_fallback(exc: CompilerUnavailable) -> None:
    """Warn once (per reason) that C libraries cannot be loaded here and numba compiles
    instead; a compiler that does not work is left unsaid, as before (numba is the default
    without one)."""
    if not isinstance(exc, LibrariesNotLoadable):
        return
    text = str(exc)
    if text in _FELL_BACK:
        return
    _FELL_BACK.add(text)
    warnings.warn(
        f"fluidnet: {text}; compiling with numba instead (slower to compile). {exc.remedy}",
        RuntimeWarning,
        stacklevel=3,
    )


def _warn_corrupt(key: str, name: str, path: Path, what: str) -> None:
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(
        f"fluidnet: the compile cache of model {name!r} in {path.parent} was corrupt ({what}); "
        "discarded it and compiled again",
        RuntimeWarning,
        stacklevel=4,
    )


def _exec_generated(name: str, path: Path, source: bytes) -> ModuleType:
    """Run the verified bytes ``source`` as module ``name`` (file name ``path``, so that numba
    finds its on-disk cache next to it, itself verified: see :mod:`.numbacache`); the file is
    not read again."""
    numbacache.install()
    module = ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - our own code
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _verified_source(path: Path, generate: Callable[[], str], key: str, label: str) -> tuple:
    """``(bytes, fresh)``: the module's source if it matches the hash recorded in the cache
    index, else newly generated (and recorded). Called with the module's file lock held."""
    directory = path.parent
    index = read_index(directory)
    recorded = None if index is None else index.get(path.name)
    try:
        source = path.read_bytes()
    except OSError:
        source = None
    if source is not None and recorded is not None and digest(source) == recorded:
        return source, False
    if source is not None and index is None:
        _warn_corrupt(key, label, path, f"its index {directory / INDEX} is unreadable")
    elif source is not None and recorded is not None:
        _warn_corrupt(key, label, path, f"{path.name} does not match its recorded hash")
    # unknown or altered code is never run: regenerate it (and drop machine code for it)
    return _regenerate(path, generate), True


def _regenerate(path: Path, generate: Callable[[], str]) -> bytes:
    discard(path)
    source = generate().encode()
    write_atomic(path, source)
    record(path.parent, path.name, digest(source))
    return source


def load_generated(name: str, generate: Callable[[], str], label: str = "") -> ModuleType:
    """The generated module ``name`` of the cache directory, made by ``generate()`` when it is
    missing or does not match the hash recorded when it was written (a planted or damaged file
    is never run). Concurrent processes generate it once (a file lock). For generated code
    other than the integrator's (e.g. compiled Monte Carlo loops).

    Raises
    ------
    CacheError
        When the cache directory is unsafe (see :func:`cache_dir`).
    """
    if name in sys.modules:
        return sys.modules[name]
    directory = cache_dir()
    path = directory / f"{name}.py"
    with file_lock(directory / f"{name}.lock"):
        source, _ = _verified_source(path, generate, name, label or name)
        return _exec_generated(name, path, source)


def load_numba_model(form, key: str, path: Path) -> tuple[ModuleType, np.ndarray]:
    """The generated module of ``form``, verified against the cache index, and the addresses
    of its compiled functions. Called with the file lock of ``key`` held."""
    from numba.core.errors import NumbaError

    def generate() -> str:
        return generate_source(form)

    source, fresh = _verified_source(path, generate, key, form.name)
    for attempt in range(2):
        try:
            module = _exec_generated(f"fluidnet_gen_{key}", path, source)
            functions = (module.rhs, module.delay, module.switch, module.sgrad)
            return module, np.array([f.address for f in functions], dtype=np.int64)
        except CacheError:  # a full disk, say: not a damaged file
            raise
        except (NumbaError, SyntaxError, NameError) as exc:
            if fresh or attempt:
                raise ModelError(
                    f"model {form.name!r} could not be compiled ({type(exc).__name__}: "
                    f"{str(exc).splitlines()[0] if str(exc) else ''}); generated source: {path}"
                ) from exc
            reason = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # noqa: BLE001 - numba's machine-code cache could not be read
            if attempt:
                raise
            reason = f"{type(exc).__name__} while loading machine code: {exc}"
        _warn_corrupt(key, form.name, path, reason.splitlines()[0])
        source, fresh = _regenerate(path, generate), True
    raise AssertionError("unreachable")  # pragma: no cover


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def c_library(
    stem: str,
    generate: Callable[[], str],
    key: str,
    label: str,
    names,
    opener: Callable[[bytes, Path], Any] | None = None,
) -> Any:
    """The C library ``<stem>.so`` of the cache directory, loaded only when its bytes match the
    digest recorded in the cache index; else compiled again from ``<stem>.c`` (itself verified
    the same way, else generated by ``generate()``), with one warning when a file was found
    altered. Concurrent processes compile it once (a file lock).

    ``opener(data, path)`` loads the verified bytes of a library that is not a model's (raising
    :class:`OSError` when it cannot); by default :func:`~fluidnet.codegen.clib.open_library`
    with the function names ``names``.

    Raises
    ------
    CompilerUnavailable
        When it has to be compiled and the C compiler does not work.
    LibrariesNotLoadable
        (a ``CompilerUnavailable``) When libraries cannot be loaded from the cache directory
        (on a ``noexec`` file system, or refused by the dynamic loader although they match their
        digest); the files are kept.
    ModelError
        When the compiler rejects the generated source.
    CacheError
        When the cache cannot be written (a full disk, a file-size limit, a directory where a
        file belongs, ...).
    """

    def load(data: bytes, path: Path) -> Any:
        if opener is None:
            return open_library(data, path, names)
        return opener(data, path)

    directory = cache_dir()
    if noexec(directory):  # nothing compiled could run: keep what is there, compile nothing
        raise not_loadable(directory, f"the library of {label}")
    so_path, c_path = directory / f"{stem}.so", directory / f"{stem}.c"
    with file_lock(directory / f"{stem}.lock"):
        index = read_index(directory)
        recorded = None if index is None else index.get(so_path.name)
        data = _read_bytes(so_path)
        if data is not None and recorded is not None and digest(data) == recorded:
            try:
                return load(data, so_path)
            except OSError as exc:  # sound bytes the loader refuses here: not corrupt
                raise not_loadable(directory, f"{so_path.name} ({label})", exc) from exc
        elif data is not None and index is None:
            _warn_corrupt(key, label, so_path, f"its index {directory / INDEX} is unreadable")
        elif data is not None and recorded is not None:
            _warn_corrupt(key, label, so_path, f"{so_path.name} does not match its recorded hash")
        # unknown or altered machine code is never run: compile the (verified) source again
        discard(so_path)
        source, _ = _verified_source(c_path, generate, key, label)
        data = compile_library(source, directory, label, c_path)
        write_atomic(so_path, data)
        record(directory, so_path.name, digest(data))
        try:
            return load(data, so_path)
        except OSError as exc:
            raise not_loadable(directory, f"the library just compiled for {label}", exc) from exc

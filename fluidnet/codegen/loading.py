r"""Loading generated code from the cache: run only what matches the digest recorded for it.

:func:`load_generated` runs a generated Python module (numba ``cfunc``\ s, whose machine code
numba caches next to it: :mod:`fluidnet.codegen.numbacache`), :func:`c_library` loads a C
library (compiling its verified source again when the library is missing or altered). A file
that does not match its recorded digest is never run: it is discarded and generated again, with
one warning.
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
from .build import CompilerUnavailable, compile_library
from .cache import INDEX, cache_dir, digest, discard, file_lock, read_index, record, write_atomic
from .clib import open_library
from .pysource import generate_source

__all__ = ["c_library", "load_generated", "load_numba_model"]

_WARNED: set[str] = set()  # keys of models already warned about


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
        When it has to be compiled and the C compiler does not work, or a library just compiled
        cannot be loaded (e.g. a cache directory on a ``noexec`` file system).
    ModelError
        When the compiler rejects the generated source.
    """

    def load(data: bytes, path: Path) -> Any:
        if opener is None:
            return open_library(data, path, names)
        return opener(data, path)

    directory = cache_dir()
    so_path, c_path = directory / f"{stem}.so", directory / f"{stem}.c"
    with file_lock(directory / f"{stem}.lock"):
        index = read_index(directory)
        recorded = None if index is None else index.get(so_path.name)
        data = _read_bytes(so_path)
        if data is not None and recorded is not None and digest(data) == recorded:
            try:
                return load(data, so_path)
            except OSError as exc:
                _warn_corrupt(key, label, so_path, f"{so_path.name} cannot be loaded: {exc}")
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
            raise CompilerUnavailable(
                f"the library compiled for {label} cannot be loaded from {directory} ({exc})"
            ) from exc

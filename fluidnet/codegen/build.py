"""The system C compiler: finding one that works, and compiling a generated source to a library.

A library is compiled with ``$CC`` (else ``cc`` or ``gcc`` found on the ``PATH``) as
``-O2 -fPIC -shared`` (``-O1`` for very large sources) and linked with ``-lm``. Loading one is
plain :mod:`ctypes` (:mod:`fluidnet.codegen.clib`): no numba is imported. The cache (verified
bytes, file locks, atomic writes) is :mod:`fluidnet.codegen.cache`.
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from ..errors import ModelError
from .cache import disk_errors

__all__ = [
    "CompilerUnavailable",
    "LibrariesNotLoadable",
    "compile_library",
    "compiler_command",
    "known_broken",
]

#: Sources longer than this many bytes are compiled with ``-O1`` (``-O2`` costs several times
#: more compile time on very large straight-line functions for little speed).
O1_ABOVE_BYTES = 200_000


# ------------------------------------------------------------------------------- compiling
class CompilerUnavailable(RuntimeError):  # noqa: N818 - a condition, not a failure of the model
    """The C compiler cannot be run or does not build a trivial shared library."""

    #: What to do about it (for the error of a C backend that was asked for).
    remedy = "Set CC to a working C compiler, or use FLUIDNET_BACKEND=numba"


class LibrariesNotLoadable(CompilerUnavailable):
    """Compiled libraries cannot be loaded from the cache directory (a file system mounted
    ``noexec``, or a loader that refuses a library matching its recorded digest): not a damaged
    file, and not the compiler's fault."""

    remedy = (
        "Set FLUIDNET_CACHE to a directory on a file system that allows running programs, or "
        "use FLUIDNET_BACKEND=numba"
    )


_PROBE = b"double fluidnet_probe(double x) { return x + 1.0; }\n"
_COMPILER_LOCK = threading.Lock()
_BROKEN: dict[tuple[str, ...], str] = {}  # compiler command -> why it does not work


def compiler_command() -> list[str]:
    """The C compiler: ``$CC`` (split like a shell word list), else ``cc`` or ``gcc`` on the
    ``PATH``.

    Raises
    ------
    CompilerUnavailable
        When ``$CC`` is unset and neither ``cc`` nor ``gcc`` is found.
    """
    env = os.environ.get("CC", "").strip()
    if env:
        return shlex.split(env)
    for name in ("cc", "gcc"):
        found = shutil.which(name)
        if found:
            return [found]
    raise CompilerUnavailable("no C compiler: CC is not set and neither cc nor gcc is on PATH")


def _flags(nbytes: int) -> list[str]:
    level = "-O1" if nbytes > O1_ABOVE_BYTES else "-O2"
    return [level, "-fPIC", "-shared", "-fno-fast-math", "-ffp-contract=off"]


def _run(cmd: list[str], source: bytes, out: Path) -> subprocess.CompletedProcess:
    """Compile ``source`` (given on standard input) into the shared library ``out``."""
    args = [*cmd, *_flags(len(source)), "-o", str(out), "-x", "c", "-", "-x", "none", "-lm"]
    return subprocess.run(args, input=source, capture_output=True, check=False, timeout=3600)


def _why(cmd: list[str], result) -> str:
    if isinstance(result, OSError):
        return f"{shlex.join(cmd)!r} cannot be run ({result})"
    err = result.stderr.decode(errors="replace").strip() or "(no output)"
    return f"{shlex.join(cmd)!r} exited with status {result.returncode}: {err[:2000]}"


def _check_compiler(cmd: list[str], directory: Path) -> None:
    """Raise :class:`CompilerUnavailable` unless ``cmd`` builds a trivial shared library."""
    key = tuple(cmd)
    with _COMPILER_LOCK:
        if key in _BROKEN:
            raise CompilerUnavailable(_BROKEN[key])
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".probe-", suffix=".so")
        os.close(fd)
        try:
            result = _run(cmd, _PROBE, Path(tmp))
            ok = result.returncode == 0 and os.path.getsize(tmp) > 0
        except OSError as exc:
            result, ok = exc, False
        finally:
            _unlink(tmp)
        if not ok:
            _BROKEN[key] = _why(cmd, result)
            raise CompilerUnavailable(_BROKEN[key])


def known_broken() -> bool:
    """Whether this process already found the current compiler unusable (or there is none)."""
    try:
        return tuple(compiler_command()) in _BROKEN
    except CompilerUnavailable:
        return True


def _check_disk(stderr: bytes, directory: Path, label: str) -> None:
    """Raise CacheError when the compiler failed because the cache's disk is full (it says so
    with the system's message, e.g. 'No space left on device')."""
    text = stderr.decode(errors="replace")
    for code in (errno.ENOSPC, errno.EDQUOT):
        if os.strerror(code) in text:
            with disk_errors(directory, f"compile {label}"):
                raise OSError(code, os.strerror(code), str(directory))


def compile_library(source: bytes, directory: Path, label: str, source_path: Path) -> bytes:
    """The bytes of the shared library compiled from ``source``.

    Raises
    ------
    CompilerUnavailable
        When the compiler cannot be run or does not work at all (it fails on a trivial source
        too).
    ModelError
        When the compiler works but rejects ``source`` (names ``label`` and ``source_path``).
    CacheError
        When the cache's disk is full or over quota (the compiler could not write).
    """
    cmd = compiler_command()
    if tuple(cmd) in _BROKEN:
        raise CompilerUnavailable(_BROKEN[tuple(cmd)])
    with disk_errors(directory, "make a file for the compiled library"):
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".so")
    os.close(fd)
    try:
        try:
            result = _run(cmd, source, Path(tmp))
        except OSError as exc:
            with _COMPILER_LOCK:
                _BROKEN[tuple(cmd)] = _why(cmd, exc)
            raise CompilerUnavailable(_BROKEN[tuple(cmd)]) from exc
        if result.returncode == 0:
            data = Path(tmp).read_bytes()
            if data:
                return data
        _check_disk(result.stderr, directory, label)  # a full disk is not the compiler's fault
        _check_compiler(cmd, directory)  # raises when the compiler itself is the problem
        err = result.stderr.decode(errors="replace").replace("<stdin>", str(source_path))
        raise ModelError(
            f"{label}: the C compiler {shlex.join(cmd)!r} rejected the generated source "
            f"{source_path} (exit status {result.returncode}): {err.strip()[:2000]}"
        )
    finally:
        _unlink(tmp)


def _unlink(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass

"""The private cache directory of compiled code, and its index of digests.

Generated model modules, compiled model libraries and the ahead-of-time integrator live in
``$FLUIDNET_CACHE`` (default ``~/.cache/fluidnet``). The directory holds code this process runs,
so it must be private (see :func:`cache_dir`), and a file is run only when its bytes match the
digest recorded in the directory's index (``index.json``) when fluidnet wrote it — numba's
machine code of the generated modules (``__pycache__/*.nbi``, ``*.nbc``: pickles) included (see
:mod:`fluidnet.codegen.numbacache`). A disk that is full (or over quota, or read-only) or a
file-size limit (``ulimit -f``) when the cache is written is a
:class:`~fluidnet.errors.CacheError` that says so and what to do; so is a directory where the
cache keeps a file, or any other failure of the file system (naming the file). A file is never
called corrupt, nor deleted, because it could not be copied or loaded here: a directory on a
file system mounted ``noexec`` (:func:`noexec`) cannot run compiled libraries, which is said as
such. This module needs nothing beyond the standard library, so that loading compiled code
imports neither sympy nor numba (and only what reading needs: ``tempfile`` and ``shutil``, for
writing and the fallback directory, are imported where used).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import hashlib
import itertools
import json
import os
import stat
import threading
import warnings
from contextlib import contextmanager
from pathlib import Path

from ..diskfull import unwritable_errno, unwritable_reason, unwritable_remedy
from ..errors import CacheError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no cross-process lock
    fcntl = None

__all__ = [
    "INDEX",
    "cache_dir",
    "digest",
    "discard",
    "disk_errors",
    "file_lock",
    "is_cache_dir",
    "noexec",
    "private_copy",
    "read_index",
    "record",
    "verified_bytes",
    "write_atomic",
]

_FALLBACK: list[Path] = []  # the private directory of this process, once one was needed
_SERVED: set[Path] = set()  # every directory cache_dir() returned in this process


def is_cache_dir(path: Path) -> bool:
    """Whether ``path`` is a compile-cache directory this process uses (one :func:`cache_dir`
    returned, hence checked private)."""
    return Path(path) in _SERVED


@contextmanager
def disk_errors(directory: Path, what: str):
    """Turn an ``OSError`` while writing to the cache ``directory`` into a
    :class:`~fluidnet.errors.CacheError` that says what is wrong and what to do: a full (or
    over-quota, or read-only) disk, a file-size limit, a directory where a file belongs, or
    another failure of the file system (naming the file)."""
    try:
        yield
    except OSError as exc:
        reason = unwritable_reason(exc)
        if reason is not None:
            remedy = unwritable_remedy(unwritable_errno(exc), "set FLUIDNET_CACHE to")
            raise CacheError(
                f"fluidnet compile cache {directory}: cannot {what}: {reason}. {remedy}"
            ) from exc
        name = exc.filename2 if exc.errno == errno.EISDIR and exc.filename2 else exc.filename
        if exc.errno == errno.EISDIR:
            fix = f"a directory is where the cache keeps the file {name}: remove it"
        elif exc.errno == errno.ENOTDIR:
            fix = f"a file is in the way of {name}: remove it"
        else:
            fix = "set FLUIDNET_CACHE to a directory of your own where you can write"
        code = errno.errorcode.get(exc.errno or 0, "?")
        raise CacheError(
            f"fluidnet compile cache {directory}: cannot {what} ({exc.strerror or exc}, {code}"
            f"{f', at {name}' if name else ''}); {fix}"
        ) from exc


def noexec(directory: Path) -> bool:
    """Whether ``directory`` is on a file system mounted ``noexec`` (where the dynamic loader
    refuses to map code: compiled libraries cannot be loaded from it)."""
    flag = getattr(os, "ST_NOEXEC", 0)
    try:
        return bool(flag and os.statvfs(directory).f_flag & flag)
    except OSError:
        return False


def _check_private(path: Path) -> None:
    """Refuse a directory another user could have written to: its code would run here."""
    st = path.stat()
    if not stat.S_ISDIR(st.st_mode):
        raise CacheError(f"fluidnet cache {path} is not a directory")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise CacheError(
            f"fluidnet cache directory {path} belongs to user id {st.st_uid}, not to you "
            f"(user id {os.getuid()}): refusing to load code from it. Remove it, or set "
            "FLUIDNET_CACHE to a directory of your own"
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CacheError(
            f"fluidnet cache directory {path} is writable by other users "
            f"(mode {stat.S_IMODE(st.st_mode):o}): refusing to load code from it. Run "
            f"'chmod go-w {path}', or set FLUIDNET_CACHE to a private directory"
        )


def _private_dir(path: Path) -> Path:
    """``path`` created with mode 0700 if missing; an existing one is checked, never trusted.

    Raises ``OSError`` when it cannot be made or written (a regular file in its place
    included), :class:`~fluidnet.errors.CacheError` when it is unsafe."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        if not path.is_dir():
            raise NotADirectoryError(
                errno.ENOTDIR, "a file, not a directory, is in its place", str(path)
            ) from None
    _check_private(path)
    machine_code = path / "__pycache__"  # numba's cache (pickles) goes next to the modules
    try:
        os.mkdir(machine_code, 0o700)
    except FileExistsError:
        pass
    _check_private(machine_code)
    for name in (INDEX, INDEX + ".lock"):  # the index is what every file is checked against
        if (path / name).exists() and not (path / name).is_file():
            raise CacheError(
                f"{path / name} is not a file (a directory is in its place), where the compile "
                "cache keeps the digests of its files: remove it (nothing in the cache is "
                "loaded without it; the files are compiled again)"
            )
    probe = path / f".probe-{os.getpid()}-{threading.get_ident()}"
    try:
        probe.write_text("")
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    return path


def _user_id() -> str:
    return str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")


def _fallback_dir() -> tuple[Path, str]:
    """The private directory that serves when the cache directory cannot: the same one for
    every process of this user (``<tmp>/fluidnet-cache-<uid>``, checked like the cache itself
    and not a symbolic link), else a new one removed when the process exits."""
    import shutil
    import tempfile

    shared = Path(tempfile.gettempdir()) / f"fluidnet-cache-{_user_id()}"
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(shared, 0o700)
        if stat.S_ISLNK(os.lstat(shared).st_mode):
            raise CacheError(f"{shared} is a symbolic link")
        return _private_dir(shared), "shared by your processes"
    except (OSError, CacheError):
        pass
    try:
        own = Path(tempfile.mkdtemp(prefix="fluidnet-cache-"))
    except OSError as exc:
        raise CacheError(
            f"no private directory could be made for the compile cache in "
            f"{tempfile.gettempdir()} ({exc.strerror or exc}): set FLUIDNET_CACHE to a "
            "writable directory of your own"
        ) from exc
    atexit.register(shutil.rmtree, own, ignore_errors=True)
    (own / "__pycache__").mkdir(mode=0o700)
    return own, "for this process only (removed when it exits)"


def cache_dir() -> Path:
    """The directory of generated modules: ``$FLUIDNET_CACHE`` or ``~/.cache/fluidnet``.

    The directory is created with mode 0700. Code is loaded from it only when it belongs to the
    current user and is not writable by others. When it cannot be created or written (a
    read-only file system, a regular file in its place, ...), a private directory of the
    system's temporary directory serves instead, with one warning: ``fluidnet-cache-<uid>``,
    the same for all your processes (checked like the cache itself), else a new one removed
    when the process exits.

    Raises
    ------
    CacheError
        When the directory exists but belongs to another user or is group- or world-writable,
        or when no private directory can be made at all.
    """
    env = os.environ.get("FLUIDNET_CACHE")
    path = Path(env).expanduser() if env else Path.home() / ".cache" / "fluidnet"
    try:
        found = _private_dir(path)
    except CacheError:
        raise
    except OSError as exc:
        if not _FALLBACK:
            fallback, scope = _fallback_dir()
            _FALLBACK.append(fallback)
            warnings.warn(
                f"fluidnet cache directory {path} is not usable ({exc.strerror or exc}); "
                f"compiling into the private directory {fallback}, {scope} (set "
                "FLUIDNET_CACHE to a writable directory of your own to keep compiled models "
                "between runs)",
                RuntimeWarning,
                stacklevel=3,
            )
        found = _FALLBACK[0]
    _SERVED.add(found)
    return found


def digest(data: bytes) -> str:
    """The SHA-256 of ``data`` in hexadecimal, as the index records it."""
    return hashlib.sha256(data).hexdigest()


@contextmanager
def file_lock(path: Path):
    """An exclusive advisory lock on ``path`` held across processes (POSIX ``flock``).

    Raises
    ------
    CacheError
        When the lock file cannot be opened (a directory in its place, a full disk, ...).
    """
    with disk_errors(path.parent, f"open the lock file {path.name}"):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


#: The file name of a cache directory's index of digests.
INDEX = "index.json"


def read_index(directory: Path) -> dict[str, str] | None:
    """``{module file name: sha256 of its source}``: empty when there is no index yet, ``None``
    when it cannot be read (then no module of the directory is trusted)."""
    try:
        data = json.loads((directory / INDEX).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def record(directory: Path, filename: str, digest: str, locked: bool = False) -> None:
    """Record ``digest`` for ``filename`` in the index (``locked``: the caller holds the
    index's lock)."""
    with contextlib.nullcontext() if locked else file_lock(directory / (INDEX + ".lock")):
        index = read_index(directory) or {}
        index[filename] = digest
        write_atomic(directory / INDEX, json.dumps(index, indent=0, sort_keys=True).encode())


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all (a new file renamed over it).

    Raises
    ------
    CacheError
        When the disk is full, over quota or read-only (nothing is changed then).
    """
    import tempfile

    with disk_errors(path.parent, f"write {path.name}"):
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def discard(path: Path) -> None:
    """Delete a generated module and numba's machine code for it (``__pycache__``)."""
    with contextlib.suppress(OSError):
        path.unlink()
    for f in (path.parent / "__pycache__").glob(f"{path.stem}.*"):
        with contextlib.suppress(OSError):
            f.unlink()


def verified_bytes(path: Path) -> bytes | None:
    """The bytes of ``path`` when they match the digest its directory's index recorded for
    it; ``None`` when it is missing, unrecorded, unreadable or altered (never to be run)."""
    index = read_index(path.parent)
    if not index or path.name not in index:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if digest(data) == index[path.name] else None


_SERIAL = itertools.count()


@contextmanager
def private_copy(data: bytes, path: Path):
    """A new file of a unique name next to ``path`` (in the private cache) holding ``data``,
    removed on exit: code is loaded from it, so what runs is exactly the bytes that were
    verified, whatever ``path`` holds by then, and a library rebuilt in this process is never
    mistaken by the dynamic loader for one it loaded before under the same name.

    Raises
    ------
    CacheError
        When the copy cannot be written for a full, over-quota or read-only disk (``path``
        itself is sound: it is not to be called corrupt).
    """
    tmp = path.parent / f".load-{os.getpid()}-{next(_SERIAL)}-{path.name}"
    try:
        with disk_errors(path.parent, f"copy {path.name} to load it"):
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o700)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        yield tmp
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)

"""Recognizing a write that failed because the disk cannot take it (full, over quota, read-only,
or a file larger than the process may write).

The compile cache and the checkpoint stores turn such a failure into their own error
(:class:`~fluidnet.errors.CacheError`, :class:`~fluidnet.errors.StoreError`) that says so, names
the directory and what to do (:func:`unwritable_remedy`), instead of a raw ``OSError`` — and
never mistake it for a damaged file. Standard library only (the compile cache loads code
without numpy).
"""

from __future__ import annotations

import errno

__all__ = ["unwritable_errno", "unwritable_reason", "unwritable_remedy"]

_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EFBIG: "a file would exceed the file-size limit of this process (ulimit -f)",
}


def unwritable_errno(exc: BaseException) -> int | None:
    """The errno (``ENOSPC``, ``EDQUOT``, ``EROFS`` or ``EFBIG``) of the ``OSError`` that is
    ``exc`` or that ``exc`` was raised from (or while handling); else ``None``."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in _REASONS:
            return e.errno
        e = e.__cause__ or e.__context__
    return None


def unwritable_reason(exc: BaseException) -> str | None:
    """``"the disk is full (...)"`` and the like when ``exc`` (or an exception it was raised
    from) is an ``OSError`` with errno ``ENOSPC``, ``EDQUOT``, ``EROFS`` or ``EFBIG``; else
    ``None``.

    Examples
    --------
    >>> import errno, os
    >>> unwritable_reason(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    'the disk is full (No space left on device, ENOSPC)'
    >>> unwritable_reason(OSError(errno.EACCES, "Permission denied")) is None
    True
    """
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in _REASONS:
            detail = e.strerror or str(e)
            return f"{_REASONS[e.errno]} ({detail}, {errno.errorcode[e.errno]})"
        e = e.__cause__ or e.__context__
    return None


def unwritable_remedy(code: int | None, elsewhere: str) -> str:
    """What to do about an unwritable disk of errno ``code``; ``elsewhere`` completes "use a
    directory on another device" for the caller (``"set FLUIDNET_CACHE to"``, ``"give store="``).

    Examples
    --------
    >>> import errno
    >>> unwritable_remedy(errno.EFBIG, "give store=")
    'Raise the limit (ulimit -f unlimited in the shell that starts Python) and run again'
    """
    if code == errno.EFBIG:
        return "Raise the limit (ulimit -f unlimited in the shell that starts Python) and run again"
    if code == errno.EROFS:
        return f"{elsewhere[0].upper()}{elsewhere[1:]} a directory on a writable file system"
    return (
        f"Free space on that device, or {elsewhere} a directory on another one"
        if elsewhere
        else "Free space on that device"
    )

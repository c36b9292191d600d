"""Recognizing a write that failed because the disk cannot take it (full, over quota, read-only).

The compile cache and the checkpoint stores turn such a failure into their own error
(:class:`~fluidnet.errors.CacheError`, :class:`~fluidnet.errors.StoreError`) that says so and
names the directory, instead of a raw ``OSError`` — and never mistake it for a damaged file.
Standard library only (the compile cache loads code without numpy).
"""

from __future__ import annotations

import errno

__all__ = ["unwritable_reason"]

_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
}


def unwritable_reason(exc: BaseException) -> str | None:
    """``"the disk is full (...)"`` and the like when ``exc`` (or an exception it was raised
    from) is an ``OSError`` with errno ``ENOSPC``, ``EDQUOT`` or ``EROFS``; else ``None``.

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

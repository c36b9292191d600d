"""fluidnet.diskfull: which write failures mean the disk cannot take the data."""

import errno
import os

import pytest

from fluidnet.diskfull import unwritable_reason


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (errno.ENOSPC, "the disk is full"),
        (errno.EDQUOT, "the disk quota is exceeded"),
        (errno.EROFS, "the file system is read-only"),
    ],
)
def test_unwritable_errors_are_named(code, reason):
    exc = OSError(code, os.strerror(code))
    assert unwritable_reason(exc) == f"{reason} ({os.strerror(code)}, {errno.errorcode[code]})"


@pytest.mark.parametrize(
    "exc",
    [
        OSError(errno.EACCES, "Permission denied"),
        OSError(errno.ENOENT, "No such file"),
        OSError("no errno at all"),
        ValueError("not an OSError"),
    ],
)
def test_other_failures_are_not(exc):
    assert unwritable_reason(exc) is None


def test_the_reason_is_found_down_the_chain():
    """A full disk under a wrapping error (raise ... from, or raised while handling)."""
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as inner:
            raise RuntimeError("could not write the store") from inner
    except RuntimeError as outer:
        assert unwritable_reason(outer).startswith("the disk is full (No space left on device")
    try:
        try:
            raise OSError(errno.EROFS, "Read-only file system")
        except OSError:
            raise KeyError("while writing") from None  # __cause__ None, __context__ kept
    except KeyError as outer:
        assert unwritable_reason(outer).startswith("the file system is read-only")


def test_a_cyclic_chain_ends():
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__context__, b.__context__ = b, a
    assert unwritable_reason(a) is None
    # strerror missing: the exception's text stands in
    assert unwritable_reason(OSError(errno.ENOSPC, None)).startswith("the disk is full (")

"""The compile cache as the store of a model's built pieces (:mod:`fluidnet.stores`).

The symbolic stage keeps a model's steady-state code and closed-form equilibria between
processes (:mod:`fluidnet.symbolic.steadycode`) in the same private directory as the compiled
models (:func:`~fluidnet.codegen.cache.cache_dir`), each file recorded in the directory's index
with its digest when written and returned only when its bytes still match it. Importing this
module registers the store; it loads nothing beyond the standard library until it is used.
"""

from __future__ import annotations

import re

from ..stores import Store, provide

__all__ = ["CacheStore"]

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


class CacheStore(Store):
    """``load(name)``/``save(name, data)`` on files of the compile cache directory."""

    def load(self, name: str) -> bytes | None:
        """The bytes of ``name`` when they match the digest the index recorded, else ``None``.

        Raises
        ------
        CacheError
            When the cache directory is unsafe (see
            :func:`~fluidnet.codegen.cache.cache_dir`).
        """
        from .cache import cache_dir, verified_bytes

        _check(name)
        return verified_bytes(cache_dir() / name)

    def save(self, name: str, data: bytes) -> None:
        """Write ``name`` atomically and record its digest in the index.

        Raises
        ------
        CacheError
            When the directory is unsafe or the disk refuses the write.
        """
        from .cache import INDEX, cache_dir, digest, file_lock, record, write_atomic

        _check(name)
        directory = cache_dir()
        with file_lock(directory / (INDEX + ".lock")):
            write_atomic(directory / name, data)
            record(directory, name, digest(data), locked=True)


def _check(name: str) -> None:
    if not _NAME.match(name) or name.startswith("."):
        raise ValueError(f"not a plain file name: {name!r}")


provide("model pieces", CacheStore())

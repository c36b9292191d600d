"""numba's on-disk cache of fluidnet's generated modules, covered by the compile cache's index.

numba keeps the machine code of a ``cache=True`` function in two pickle files next to its
source: an index (``<module>.<function>-<line>.pyXY.nbi``) and one data file per signature
(``....<n>.nbc``). Unpickling runs code, so for the modules fluidnet generates into its private
cache directory (:func:`fluidnet.codegen.cache.cache_dir`) these files are treated like the modules
themselves:

* they are written to the directory's ``__pycache__`` whatever ``NUMBA_CACHE_DIR`` says (a
  cache locator that claims the files of a fluidnet cache directory);
* every one numba writes there is digested (SHA-256 of the bytes written) into the directory's
  index, under the index's lock;
* numba reads one only after its bytes were checked against the index, and unpickles exactly
  the bytes checked (no second read). A file the index does not know (planted, or left by a
  fluidnet before this check) is not loaded and is compiled again; one that does not match its
  digest (damaged) too, with one warning per module.

:func:`install` puts these in place (idempotent); :mod:`fluidnet.codegen.loading` calls it before
it runs a generated module. numba's cache of other code (fluidnet's own kernel in the package,
your functions) is left as numba does it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import threading
import warnings
from pathlib import Path
from typing import Any

from .cache import INDEX, disk_errors, file_lock, is_cache_dir, read_index, record

__all__ = ["install"]

_LOCK = threading.Lock()
_INSTALLED = False
_WARNED: set[str] = set()


class _Unverified(FileNotFoundError):
    """A data file that did not pass its digest: numba treats it as missing (and recompiles)."""


class _Tee:
    """A binary file whose written bytes also go into a hash."""

    def __init__(self, fh, digest):
        self._fh, self.digest = fh, digest

    def write(self, data) -> int:
        self.digest.update(data)
        return self._fh.write(data)


def _ours(cache_path: str | os.PathLike) -> Path | None:
    """The fluidnet cache directory whose ``__pycache__`` is ``cache_path``, if it is one."""
    path = Path(cache_path)
    if path.name == "__pycache__" and is_cache_dir(path.parent):
        return path.parent
    return None


def _verified(directory: Path, path: Path) -> bytes | None:
    """The bytes of ``path`` (in ``directory/__pycache__``) when they match the index; None
    when it is missing, unrecorded (not written by fluidnet's numba) or altered (warned)."""
    name = f"__pycache__/{path.name}"
    with file_lock(directory / (INDEX + ".lock")):  # not while a writer replaces it
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        index = read_index(directory) or {}
    recorded = index.get(name)
    if recorded is not None and hashlib.sha256(data).hexdigest() == recorded:
        return data
    if recorded is not None:
        module = path.name.split(".")[0]
        if module not in _WARNED:
            _WARNED.add(module)
            warnings.warn(
                f"fluidnet: the compile cache in {directory} was corrupt (numba's machine code "
                f"{name} does not match the digest recorded when it was written); not loaded, "
                "compiled again",
                RuntimeWarning,
                stacklevel=2,
            )
    return None


def _classes():
    from numba.core import caching

    # numba's public names, or their private spellings of older releases (read by name: the
    # type checker does not see numba's private names)
    private = {"locator": "_InTreeCacheLocator", "impl": "_CacheImpl"}
    locator = getattr(caching, "InTreeCacheLocator", None) or getattr(caching, private["locator"])
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, private["impl"])
    return caching, locator, impl


def _make_classes():
    caching, in_tree, _ = _classes()

    class FluidnetLocator(in_tree):
        """The machine code of a module in a fluidnet cache directory goes to its
        ``__pycache__`` (checked private by ``cache_dir``), never elsewhere."""

        @classmethod
        def from_function(cls, py_func, py_file):
            if not is_cache_dir(Path(py_file).parent):
                return None
            return cls(py_func, py_file)

        def ensure_cache_path(self) -> None:
            os.makedirs(self.get_cache_path(), mode=0o700, exist_ok=True)

    class VerifiedCacheFile(caching.IndexDataCacheFile):
        """numba's index and data files, checked against (and recorded in) the fluidnet
        cache index when they live in a fluidnet cache directory."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._fluidnet = _ours(self._cache_path)

        def _load_index(self):
            directory = self._fluidnet
            if directory is None:
                return super()._load_index()
            data = _verified(directory, Path(self._index_path))
            if data is None:
                return {}
            stream = io.BytesIO(data)
            if pickle.load(stream) != self._version:
                return {}
            stamp, overloads = pickle.loads(stream.read())
            return overloads if stamp == self._source_stamp else {}

        def _load_data(self, name):
            directory = self._fluidnet
            if directory is None:
                return super()._load_data(name)
            path = Path(self._data_path(name))
            data = _verified(directory, path)
            if data is None:
                raise _Unverified(f"{path} is missing or does not match the cache index")
            return pickle.loads(data)

        @contextlib.contextmanager
        def _open_for_write(self, filepath):
            directory = self._fluidnet
            if directory is None:
                with super()._open_for_write(filepath) as fh:
                    yield fh
                return
            digest = hashlib.sha256()
            name = f"__pycache__/{Path(filepath).name}"
            with (
                disk_errors(directory, f"write numba's machine code {name}"),
                file_lock(directory / (INDEX + ".lock")),
            ):
                with super()._open_for_write(filepath) as fh:
                    yield _Tee(fh, digest)
                record(directory, name, digest.hexdigest(), locked=True)

    return caching, FluidnetLocator, VerifiedCacheFile


def install() -> None:
    """Make numba verify and record the machine code of fluidnet's generated modules (see the
    module docstring). Idempotent; call before a generated module is run."""
    global _INSTALLED
    if _INSTALLED:
        return
    with _LOCK:
        if _INSTALLED:
            return
        caching, locator, cache_file = _make_classes()
        _, _, impl = _classes()
        # looked up by numba's Cache at creation; the module is untyped for pyright (ModuleType)
        caching.IndexDataCacheFile = cache_file  # pyright: ignore[reportAttributeAccessIssue]
        impl._locator_classes = [locator, *impl._locator_classes]
        _INSTALLED = True

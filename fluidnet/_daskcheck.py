"""xarray's test for dask arrays, answered without importing dask while dask is not imported.

xarray asks whether an array is a dask array each time it wraps one (``as_compatible_data``,
called for every variable of every Dataset), through ``array_type("dask")`` of
``xarray.namedarray.pycompat``. The first time, that imports ``dask.array`` when dask is
installed: 0.3 s on a 2-core machine, paid by the first chart of a process although no dask
array is anywhere in it (fluidnet's ``dask`` extra installs dask; a chart of 400 network
points took 1.05 s, 0.34 s of it that import).

No dask array can exist before ``dask.array`` is imported, so until then the answer to
``isinstance(x, dask.array.Array)`` is False for every ``x``, which an empty tuple of types
gives as well. :func:`install` puts in xarray's cache of duck-array modules an entry for dask
whose array types are ``(dask.array.Array,)`` once ``dask.array`` is in :data:`sys.modules`,
and ``()`` before: every isinstance test xarray makes has the answer it had, and dask is
imported when the user imports it. The entry's module, version and availability are looked
up when asked for (importing dask then, as xarray's own entry does at once).

Nothing is changed when xarray's cache is not the dictionary this expects (another xarray
version), when dask was imported already, or when xarray has its entry for dask already.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["install"]


def install() -> None:
    """Give xarray the dask entry described in the module notes, where it applies."""
    if "dask.array" in sys.modules:
        return
    try:
        pycompat = importlib.import_module("xarray.namedarray.pycompat")
    except ImportError:
        return
    cache = getattr(pycompat, "_cached_duck_array_modules", None)
    base = getattr(pycompat, "DuckArrayModule", None)
    if not isinstance(cache, dict) or not isinstance(base, type) or "dask" in cache:
        return
    cache["dask"] = _entry(base)


def _entry(base: type) -> Any:
    class DaskWhenImported(base):  # type: ignore[misc, valid-type]
        """xarray's entry for dask, resolved when dask is imported (see the module notes)."""

        def __init__(self) -> None:  # the attributes below are looked up when read
            pass

        @property
        def type(self) -> tuple:
            array = sys.modules.get("dask.array")
            return (array.Array,) if array is not None and hasattr(array, "Array") else ()

        @property
        def module(self) -> Any:
            try:
                return importlib.import_module("dask")
            except ImportError:
                return None

        @property
        def available(self) -> bool:
            return importlib.util.find_spec("dask") is not None

        @property
        def version(self) -> Any:
            from packaging.version import Version

            mod = self.module
            return Version(mod.__version__) if mod is not None else Version("0.0.0")

    return DaskWhenImported()

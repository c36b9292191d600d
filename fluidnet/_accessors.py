"""The ``ds.stability`` accessor on every :class:`xarray.Dataset`, after ``import fluidnet``.

A chart saved with ``ds.to_netcdf`` and opened again in a new process must still have
``ds.stability.plot()``, without importing the module that defines it. ``import fluidnet``
does not import xarray (that would cost every process its start-up time), so the accessor is
registered at the first of these moments:

* at ``import fluidnet``, when xarray is already imported;
* right after xarray is imported, when that happens later: a finder on :data:`sys.meta_path`
  sees the import of ``xarray``, lets the usual machinery load it, registers the accessor,
  and removes itself.

The registered class only forwards to :class:`fluidnet.stability.chart.StabilityAccessor`, so
that the analysis stack is imported when ``ds.stability`` is first used, not before.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

TYPE_CHECKING = False  # typing itself is not imported here: 7-11 ms of every import fluidnet
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

__all__ = ["install"]

ACCESSOR = "stability"


class _Stability:
    """``ds.stability``: see :class:`fluidnet.stability.chart.StabilityAccessor`."""

    def __new__(cls, ds: Any) -> Any:
        # resolved by name at run time, as fluidnet._lazy resolves the public names: this
        # module sits below every stage (the package's __init__ imports it)
        chart = importlib.import_module("fluidnet.stability.chart")
        return chart.StabilityAccessor(ds)


def _register(xr: ModuleType) -> None:
    if not hasattr(xr.Dataset, ACCESSOR):
        xr.register_dataset_accessor(ACCESSOR)(_Stability)
    from . import _daskcheck

    _daskcheck.install()  # no import of dask.array for xarray's test of dask arrays


class _AfterXarrayImport:
    """Registers the accessor once xarray's own import has run (a finder of
    :data:`sys.meta_path`; importlib.abc.MetaPathFinder is not imported for it, which would
    load importlib.resources, tempfile and shutil: 20 ms at every ``import fluidnet``)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "xarray":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)  # once; and so that the search below skips this finder
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _register(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install() -> None:
    """Make ``ds.stability`` available now (xarray imported) or as soon as xarray is."""
    xr = sys.modules.get("xarray")
    if xr is not None and hasattr(xr, "register_dataset_accessor"):
        _register(xr)
    elif not any(isinstance(f, _AfterXarrayImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterXarrayImport())

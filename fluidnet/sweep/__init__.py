"""Parameter sweeps: a function over many items, serially, on processes or on a Dask cluster,
with checkpoint stores that let a killed sweep resume.

An *executor* maps a picklable function over a list of items, keeps their order and shows a
tqdm progress bar:

* :class:`SerialExecutor` (the default): a plain loop in this process;
* :class:`ProcessExecutor`: a process pool, items sent in chunks (the function must be
  picklable: a module-level function or a picklable object, not a lambda or a closure); its
  workers exit when the parent dies;
* :class:`DaskExecutor`: a ``dask.distributed`` cluster (``pip install 'fluidnet[dask]'``):
  the current client, a new local cluster, a ``Client``, or a scheduler address.

Wherever a function takes ``executor=``, it accepts ``None`` or ``"serial"``, ``"processes"``,
an integer number of worker processes, ``"dask"``, a scheduler address such as
``"tcp://10.0.0.5:8786"``, a ``dask.distributed.Client``, one of the executor objects above,
or any :class:`concurrent.futures.Executor`.

Wherever a function takes ``store=``, it accepts a directory path or a :class:`Store`: finished
work is written there as it completes, and the same call with the same store computes only
what is missing (see :mod:`fluidnet.sweep.store`); the call includes the function's code and
what it reads (:mod:`fluidnet.sweep.signature`). Ctrl-C, SIGTERM and SIGHUP stop a sweep after
writing what finished (:mod:`fluidnet.sweep.signals`).

:func:`sweep` builds an :class:`xarray.Dataset` from a function of the grid parameters.

Examples
--------
>>> from fluidnet.sweep import sweep
>>> ds = sweep(lambda a, b: {"sum": a + b}, {"a": [0.0, 1.0], "b": [10.0, 20.0, 30.0]})
>>> ds["sum"].shape, float(ds["sum"].sel(a=1.0, b=20.0))
((2, 3), 21.0)
"""

from __future__ import annotations

from .._lazy import attach_stub

# Public names: the stub __init__.pyi lists them once (for type checkers too); each is
# imported from its module on first access (see fluidnet._lazy).
__getattr__, __dir__, __all__ = attach_stub(globals())

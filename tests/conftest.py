"""Shared test setup."""

import linecache

import matplotlib

matplotlib.use("Agg")

_checkcache = linecache.checkcache


def _checkcache_of_present_entries(filename=None):
    """``linecache.checkcache`` over the entries still there when each is checked.

    CPython 3.11's reads every entry of a snapshot of the cache's keys; sympy's ``lambdify``
    registers its generated source there and removes it when the function is collected, which
    the garbage collector can do in between: a doctest's debugger reset (``bdb.reset``) then
    failed with ``KeyError: '<lambdifygenerated-79>'`` (once in a full run of ``make test``).
    The replacement is put in place when pytest imports this module, before anything runs.
    """
    names = list(linecache.cache) if filename is None else [filename]
    for name in names:
        try:
            _checkcache(name)
        except KeyError:  # removed by a finalizer since the snapshot
            pass


linecache.checkcache = _checkcache_of_present_entries

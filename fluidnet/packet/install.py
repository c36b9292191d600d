"""Whether ns-3 is installed: the public check other stages use before a packet run.

The paper items of :mod:`fluidnet.papers` and the tests ask here before they run ns-3, so that a
machine without the ``packet`` extra gets one clear error (or a skipped test) instead of a
failure deep inside a run. Neither function imports ns-3 or cppyy.
"""

from __future__ import annotations

from . import _ns3

__all__ = ["ns3_available", "require_ns3"]


def ns3_available() -> bool:
    """Whether ns-3's Python bindings (the ``ns3`` package and cppyy) are installed.

    Returns
    -------
    bool
        ``True`` when both can be imported (neither is imported here).

    Examples
    --------
    >>> import fluidnet as fn
    >>> isinstance(fn.packet.ns3_available(), bool)
    True
    """
    return _ns3.available()


def require_ns3() -> None:
    """Raise :class:`~fluidnet.packet.NotInstalledError` unless ns-3 can be loaded.

    A paper item or a script that is about to run packet simulations calls this first.

    Returns
    -------
    None

    Raises
    ------
    NotInstalledError
        Naming the command that installs ns-3: ``pip install 'fluidnet[packet]'``.

    Examples
    --------
    >>> import fluidnet as fn
    >>> fn.packet.require_ns3()  # doctest: +SKIP
    """
    _ns3.require()

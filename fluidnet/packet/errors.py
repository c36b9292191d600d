"""Errors of the packet stage (all :class:`fluidnet.FluidnetError`).

``NotInstalledError``
    ns-3's Python bindings are not installed (``pip install 'fluidnet[packet]'``)
``PacketRunError``
    an ns-3 run failed: it crashed, was killed, timed out or raised; the message names the
    scenario, the seed and what the worker reported

A scenario that ns-3 cannot run (a buffer of 0, a rate of 0, an unknown AQM or transport) is a
:class:`fluidnet.ParameterError` naming the field, raised when the scenario is built.
"""

from __future__ import annotations

from ..errors import FluidnetError

__all__ = ["NotInstalledError", "PacketRunError"]


class NotInstalledError(FluidnetError, ImportError):
    """ns-3's Python bindings (the ``ns3`` package and cppyy) are not installed."""


class PacketRunError(FluidnetError, RuntimeError):
    """An ns-3 run failed (crash, signal, timeout or error); the message says which and why."""

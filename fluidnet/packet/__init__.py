"""Packet-level simulations with ns-3, next to the fluid models.

ns-3 comes from the ``ns3`` package: ``pip install 'fluidnet[packet]'``.
"""

from __future__ import annotations

from .._lazy import lazy_attributes

_LAZY = {
    "NotInstalledError": ".errors",
    "PacketRunError": ".errors",
}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = list(_LAZY)

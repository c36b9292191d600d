"""Packet-level simulations with ns-3, next to the fluid models.

Scenarios (:class:`Dumbbell`, :class:`ParkingLot`) are plain data; :func:`simulate` runs one in
ns-3 (each run in its own process, see :mod:`fluidnet.packet.runner`) and returns a
:class:`PacketRun`. ns-3 comes from the ``ns3`` package: ``pip install 'fluidnet[packet]'``.
"""

from __future__ import annotations

from .._lazy import attach_stub

# Public names: the stub __init__.pyi lists them once (for type checkers too); each is
# imported from its module on first access (see fluidnet._lazy).
__getattr__, __dir__, __all__ = attach_stub(globals())

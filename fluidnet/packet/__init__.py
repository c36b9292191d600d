"""Packet-level simulations with ns-3, next to the fluid models.

Scenarios (:class:`Dumbbell`, :class:`ParkingLot`) are plain data; :func:`simulate` runs one in
ns-3 (each run in its own process, see :mod:`fluidnet.packet.runner`) and returns a
:class:`PacketRun`. ns-3 comes from the ``ns3`` package: ``pip install 'fluidnet[packet]'``.
"""

from __future__ import annotations

from .._lazy import lazy_attributes

_LAZY = {
    "AQM": ".aqm",
    "DropTail": ".aqm",
    "RED": ".aqm",
    "PIE": ".aqm",
    "CoDel": ".aqm",
    "PI": ".aqm",
    "SBRM": ".aqm",
    "RCP": ".aqm",
    "Transport": ".transport",
    "Link": ".scenario",
    "Flows": ".scenario",
    "ShortFlows": ".scenario",
    "Scenario": ".scenario",
    "Dumbbell": ".scenario",
    "ParkingLot": ".scenario",
    "simulate": ".runner",
    "sweep": ".batch",
    "scenario_for": ".mapping",
    "fluid_view": ".mapping",
    "compare": ".comparison",
    "Comparison": ".comparison",
    "agreement_map": ".agreement",
    "AgreementMap": ".agreement",
    "summary": ".analysis",
    "queue_oscillation": ".analysis",
    "QueueOscillation": ".analysis",
    "PacketRun": ".results",
    "NotInstalledError": ".errors",
    "PacketRunError": ".errors",
}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = list(_LAZY)

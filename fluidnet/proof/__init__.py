"""Proved stability regions: interval-arithmetic enclosures, region certificates and their checker.

:func:`certify_region` proves, in rigorous ball arithmetic (arb, via python-flint), that a model's
linearization has the same number of characteristic roots in the right half-plane at every point
of a box of parameters (none: stable), or leaves undecided cells with the reason;
:func:`certified_chart` does it over a plane as an adaptive quadtree; a
:class:`RegionCertificate` saves to a plain JSON file that :func:`check_certificate` re-verifies
from the file alone. See ``docs/proofs.md``.
"""

from __future__ import annotations

from .._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(globals())

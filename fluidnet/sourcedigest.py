"""The hash of a compiled extension's C sources, as ``setup.py`` records it in the module.

Each extension module fluidnet builds (``fluidnet.dde._integrator``,
``fluidnet.linear._samples``) carries ``SOURCE_DIGEST``, the hash of the sources it was built
from; a checkout whose sources changed after the build compares the two and does not trust the
stale module.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["source_digest"]


def source_digest(directory: Path) -> str:
    """Hash of the C sources (``*.c``, ``*.h``) in ``directory``: their names and bytes, in
    sorted order (``setup.py`` computes the same for the module it builds)."""
    h = hashlib.sha256()
    for path in sorted(directory.glob("*.[ch]")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:20]

"""The compiled samples of ``det Delta`` through a Schur complement (``fluidnet.linear._samples``).

A network's characteristic determinant is sampled hundreds of thousands of times by a chart, a
boundary or a critical value (the argument principle's certificates, Newton's and Ehrlich and
Aberth's iterations). :meth:`fluidnet.linear.stacked.Stack.det_logderiv` evaluates it through
the Schur complement of the flows; the C kernel ``fluidnet/linear/src/samples.c``, built with
the package (``setup.py``), does each sample's arithmetic in one pass where NumPy makes some
thirty passes over blocks of samples (the 100-state network: about 2 us a sample against 7.6).
The NumPy code (``Stack._schur_part``) stays as the kernel's reference in the tests and as the
fallback where the module is not built or was built from other sources (a warning says how to
rebuild).
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from ..sourcedigest import source_digest

__all__ = ["compiled_samples"]

_REBUILD = "rebuild it with 'pip install .' (or 'pip install -e .' or make in a checkout)"


@lru_cache(maxsize=1)
def compiled_samples() -> ModuleType | None:
    """The compiled kernel ``fluidnet.linear._samples``, or ``None`` (with a
    :class:`RuntimeWarning`, once) where it is not built or a source checkout's C sources
    changed after its build: the samples are then NumPy's, the same values more slowly."""
    try:
        from . import _samples
    except ImportError as exc:
        warnings.warn(
            f"fluidnet's compiled samples of det Delta are not built ({exc}); large networks' "
            f"charts use NumPy's, several times slower: {_REBUILD}",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    src = Path(__file__).parent / "src"
    if src.is_dir() and source_digest(src) != _samples.SOURCE_DIGEST:
        warnings.warn(
            f"fluidnet's compiled samples {_samples.__file__} were built from other sources than "
            f"those in {src}; NumPy's are used instead: {_REBUILD}",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    return _samples

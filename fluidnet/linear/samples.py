"""The compiled samples of ``det Delta`` (``fluidnet.linear._samples``).

A chart, a boundary or a critical value samples a system's characteristic determinant hundreds
of thousands of times (the argument principle's certificates, Newton's and Ehrlich and
Aberth's iterations, the residual tests of roots). The C kernel ``fluidnet/linear/src/samples.c``,
built with the package (``setup.py``), does each sample's arithmetic in one pass where NumPy
makes some thirty passes over blocks of samples and factors each matrix twice (``det``, then
``solve``): through the Schur complement of a network's flows (``schur_samples``; the
100-state network's reduced system, 2.1 us a sample against 7.6) and on whole matrices of at
least :data:`~fluidnet.linear.stacked.DENSE_KERNEL_STATES` states (``dense_samples``; 15
states, 4.5 us against 17). Both also give ``||Delta^{-1} b||`` for the residual bound of
:meth:`~fluidnet.linear.stacked.Stack.residual_within`. ``dense_newton`` runs Newton's method
on ``det Delta`` of one whole system from many starts at once, each start's iteration to its
end in C (:class:`~fluidnet.linear.stacked.DenseKernel`: the refinement of a discretization's
eigenvalues, a root path's corrector). ``scaled_steps`` takes the scaled Newton steps of the
equilibrium search's many small real systems (:mod:`fluidnet.symbolic.densenewton`). The NumPy
code (``Stack._schur_part``, ``Stack._det_logderiv_lapack``, the iterations of
:func:`fluidnet.linear.newton.newton_roots` and of :func:`fluidnet.stability.crossing.newton_roots`,
``densenewton._step_numpy``) stays as the kernels' reference in the tests and as the fallback
where the module is not built or was built from other sources (a warning says how to rebuild).
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

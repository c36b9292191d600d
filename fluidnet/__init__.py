"""fluidnet — fluid models of congestion-control laws.

Write a law once as symbolic delay-differential equations; solve its equilibrium, linearize it
into a multi-delay linear DDE and loop transfer functions with exact delays, analyse stability,
integrate it as a nonlinear DDE, and regenerate the source papers' figures and tables.

The package is organised by stage, each building only on the ones before it:
:mod:`fluidnet.linear` (linear delay systems, roots, transfer functions),
:mod:`fluidnet.symbolic` (models, equilibria, linearization, loop gains), :mod:`fluidnet.dde`
(the nonlinear integrator), :mod:`fluidnet.stability` (frequency domain, charts, boundaries,
critical values, phase plane), :mod:`fluidnet.bifurcation` (Hopf normal forms, periodic orbits,
Floquet multipliers, continuation), then :mod:`fluidnet.models` and :mod:`fluidnet.papers`.
"""

import os as _os
import sys as _sys

# One OpenBLAS thread unless the user chose otherwise, set before NumPy loads OpenBLAS (it has
# no effect once NumPy is imported). OpenBLAS starts a thread per core at load, which spin
# for a while: 0.10-0.15 s of CPU in every short process here (import numpy: 0.25 s of CPU,
# 0.11 s with one thread), while fluidnet's analyses solve small dense problems where threads
# only cost (fluidnet.threads limits them anyway, and sets the variable while its analyses run
# for a library loaded then). Set OPENBLAS_NUM_THREADS to keep more.
if "numpy" not in _sys.modules:
    _os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from . import _accessors  # noqa: E402
from ._lazy import attach_stub as _attach_stub  # noqa: E402
from .errors import AnalysisError as AnalysisError
from .errors import CacheError as CacheError
from .errors import FluidnetError as FluidnetError
from .errors import IntegrationError as IntegrationError
from .errors import ModelError as ModelError
from .errors import OptionError as OptionError
from .errors import ParameterError as ParameterError
from .errors import StoreError as StoreError
from .explore import explore as explore  # noqa: E402 - named like its package: bound eagerly

__version__ = "0.1.0"


# Public names: the stub __init__.pyi lists them once (for type checkers too); each is
# imported from its module on first access (see fluidnet._lazy).
# ``fn.sympy`` is a convenience for notebooks (``fn.sympy.exp``), not a public name.
__getattr__, __dir__, __all__ = _attach_stub(globals(), {"sympy": "sympy"})

# ``ds.stability`` on every xarray Dataset, without importing xarray here (fluidnet._accessors)
_accessors.install()

# the compile cache keeps the pieces the symbolic stage builds (a model's steady-state code, its
# closed-form equilibria) between processes: fluidnet.stores, provided by fluidnet.codegen
from .codegen import pieces as _pieces  # noqa: E402,F401

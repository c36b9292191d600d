"""The compiled integrator: imported once, checked against its Python driver.

The integration loop is C (``fluidnet/dde/src``; ``kernel.h`` describes its data and the phases
of a step), compiled into the extension module ``fluidnet.dde._integrator`` when the package is
built (``setup.py``: ``pip install``, ``python -m build``, or in place by ``pip install -e .``
and ``make``). It is one function for every model and method: a model's own functions reach it
as machine addresses (see :mod:`fluidnet.codegen`), a method as the arrays of its tableau
(:mod:`fluidnet.dde.methods`), and nothing is compiled for it at run time.

:func:`integrator` imports the module and checks that it was built for this driver: the state
record (:data:`~fluidnet.dde._state.RUN_STATE`), the arrays of a run and the status codes must
be the ones the C code was compiled with, and in a source checkout the C sources must be the
ones it was built from (the build records their hash, ``SOURCE_DIGEST``). So an edit of the C
sources without a rebuild, or a module left from another version, is an :class:`ImportError`
that says how to rebuild, never a stale or misreading integrator. The module checks the type
and shape of every array of a run at every call (a ``TypeError`` or ``ValueError`` naming the
array) and releases the GIL while it integrates.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from ..sourcedigest import source_digest

__all__ = ["integrator", "source_digest"]

_REBUILD = "rebuild it with 'pip install .' (or 'pip install -e .' or make in a checkout)"


def _layout_errors(module: ModuleType) -> list[str]:
    """What differs between a compiled integrator and this driver (empty when they match)."""
    from . import _codes
    from ._state import (
        RUN_STATE,
        Discontinuities,
        FieldWork,
        History,
        Marks,
        Method,
        ModelData,
        Output,
        Run,
        StepWork,
    )
    from .methods import NCOEF

    kinds = {"f8": "d", "i8": "q", "b1": "?"}
    fields = cast("Mapping[str, tuple[Any, ...]] | None", RUN_STATE.fields)
    assert fields is not None and RUN_STATE.names is not None  # a structured dtype
    record = tuple(
        (name, fields[name][1], kinds.get(fields[name][0].str[1:], "!")) for name in RUN_STATE.names
    )
    groups = (ModelData, Method, FieldWork, History, StepWork, Marks, Discontinuities, Output)
    errors = []
    if module.STATE_FIELDS != record or module.STATE_SIZE != RUN_STATE.itemsize:
        errors.append("the state record")
    if module.RUN_FIELDS != tuple(zip(Run._fields, (g._fields for g in groups), strict=True)):
        errors.append("the arrays of a run")
    if {k: getattr(_codes, k, None) for k in module.CODES} != module.CODES:
        errors.append("the status and event codes")
    if module.NCOEF != NCOEF:
        errors.append("the dense-output degree")
    src = Path(__file__).parent / "src"
    if src.is_dir() and source_digest(src) != module.SOURCE_DIGEST:
        errors.append(f"the C sources in {src}, which changed after the build")
    return errors


@lru_cache(maxsize=1)
def integrator() -> ModuleType:
    """The compiled integrator, ``fluidnet.dde._integrator``, checked against this driver.

    Its function ``advance(st, run, budget)`` integrates a run (:func:`fluidnet.dde._state.new_run`)
    until its end, a failure or ``budget`` step attempts, and returns the status code
    (:mod:`fluidnet.dde._codes`).

    Raises
    ------
    ImportError
        When it is not built, or was built from other sources than this fluidnet's (the message
        names what differs and how to rebuild).
    """
    try:
        from . import _integrator
    except ImportError as exc:
        raise ImportError(
            f"fluidnet's compiled integrator is not built ({exc}): {_REBUILD}"
        ) from exc
    errors = _layout_errors(_integrator)
    if errors:
        raise ImportError(
            f"fluidnet's compiled integrator {_integrator.__file__} does not match this "
            f"fluidnet ({'; '.join(errors)}): {_REBUILD}"
        )
    return _integrator

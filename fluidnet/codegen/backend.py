"""Which backend compiles a model: C when a compiler works, numba otherwise.

``FLUIDNET_BACKEND=c|numba`` (or ``backend=``) forces one. :func:`c_model_library` gives the C
library of a model, or ``None`` when numba is to be used instead; :func:`jacobian_library` the
library (C) or module (numba) of a model's Jacobian, in the model's backend when it can.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import CacheError, ModelError, OptionError
from .build import CompilerUnavailable, known_broken
from .cache import cache_dir, read_index
from .clib import MODEL_NAMES, CLibrary
from .csource import Untranslatable, generate_c_jacobian_source, generate_c_source
from .keys import form_key
from .loading import c_library, load_generated, note_fallback
from .pysource import generate_jacobian_source

__all__ = ["backend_request", "c_model_library", "forced_c_error", "jacobian_library"]


def backend_request(backend: str | None) -> str:
    """``"auto"``, ``"c"`` or ``"numba"``: ``backend`` if given, else ``$FLUIDNET_BACKEND``.

    Raises
    ------
    OptionError
        For any other value (the message names where it came from).
    """
    where = "FLUIDNET_BACKEND" if backend is None else "backend"
    value = os.environ.get("FLUIDNET_BACKEND", "") if backend is None else backend
    if not isinstance(value, str):
        raise OptionError(f"{where} must be 'c', 'numba' or 'auto', not {value!r}")
    value = value.strip().lower() or "auto"
    if value not in ("auto", "c", "numba"):
        raise OptionError(f"{where} must be 'c', 'numba' or 'auto', not {value!r}")
    return value


def forced_c_error(form, exc: Exception) -> OptionError:
    """The error of a C backend that was asked for and cannot compile ``form``."""
    remedy = getattr(exc, "remedy", CompilerUnavailable.remedy)
    return OptionError(
        f"the C backend was requested (FLUIDNET_BACKEND=c or backend='c') but model "
        f"{form.name!r} cannot be compiled with it: {exc}. {remedy}"
    )


def c_model_library(form, key: str, forced: bool) -> CLibrary | None:
    """The model's library compiled by the C backend (its source is
    ``cache_dir() / f"fluidnet_cgen_{key}.c"``); ``None`` (to use numba) when the compiler does
    not work or C cannot express the model, unless ``forced``.

    Raises
    ------
    ModelError
        For a loop-gain form (external inputs), or (``forced``) a model C cannot express.
    OptionError
        When ``forced`` and the C compiler does not work.
    CacheError
        When the cached library does not describe the model.
    """
    if form.inputs:
        raise ModelError("cannot integrate a loop-gain form (it has external inputs)")
    stem = f"fluidnet_cgen_{key}"
    if not forced and known_broken():
        # no compiler: only a library cached by an earlier process can serve
        index = read_index(cache_dir())
        if not index or f"{stem}.so" not in index:
            return None
    try:
        lib = c_library(stem, lambda: generate_c_source(form), key, form.name, MODEL_NAMES)
    except CompilerUnavailable as exc:
        if forced:
            raise forced_c_error(form, exc) from None
        note_fallback(exc)
        return None
    except Untranslatable:
        if forced:
            raise
        return None
    if (lib.N_STATES, lib.N_LAGS, lib.N_PARAMS) != (form.n, len(form.lags), len(form.p)):
        raise CacheError(f"{lib.path} does not describe model {form.name!r} (sizes differ)")
    return lib


def jacobian_library(form, key: str, backend: str) -> Any:
    """The compiled Jacobian of a form whose model was compiled by ``backend`` with cache key
    ``key`` (generated, cached and verified like the model's own functions; see
    :func:`~fluidnet.codegen.loading.load_generated`): a C library for a model of the C backend
    (a numba module when the compiler stopped working since the model's library was cached,
    unless ``FLUIDNET_BACKEND=c``), else a numba module. Either way ``.jac.address`` is the
    function's machine address.

    Raises
    ------
    OptionError
        When ``FLUIDNET_BACKEND=c`` and the C compiler does not work.
    """
    lib = None
    if backend == "c":
        try:
            lib = c_library(
                f"fluidnet_cjac_{key}",
                lambda: generate_c_jacobian_source(form),
                key,
                f"Jacobian of {form.name}",
                ("jac",),
            )
        except CompilerUnavailable as exc:
            if backend_request(None) == "c":
                raise forced_c_error(form, exc) from None
            note_fallback(exc)
    if lib is None:
        lib = load_generated(
            f"fluidnet_jac_{form_key(form, 'numba')}",
            lambda: generate_jacobian_source(form),
            f"Jacobian of {form.name}",
        )
    return lib

"""Compiled models: made from a model (:func:`compile_form`), saved to a file and loaded back.

:func:`compile_form` compiles a canonical form's functions with the backend
:mod:`fluidnet.codegen.backend` chooses and returns a :class:`CompiledModel`, memoized per
process (the machine code is cached on disk, :mod:`fluidnet.codegen.cache`); its Jacobian is
compiled on first use (:func:`jacobian_address`).

:func:`save_compiled` writes a model's compiled functions (the C backend's shared objects, the
right-hand side's Jacobian included) with what :func:`fluidnet.simulate` needs to know about the
model (state and parameter names, default values and bounds, projected states, the lags and
switching surfaces as text, the equilibrium at the default parameters) to one file.
:func:`load_compiled` reads it back as a :class:`SavedModel`, which ``simulate`` (and
``simulate_ensemble``) accept in place of a :class:`fluidnet.Model`. Loading it imports neither
sympy nor numba nor the code generator: with the integrator built with the package
(:mod:`fluidnet.dde.engine`) a process that runs a saved model starts in a fraction of the time
a symbolic model takes (the analogue of jitcdde's ``module_location``).

A saved model is machine code for this kind of machine (processor architecture and operating
system, both recorded and checked on loading); it cannot be linearized or analysed (it has no
symbolic form: use the :class:`~fluidnet.Model`). Only load files you made or trust, as you
would only import modules you trust: loading runs the machine code inside (see
:func:`load_compiled`). What is checked is the file's consistency, not its intent: the file
records the SHA-256 of both libraries and a digest of its metadata (which names the model's
cache key, a hash of its equations), and a library whose bytes do not match — another model's,
or a truncated one, which would crash the interpreter when mapped — is refused *before* it is
loaded; then every field of the metadata is validated against the counts the library itself
reports (states, parameters, lags and the state each reads, switching surfaces), so that a
damaged or edited file is refused with a :class:`~fluidnet.StoreError` naming the field, never
run with arrays of the wrong length.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import math
import os
import platform
import re
import sys
import threading
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import FluidnetError, ModelError, OptionError, ParameterError, StoreError
from ..overrides import merge_params, parameter_value
from .clib import MODEL_NAMES, CLibrary, open_library
from .savedcheck import check_against_library, check_meta, identifier

if TYPE_CHECKING:
    from ..symbolic.canonical import DDEForm
    from ..symbolic.model import Model

__all__ = [
    "CompiledModel",
    "SavedModel",
    "compile_form",
    "compile_model",
    "jacobian_address",
    "load_compiled",
    "save_compiled",
]

FORMAT = "fluidnet-compiled-model"
#: 2: the libraries' SHA-256 and a digest of the metadata ("seal") are recorded (issue 33).
VERSION = 2
_META, _MODEL_SO, _JAC_SO = "meta.json", "model.so", "jac.so"


def _machine() -> dict[str, str]:
    return {"machine": platform.machine(), "platform": sys.platform}


# ------------------------------------------------------------------------------------- save
def _verified_bytes(lib: Any) -> bytes:
    """The bytes of a cached C library, checked against the cache index once more."""
    from .cache import verified_bytes  # the standard library only

    data = verified_bytes(Path(lib.path))
    if data is None:
        raise ModelError(f"the cached library {lib.path} changed since it was loaded: not saved")
    return data


def _seal(meta: Mapping[str, Any]) -> str:
    """The SHA-256 of a saved model's metadata (canonical JSON) without its ``seal`` field."""
    body = {k: v for k, v in meta.items() if k != "seal"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _save_target(path: str | os.PathLike, name: str) -> Path:
    """The file ``save_compiled`` writes, checked before anything is compiled.

    Raises
    ------
    OptionError
        For a directory, a path below a file or below a directory that does not exist.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise OptionError(f"path = {path!r}: give the name of the file to write (a str or Path)")
    target = Path(path)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "model"
    if target.is_dir():
        raise OptionError(
            f"path {target} is a directory: give the name of the file to write, such as "
            f"{target / (stem + '.fnc')}"
        )
    parent = target.parent
    for up in (parent, *parent.parents):
        if up.exists():
            if not up.is_dir():
                raise OptionError(
                    f"path {target}: {up} is a file, not a directory; give a path in a directory"
                )
            break
    if not parent.is_dir():
        raise OptionError(
            f"path {target}: the directory {parent} does not exist; create it first "
            f"(mkdir -p {parent})"
        )
    return target


def _lag_text(form, lag) -> dict[str, Any]:
    return {
        "state": int(lag.state),
        "delay": str(lag.delay),
        "label": form.lag_label(lag),
        "kind": str(lag.kind),
    }


def save_compiled(
    model: Model, path: str | os.PathLike, *, equilibrium: bool | Mapping[str, float] = True
) -> Path:
    """Save a model's compiled functions and what a simulation needs of the model to ``path``.

    Parameters
    ----------
    model : fluidnet.Model
    path : str or path-like
        The file to write (conventionally ``*.fnc``); replaced atomically if it exists.
    equilibrium : bool or dict
        The equilibrium at the default parameters, the history of the states a simulation of
        the saved model leaves out: computed (``True``, the default; a model whose equilibrium
        cannot be found is saved without one), given as ``{state: value}``, or none (``False``:
        every simulation then gives the history of every state).

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    OptionError
        When the C compiler does not work (saved models are C libraries), or ``path`` is a
        directory or lies below a file or a directory that does not exist.
    ModelError
        For a model that cannot be compiled for simulation.
    StoreError
        When the file cannot be written (a full disk, no permission, ...): says why.

    Examples
    --------
    >>> import fluidnet as fn, tempfile, os
    >>> x = fn.states("x")
    >>> kappa, T = fn.params("kappa T")
    >>> m = fn.Model(rhs={x: kappa * (1 - x(fn.t) * x(fn.t - T) ** 10)},
    ...              params={kappa: 0.2, T: 1.0}, name="kelly")
    >>> f = fn.save_compiled(m, os.path.join(tempfile.mkdtemp(), "kelly.fnc"),
    ...                      equilibrium={"x": 1.0})
    >>> saved = fn.load_compiled(f)
    >>> a = fn.simulate(saved, 50.0, history={"x": 0.5}, t_eval=[50.0])
    >>> b = fn.simulate(m, 50.0, history={"x": 0.5}, t_eval=[50.0])
    >>> bool(a["x"][0] == b["x"][0])
    True
    """
    from ..errors import AnalysisError

    target = _save_target(path, str(getattr(model, "name", "model")))
    cm = compile_model(model, backend="c")
    jacobian_address(cm)
    jac = _JACOBIANS[cm.key]
    form = cm.form
    eq = None
    if isinstance(equilibrium, Mapping):
        eq = {str(k): float(equilibrium[k]) for k in form.states}
    elif equilibrium:
        try:
            eq = {k: float(v) for k, v in model.equilibrium().items()}
        except (AnalysisError, ParameterError, ModelError, TypeError, ValueError):
            eq = None
    params = {}
    for name in form.params:
        p = model._params[name]
        lo, hi = p.bounds
        params[name] = {
            "value": None if p.value is None else float(p.value),
            "bounds": [None if lo is None else float(lo), None if hi is None else float(hi)],
        }
    model_so, jac_so = _verified_bytes(cm.module), _verified_bytes(jac)
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "key": cm.key,
        "name": model.name,
        "states": list(form.states),
        "params": params,
        "nonnegative": sorted(int(i) for i in form.nonnegative),
        "lags": [_lag_text(form, lag) for lag in form.lags],
        "surfaces": list(cm.surface_labels),
        "equilibrium": eq,
        "sizes": [cm.n, cm.nlag, cm.nswitch, cm.nparam],
        "sha256": {
            _MODEL_SO: hashlib.sha256(model_so).hexdigest(),
            _JAC_SO: hashlib.sha256(jac_so).hexdigest(),
        },
        **_machine(),
    }
    meta["seal"] = _seal(meta)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr(_META, json.dumps(meta, indent=1))
            z.writestr(_MODEL_SO, model_so)
            z.writestr(_JAC_SO, jac_so)
        os.replace(tmp, target)
    except OSError as exc:
        raise _write_error(target, exc) from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return target


def _write_error(target: Path, exc: OSError) -> FluidnetError:
    """The error of a saved model that could not be written to ``target``."""
    from ..diskfull import unwritable_errno, unwritable_reason, unwritable_remedy

    reason = unwritable_reason(exc)
    if reason is not None:
        remedy = unwritable_remedy(unwritable_errno(exc), "give path=")
        return StoreError(f"{target} cannot be written: {reason}. {remedy}")
    code = errno.errorcode.get(exc.errno or 0, "?")
    if exc.errno == errno.EISDIR:
        return OptionError(f"path {target} is a directory: give the name of a file to write")
    return StoreError(
        f"{target} cannot be written ({exc.strerror or exc}, {code}); give a path in a "
        "directory where you can write"
    )


# ------------------------------------------------------------------------------------- load
@dataclass(frozen=True)
class SavedLag:
    """A lag of a saved model: the state it reads, its delay and label as text."""

    state: int
    delay: str
    label: str
    kind: str


class SavedForm:
    """The facts of a saved model's canonical form that the integrator's driver reads."""

    def __init__(self, meta: Mapping[str, Any]):
        self.name = meta["name"]
        self.states = tuple(meta["states"])
        self.params = tuple(meta["params"])
        self.nonnegative = frozenset(meta["nonnegative"])
        self.lags = tuple(SavedLag(**lag) for lag in meta["lags"])
        self.n = len(self.states)

    def lag_label(self, lag: SavedLag) -> str:
        return lag.label


@dataclass(frozen=True)
class CompiledModel:
    """A model's compiled functions and the static facts the integrator needs (made by
    :func:`compile_form`, or loaded with a saved model).

    Attributes
    ----------
    key : str
        Hash of the form and backend; the cached module is ``fluidnet_gen_<key>.py`` (numba),
        the cached library ``fluidnet_cgen_<key>.so`` (C).
    form : DDEForm or SavedForm
    n, nlag, nswitch, nparam : int
    lag_state : ndarray of int64
        State index of each lag.
    lag_statedep : ndarray of int64
        1 for lags whose delay depends on states, other lags or ``t``.
    switch_lagdep : ndarray of int64
        1 for switching functions that depend on lagged values.
    nonnegative : ndarray of int64
        1 for projected states.
    addresses : ndarray of int64
        Machine addresses of ``rhs``, ``delay``, ``switch``, ``sgrad``.
    module : module or CLibrary
        The imported generated module, or the loaded C library
        (:class:`~fluidnet.codegen.clib.CLibrary`): it keeps the compiled functions alive.
        Either way ``module.rhs.address`` is an address and ``module.rhs.ctypes`` a callable.
    path : Path
        The generated source file (``.py`` or ``.c``), or the saved model's file.
    backend : str
        ``"c"`` (compiled by the system C compiler) or ``"numba"``.
    labels : tuple of str, optional
        The switching functions as text, when stored (a saved model has no symbolic form to
        write them from).
    jacobian : CLibrary, optional
        The library of ``jac`` when it came with the model (a saved model); otherwise it is
        generated on first use (:func:`jacobian_address`).
    """

    key: str
    form: Any
    n: int
    nlag: int
    nswitch: int
    nparam: int
    lag_state: np.ndarray
    lag_statedep: np.ndarray
    switch_lagdep: np.ndarray
    nonnegative: np.ndarray
    addresses: np.ndarray
    module: Any
    path: Path
    backend: str = "numba"
    labels: tuple[str, ...] | None = None
    jacobian: Any = None

    @classmethod
    def of(
        cls,
        form: DDEForm | SavedForm,
        key: str,
        module: ModuleType | CLibrary,
        path: Path,
        backend: str,
        **extra: Any,
    ) -> CompiledModel:
        """The compiled model of ``form`` whose functions and tables are ``module``'s."""
        return cls(
            key=key,
            form=form,
            n=form.n,
            nlag=len(form.lags),
            nswitch=module.N_SWITCHES,
            nparam=len(form.params),
            lag_state=np.array(module.LAG_STATE, dtype=np.int64).reshape(-1),
            lag_statedep=np.array(module.LAG_STATEDEP, dtype=np.int64).reshape(-1),
            switch_lagdep=np.array(module.SWITCH_LAGDEP, dtype=np.int64).reshape(-1),
            nonnegative=np.array(
                [1 if i in form.nonnegative else 0 for i in range(form.n)], dtype=np.int64
            ),
            addresses=np.array([getattr(module, f).address for f in MODEL_NAMES], np.int64),
            module=module,
            path=path,
            backend=backend,
            **extra,
        )

    def jacobian_address(self) -> int:
        """Machine address of the right-hand side's Jacobian (for linearly implicit methods)."""
        if self.jacobian is not None:
            return int(self.jacobian.jac.address)
        return jacobian_address(self)  # generated on first use (sympy)

    @cached_property
    def switches(self) -> tuple:
        """The switching surfaces, in the order of the weights ``w`` (recomputed on demand)."""
        from .arrayform import array_form  # sympy: a symbolic model's only

        return tuple(array_form(self.form).switches)

    @cached_property
    def surface_labels(self) -> tuple[str, ...]:
        """The switching functions as text, delayed values written ``x(t - (tau))``."""
        if self.labels is not None:
            return self.labels
        import sympy

        form = self.form
        names = {
            sympy.Symbol(f"x[{i}]", real=True): sympy.Symbol(n) for i, n in enumerate(form.states)
        }
        names.update(
            {sympy.Symbol(f"p[{j}]", real=True): sympy.Symbol(n) for j, n in enumerate(form.params)}
        )
        names.update(
            {
                sympy.Symbol(f"z[{k}]", real=True): sympy.Symbol(form.lag_label(lag))
                for k, lag in enumerate(form.lags)
            }
        )
        return tuple(str(sw.surface.xreplace(names)) for sw in self.switches)


class SavedModel:
    """A compiled model loaded by :func:`load_compiled`: simulate it like a
    :class:`fluidnet.Model` (``fn.simulate(saved, t_end, history=..., params=...)``).

    Made by :func:`load_compiled`, not by hand: the constructor checks what that function read.

    Parameters
    ----------
    path : Path
        The saved file.
    meta : mapping
        Its metadata (names, parameters, switching surfaces, cache key), checked field by field.
    lib, jac : CLibrary
        The loaded right-hand-side and Jacobian libraries, checked against ``meta``.

    Attributes
    ----------
    name : str
    state_names, param_names : tuple of str
    nonnegative : tuple of str
        The projected states.
    params : dict
        Default parameter values (``None``: must be given).
    path : Path
        The file it was loaded from.
    """

    def __init__(self, path: Path, meta: Mapping[str, Any], lib: CLibrary, jac: CLibrary):
        check_meta(path, meta)
        check_against_library(path, meta, lib, jac)
        self.path = path
        self.form = SavedForm(meta)
        self.name = str(meta["name"])
        self.state_names = self.form.states
        self.param_names = self.form.params
        self.nonnegative = tuple(self.state_names[i] for i in sorted(self.form.nonnegative))
        self.params = {k: v["value"] for k, v in meta["params"].items()}
        self._bounds = {k: tuple(v["bounds"]) for k, v in meta["params"].items()}
        self._equilibrium = meta.get("equilibrium")
        self.compiled = CompiledModel.of(
            self.form,
            str(meta["key"]),
            lib,
            path,
            "c",
            labels=tuple(meta["surfaces"]),
            jacobian=jac,
        )

    def __repr__(self) -> str:
        return (
            f"SavedModel({self.name!r}, states={list(self.state_names)}, "
            f"params={list(self.param_names)}, from {str(self.path)!r})"
        )

    def resolve_params(self, overrides: Mapping[str, Any] | None = None) -> dict[str, float]:
        """All parameter values as floats, defaults updated by ``overrides``.

        Names are read as in a :class:`~fluidnet.Model` (NFKC-normalized: the micro sign ``µ``
        is the Greek ``μ``).

        Parameters
        ----------
        overrides : dict, optional
            ``{name: value}`` replacing saved defaults for this call.

        Returns
        -------
        dict
            ``{name: float}`` for every parameter, in the saved order.

        Raises
        ------
        ParameterError
            For an unknown name, a missing value, a value that is not a finite number or out of
            its bounds, or values at which a delay that depends on parameters only is negative
            or not finite (as a :class:`~fluidnet.Model` refuses them).
        ModelError
            For two spellings of one name.
        """
        given = dict(overrides or {})
        named: dict[str, Any] = {}
        spelled: dict[Any, Any] = {}
        for k, v in given.items():
            # the saved names are identifiers as Python reads them (NFKC), as in a Model
            n = identifier(k) if isinstance(k, str) else k
            if n in named:  # as a Model refuses them (a ModelError)
                raise ModelError(
                    f"parameter {n!r} is given twice: {spelled[n]!r} and {k!r} are one "
                    "identifier once Unicode-normalized (NFKC), as Python reads names"
                )
            named[n], spelled[n] = v, k
        for k in named:
            if k not in self.params:
                known = ", ".join(self.param_names) or "none"
                raise ParameterError(
                    f"{spelled[k]!r} is not a parameter of model {self.name!r} "
                    f"(parameters: {known})"
                )
        out = {}
        for k, default in self.params.items():
            v = named.get(k, default)
            if v is None:
                raise ParameterError(
                    f"parameter {k!r} of model {self.name!r} has no value; give it in params="
                )
            # a real number, as everywhere (fluidnet.overrides): text such as "0.3" is refused
            v = parameter_value(f"parameter {k!r}", v)
            lo, hi = self._bounds[k]
            if lo is not None and v < lo:
                raise ParameterError(
                    f"parameter {k!r}: value {v:g} is below its lower bound {lo:g}"
                )
            if hi is not None and v > hi:
                raise ParameterError(
                    f"parameter {k!r}: value {v:g} is above its upper bound {hi:g}"
                )
            out[k] = v
        self._check_delays(out)
        return out

    def _check_delays(self, values: Mapping[str, float]) -> None:
        """The delays that depend on parameters only, evaluated by the compiled ``delay``
        function, are finite and >= 0 (the integrator would refer to the future, or stall)."""
        lags = [(k, lag) for k, lag in enumerate(self.form.lags) if lag.kind == "parameter"]
        if not lags:
            return
        cm = self.compiled
        dp = ctypes.POINTER(ctypes.c_double)
        x, z = np.zeros(max(1, cm.n)), np.zeros(max(1, cm.nlag))
        p = np.array([values[k] for k in self.param_names] or [0.0], dtype=np.float64)
        w, aux, out = np.zeros(max(1, cm.nswitch)), np.zeros(1), np.zeros(1)
        args = [a.ctypes.data_as(dp) for a in (x, z, p, w, aux, out)]
        f = cm.module.delay.ctypes
        for k, lag in lags:
            aux[0] = k
            f(0.0, *args)
            tau = float(out[0])
            if math.isfinite(tau) and tau >= 0:
                continue
            used = {
                n: values[n]
                for n in self.param_names
                if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", lag.delay)
            }
            raise ParameterError(
                f"delay {lag.delay} of {lag.label} evaluates to {tau:g} with {used}; delays must "
                "be real and >= 0"
            )

    def equilibrium(
        self, *, params: Mapping[str, Any] | None = None, **overrides: Any
    ) -> dict[str, float]:
        """The equilibrium at the default parameters, as computed when the model was saved.

        Parameters
        ----------
        params : dict, optional
            Parameter values ``{name: value}``; accepted only when they equal the defaults.
        **overrides
            Parameter values as keywords (the same as ``params``).

        Raises
        ------
        ModelError
            At other parameter values, or when it was not available (a saved model has no
            symbolic form to solve): give the history of every state instead.
        """
        asked = self.resolve_params(merge_params(params, overrides, "SavedModel.equilibrium"))
        if self._equilibrium is None or asked != self.resolve_params({}):
            raise ModelError(
                f"saved model {self.name!r} knows its equilibrium only at the default "
                "parameters (when it was found at saving): give the history of every state"
            )
        return dict(self._equilibrium)

    def lag_delays(
        self, values: Mapping[str, float], t0: float, value_at: Callable[[int, float], float]
    ) -> list[float]:
        """The delays of the lags at ``t0`` (in order, each lag's value read from the history
        through ``value_at(state, time)``), by the compiled ``delay`` function.

        A lag's delay may depend on the values of the lags before it, which are read from the
        history as each delay becomes known.

        Parameters
        ----------
        values : dict
            ``{name: float}`` for every parameter, as :meth:`resolve_params` returns.
        t0 : float
            The time at which the delays are evaluated (the start of the integration).
        value_at : callable
            ``value_at(state_index, time) -> float``: the history of the state with that index
            (in ``state_names`` order) at ``time``.

        Returns
        -------
        list of float
            One delay per lag of the saved form; a lag whose delay is not finite is returned as
            such and its value is not read.
        """
        cm = self.compiled
        dp = ctypes.POINTER(ctypes.c_double)
        x = np.array([value_at(i, t0) for i in range(cm.n)], dtype=np.float64)
        z = np.zeros(max(1, cm.nlag))
        p = np.array([values[k] for k in self.param_names] or [0.0], dtype=np.float64)
        w = np.zeros(max(1, cm.nswitch))
        aux, out = np.zeros(1), np.zeros(1)
        f = cm.module.delay.ctypes
        taus = []
        for k, lag in enumerate(self.form.lags):
            aux[0] = k
            f(t0, *(a.ctypes.data_as(dp) for a in (x, z, p, w, aux, out)))
            tau = float(out[0])
            taus.append(tau)
            if math.isfinite(tau):
                z[k] = value_at(lag.state, t0 - tau)
        return taus


def load_compiled(path: str | os.PathLike) -> SavedModel:
    """Load a model saved by :func:`save_compiled` (see :class:`SavedModel`).

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save_compiled`.

    Returns
    -------
    SavedModel

    Raises
    ------
    OptionError
        When ``path`` is not a saved model, or was saved on another kind of machine or by
        another version of fluidnet.
    StoreError
        When a library does not match the SHA-256 recorded when the model was saved (another
        model's library, a damaged or truncated one: checked before it is loaded), the metadata
        does not match its recorded digest, or a field of it is missing, of the wrong type, or
        disagrees with the library it describes (the number of states, parameters, lags,
        switching surfaces, the state a lag reads, an index out of range, a key that is not a
        hash, ...): the message names the field. A damaged or edited file is refused before
        anything is simulated.
    CacheError
        When the compile cache (where the libraries are loaded from private copies) is on a
        file system mounted ``noexec``, or cannot be written.

    Warnings
    --------
    **Loading a saved model runs native code.** The file holds shared libraries (machine code)
    that are loaded into this process, as :mod:`pickle` runs code and ``import`` runs a module:
    loading a file runs whatever its author put in it, with your permissions, before any
    check of fluidnet's can help. The checks (platform, format version, every metadata field
    against the library's own counts) catch damaged and inconsistent files, not malicious
    ones. Only load files you made yourself or received from someone you trust, over a channel
    you trust.
    """
    from ..errors import CacheError
    from .cache import cache_dir, noexec  # the standard library only

    if not isinstance(path, (str, os.PathLike)):
        raise OptionError(f"path = {path!r}: give the file a model was saved to (a str or Path)")
    path = Path(path)
    if path.is_dir():
        raise OptionError(
            f"{path} is a directory, not a saved fluidnet model: give the file save_compiled "
            "wrote (conventionally *.fnc)"
        )
    try:
        with zipfile.ZipFile(path) as z:
            meta = json.loads(z.read(_META))
            model_so, jac_so = z.read(_MODEL_SO), z.read(_JAC_SO)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise OptionError(f"{path} is not a saved fluidnet model ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise OptionError(f"{path} is not a saved fluidnet model")
    if meta.get("version") != VERSION:
        why = (
            ", whose libraries carry no digests to check before they are loaded"
            if meta.get("version") == 1
            else ""
        )
        raise OptionError(
            f"{path} was saved by another version of fluidnet (format {meta.get('version')}"
            f"{why}; this one reads {VERSION}): save the model again"
        )
    here = _machine()
    there = {k: meta.get(k) for k in here}
    if there != here:
        raise OptionError(
            f"{path} holds machine code for {there['machine']}/{there['platform']}, not "
            f"{here['machine']}/{here['platform']}: save the model again on this machine"
        )
    check_meta(path, meta)  # every field's type and shape, before the libraries are loaded
    for member, data in ((_MODEL_SO, model_so), (_JAC_SO, jac_so)):
        if hashlib.sha256(data).hexdigest() != meta["sha256"][member]:  # before it is mapped
            raise StoreError(
                f"{path}: its library {member} ({len(data)} bytes) does not match the SHA-256 "
                f"recorded when model {meta['name']!r} was saved (another model's library, or "
                "a damaged or truncated one): not loaded. Save the model again"
            )
    directory = cache_dir()  # private: the libraries are loaded from copies there
    if noexec(directory):
        raise CacheError(
            f"{path}: its machine code cannot be loaded from the compile cache {directory}, "
            "which is on a file system mounted noexec (saved libraries are loaded from private "
            "copies there). Set FLUIDNET_CACHE to a directory on a file system that allows "
            "running programs"
        )
    stem = f"saved_{meta['key']}"
    try:
        lib = open_library(model_so, directory / f"{stem}.so", MODEL_NAMES)
        jac = open_library(jac_so, directory / f"{stem}_jac.so", ("jac",))
    except OSError as exc:
        raise OptionError(f"{path}: its machine code cannot be loaded here ({exc})") from exc
    saved = SavedModel(path, meta, lib, jac)  # checks the metadata against the libraries
    if meta["seal"] != _seal(meta):  # what the checks above cannot see: a value, a bound, ...
        raise StoreError(
            f"{path}: its metadata does not match the digest recorded when model "
            f"{meta['name']!r} was saved (edited or damaged): save the model again"
        )
    return saved


# ---------------------------------------------------------------------------------- compile
_LOCK = threading.Lock()
_MEMO: dict[str, CompiledModel] = {}
_JACOBIANS: dict[str, Any] = {}


def jacobian_address(cm: CompiledModel) -> int:
    """Machine address of the compiled Jacobian of a compiled model (generated, cached and
    verified like the model's own functions, on first use; see
    :func:`fluidnet.codegen.backend.jacobian_library`).

    A model of the C backend gets a C Jacobian; when the compiler stopped working since the
    model's library was cached, a numba one (unless ``FLUIDNET_BACKEND=c``).

    Raises
    ------
    OptionError
        When ``FLUIDNET_BACKEND=c`` and the C compiler does not work.
    """
    if cm.jacobian is not None:  # a saved model's, loaded with it
        return int(cm.jacobian.jac.address)
    from .backend import jacobian_library  # sympy: generated from the symbolic form

    with _LOCK:
        lib = _JACOBIANS.get(cm.key)
        if lib is None:
            lib = _JACOBIANS[cm.key] = jacobian_library(cm.form, cm.key, cm.backend)
        return int(lib.jac.address)


def compile_form(form: DDEForm, backend: str | None = None) -> CompiledModel:
    """Generate, cache and compile the functions of a :class:`~fluidnet.symbolic.canonical.DDEForm`.

    Two backends compile the same functions: the system C compiler (``"c"``: about 0.1 s for
    a small model, and loading a cached library needs neither a compiler nor numba) and numba
    (``"numba"``: 1-3 s for a small model). By default (``"auto"``) C is used when a compiler
    works (``$CC``, else ``cc`` or ``gcc``) and numba otherwise; the environment variable
    ``FLUIDNET_BACKEND`` or ``backend`` chooses one. The result records the backend used.

    The result is memoized per process; the generated code and machine code are cached on disk
    (see :func:`~fluidnet.codegen.cache.cache_dir`), so another process with the same model
    structure does not recompile. Generated code is run only when its bytes match the hash
    recorded when it was written; a file found corrupt is discarded and compiled again (with one
    warning). A file lock makes concurrent processes compile a model once.

    Parameters
    ----------
    form : DDEForm
    backend : {"auto", "c", "numba"}, optional
        Default: ``$FLUIDNET_BACKEND``, else ``"auto"``.

    Raises
    ------
    ModelError
        For a form that cannot be integrated (external inputs, unsupported switching
        conditions) or generated code the compiler rejects (the message names the file).
    OptionError
        For an unknown backend, or ``"c"`` requested when the C compiler does not work (the
        message names the command and what it printed).
    CacheError
        When the cache directory is unsafe (see :func:`~fluidnet.codegen.cache.cache_dir`).
    """
    from .backend import backend_request, c_model_library
    from .cache import cache_dir, file_lock
    from .keys import form_key
    from .loading import load_numba_model

    want = backend_request(backend)
    with _LOCK:
        if want != "numba":
            key = form_key(form, "c")
            if key in _MEMO:
                return _MEMO[key]
            lib = c_model_library(form, key, forced=want == "c")
            if lib is not None:
                path = cache_dir() / f"fluidnet_cgen_{key}.c"
                compiled = _MEMO[key] = CompiledModel.of(form, key, lib, path, "c")
                return compiled
        key = form_key(form, "numba")
        if key in _MEMO:
            return _MEMO[key]
        directory = cache_dir()
        path = directory / f"fluidnet_gen_{key}.py"
        with file_lock(directory / f"fluidnet_gen_{key}.lock"):
            module, _ = load_numba_model(form, key, path)
        compiled = CompiledModel.of(form, key, module, path, "numba")
        _MEMO[key] = compiled
        return compiled


def compile_model(model: Model, backend: str | None = None) -> CompiledModel:
    """The :class:`CompiledModel` of a :class:`fluidnet.Model` (see :func:`compile_form`)."""
    from .backend import backend_request

    want = backend_request(backend)
    return model.cached(f"compiled integrator ({want})", lambda: compile_form(model.form, want))

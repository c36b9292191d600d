"""Loading a compiled model library (the C backend's shared object) with ctypes.

Only the standard library and nothing of sympy or numba: a process that runs cached or saved
compiled models (:mod:`fluidnet.codegen.compiled`) loads them through this module.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from .cache import private_copy

__all__ = ["CFunction", "CLibrary", "MODEL_NAMES", "SYMBOL", "open_library"]

#: The exported names of the model functions in a library.
SYMBOL = {
    "rhs": "fluidnet_rhs",
    "delay": "fluidnet_delay",
    "switch": "fluidnet_switch",
    "sgrad": "fluidnet_sgrad",
    "jac": "fluidnet_jac",
}
#: The functions of a model library (a Jacobian library has ``("jac",)``).
MODEL_NAMES = ("rhs", "delay", "switch", "sgrad")

_FUNC = ctypes.CFUNCTYPE(None, ctypes.c_double, *[ctypes.POINTER(ctypes.c_double)] * 6)


class CFunction:
    """A function of a loaded library: ``address`` (for the integrator) and ``ctypes`` (a
    callable, for tests and Python callers), like a numba ``cfunc``."""

    __slots__ = ("address", "ctypes", "name")

    def __init__(self, name: str, cdll: ctypes.CDLL):
        self.name = name
        self.ctypes = _FUNC((SYMBOL[name], cdll))
        self.address = ctypes.cast(self.ctypes, ctypes.c_void_p).value


class CLibrary:
    """A loaded model library (keeps the shared object mapped while referenced).

    Attributes ``rhs``, ``delay``, ``switch``, ``sgrad`` (or ``jac``) are :class:`CFunction`;
    ``N_STATES``, ``N_LAGS``, ``N_SWITCHES``, ``N_PARAMS``, ``LAG_STATE``, ``LAG_STATEDEP`` and
    ``SWITCH_LAGDEP`` are read from the library, like the constants of a numba module.
    """

    def __init__(self, cdll: ctypes.CDLL, names: tuple[str, ...], path: Path):
        self.cdll = cdll
        self.path = path
        for name in names:
            setattr(self, name, CFunction(name, cdll))
        size = ctypes.c_int64.in_dll(cdll, "fluidnet_info_size").value
        info = list((ctypes.c_int64 * size).in_dll(cdll, "fluidnet_info"))
        n, nlag, nsw, npar = info[:4]
        if size != 4 + 2 * nlag + nsw:
            raise OSError(f"{path}: inconsistent table fluidnet_info")
        self.N_STATES, self.N_LAGS, self.N_SWITCHES, self.N_PARAMS = n, nlag, nsw, npar
        self.LAG_STATE = tuple(info[4 : 4 + nlag])
        self.LAG_STATEDEP = tuple(info[4 + nlag : 4 + 2 * nlag])
        self.SWITCH_LAGDEP = tuple(info[4 + 2 * nlag :])


def open_library(data: bytes, path: Path, names: tuple[str, ...]) -> CLibrary:
    """Load the verified library bytes ``data`` (the cached file ``path``).

    The library is loaded from a private copy of ``data`` (see
    :func:`~fluidnet.codegen.cache.private_copy`).

    Raises
    ------
    OSError
        When the dynamic loader refuses the library or a function is missing.
    """
    with private_copy(data, path) as tmp:
        cdll = ctypes.CDLL(str(tmp), mode=os.RTLD_LOCAL | os.RTLD_NOW)
        try:
            return CLibrary(cdll, names, path)
        except (AttributeError, ValueError) as exc:
            raise OSError(f"{path}: {exc}") from exc

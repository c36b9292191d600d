"""Loading a compiled model library (the C backend's shared object) with ctypes.

Only the standard library and nothing of sympy or numba: a process that runs cached or saved
compiled models (:mod:`fluidnet.dde.compiled`) loads them through this module.
"""

from __future__ import annotations

import ctypes
import itertools
import os
from pathlib import Path

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
_SERIAL = itertools.count()


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

    The bytes are written to a new file of a unique name in the same private directory,
    loaded from there and the file removed: what runs is exactly what was verified (not
    whatever the cached file holds by then), and a library rebuilt in this process is never
    mistaken by the dynamic loader for one it loaded before under the same name.

    Raises
    ------
    OSError
        When the dynamic loader refuses the library or a function is missing.
    """
    tmp = path.parent / f".load-{os.getpid()}-{next(_SERIAL)}-{path.stem}.so"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o700)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        cdll = ctypes.CDLL(str(tmp), mode=os.RTLD_LOCAL | os.RTLD_NOW)
        try:
            return CLibrary(cdll, names, path)
        except (AttributeError, ValueError) as exc:
            raise OSError(f"{path}: {exc}") from exc
    finally:
        _unlink(tmp)


def _unlink(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass

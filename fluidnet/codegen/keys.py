"""Cache keys of generated code: a hash of everything that determines it.

A key covers the form's structure (not its parameter values), the backend, the version of the
machine code's producer (numba and Python, or the platform for C) and the source of the
generator itself, so that a change of the generator regenerates every cached module.
"""

from __future__ import annotations

import hashlib
import platform
import sys
from functools import lru_cache
from pathlib import Path

import sympy

from .arrayform import CODEGEN_VERSION

__all__ = ["form_key"]

_HERE = Path(__file__).parent
#: The modules whose source decides the generated code of each backend.
_GENERATOR = {
    "numba": ("arrayform", "jacobians", "keys", "printers", "statements", "pysource"),
    "c": ("arrayform", "jacobians", "keys", "printers", "statements", "csource", "clib"),
}


@lru_cache(maxsize=2)
def _generator_digest(backend: str = "numba") -> str:
    """Hash of the generator's source (the modules of ``backend`` in :data:`_GENERATOR`, and
    the extraction of switches): a change of the generator regenerates every module of its
    backend."""
    files = [_HERE / f"{name}.py" for name in _GENERATOR[backend]]
    files.append(_HERE.parent / "symbolic" / "switches.py")
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:16]


def _structure(e: sympy.Basic, atoms: dict) -> str:
    """A deterministic description of an expression tree: ``srepr`` of its atoms joined by
    the classes of its nodes in sympy's canonical argument order (a process-independent
    order), 15x faster than ``srepr`` of a large network's equations (which sorts terms for
    printing)."""
    if e.is_Atom:
        text = atoms.get(e)
        if text is None:
            text = atoms[e] = sympy.srepr(e)
        return text
    return f"{type(e).__name__}({','.join(_structure(a, atoms) for a in e.args)})"


def form_key(form, backend: str = "numba") -> str:
    """Hash of everything that determines the generated code of ``backend`` (``"c"`` or
    ``"numba"``; not the parameter values)."""
    parts = [CODEGEN_VERSION, _generator_digest(backend), backend]
    if backend == "numba":
        import numba

        parts += [numba.__version__, sys.version.split()[0]]
    else:
        parts += [sys.platform, platform.machine()]
    parts += [
        repr(form.states),
        repr(form.params),
        repr(form.nonnegative),
        repr(form.inputs),
    ]
    atoms: dict = {}
    parts += [f"{lag.symbol.name}|{lag.state}|{_structure(lag.delay, atoms)}" for lag in form.lags]
    parts += [_structure(e, atoms) for e in form.rhs]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]

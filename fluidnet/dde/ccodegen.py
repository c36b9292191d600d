"""The C backend of code generation: a model's functions as C, compiled by the system compiler.

:mod:`fluidnet.dde.codegen` generates a model's four functions (``rhs``, ``delay``, ``switch``,
``sgrad``; and ``jac`` for linearly implicit methods) from its canonical form. This module
writes them as C with the same signature ``void f(double t, double *x, double *z, double *p,
double *w, double *aux, double *out)`` and the same semantics as the numba functions:

* the same symbolic preparation, common subexpressions and loops over repeated structure (the
  loop generator of :mod:`~fluidnet.dde.codegen` is shared, only the statements are written
  differently, see :class:`_CLang`);
* the same arithmetic in the same order: integer powers by the repeated squaring numba uses,
  ``max``/``min`` with Python's rule (an argument replaces the running value only when
  strictly greater/smaller), ``Heaviside`` with its value at zero, ``sign``, Python's ``%``,
  rationals as doubles; no ``-ffast-math``, so division by zero gives inf or nan (numba's
  ``error_model="numpy"``) and no operation is reassociated;
* ``delay`` dispatches on ``int(aux[0])`` and returns NaN for an unknown lag index.

A library is compiled with ``$CC`` (else ``cc`` or ``gcc`` found on the ``PATH``) as
``-O2 -fPIC -shared`` (``-O1`` for very large sources) and linked with ``-lm``. Loading one is
plain :mod:`ctypes` (:mod:`fluidnet.dde.clib`): no numba is imported. The cache (verified
bytes, file locks, atomic writes) is :mod:`fluidnet.dde.cache`.
"""

from __future__ import annotations

import errno
import math
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import numpy as np
import sympy
from sympy.printing.c import C99CodePrinter
from sympy.printing.precedence import precedence

from ..errors import ModelError
from .cache import disk_errors
from .clib import (  # noqa: F401 - re-exported
    MODEL_NAMES,
    SYMBOL,
    CFunction,
    CLibrary,
    _unlink,
    open_library,
)

__all__ = [
    "CLibrary",
    "CompilerUnavailable",
    "MODEL_NAMES",
    "Untranslatable",
    "compile_library",
    "compiler_command",
    "generate_c_jacobian_source",
    "generate_c_source",
    "open_library",
]

#: Sources longer than this many bytes are compiled with ``-O1`` (``-O2`` costs several times
#: more compile time on very large straight-line functions for little speed).
O1_ABOVE_BYTES = 200_000

#: Looped temporaries of a function up to this many doubles live on the stack, beyond it in
#: one heap block (a large network's per-flow values).
STACK_DOUBLES = 16_384


class Untranslatable(ModelError):  # noqa: N818 - reads as a property of the model
    """A model uses a function that has no C counterpart here (the numba backend may have)."""


# --------------------------------------------------------------------------------- printing
class _CPrinter(C99CodePrinter):
    """C expressions with the numba printer's semantics (see the module docstring)."""

    def __init__(self):
        super().__init__({"strict": True})

    def _print_Integer(self, expr):
        return repr(float(int(expr)))  # doubles: no integer division or overflow in C

    def _print_Rational(self, expr):
        return self._print_Float(expr)

    def _print_Half(self, expr):
        return "0.5"

    def _print_Float(self, expr):
        v = float(expr)
        if math.isnan(v):
            return "NAN"
        if math.isinf(v):
            return "INFINITY" if v > 0 else "(-INFINITY)"
        return repr(v)

    def _print_NumberSymbol(self, expr):
        return self._print_Float(sympy.Float(expr.evalf(20)))

    _print_Pi = _print_Exp1 = _print_GoldenRatio = _print_EulerGamma = _print_NumberSymbol
    _print_Catalan = _print_NumberSymbol

    def _print_Infinity(self, expr):
        return "INFINITY"

    def _print_NegativeInfinity(self, expr):
        return "(-INFINITY)"

    def _print_NaN(self, expr):
        return "NAN"

    def _print_Pow(self, expr):
        # the cases of sympy's Python printer, which the numba backend uses
        prec = precedence(expr)
        base, exp = expr.base, expr.exp
        if exp == sympy.S.Half:
            return f"sqrt({self._print(base)})"
        if expr.is_commutative:
            if -exp is sympy.S.Half:
                return f"1.0/sqrt({self._print(base)})"
            if exp is sympy.S.NegativeOne:
                return f"1.0/{self.parenthesize(base, prec, strict=False)}"
        if exp.is_Integer and abs(int(exp)) <= 0x10000:
            return f"fn_powi({self._print(base)}, {int(exp)})"
        return f"pow({self._print(base)}, {self._print(exp)})"

    def _print_Heaviside(self, expr):
        h0 = float(expr.args[1]) if len(expr.args) > 1 else 0.5
        return f"fn_heaviside({self._print(expr.args[0])}, {self._print_Float(h0)})"

    def _print_sign(self, expr):
        return f"fn_sign({self._print(expr.args[0])})"

    def _minmax(self, func: str, args) -> str:
        acc = self._print(args[0])
        for a in args[1:]:
            acc = f"{func}({acc}, {self._print(a)})"
        return acc

    def _print_Max(self, expr):
        return self._minmax("fn_max", expr.args)

    def _print_Min(self, expr):
        return self._minmax("fn_min", expr.args)

    def _print_Mod(self, expr):
        a, b = expr.args
        return f"fn_mod({self._print(a)}, {self._print(b)})"

    def _print_Piecewise(self, expr):
        acc = "NAN" if expr.args[-1].cond is not sympy.true else None
        pieces = list(expr.args)
        if acc is None:
            acc = f"({self._print(pieces.pop().expr)})"
        for e, c in reversed(pieces):
            acc = f"(({self._print(c)}) ? ({self._print(e)}) : {acc})"
        return acc

    def _print_BooleanTrue(self, expr):
        return "1"

    def _print_BooleanFalse(self, expr):
        return "0"


_PRELUDE = r"""#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static inline double fn_powi(double a, int n)
{
    /* a**n by repeated squaring, the order of numba's integer power */
    int e = n < 0 ? -n : n;
    double r = 1.0;
    while (e != 0) {
        if (e & 1)
            r *= a;
        e >>= 1;
        a *= a;
    }
    return n < 0 ? 1.0 / r : r;
}

static inline double fn_max(double a, double b) { return b > a ? b : a; }
static inline double fn_min(double a, double b) { return b < a ? b : a; }

static inline double fn_heaviside(double a, double h0)
{
    return a > 0.0 ? 1.0 : (a < 0.0 ? 0.0 : h0);
}

static inline double fn_sign(double a) { return a > 0.0 ? 1.0 : (a < 0.0 ? -1.0 : 0.0); }

static inline double fn_mod(double a, double b)
{
    /* Python's float %: the sign of the divisor */
    double m = fmod(a, b);
    if (m != 0.0) {
        if ((b < 0.0) != (m < 0.0))
            m += b;
    } else {
        m = copysign(0.0, b);
    }
    return m;
}
"""


class _CLang:
    """How generated statements are written in C (the counterpart of ``codegen._PyLang``).

    Looped temporaries are slices of one workspace ``_wk`` of the function; :meth:`wrap`
    declares it (on the stack, or on the heap when large) once the body is known.
    """

    def __init__(self):
        self.workspace = 0

    def printer(self):
        return _CPrinter()

    def assign(self, target: str, code: str, indent: str = "    ", temp: bool = False) -> str:
        return f"{indent}{'const double ' if temp else ''}{target} = {code};"

    def entry(self, table: str, k: int) -> str:
        return f"{table}[r][{k}]"

    def temp_array(self, name: str, count: int) -> list[str]:
        line = f"    double *const {name} = _wk + {self.workspace};"
        self.workspace += count
        return [line]

    def loop(self, count: int, target: str, code: str) -> list[str]:
        return [f"    for (int r = 0; r < {count}; r++)", f"        {target} = {code};"]

    def table(self, name: str, arr: np.ndarray) -> str:
        flat = ", ".join(str(int(v)) for v in arr.reshape(-1))
        dims = "".join(f"[{d}]" for d in arr.shape)
        return f"static const int {name}{dims} = {{{flat}}};"

    def wrap(self, body: list[str], nout: int) -> list[str]:
        """``body`` with the workspace of its looped temporaries declared and released."""
        if not self.workspace:
            return body
        if self.workspace <= STACK_DOUBLES:
            return [f"    double _wk[{self.workspace}];", *body]
        return [
            f"    double *const _wk = (double *)malloc({self.workspace} * sizeof(double));",
            "    if (_wk == NULL) {",
            f"        for (int i = 0; i < {nout}; i++)",
            "            out[i] = NAN;",
            "        return;",
            "    }",
            *body,
            "    free(_wk);",
        ]


# ------------------------------------------------------------------------------ generation
def _c_comment(text: str) -> str:
    return text.replace("*/", "* /")


def _header(form, sym, what: str) -> list[str]:
    from .codegen import CODEGEN_VERSION

    nlag, nsw = len(form.lags), len(sym.switches)
    info = [form.n, nlag, nsw, len(form.p), *sym.lag_state, *sym.lag_statedep]
    info += list(sym.switch_lagdep)
    return [
        f"/* Generated by fluidnet.dde.codegen ({CODEGEN_VERSION}) for model "
        f"{_c_comment(repr(form.name))} ({what}); do not edit. */",
        _PRELUDE,
        "/* states, lags, switches, parameters; the state of each lag; 1 for state-dependent",
        "   lags; 1 for switching functions of lagged values */",
        f"const int64_t fluidnet_info[{len(info)}] = {{{', '.join(map(str, info))}}};",
        f"const int64_t fluidnet_info_size = {len(info)};",
        "",
    ]


def _def(name: str) -> str:
    return (
        f"\nvoid {SYMBOL[name]}(double t, double *x, double *z, double *p, double *w, "
        "double *aux, double *out)\n{"
    )


def _translated(make, form) -> list[str]:
    """``make()``: the lines of a function, a :class:`ModelError` for what C cannot express."""
    from sympy.printing.codeprinter import PrintMethodNotImplementedError

    try:
        return make()
    except PrintMethodNotImplementedError as exc:
        raise Untranslatable(
            f"model {form.name!r} uses a function the C backend cannot write "
            f"({str(exc).splitlines()[0]}); set FLUIDNET_BACKEND=numba"
        ) from exc


def _block(exprs, targets: list[int], tables, nout: int) -> list[str]:
    from . import codegen

    lang = _CLang()
    if len(exprs) > codegen.LOOP_MIN_STATEMENTS:
        body = codegen._looped_lines(exprs, targets, tables, lang=lang)
    else:
        body = codegen._code_lines(exprs, [f"out[{i}]" for i in targets], lang=lang)
    return lang.wrap(body, nout)


def _delay_body(form, sym, tables) -> list[str]:
    from . import codegen

    nlag = len(form.lags)
    if nlag == 0:
        return ["    out[0] = 0.0;"]
    lines = [
        "    const double a0 = aux[0];",  # Python's int(): truncation toward zero
        f"    const int k = (a0 > -1.0 && a0 < {nlag}.0) ? (int)a0 : -1;",
    ]
    lang = _CLang()
    if nlag > codegen.LOOP_MIN_STATEMENTS:
        group_of, row_of, bodies = codegen._delay_groups(sym.delays, tables, lang)
        lines += [
            "    if (k < 0) {",
            "        out[0] = NAN;",
            "        return;",
            "    }",
            f"    const int g = {group_of}[k];",
            f"    const int r = {row_of}[k];",
            "    (void)r;",
            "    switch (g) {",
        ]
        for g, body in enumerate(bodies):
            lines += [f"    case {g}:", f"        out[0] = {body};", "        break;"]
    else:
        lines.append("    switch (k) {")
        for k, d in enumerate(sym.delays):
            lines += [f"    case {k}: {{"]
            lines += codegen._code_lines([d], ["out[0]"], indent="        ", lang=lang)
            lines += ["        break;", "    }"]
    return lines + ["    default:", "        out[0] = NAN;", "    }"]


def generate_c_source(form, sym=None) -> str:
    """The C source of the library of a canonical form: ``fluidnet_rhs``, ``fluidnet_delay``,
    ``fluidnet_switch`` and ``fluidnet_sgrad`` (the functions of
    :func:`fluidnet.dde.codegen.generate_source`), and the table ``fluidnet_info`` of sizes and
    lag and switch facts.

    Raises
    ------
    ModelError
        For a form the integrator cannot take (see :func:`~fluidnet.dde.codegen.compile_form`)
        or a function that has no C counterpart here.
    """
    from . import codegen

    sym = sym or codegen._symbolic(form)
    n, nsw = form.n, len(sym.switches)
    tables = codegen._Tables("T", _CLang())

    def make() -> list[str]:
        src = [_def("rhs")]
        src += _block(sym.rhs, list(range(n)), tables, n)
        src += ["}", _def("delay")]
        src += _delay_body(form, sym, tables)
        src += ["}", _def("switch")]
        src += _block([s.surface for s in sym.switches], list(range(nsw)), tables, max(nsw, 1))
        if not nsw:
            src.append("    out[0] = 0.0;")
        src += ["}", _def("sgrad")]
        flat = [g for row in sym.grads for g in row]
        if len(flat) > codegen.LOOP_MIN_STATEMENTS:
            src += [f"    for (int i = 0; i < {len(flat)}; i++)", "        out[i] = 0.0;"]
            nonzero = [i for i, g in enumerate(flat) if g != 0]
            src += _block([flat[i] for i in nonzero], nonzero, tables, len(flat))
        else:
            lang = _CLang()
            src += codegen._code_lines(flat, [f"out[{i}]" for i in range(len(flat))], lang=lang)
        if not nsw:
            src.append("    out[0] = 0.0;")
        src.append("}")
        return src

    body = _translated(make, form)
    return "\n".join([*_header(form, sym, "model functions"), *tables.lines, *body]) + "\n"


def generate_c_jacobian_source(form, sym=None) -> str:
    """The C source of a library with one function ``fluidnet_jac``: the Jacobian of
    :func:`fluidnet.dde.codegen.generate_jacobian_source`.

    Raises
    ------
    ModelError
        When sympy cannot differentiate a right-hand side, or for a function without a C
        counterpart.
    """
    from . import codegen

    sym = sym or codegen._symbolic(form)
    n = form.n
    keys, exprs = codegen._jacobian_entries(form, sym)
    tables = codegen._Tables("T", _CLang())

    def make() -> list[str]:
        size = n * (n + 1)
        src = [_def("jac"), f"    for (int i = 0; i < {size}; i++)", "        out[i] = 0.0;"]
        return [*src, *_block(exprs, keys, tables, size), "}"]

    body = _translated(make, form)
    return "\n".join([*_header(form, sym, "Jacobian"), *tables.lines, *body]) + "\n"


# ------------------------------------------------------------------------------- compiling
class CompilerUnavailable(RuntimeError):  # noqa: N818 - a condition, not a failure of the model
    """The C compiler cannot be run or does not build a trivial shared library."""


_PROBE = b"double fluidnet_probe(double x) { return x + 1.0; }\n"
_COMPILER_LOCK = threading.Lock()
_BROKEN: dict[tuple[str, ...], str] = {}  # compiler command -> why it does not work


def compiler_command() -> list[str]:
    """The C compiler: ``$CC`` (split like a shell word list), else ``cc`` or ``gcc`` on the
    ``PATH``.

    Raises
    ------
    CompilerUnavailable
        When ``$CC`` is unset and neither ``cc`` nor ``gcc`` is found.
    """
    env = os.environ.get("CC", "").strip()
    if env:
        return shlex.split(env)
    for name in ("cc", "gcc"):
        found = shutil.which(name)
        if found:
            return [found]
    raise CompilerUnavailable("no C compiler: CC is not set and neither cc nor gcc is on PATH")


def _flags(nbytes: int) -> list[str]:
    level = "-O1" if nbytes > O1_ABOVE_BYTES else "-O2"
    return [level, "-fPIC", "-shared", "-fno-fast-math", "-ffp-contract=off"]


def _run(cmd: list[str], source: bytes, out: Path) -> subprocess.CompletedProcess:
    """Compile ``source`` (given on standard input) into the shared library ``out``."""
    args = [*cmd, *_flags(len(source)), "-o", str(out), "-x", "c", "-", "-x", "none", "-lm"]
    return subprocess.run(args, input=source, capture_output=True, check=False, timeout=3600)


def _why(cmd: list[str], result) -> str:
    if isinstance(result, OSError):
        return f"{shlex.join(cmd)!r} cannot be run ({result})"
    err = result.stderr.decode(errors="replace").strip() or "(no output)"
    return f"{shlex.join(cmd)!r} exited with status {result.returncode}: {err[:2000]}"


def _check_compiler(cmd: list[str], directory: Path) -> None:
    """Raise :class:`CompilerUnavailable` unless ``cmd`` builds a trivial shared library."""
    key = tuple(cmd)
    with _COMPILER_LOCK:
        if key in _BROKEN:
            raise CompilerUnavailable(_BROKEN[key])
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".probe-", suffix=".so")
        os.close(fd)
        try:
            result = _run(cmd, _PROBE, Path(tmp))
            ok = result.returncode == 0 and os.path.getsize(tmp) > 0
        except OSError as exc:
            result, ok = exc, False
        finally:
            _unlink(tmp)
        if not ok:
            _BROKEN[key] = _why(cmd, result)
            raise CompilerUnavailable(_BROKEN[key])


def known_broken() -> bool:
    """Whether this process already found the current compiler unusable (or there is none)."""
    try:
        return tuple(compiler_command()) in _BROKEN
    except CompilerUnavailable:
        return True


def _check_disk(stderr: bytes, directory: Path, label: str) -> None:
    """Raise CacheError when the compiler failed because the cache's disk is full (it says so
    with the system's message, e.g. 'No space left on device')."""
    text = stderr.decode(errors="replace")
    for code in (errno.ENOSPC, errno.EDQUOT):
        if os.strerror(code) in text:
            with disk_errors(directory, f"compile {label}"):
                raise OSError(code, os.strerror(code), str(directory))


def compile_library(source: bytes, directory: Path, label: str, source_path: Path) -> bytes:
    """The bytes of the shared library compiled from ``source``.

    Raises
    ------
    CompilerUnavailable
        When the compiler cannot be run or does not work at all (it fails on a trivial source
        too).
    ModelError
        When the compiler works but rejects ``source`` (names ``label`` and ``source_path``).
    CacheError
        When the cache's disk is full or over quota (the compiler could not write).
    """
    cmd = compiler_command()
    if tuple(cmd) in _BROKEN:
        raise CompilerUnavailable(_BROKEN[tuple(cmd)])
    with disk_errors(directory, "make a file for the compiled library"):
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".so")
    os.close(fd)
    try:
        try:
            result = _run(cmd, source, Path(tmp))
        except OSError as exc:
            with _COMPILER_LOCK:
                _BROKEN[tuple(cmd)] = _why(cmd, exc)
            raise CompilerUnavailable(_BROKEN[tuple(cmd)]) from exc
        if result.returncode == 0:
            data = Path(tmp).read_bytes()
            if data:
                return data
        _check_disk(result.stderr, directory, label)  # a full disk is not the compiler's fault
        _check_compiler(cmd, directory)  # raises when the compiler itself is the problem
        err = result.stderr.decode(errors="replace").replace("<stdin>", str(source_path))
        raise ModelError(
            f"{label}: the C compiler {shlex.join(cmd)!r} rejected the generated source "
            f"{source_path} (exit status {result.returncode}): {err.strip()[:2000]}"
        )
    finally:
        _unlink(tmp)

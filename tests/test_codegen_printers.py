"""fluidnet.codegen.printers: expressions printed for numba (run as Python) and for C (compiled
with the prelude of the generated sources) evaluate to what sympy itself gives."""

import ctypes
import math
import subprocess

import numpy as np
import pytest
import sympy

from fluidnet.codegen.build import compiler_command
from fluidnet.codegen.csource import _PRELUDE
from fluidnet.codegen.printers import PY, CLang, CPrinter, NumbaPrinter, PyLang

a, b = sympy.symbols("a b", real=True)

EXPRS = [
    a**3 - sympy.Rational(1, 3) * b**-2,
    sympy.sqrt(a**2 + 1) + 1 / sympy.sqrt(b**2 + 2) + 1 / (a - 7),
    sympy.exp(-a) * sympy.log(b**2 + 1) + sympy.pi * sympy.E,
    sympy.Heaviside(a - b) + sympy.Heaviside(a, 0.25) * 10 + sympy.sign(b),
    sympy.Max(a, b, 0.5) - sympy.Min(a, 2 * b),
    sympy.Mod(a, b),
    sympy.Piecewise((a * b, a > b), (a + b, a < -1), (a - b, True)),
    sympy.Abs(a) ** sympy.Rational(3, 2) + b**40,
]
POINTS = [(0.3, -1.7), (2.0, 2.0), (-1.5, 0.25), (0.0, -0.75), (-3.25, 1.1)]


def _reference(e, x, y):
    return float(e.subs({a: x, b: y}).evalf(30))


def test_numba_printer_as_python():
    printer = NumbaPrinter()
    for e in EXPRS:
        code = printer.doprint(e)
        f = eval(f"lambda a, b: {code}", {"math": math})  # noqa: S307
        for x, y in POINTS:
            assert f(x, y) == pytest.approx(_reference(e, x, y), rel=1e-13, abs=1e-13), code
    assert printer.doprint(sympy.Rational(1, 3)) == repr(1 / 3)
    assert printer.doprint(sympy.Integer(2**60)) == repr(float(2**60))


@pytest.fixture(scope="module")
def c_functions(tmp_path_factory):
    printer = CPrinter()
    body = [_PRELUDE]
    for k, e in enumerate(EXPRS):
        body.append(f"double f{k}(double a, double b) {{ return {printer.doprint(e)}; }}")
    directory = tmp_path_factory.mktemp("cprinter")
    src, lib = directory / "f.c", directory / "f.so"
    src.write_text("\n".join(body))
    try:
        subprocess.run(
            [*compiler_command(), "-shared", "-fPIC", "-O1", str(src), "-o", str(lib), "-lm"],
            check=True,
            capture_output=True,
        )
    except Exception as exc:  # no compiler here
        pytest.skip(f"no C compiler: {exc}")
    dll = ctypes.CDLL(str(lib))
    out = []
    for k in range(len(EXPRS)):
        f = getattr(dll, f"f{k}")
        f.restype, f.argtypes = ctypes.c_double, [ctypes.c_double, ctypes.c_double]
        out.append(f)
    return out


def test_c_printer_compiled(c_functions):
    for e, f in zip(EXPRS, c_functions, strict=True):
        for x, y in POINTS:
            assert f(x, y) == pytest.approx(_reference(e, x, y), rel=1e-13, abs=1e-13), str(e)


def test_c_printer_numbers_and_the_languages():
    p = CPrinter()
    assert p.doprint(sympy.Integer(3)) == "3.0"  # doubles: no integer division in C
    assert p.doprint(sympy.oo) == "INFINITY" and p.doprint(sympy.nan) == "NAN"
    assert p.doprint(sympy.Piecewise((a, a > 0))) == "((a > 0.0) ? (a) : NAN)"
    assert isinstance(PY, PyLang)
    assert PY.assign("y", "1.0") == "    y = 1.0"
    c = CLang()
    assert c.assign("t", "2.0", temp=True) == "    const double t = 2.0;"
    assert (
        c.table("_T0", np.array([[1, 2], [3, 4]])) == "static const int _T0[2][2] = {1, 2, 3, 4};"
    )
    assert c.temp_array("g", 5) == ["    double *const g = _wk + 0;"]
    assert c.wrap(["body"], 3)[0] == "    double _wk[5];"

"""Build of fluidnet's compiled code; the package metadata is in ``pyproject.toml``.

Two C extension modules, built by setuptools with the Python headers only (they read NumPy
arrays through the buffer protocol): the integrator (``fluidnet/dde/src/*.c``),
``fluidnet.dde._integrator``, and the characteristic determinant's samples of large networks
(``fluidnet/linear/src/*.c``), ``fluidnet.linear._samples``. ``pip install .``,
``python -m build`` (wheel and sdist) and ``pip install -e .`` (built in place) all compile them.

Floating-point code is compiled without ``-ffast-math`` and without contracting ``a * b + c``
into fused multiply-adds (``-ffp-contract=off``; GCC contracts by default where the target has
FMA), so the integrator computes the same bits on every machine and with every optimization
level. The build records a hash of each module's sources in it (``SOURCE_DIGEST``): a checkout
whose sources changed after the build refuses the stale integrator (see
:func:`fluidnet.dde.engine.source_digest`) and falls back from stale samples to NumPy's (see
:mod:`fluidnet.linear.stacked`).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SRC = Path("fluidnet") / "dde" / "src"
SAMPLES = Path("fluidnet") / "linear" / "src"


def _source_digest_function():
    """:func:`fluidnet.sourcedigest.source_digest`, loaded from its file (the package itself is
    not importable before it is built): the runtime checks compare with the same hash."""
    path = Path(__file__).resolve().parent / "fluidnet" / "sourcedigest.py"
    spec = importlib.util.spec_from_file_location("_fluidnet_sourcedigest", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.source_digest


source_digest = _source_digest_function()


class BuildIntegrator(build_ext):
    """``build_ext`` with the floating-point flags the integrator needs on GCC and Clang."""

    def build_extensions(self) -> None:
        if self.compiler.compiler_type == "unix":
            for ext in self.extensions:
                ext.extra_compile_args += [
                    "-ffp-contract=off",
                    "-fno-fast-math",
                    "-fno-math-errno",  # sqrt as an instruction; no value changes
                ]
        super().build_extensions()


integrator = Extension(
    "fluidnet.dde._integrator",
    sources=[str(p) for p in sorted(SRC.glob("*.c"))],
    depends=[str(p) for p in sorted(SRC.glob("*.h"))],
    include_dirs=[str(SRC)],
    define_macros=[("FLUIDNET_SOURCE_DIGEST", f'"{source_digest(SRC)}"')],
)

samples = Extension(
    "fluidnet.linear._samples",
    sources=[str(p) for p in sorted(SAMPLES.glob("*.c"))],
    define_macros=[("FLUIDNET_SOURCE_DIGEST", f'"{source_digest(SAMPLES)}"')],
)

setup(ext_modules=[integrator, samples], cmdclass={"build_ext": BuildIntegrator})

"""Compile the integrator ahead of time: ``python -m fluidnet.dde.warmup``.

Run once after installing fluidnet (``make venv`` does). It compiles the numba kernel (cached
on disk by numba) and then builds it ahead of time into an extension module
(:mod:`fluidnet.dde.engine`), so that the first :func:`fluidnet.simulate` of every later
process imports machine code without numba. One compilation serves every model and method
(they are run-time data); a new model still compiles its own small functions on first use.
When the ahead-of-time build fails (no C compiler, say), the just-in-time kernel serves.
"""

from __future__ import annotations

import time

__all__ = ["warm_up"]


def warm_up() -> dict[str, float | str]:
    """Build the integrator ahead of time (compiling the numba kernel on the way), then run a
    small model with it.

    Returns the seconds the build and the whole warm-up took and the engine a simulation now
    uses (``"aot"``, or ``"jit"`` with the reason the ahead-of-time build failed: then the
    simulation compiles numba's kernel into its cache).
    """
    import fluidnet as fn

    from .engine import build_engine, engine

    start = time.perf_counter()
    report: dict[str, float | str] = {}
    try:
        _, report["aot"] = build_engine()
    except RuntimeError as exc:
        report["why"] = str(exc)
    x = fn.states("x")
    fn.simulate(fn.Model(rhs={x: -x(fn.t - 1)}, params={}, name="warmup"), 1.0, history={"x": 1})
    report["engine"] = engine().kind
    report["total"] = time.perf_counter() - start
    return report


if __name__ == "__main__":  # pragma: no cover - a command
    r = warm_up()
    why = f" ({r['why']})" if "why" in r else ""
    print(f"fluidnet integrator ready in {r['total']:.1f} s; engine {r['engine']}{why}")

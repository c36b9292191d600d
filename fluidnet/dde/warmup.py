"""Compile the integrator ahead of time: ``python -m fluidnet.dde.warmup``.

The compiled engine is cached on disk by numba (next to the package's sources when they are
writable, else in the user's cache), so running this once after installing fluidnet makes the
first :func:`fluidnet.simulate` of every later process load machine code instead of compiling
it. One compilation serves every model and method (they are run-time data); a new model still
compiles its own small right-hand-side functions on first use.
"""

from __future__ import annotations

import time

__all__ = ["warm_up"]


def warm_up() -> float:
    """Compile (or load) the integrator; returns the seconds it took."""
    import fluidnet as fn

    start = time.perf_counter()
    x = fn.states("x")
    model = fn.Model(rhs={x: -x(fn.t - 1)}, params={}, name="warmup")
    fn.simulate(model, 1.0, history={"x": 1.0})
    return time.perf_counter() - start


if __name__ == "__main__":  # pragma: no cover - a command
    print(f"fluidnet integrator ready ({warm_up():.1f} s)")

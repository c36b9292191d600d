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
    """Compile (or load) the integrator, then build it ahead of time.

    Returns the seconds each part took and the engine a simulation now uses
    (``"aot"``, or ``"jit"`` with the reason the ahead-of-time build failed).
    """
    import os

    import fluidnet as fn

    from .engine import build_engine, engine

    start = time.perf_counter()
    x = fn.states("x")
    model = fn.Model(rhs={x: -x(fn.t - 1)}, params={}, name="warmup")
    previous = os.environ.get("FLUIDNET_ENGINE")
    os.environ["FLUIDNET_ENGINE"] = "jit"
    try:
        fn.simulate(model, 1.0, history={"x": 1.0})
    finally:
        if previous is None:
            del os.environ["FLUIDNET_ENGINE"]
        else:
            os.environ["FLUIDNET_ENGINE"] = previous
    report: dict[str, float | str] = {"jit": time.perf_counter() - start}
    try:
        _, report["aot"] = build_engine()
    except RuntimeError as exc:
        report["engine"] = f"jit ({exc})"
        return report
    report["engine"] = engine().kind
    return report


if __name__ == "__main__":  # pragma: no cover - a command
    r = warm_up()
    aot = f", ahead-of-time build {r['aot']:.1f} s" if "aot" in r else ""
    print(f"fluidnet integrator ready: just-in-time {r['jit']:.1f} s{aot}; engine {r['engine']}")

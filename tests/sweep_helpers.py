"""Functions and process probes shared by the sweep tests (importable by the test processes,
by the scripts they start and by Dask workers)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

import fluidnet as fn

HERE = Path(__file__).parent


def _log_and_wait() -> None:
    """Each call appends a line to $FLUIDNET_TEST_LOG and sleeps $FLUIDNET_TEST_DELAY s
    (neither changes a result, so neither is part of a sweep's signature)."""
    log = os.environ.get("FLUIDNET_TEST_LOG")
    if log:
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
    time.sleep(float(os.environ.get("FLUIDNET_TEST_DELAY", "0")))


def sleep_then_square(x: float) -> float:
    """``x * x`` after ``x`` seconds."""
    time.sleep(x)
    return x * x


def delayed_scalar_dde(a: float, tau: float) -> fn.LinearDDE:
    """x'(t) = -a x(t - tau): asymptotically stable iff 0 < a tau < pi/2 (Hayes 1950)."""
    _log_and_wait()
    return fn.LinearDDE(np.zeros((1, 1)), [(tau, np.array([[-a]]))])


def square_root_or_fail(x: float, delay: float = 0.0) -> dict:
    """``{"root": sqrt(x), "twice": 2x}``; raises ValueError for x < 0."""
    time.sleep(delay)
    if x < 0:
        raise ValueError(f"no real square root of {x}")
    return {"root": float(np.sqrt(x)), "twice": 2.0 * x}


def logged_square(x: float) -> float:
    _log_and_wait()
    return x * x


def calls(log: Path) -> int:
    """Number of calls recorded in a log file."""
    return len(log.read_text().splitlines()) if log.exists() else 0


# ---------------------------------------------------------------- processes (Linux /proc)
def children(pid: int) -> list[int]:
    """Pids of the live children of ``pid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None and stat[1] == pid and stat[0] != "Z":
                out.append(int(entry.name))
    return out


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def _stat(pid: int) -> tuple[str, int] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])


def wait_until(condition, timeout: float, step: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(step)
    return condition()


def script_env(**extra: str) -> dict[str, str]:
    """Environment for a test script: this directory importable, one BLAS thread."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    env["OPENBLAS_NUM_THREADS"] = "1"
    env.update(extra)
    return env


PYTHON = sys.executable

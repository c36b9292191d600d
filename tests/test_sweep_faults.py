"""Faults during sweeps: Ctrl-C, a killed parent, a kill in the middle of a store write.

Each test starts a real process that runs a sweep on a process pool (2 workers, one point per
task, each point slowed down by $FLUIDNET_TEST_DELAY), disturbs it, then checks that no worker
outlives its parent and that rerunning the call with the same store computes only the missing
points and returns what an uninterrupted run returns.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from sweep_helpers import (
    PYTHON,
    alive,
    calls,
    children,
    delayed_scalar_dde,
    logged_square,
    script_env,
    wait_until,
)

import fluidnet as fn
from fluidnet.sweep import Store, sweep

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads worker processes from /proc"
)

GRID = {"a": [0.5, 1.0, 1.5, 2.0], "tau": [0.25, 0.5, 1.0, 1.5]}

CHART = textwrap.dedent(
    """
    import signal, sys
    # Ctrl-C as at a terminal (an ignored or blocked SIGINT is inherited across exec)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    import fluidnet as fn
    import fluidnet.sweep.store as st
    from fluidnet.sweep import ProcessExecutor
    from sweep_helpers import delayed_scalar_dde

    st.FLUSH_SECONDS = st.WRITE_SHARE = 0.0   # write every finished point
    store = None if sys.argv[1] == "-" else sys.argv[1]
    try:
        fn.stability_chart(delayed_scalar_dde, {grid}, store=store,
                           executor=ProcessExecutor(2, chunksize=1))
    except KeyboardInterrupt as exc:
        print("INTERRUPTED:", exc, flush=True)
        sys.exit(3)
    print("DONE", flush=True)
    """
).format(grid=repr(GRID))


def _start(script: str, *args: str, log, delay: float = 0.4) -> subprocess.Popen:
    env = script_env(FLUIDNET_TEST_LOG=str(log), FLUIDNET_TEST_DELAY=str(delay))
    return subprocess.Popen(
        [PYTHON, "-c", script, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _workers_started(proc, log, n_calls: int = 2) -> list[int]:
    assert wait_until(lambda: calls(log) >= n_calls, timeout=120), "the sweep did not start"
    workers = children(proc.pid)
    assert len(workers) >= 2, workers
    return workers


def _reference_chart():
    return fn.stability_chart(delayed_scalar_dde, GRID)


def _resume_computes_only_the_rest(path, log, monkeypatch) -> None:
    done, total = Store(path).progress()
    assert 0 < done < total == 16
    monkeypatch.setenv("FLUIDNET_TEST_LOG", str(log))
    monkeypatch.setenv("FLUIDNET_TEST_DELAY", "0")
    before = calls(log)
    resumed = fn.stability_chart(delayed_scalar_dde, GRID, store=path)
    assert calls(log) - before == total - done
    assert resumed.identical(_reference_chart())


def _chart_with_store_under_way(tmp_path):
    """A chart on 2 worker processes that has stored a few points."""
    log, path = tmp_path / "calls.log", tmp_path / "chart"
    proc = _start(CHART, str(path), log=log)
    workers = _workers_started(proc, log)
    assert wait_until(lambda: path.exists() and Store(path).exists, timeout=60)
    assert wait_until(lambda: Store(path).progress()[0] >= 2, timeout=60)
    return proc, workers, log, path


def test_ctrl_c_stops_the_workers_keeps_finished_points_and_resumes(tmp_path, monkeypatch):
    proc, workers, log, path = _chart_with_store_under_way(tmp_path)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 10  # the running points were not waited for
    assert proc.returncode == 3, err
    done = Store(path).progress()[0]
    assert f"INTERRUPTED: sweep interrupted with {done} of 16 items done; they are kept" in out
    assert wait_until(lambda: not any(alive(w) for w in workers), timeout=10)
    assert "Traceback" not in err  # stopped workers print nothing
    _resume_computes_only_the_rest(path, log, monkeypatch)


def test_sigkill_of_the_parent_leaves_no_worker_and_the_rerun_resumes(tmp_path, monkeypatch):
    proc, workers, log, path = _chart_with_store_under_way(tmp_path)
    proc.kill()
    proc.wait(timeout=30)
    assert wait_until(lambda: not any(alive(w) for w in workers), timeout=10), workers
    _resume_computes_only_the_rest(path, log, monkeypatch)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_workers_of_a_killed_chart_exit(tmp_path, sig):
    log = tmp_path / "calls.log"
    proc = _start(CHART, "-", log=log, delay=5.0)  # workers busy in a long point
    workers = _workers_started(proc, log)
    os.kill(proc.pid, sig)
    out, _ = proc.communicate(timeout=30)
    if sig == signal.SIGKILL:
        assert proc.returncode == -sig
    else:  # handled as Ctrl-C is: the workers stopped, the sweep says so
        assert proc.returncode == 3
        assert "INTERRUPTED: sweep stopped by SIGTERM with 0 of 16 items done" in out
    assert wait_until(lambda: not any(alive(w) for w in workers), timeout=10), workers


KILLED_WHILE_WRITING = textwrap.dedent(
    """
    import pathlib, sys, time
    import zarr
    import fluidnet.sweep.store as st
    from fluidnet.sweep import sweep
    from sweep_helpers import logged_square

    st.FLUSH_SECONDS = st.WRITE_SHARE = 0.0
    create = zarr.Group.create_array
    writes = []

    def slow_create(self, *args, **kwargs):
        writes.append(1)
        if len(writes) == 10:  # in the middle of the third part (4 arrays a part)
            pathlib.Path(sys.argv[2]).touch()
            time.sleep(60)
        return create(self, *args, **kwargs)

    zarr.Group.create_array = slow_create
    sweep(logged_square, {"x": [float(i) for i in range(6)]}, store=sys.argv[1])
    """
)


def test_a_kill_during_a_store_write_leaves_a_usable_store(tmp_path, monkeypatch):
    log, path, flag = tmp_path / "calls.log", tmp_path / "squares", tmp_path / "writing"
    proc = _start(KILLED_WHILE_WRITING, str(path), str(flag), log=log, delay=0.0)
    assert wait_until(flag.exists, timeout=120), proc.communicate()[1]
    proc.kill()
    proc.wait(timeout=30)
    assert list(path.glob(".tmp-*"))  # the half-written part
    done, total = Store(path).progress()
    assert (done, total) == (2, 6)  # two parts complete, the third never appeared
    monkeypatch.setenv("FLUIDNET_TEST_LOG", str(log))
    before = calls(log)
    ds = sweep(logged_square, {"x": [float(i) for i in range(6)]}, store=path)
    assert calls(log) - before == 4
    np.testing.assert_array_equal(ds["value"].values, np.arange(6.0) ** 2)
    assert not list(path.glob(".tmp-*"))


def test_a_failing_point_keeps_the_finished_ones_in_the_store(tmp_path, monkeypatch):
    """With on_error="raise" the sweep stops at the failure; what finished before is kept."""
    monkeypatch.setattr("fluidnet.sweep.store.FLUSH_SECONDS", 0.0)
    monkeypatch.setattr("fluidnet.sweep.store.WRITE_SHARE", 0.0)
    grid = {"a": [0.5, 1.0, -1.0, 2.0]}
    with pytest.raises(fn.ParameterError):  # a negative gain is not a linear system here
        sweep(_positive_gain, grid, store=tmp_path / "s")
    assert Store(tmp_path / "s").progress() == (2, 4)


def _positive_gain(a: float) -> float:
    if a < 0:
        raise fn.ParameterError(f"gain a = {a} must be positive")
    return logged_square(a)


# ------------------------------------------------------------------ SIGTERM and SIGHUP (issue 33)
SIGNALLED = textwrap.dedent(
    """
    import signal, sys
    # SIGHUP at its default action, as in a terminal: run under nohup, which ignores it (and
    # so does every process it starts), the sweep leaves an ignored signal alone, as it should
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    import fluidnet.sweep.store as st
    from fluidnet.sweep import ProcessExecutor, sweep
    from sweep_helpers import logged_square

    st.FLUSH_SECONDS = 1e9   # nothing is written before the sweep ends or is stopped
    how = sys.argv[2]
    if how == "processes":
        executor = ProcessExecutor(2, chunksize=1)
    elif how == "dask":
        from dask.distributed import Client
        from fluidnet.sweep import DaskExecutor
        client = Client(processes=False, n_workers=1, threads_per_worker=2,
                        dashboard_address=None)
        executor = DaskExecutor(client, chunksize=1)
    else:
        executor = None
    sweep(logged_square, {"x": [float(i) for i in range(40)]}, store=sys.argv[1],
          executor=executor)
    """
)


@pytest.mark.parametrize(
    ("how", "sig"),
    [
        ("serial", signal.SIGHUP),
        ("processes", signal.SIGTERM),
        pytest.param("dask", signal.SIGTERM, id="dask-SIGTERM"),
    ],
)
def test_sigterm_and_sighup_keep_the_finished_items_as_ctrl_c_does(tmp_path, monkeypatch, how, sig):
    # main: killed at once, every finished item lost (nothing written before the end)
    if how == "dask":
        pytest.importorskip("dask.distributed")
    log, path = tmp_path / "calls.log", tmp_path / "squares"
    proc = _start(SIGNALLED, str(path), how, log=log, delay=0.1)
    assert wait_until(lambda: calls(log) >= 4, timeout=120), proc.communicate()[1]
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err  # an uncaught Terminated: exit status 1, a traceback
    done, total = Store(path).progress()
    in_flight = 1 if how == "serial" else 2
    assert total == 40 and calls(log) - in_flight <= done < 40
    said = f"Terminated: sweep stopped by {sig.name} with {done} of 40 items done; they are kept in"
    assert said in err
    if how == "processes":  # the workers, which ignore the signal, were stopped
        assert "Traceback" not in err.split(said)[1]
    monkeypatch.setenv("FLUIDNET_TEST_LOG", str(log))
    monkeypatch.setenv("FLUIDNET_TEST_DELAY", "0")
    before = calls(log)
    grid = {"x": [float(i) for i in range(40)]}
    resumed = sweep(logged_square, grid, store=path)
    assert calls(log) - before == 40 - done
    np.testing.assert_array_equal(resumed["value"].values, np.arange(40.0) ** 2)

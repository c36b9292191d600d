"""simulate: interruption, bounded memory with dense=False, and option errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.errors import OptionError, ParameterError

t = fn.t
x = fn.states("x")


def _decay():
    return fn.Model(rhs={x: -x(t - 1)}, params={}, name="decay")


# ----------------------------------------------------------------------------- Ctrl-C
_LONG_RUN = """
import signal, sys, time
# Ctrl-C as at a terminal, whatever the test runner's process passed on (an ignored or
# blocked SIGINT is inherited across exec)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
import numpy as np
import fluidnet as fn
x = fn.states("x")
m = fn.Model(rhs={{x: -x(fn.t - 1)}}, params={{}})
fn.simulate(m, 2.0, history={{"x": 1.0}})  # compile (or load) before the timed part
try:
    print("ready", flush=True)
    {call}
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", time.perf_counter(), flush=True)
"""

_CALLS = {
    # 1e10 steps: hours, whatever the speed (the step limit would end it first otherwise)
    "simulate": 'fn.simulate(m, 1e7, history={"x": 1.0}, max_step=1e-3, max_steps=10**12)',
    "ensemble": (
        'fn.simulate_ensemble(m, 1e7, params={}, history=[{"x": 1.0}, {"x": 2.0}], '
        "max_step=1e-3, max_steps=10**12, workers=2, progress=False)"
    ),
}


@pytest.mark.parametrize("call", sorted(_CALLS))
def test_ctrl_c_stops_a_long_run_with_keyboard_interrupt(call):
    """SIGINT during a run of hours: KeyboardInterrupt within about a second, no SystemError."""
    fn.simulate(_decay(), 1.0, history={"x": 1.0})  # the model compiled: the child loads it
    code = textwrap.dedent(_LONG_RUN).format(call=_CALLS[call])
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, OPENBLAS_NUM_THREADS="1"),
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # well inside the run
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert "SystemError" not in err, err
    words = out.split()
    assert words[:1] == ["interrupted"], (out, err)
    # perf_counter is system-wide (CLOCK_MONOTONIC): the two processes' readings compare
    assert float(words[1]) - sent < 3.0


# ----------------------------------------------------------------------------- dense=False
def _peak_bytes(**kwargs):
    tracemalloc.start()
    try:
        sol = fn.simulate(_decay(), 200.0, history={"x": 1.0}, max_step=2e-3, **kwargs)
        return sol, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_dense_false_keeps_memory_bounded_and_values_identical():
    te = np.linspace(0.0, 200.0, 9)
    dense, peak_dense = _peak_bytes(t_eval=te)
    lean, peak_lean = _peak_bytes(t_eval=te, dense=False)
    assert dense.counters.steps >= 100_000
    np.testing.assert_array_equal(lean.y, dense.y)
    np.testing.assert_array_equal(lean.t, te)
    assert lean.counters == dense.counters
    # the dense output of 100 000 steps is ~5 MB; the kept window (twice the delay) is small
    assert peak_dense > 4e6
    assert peak_lean < 1e6
    with pytest.raises(OptionError, match="dense=False"):
        lean(1.0)
    with pytest.raises(OptionError, match="dense=False"):
        lean.mesh  # noqa: B018
    with pytest.raises(OptionError, match="cannot be continued"):
        fn.simulate(_decay(), 300.0, history=lean)


def test_dense_false_with_a_state_dependent_delay():
    """Delays that change with the state: the window follows the largest delay seen."""
    m = fn.Model(rhs={x: -x(t - (1 + x(t) ** 2 / 4))}, params={}, name="sdep")
    te = np.linspace(0.0, 300.0, 7)
    dense = fn.simulate(m, 300.0, history={"x": 1.0}, max_step=0.01, t_eval=te)
    lean = fn.simulate(m, 300.0, history={"x": 1.0}, max_step=0.01, t_eval=te, dense=False)
    np.testing.assert_array_equal(lean.y, dense.y)


def test_dense_false_needs_t_eval():
    with pytest.raises(OptionError, match="give t_eval"):
        fn.simulate(_decay(), 1.0, dense=False)
    with pytest.raises(OptionError, match="dense must be True or False"):
        fn.simulate(_decay(), 1.0, dense="no", t_eval=[0.5])


# ----------------------------------------------------------------------------- bad values
def test_max_steps_out_of_range_names_it():
    for bad in (2**70, 0, 10.5, "many", True):
        with pytest.raises(OptionError, match="max_steps"):
            fn.simulate(_decay(), 1.0, max_steps=bad)


@pytest.mark.parametrize(
    ("history", "match"),
    [
        ({"x": 1 + 1j}, r"history of 'x': the value \(1\+1j\) is complex"),
        ({"x": sympy.I}, "history of 'x': the value I is complex"),
        ({"x": ([-1.0, -0.5, 0.0], [1.0, 1j, 1.0])}, r"'x' is complex: 1j at t = -0.5"),
        ({"x": lambda s: np.exp(1j * s)}, r"history of 'x' is complex: .* at t = "),
    ],
)
def test_complex_history_is_a_parameter_error(history, match, recwarn):
    with pytest.raises(ParameterError, match=match):
        fn.simulate(_decay(), 1.0, history=history)
    assert not [w for w in recwarn if issubclass(w.category, np.exceptions.ComplexWarning)]


def test_complex_parameter_is_a_parameter_error(recwarn):
    a = fn.params("a")
    m = fn.Model(rhs={x: -a * x(t - 1)}, params={a: 1.0}, name="ca")
    with pytest.raises(ParameterError, match="'a'"):
        fn.simulate(m, 1.0, params={"a": 1 + 2j})
    with pytest.raises(ParameterError, match=r"parameter 'a': \(2\+1j\) is not a real number"):
        fn.simulate_ensemble(m, 1.0, params={"a": [1.0, 2 + 1j]}, progress=False)
    assert not [w for w in recwarn if issubclass(w.category, np.exceptions.ComplexWarning)]


@pytest.mark.parametrize(
    "kwargs",
    [{"t_eval": [0.5j]}, {"atol": [1j]}, {"rtol": 1j}, {"method": "RK4"}, {"max_step": -1.0}],
)
def test_integrator_options_raise_option_error(kwargs):
    with pytest.raises(OptionError, match=next(iter(kwargs))):
        fn.simulate(_decay(), 1.0, **kwargs)

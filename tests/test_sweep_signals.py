"""fluidnet.sweep.signals: SIGTERM and SIGHUP raise Terminated while a sweep runs, in the main
thread only, over the default action only, and the previous handlers come back afterwards."""

import os
import signal
import threading

import pytest

from fluidnet.sweep import sweep
from fluidnet.sweep.signals import STOP_SIGNALS, Terminated, stop_signals

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")


@pytest.fixture(autouse=True)
def default_actions():
    """These tests signal their own process: only where both signals have their default
    action (a test runner's own handler would receive them)."""
    if any(signal.getsignal(s) is not signal.SIG_DFL for s in STOP_SIGNALS):
        pytest.skip("SIGTERM or SIGHUP has a handler in this process")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_is_a_keyboard_interrupt_naming_it(sig):
    with stop_signals():
        with pytest.raises(Terminated, match=f"stopped by {sig.name}") as info:
            os.kill(os.getpid(), sig)
    assert isinstance(info.value, KeyboardInterrupt) and info.value.signum == sig
    assert signal.getsignal(sig) is signal.SIG_DFL  # restored


def test_handlers_of_yours_and_ignored_signals_are_left_alone():
    seen = []
    mine = signal.signal(signal.SIGTERM, lambda s, f: seen.append(s))
    ignored = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    try:
        with stop_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGHUP)
        assert seen == [signal.SIGTERM]
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, mine)
        signal.signal(signal.SIGHUP, ignored)


def test_a_second_signal_while_saving_is_ignored():
    with stop_signals() as handler:
        assert handler is not None
        handler.saving = True
        os.kill(os.getpid(), signal.SIGTERM)  # ignored: the sweep is writing what finished
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_no_handler_is_installed_outside_the_main_thread():
    out = {}

    def run():
        with stop_signals() as handler:
            out["handler"] = handler
            out["during"] = [signal.getsignal(s) for s in STOP_SIGNALS]
        out["sum"] = float(sweep(lambda x: x, {"x": [1.0, 2.0]})["value"].sum())

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert out == {"handler": None, "during": [signal.SIG_DFL] * len(STOP_SIGNALS), "sum": 3.0}


def test_a_sweep_inside_a_sweep_shares_the_handler():
    with stop_signals() as outer:
        with stop_signals() as inner:
            assert inner is outer
            inner.saving = True  # the inner sweep was stopped, and its stop was caught
        assert outer is not None and not outer.saving
        with pytest.raises(Terminated):  # the outer sweep can still be stopped
            os.kill(os.getpid(), signal.SIGTERM)
    assert all(signal.getsignal(s) is signal.SIG_DFL for s in STOP_SIGNALS)


def test_terminated_pickles_with_its_signal():
    import pickle

    back = pickle.loads(pickle.dumps(Terminated(signal.SIGHUP, "sweep stopped")))
    assert (back.signum, str(back)) == (signal.SIGHUP, "sweep stopped")

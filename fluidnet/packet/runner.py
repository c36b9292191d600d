"""``simulate``: one ns-3 run of a scenario, in its own process, as a :class:`PacketRun`.

The first run of a process starts a packet server (:mod:`fluidnet.packet._server`: a Python
process that loads ns-3 and compiles fluidnet's C++ components once, a few seconds of CPU);
every run is then a child forked from that server, so that ns-3's global state is fresh in each
and a run is determined by its scenario and seed. The calling process never loads ns-3.
"""

from __future__ import annotations

import atexit
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import OptionError, ParameterError
from . import _ns3
from ._server import read_message, write_message
from .errors import PacketRunError
from .results import PacketRun
from .scenario import Scenario
from .store import RunStore, resolve_store, run_key

__all__ = [
    "simulate",
    "RunRequest",
    "server_info",
    "shutdown_server",
    "SAMPLE_INTERVAL",
    "MAX_POINTS",
    "MAX_TRACE_BYTES",
]

#: Default interval between trace samples (s).
SAMPLE_INTERVAL = 0.01
#: Most samples a run keeps by default.
MAX_POINTS = 20001
#: Most bytes a run's traces may take (one copy; the worker holds about three while it
#: writes them): ``n_points`` beyond it is refused before the run.
MAX_TRACE_BYTES = 1 << 30
#: ns-3's time resolution (s): samples closer than this would coincide.
TIME_RESOLUTION = 1e-9
#: Seconds a new server may take to load ns-3 (it takes about 5 s of CPU; far longer on a
#: crowded machine).
LOAD_TIMEOUT = 900.0


class _Server:
    """The packet server of this process (started on first use, restarted after a failure)."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.info: dict = {}
        self.lock = threading.Lock()
        self.dir: Path | None = None

    def _start(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="fluidnet-packet-"))
        log = open(self.dir / "server.log", "wb")  # noqa: SIM115 - kept by the child
        env = dict(os.environ)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fluidnet.packet._server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=env,
            close_fds=True,
        )
        log.close()
        reply = self._receive(LOAD_TIMEOUT, "loading ns-3")
        if not reply.get("ready"):
            self._stop()
            raise PacketRunError(
                "the packet server could not load ns-3: "
                f"{reply.get('error')}\n{reply.get('log', '')}"
            )
        self.info = reply

    def _receive(self, timeout: float | None, what: str) -> dict:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        if timeout is not None:
            import select

            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                log = self._log_tail()
                self._stop()
                raise PacketRunError(
                    f"the packet server took more than {timeout:g} s {what}\n{log}"
                )
        reply = read_message(fd)
        if reply is None:
            code = self.proc.poll()
            log = self._log_tail()
            self._stop()
            raise PacketRunError(f"the packet server died while {what} (exit status {code})\n{log}")
        return reply

    def _log_tail(self) -> str:
        if self.dir is None:
            return ""
        try:
            return (self.dir / "server.log").read_bytes()[-4000:].decode("utf-8", "replace")
        except OSError:
            return ""

    def _stop(self) -> None:
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):  # pragma: no cover
                pass
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    stream.close()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)  # the server's log
        self.proc = None
        self.dir = None
        self.info = {}

    def run(self, request: dict) -> dict:
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self._stop()
                self._start()
            assert self.proc is not None and self.proc.stdin is not None
            try:
                write_message(self.proc.stdin.fileno(), request)
                return self._receive(None, "running a scenario")
            except KeyboardInterrupt:
                self._stop()  # the run's child dies with the server
                raise
            except BrokenPipeError:
                log = self._log_tail()
                self._stop()
                raise PacketRunError(f"the packet server is gone\n{log}") from None

    def close(self) -> None:
        with self.lock:
            self._stop()

    def forget(self) -> None:
        """In a forked child: drop the parent's server (its pipes are the parent's; the child
        starts its own on its first run)."""
        self.proc = None
        self.dir = None
        self.info = {}
        self.lock = threading.Lock()


_SERVER = _Server()
atexit.register(_SERVER.close)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_SERVER.forget)


def server_info() -> dict:
    """Facts about this process's packet server: ``pid``, ``load_cpu_time``, ``load_wall_time``
    (empty before the first run)."""
    return dict(_SERVER.info)


def shutdown_server() -> None:
    """Stop this process's packet server (the next run starts a new one)."""
    _SERVER.close()


def _seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer, float)):
        raise ParameterError(f"seed = {seed!r} must be a whole number >= 0")
    if not float(seed).is_integer() or seed < 0 or seed >= 2**32:
        raise ParameterError(f"seed = {seed!r} must be a whole number in [0, 2**32)")
    return int(seed)


def sample_times(t_end: float, n_points: int | None) -> tuple[int, float]:
    """(n_points, dt) of a run's traces."""
    if n_points is None:
        n_points = min(int(round(t_end / SAMPLE_INTERVAL)) + 1, MAX_POINTS)
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 2:
        raise OptionError(f"n_points = {n_points!r} must be an integer >= 2")
    return int(n_points), t_end / (int(n_points) - 1)


def _check_trace_size(scenario: Scenario, t_end: float, n_points: int, dt: float) -> None:
    """Refuse, before anything is allocated, traces that would not fit (issue 33:
    ``n_points=10**9`` took 8 GB and hung) or samples closer than ns-3 can time."""
    from .scenario import Flows

    columns = 1 + 5 * len(scenario.link_list)
    columns += 3 * sum(g.n for g in scenario.groups if isinstance(g, Flows))
    size = n_points * columns * 8
    if size > MAX_TRACE_BYTES:
        most = MAX_TRACE_BYTES // (columns * 8)
        raise OptionError(
            f"n_points = {n_points}: the traces ({columns} values per sample) would take "
            f"{size / 2**30:.3g} GiB, over the {MAX_TRACE_BYTES / 2**30:g} GiB a run may hold; "
            f"give n_points <= {most}"
        )
    if dt < TIME_RESOLUTION:
        most = int(t_end / TIME_RESOLUTION) + 1
        raise OptionError(
            f"n_points = {n_points}: samples {dt:.3g} s apart, closer than ns-3's resolution "
            f"of {TIME_RESOLUTION:g} s; give n_points <= {most}"
        )


def simulate(
    scenario: Scenario,
    t_end: float,
    *,
    seed: int = 0,
    n_points: int | None = None,
    timeout: float | None = None,
    store: RunStore | str | os.PathLike | bool | None = None,
) -> PacketRun:
    """Run a scenario in ns-3 for ``t_end`` seconds.

    Parameters
    ----------
    scenario : Dumbbell or ParkingLot
    t_end : float
        Simulated seconds (> 0).
    seed : int
        Seed of the run (ns-3's run number, and of the random start times and short flows):
        the same scenario and seed give the same traces.
    n_points : int, optional
        Samples of the traces, equally spaced over ``[0, t_end]``, the last at ``t_end``
        (default: every 10 ms, at most 20001; at most what :data:`MAX_TRACE_BYTES` holds).
    timeout : float, optional
        Wall-clock seconds after which the run is killed (a :class:`PacketRunError`).
    store : RunStore, path or bool, optional
        A content-keyed store of runs (:mod:`fluidnet.packet.store`): a run already there (the
        same plan, length, seed, samples, ns-3 and components) is read back instead of run,
        a new one is written. Default: the directory in ``$FLUIDNET_PACKET_STORE`` if set
        (``fluidnet reproduce`` sets it), else none; ``False``: none.

    Returns
    -------
    PacketRun
        Traces (queue, drops, marks, departures and AQM state per link; window, RTT and
        received bytes per long-lived flow; start, size and completion of every flow) with
        ``.to_xarray()`` and ``.plot()``; ``stored`` names the store entry it was read from
        (``None`` when it ran now).

    Raises
    ------
    NotInstalledError
        When ns-3's Python bindings are not installed (``pip install 'fluidnet[packet]'``).
    ParameterError
        For a bad ``t_end`` or ``seed`` (the scenario validated itself when built).
    OptionError
        For ``n_points`` whose traces would exceed :data:`MAX_TRACE_BYTES`, or samples closer
        than ns-3's nanosecond, before anything runs.
    PacketRunError
        When the run crashed, was killed or timed out inside ns-3 (with what it reported).

    Examples
    --------
    A run of a few seconds of CPU (not run as a doctest):

    >>> import fluidnet as fn  # doctest: +SKIP
    >>> link = fn.packet.Link(10e6, buffer=100)  # doctest: +SKIP
    >>> sc = fn.packet.Dumbbell(link=link, flows=[fn.packet.Flows(n=4, rtt=0.05)])  # doctest: +SKIP
    >>> run = fn.packet.simulate(sc, 10.0, seed=1)  # doctest: +SKIP
    >>> run.to_xarray()["queue"].mean()  # doctest: +SKIP
    """
    request = RunRequest.checked(scenario, t_end, seed, n_points, timeout)
    runs = resolve_store(store)
    if runs is not None:
        found = request.read(runs)
        if found is not None:
            return found
    started = time.perf_counter()
    arrays = request.arrays()
    if runs is not None:
        runs.put(request.key(), arrays)
    return request.result(arrays, time.perf_counter() - started)


@dataclass
class RunRequest:
    """One run, checked and planned: what :func:`simulate` sends to the packet server (made by
    :meth:`checked`; shared with :func:`fluidnet.packet.simulate_many`)."""

    scenario: Scenario
    t_end: float
    seed: int
    n_points: int
    dt: float
    timeout: float | None
    plan: dict = field(repr=False)

    @classmethod
    def checked(
        cls,
        scenario: Any,
        t_end: Any,
        seed: Any = 0,
        n_points: Any = None,
        timeout: Any = None,
    ) -> RunRequest:
        """The request of ``simulate(scenario, t_end, seed=, n_points=, timeout=)``.

        Raises
        ------
        ParameterError, OptionError
            As :func:`simulate` does, before anything runs.
        """
        if not isinstance(scenario, Scenario):
            raise ParameterError(
                f"scenario = {scenario!r} must be a fn.packet.Dumbbell or fn.packet.ParkingLot"
            )
        try:
            t_end = float(t_end)
        except (TypeError, ValueError):
            raise ParameterError(f"t_end = {t_end!r} must be a number of seconds") from None
        if not math.isfinite(t_end) or t_end <= 0:
            raise ParameterError(f"t_end = {t_end!r} must be a finite number of seconds > 0")
        seed = _seed(seed)
        n_points, dt = sample_times(t_end, n_points)
        _check_trace_size(scenario, t_end, n_points, dt)
        if timeout is not None and not (
            isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0
        ):
            raise OptionError(f"timeout = {timeout!r} must be a number of seconds > 0")
        plan = scenario.plan(t_end, seed)
        return cls(scenario, t_end, seed, n_points, dt, timeout, plan)

    def key(self) -> dict[str, Any]:
        """The run's key in a store (:func:`fluidnet.packet.store.run_key`)."""
        return run_key(self.plan, self.t_end, self.seed, self.n_points)

    def read(self, runs: RunStore) -> PacketRun | None:
        """The run from ``runs``, or ``None`` when it is not stored there."""
        started = time.perf_counter()
        found = runs.get(self.key())
        if found is None:
            return None
        return self.result(found, time.perf_counter() - started, stored=str(runs.path))

    def arrays(self) -> dict[str, np.ndarray]:
        """Run it in ns-3 now (through this process's packet server): the traces as the
        worker wrote them.

        Raises
        ------
        NotInstalledError, PacketRunError
            As :func:`simulate`.
        """
        _ns3.require()
        with tempfile.TemporaryDirectory(prefix="fluidnet-run-") as tmp:
            request = {
                "plan": self.plan,
                "t_end": self.t_end,
                "seed": self.seed,
                "dt": self.dt,
                "n_points": self.n_points,
                "out": os.path.join(tmp, "run.npz"),
                "log": os.path.join(tmp, "run.log"),
                "timeout": None if self.timeout is None else float(self.timeout),
            }
            reply = _SERVER.run(request)
            if reply["status"] != "ok":
                raise PacketRunError(_failure(self.scenario, self.seed, self.t_end, reply))
            with np.load(request["out"], allow_pickle=False) as data:
                return {k: data[k] for k in data.files}

    def result(
        self, arrays: dict[str, np.ndarray], wall_time: float, stored: str | None = None
    ) -> PacketRun:
        """The :class:`PacketRun` of the traces ``arrays`` (``wall_time``: of the call)."""
        arrays = {**arrays, "wall_time": np.asarray(wall_time, dtype=np.float64)}
        return PacketRun(
            scenario=self.scenario, t_end=self.t_end, seed=self.seed, arrays=arrays, stored=stored
        )


def _failure(scenario: Scenario, seed: int, t_end: float, reply: dict) -> str:
    what = {
        "signal": lambda: f"was killed by signal {reply.get('signal')}",
        "timeout": lambda: f"ran longer than its timeout of {reply.get('timeout'):g} s",
        "error": lambda: f"failed (exit status {reply.get('exitcode')})",
        "server": lambda: f"could not start: {reply.get('error')}",
    }.get(reply["status"], lambda: f"failed ({reply['status']})")()
    log = reply.get("log", "").strip()
    tail = f"; the worker reported:\n{log}" if log else " (the worker reported nothing)"
    return f"ns-3 run of {type(scenario).__name__} (seed={seed}, t_end={t_end:g}) {what}{tail}"

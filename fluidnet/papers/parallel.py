"""Paper items in worker processes: ``fluidnet reproduce -j N``.

:func:`run_items` keeps ``jobs`` worker processes busy with the items, one item at a time per
worker, and hands every finished item to the caller (which writes its targets and prints its
line): the order in which items finish does not matter to what is written
(:func:`fluidnet.reproduce` orders every file by the registry), so a parallel run leaves the
same targets, report and figures as a serial one.

* **Output**: a worker sends what the item prints (its standard output and error, at the level
  of file descriptors, so warnings and C libraries included) to a log file per item; the caller
  prints it after the item's line, so the items' outputs never interleave.
* **Failures**: an item that raises is reported with its traceback, and the others go on. A
  worker that dies (a crash in compiled code, the kernel's out-of-memory killer) takes only its
  item, reported with how it died and what it printed; a new worker takes its place.
* **Workers** are forked from this process once (they have the registry already), ignore
  Ctrl-C (this process stops them), run one BLAS thread, and die with this process (see
  :func:`fluidnet.sweep.workers.init_worker`). Each keeps its own ns-3 packet server between
  items, so ns-3 is loaded once per worker.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from ..errors import OptionError
from .output import Context
from .targets import Target

__all__ = ["Outcome", "run_items", "attempt", "default_jobs"]


@dataclass
class Outcome:
    """What running one item gave: its targets and files, or the error it raised."""

    targets: list[Target] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    error: str | None = None
    traceback: str = ""
    log: str = ""
    seconds: float = 0.0


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


#: ``run(item, ctx, quick) -> targets``: runs an item and checks its values
#: (:func:`fluidnet.papers.registry.run_item`).
Runner = Callable[[Any, Context, bool], list[Target]]


def attempt(item: Any, out: Path, quick: bool, run: Runner) -> Outcome:
    """``run`` one item (in this process); an exception is caught and kept."""
    started = time.perf_counter()
    ctx = Context(item.paper, item.name, out)
    outcome = Outcome()
    try:
        outcome.targets = run(item, ctx, quick)
    except Exception as exc:  # noqa: BLE001 - reported, not swallowed
        outcome.error = f"{item.paper}:{item.name} raised {type(exc).__name__}: {exc}"
        outcome.traceback = traceback.format_exc()
    outcome.files = list(ctx.files)
    outcome.seconds = time.perf_counter() - started
    return outcome


@contextlib.contextmanager
def _output_to(path: str):
    """File descriptors 1 and 2, and Python's ``sys.stdout`` and ``sys.stderr`` (whatever they
    were: a terminal, a pipe, a test's capture), written to ``path`` inside the block."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    streams = sys.stdout, sys.stderr
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
    text = None
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        text = open(os.dup(fd), "w", buffering=1, encoding="utf-8", errors="replace")  # noqa: SIM115
        sys.stdout = sys.stderr = text
        yield
    finally:
        sys.stdout, sys.stderr = streams
        if text is not None:
            with contextlib.suppress(Exception):
                text.close()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for f in (fd, *saved):
            os.close(f)


def _worker(conn: Connection, parent: int, items: Sequence[Any], run: Runner) -> None:
    """A worker's loop: receive an item's index and its log file, run it, send the outcome."""
    from ..sweep.workers import init_worker

    code = 0
    try:
        init_worker(parent)
        while True:
            try:
                message = conn.recv()
            except EOFError:
                break
            if message is None:
                break
            index, out, quick, log = message
            with _output_to(log):
                outcome = attempt(items[index], Path(out), quick, run)
                if outcome.traceback:
                    sys.stderr.write(outcome.traceback)
            conn.send(outcome)
    except BaseException:  # noqa: BLE001 - the parent reports a worker that stops
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)  # no atexit handlers of the parent's state run here


@dataclass
class _Slot:
    process: Any
    conn: Connection
    index: int | None = None
    log: str = ""


def _death(process: Any) -> str:
    process.join(timeout=5)
    code = process.exitcode
    if code is None:
        return "stopped answering"
    if code < 0:
        import signal

        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with status {code}"


def _read(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def run_items(
    items: Sequence[Any],
    out: Path,
    quick: bool,
    jobs: int,
    done: Callable[[int, Outcome], None],
    run: Runner,
) -> None:
    """``run`` ``items`` on ``jobs`` worker processes; ``done(index, outcome)`` once per item,
    in this process, as each finishes (in no particular order).

    Raises
    ------
    OptionError
        For ``jobs`` < 1.
    KeyboardInterrupt
        After stopping the workers (the items that finished were handed over).
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise OptionError(f"jobs = {jobs!r} must be a whole number >= 1")
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    logs = tempfile.mkdtemp(prefix="fluidnet-reproduce-")
    queue = deque(range(len(items)))
    slots: list[_Slot] = []

    def start() -> _Slot:
        ours, theirs = context.Pipe()
        process = context.Process(
            target=_worker, args=(theirs, os.getpid(), items, run), name="fluidnet-reproduce"
        )
        process.start()
        theirs.close()
        slot = _Slot(process, ours)
        slots.append(slot)
        return slot

    def feed(slot: _Slot) -> None:
        if not queue:
            slot.index = None
            return
        slot.index = queue.popleft()
        item = items[slot.index]
        slot.log = os.path.join(logs, f"{slot.index}-{item.paper}-{item.name}.log")
        slot.conn.send((slot.index, str(out), quick, slot.log))

    try:
        for _ in range(min(jobs, len(items))):
            feed(start())
        while any(s.index is not None for s in slots):
            busy = [s for s in slots if s.index is not None]
            ready = wait([s.conn for s in busy] + [s.process.sentinel for s in busy])
            for slot in busy:
                if slot.conn not in ready and slot.process.sentinel not in ready:
                    continue
                index = slot.index
                assert index is not None
                outcome = None
                try:
                    if slot.conn.poll():
                        outcome = slot.conn.recv()
                except (EOFError, OSError):
                    outcome = None
                if outcome is None:  # the worker died with the item
                    item = items[index]
                    how = _death(slot.process)
                    outcome = Outcome(
                        error=f"{item.paper}:{item.name}: its worker process {how} while "
                        "running it",
                        log=_read(slot.log),
                    )
                    slots.remove(slot)
                    slot.conn.close()
                    done(index, outcome)
                    if queue:
                        feed(start())
                    continue
                outcome.log = _read(slot.log)
                with contextlib.suppress(OSError):
                    os.unlink(slot.log)
                done(index, outcome)
                feed(slot)
    finally:
        for slot in slots:
            with contextlib.suppress(OSError, ValueError):
                slot.conn.send(None)
        for slot in slots:
            slot.process.join(timeout=2)
            if slot.process.is_alive():
                slot.process.kill()
                slot.process.join(timeout=5)
            slot.conn.close()
        shutil.rmtree(logs, ignore_errors=True)

"""fluidnet.sweep.executors: every executor gives the serial results in the items' order, the
chunking rules hold, and bad executors or functions are refused with an OptionError."""

import concurrent.futures as cf
import math

import numpy as np
import pytest
from sweep_helpers import square_root_or_fail

from fluidnet.errors import OptionError
from fluidnet.sweep.executors import (
    MAX_CHUNK_ITEMS,
    SERIAL_CHUNK_SECONDS,
    TASKS_PER_WORKER,
    TASKS_PER_WORKER_WITH_STORE,
    FuturesExecutor,
    ProcessExecutor,
    SerialExecutor,
    resolve_executor,
)

ITEMS = [float(x) for x in np.linspace(0.0, 50.0, 37)]
EXPECTED = [{"root": math.sqrt(x), "twice": 2.0 * x} for x in ITEMS]


@pytest.mark.parametrize(
    "make",
    [
        SerialExecutor,
        lambda: ProcessExecutor(2),
        lambda: ProcessExecutor(2, chunksize=5),
        lambda: FuturesExecutor(cf.ThreadPoolExecutor(3), chunksize=4),
    ],
    ids=["serial", "processes", "processes-chunks-of-5", "threads"],
)
def test_every_executor_gives_the_closed_form_in_order(make):
    out = make().map(square_root_or_fail, ITEMS, progress=False)
    assert out == EXPECTED


def test_map_chunks_hands_every_index_once():
    seen = []
    ProcessExecutor(2, chunksize=3).map_chunks(
        square_root_or_fail,
        ITEMS,
        lambda idx, out: seen.extend(zip(idx, out, strict=True)),
        progress=False,
    )
    assert sorted(i for i, _ in seen) == list(range(len(ITEMS)))
    assert all(r == EXPECTED[i] for i, r in seen)


def test_an_item_error_reaches_the_caller_from_a_worker():
    with pytest.raises(ValueError, match="no real square root of -1.0"):
        ProcessExecutor(2).map(square_root_or_fail, [1.0, -1.0, 4.0], progress=False)


def test_default_chunk_sizes():
    ex = ProcessExecutor(3)
    assert ex.chunk_size(120) == math.ceil(120 / (TASKS_PER_WORKER * 3))
    assert ex.chunk_size(120, store=True) == math.ceil(120 / (TASKS_PER_WORKER_WITH_STORE * 3))
    assert ex.chunk_size(10**9) == MAX_CHUNK_ITEMS
    assert ex.chunk_size(0) == 1
    assert ProcessExecutor(3, chunksize=7).chunk_size(10**6) == 7


def test_serial_chunks_grow_while_items_are_fast_and_shrink_when_slow():
    ex = SerialExecutor()
    assert ex.chunk_size(1000) == 1
    assert ex.next_chunk_size(8, 0.0) == 16
    assert ex.next_chunk_size(MAX_CHUNK_ITEMS, 0.0) == MAX_CHUNK_ITEMS
    assert ex.next_chunk_size(8, 2 * SERIAL_CHUNK_SECONDS) == 4
    assert ex.next_chunk_size(1, 2 * SERIAL_CHUNK_SECONDS) == 1
    assert ex.next_chunk_size(8, 0.5 * SERIAL_CHUNK_SECONDS) == 8


@pytest.mark.parametrize(
    ("spec", "kind", "workers"),
    [
        (None, SerialExecutor, 1),
        ("serial", SerialExecutor, 1),
        ("Processes", ProcessExecutor, None),
        (1, SerialExecutor, 1),
        (3, ProcessExecutor, 3),
        (np.int64(2), ProcessExecutor, 2),
    ],
)
def test_resolve_executor(spec, kind, workers):
    ex = resolve_executor(spec)
    assert type(ex) is kind
    if workers is not None:
        assert ex.workers == workers


def test_resolve_executor_passes_objects_through():
    ex = ProcessExecutor(2)
    assert resolve_executor(ex) is ex
    pool = cf.ThreadPoolExecutor(2)
    wrapped = resolve_executor(pool)
    assert isinstance(wrapped, FuturesExecutor) and wrapped.pool is pool and wrapped.workers == 2
    pool.shutdown()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("threads", "executor = 'threads': use 'serial'"),
        (0, "the number of processes must be >= 1"),
        (True, "is not an executor"),
        (2.5, "is not an executor"),
    ],
)
def test_resolve_executor_refuses(spec, message):
    with pytest.raises(OptionError, match=message):
        resolve_executor(spec)


@pytest.mark.parametrize("bad", [0, -2, True])
def test_process_executor_refuses_bad_worker_counts(bad):
    with pytest.raises(OptionError, match="max_workers"):
        ProcessExecutor(bad)


def test_unpicklable_function_is_refused_before_any_work():
    with pytest.raises(OptionError, match="cannot be pickled"):
        ProcessExecutor(2).map(lambda x: x, [1, 2], progress=False)
    # the serial executor runs it
    assert SerialExecutor().map(lambda x: x + 1, [1, 2], progress=False) == [2, 3]


def test_chunks_finished_but_not_handed_over_are_stored_when_the_sweep_stops(tmp_path):
    """Ctrl-C while the first result is handed over: the chunks the threads finished meanwhile
    (the others in flight, two per worker, and one submitted as the first is handed over) are
    stored with it, not dropped; a resumed sweep computes only the rest."""
    import threading
    import time

    from fluidnet.sweep.store import Store

    finished: list[float] = []
    lock = threading.Lock()

    def counted(x):
        out = square_root_or_fail(x)
        with lock:
            finished.append(x)
        return out

    counted.__sweep_ignore__ = ("lock", "finished")  # bookkeeping: not the results

    ex = FuturesExecutor(cf.ThreadPoolExecutor(2), chunksize=1)
    # the first chunk, those in flight with it, and the one submitted as it is handed over
    kept = ex.in_flight() + 1

    def receive(indices, out):
        deadline = time.monotonic() + 60  # the other chunks in flight finish meanwhile
        while len(finished) < kept and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # and their futures are marked done
        raise KeyboardInterrupt

    path = tmp_path / "roots"
    said = f"with {kept} of {len(ITEMS)} items done; they are kept"
    with pytest.raises(KeyboardInterrupt, match=said):
        ex.map_chunks(counted, ITEMS, receive, progress=False, store=path)
    assert kept > 1 and Store(path).progress() == (kept, len(ITEMS))
    seen: dict[int, dict] = {}
    SerialExecutor().map_chunks(
        counted,
        ITEMS,
        lambda idx, out: seen.update(zip((int(i) for i in idx), out, strict=True)),
        progress=False,
        store=path,
    )
    assert [seen[i] for i in range(len(ITEMS))] == EXPECTED

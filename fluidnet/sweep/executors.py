"""Executors: map a function over items, in chunks, serially, on processes or on Dask.

Every executor shares one :meth:`map` (in :class:`Executor`): it keeps the items' order, shows
a progress bar, cuts the items into chunks, and — given ``store=`` — loads the finished items
from a checkpoint store (:mod:`fluidnet.sweep.store`), computes only the others and writes them
as they complete. Subclasses only say how chunks run (:meth:`Executor._run`).

Work streams: items are read from their sequence chunk by chunk (a lazy sequence, such as the
points of a grid, is never listed whole), at most a few chunks per worker are in flight, and
:meth:`Executor.map_chunks` hands each finished chunk to the caller, so a sweep holds its
result and little more.

Interrupting a sweep (Ctrl-C) stops its worker processes or cancels its Dask tasks (after
waiting up to :data:`DASK_STOP_GRACE_S` for the results on their way from the cluster), writes
what finished to the store, and raises :class:`KeyboardInterrupt` saying how much was kept.
SIGTERM (sent by ``timeout``, ``kill`` and batch schedulers) and SIGHUP (a closed terminal) do
the same while a sweep runs, raising :class:`~fluidnet.sweep.signals.Terminated` (a
``KeyboardInterrupt``; see :mod:`fluidnet.sweep.signals`).
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import math
import os
import pickle
import signal
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, TypeGuard

import numpy as np

from ..errors import OptionError, StoreError
from ..progress import progress_bar
from ..threads import single_threaded_blas
from .signals import Terminated, stop_signals
from .store import Checkpoint, Store, as_store
from .workers import init_worker

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

    from dask.distributed import Client

__all__ = [
    "Executor",
    "SerialExecutor",
    "ProcessExecutor",
    "FuturesExecutor",
    "DaskExecutor",
    "resolve_executor",
    "TASKS_PER_WORKER",
    "TASKS_PER_WORKER_WITH_STORE",
    "MAX_CHUNK_ITEMS",
    "CHUNKS_IN_FLIGHT_PER_WORKER",
    "SERIAL_CHUNK_SECONDS",
]

#: Default chunking: about this many tasks per worker (enough to balance the load).
TASKS_PER_WORKER = 4
#: With a store, smaller chunks: a kill loses at most the chunks in flight.
TASKS_PER_WORKER_WITH_STORE = 16
#: Default chunks hold at most this many items (the results of a chunk in flight are memory).
MAX_CHUNK_ITEMS = 1024
#: Chunks submitted ahead per worker: enough to keep every worker busy, few enough that the
#: items and results in flight stay small.
CHUNKS_IN_FLIGHT_PER_WORKER = 2
#: A stopped Dask sweep waits this long (seconds) for the chunks it had submitted: a chunk a
#: worker has just finished reaches this client through the worker's, the scheduler's and the
#: client's event loops, which lag by tens of milliseconds on a busy machine (a finished item
#: was lost that way in about one SIGTERM of ten on 2 loaded cores); one that arrives within
#: this time is stored with the others.
DASK_STOP_GRACE_S = 0.5
#: The serial executor grows its chunks while they take less than this (seconds).
SERIAL_CHUNK_SECONDS = 0.2

_MISSING = object()


def _run_chunk(fn: Callable[[Any], Any], chunk: Sequence[Any]) -> list[Any]:
    return [fn(item) for item in chunk]


def _run_chunk_one_blas_thread(fn: Callable[[Any], Any], chunk: Sequence[Any]) -> list[Any]:
    with single_threaded_blas():
        return [fn(item) for item in chunk]


def _check_picklable(fn, where: str) -> None:
    try:
        pickle.dumps(fn)
    except Exception as exc:  # pickling raises many types
        raise OptionError(
            f"executor={where!r} sends the function to other processes, but it cannot be "
            f"pickled ({type(exc).__name__}: {exc}); use a module-level function or a "
            "picklable object instead of a lambda or a closure, or executor='serial'"
        ) from exc


def _spans(done: np.ndarray | None, n: int, size: Callable[[], int]) -> Iterator[range]:
    """Ranges of at most ``size()`` (asked before each range) consecutive indices covering
    those not ``done`` (all of ``range(n)`` when ``done`` is None), in order, made as they
    are needed."""
    if done is None:
        starts, stops = [0], [n]
    else:
        one = np.ones(1, dtype=np.int8)
        edges = np.flatnonzero(np.diff(np.concatenate((one, done.view(np.int8), one))))
        starts, stops = edges[0::2].tolist(), edges[1::2].tolist()
    for a, b in zip(starts, stops, strict=True):
        i = a
        while i < b:
            j = min(i + max(1, size()), b)
            yield range(i, j)
            i = j


def _take(items: Sequence[Any], span: range) -> list[Any]:
    """``[items[i] for i in span]`` (by slicing where the sequence can)."""
    try:
        chunk = items[span.start : span.stop]
    except (TypeError, KeyError):
        chunk = None
    if isinstance(chunk, list) and len(chunk) == len(span):
        return chunk
    return [items[i] for i in span]


def _in_flight(
    submit: Callable[[list[Any]], cf.Future],
    chunks: Iterable[list[Any]],
    limit: int,
    unread: list[tuple[int, list[Any]]] | None = None,
) -> Iterator[tuple[int, list[Any]]]:
    """Yield ``(chunk number, results)`` as futures complete, keeping at most ``limit``
    chunks submitted; pending ones are cancelled when the caller stops early, and the results
    of those that had finished are put in ``unread`` (an interrupted sweep stores them)."""
    numbered = enumerate(chunks)
    futures: dict[cf.Future, int] = {}
    try:
        for k, chunk in itertools.islice(numbered, max(1, limit)):
            futures[submit(chunk)] = k
        while futures:
            done, _ = cf.wait(futures, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                k = futures.pop(fut)
                out = fut.result()
                for k2, chunk in itertools.islice(numbered, 1):
                    futures[submit(chunk)] = k2
                yield k, out
    finally:
        for fut, k in futures.items():
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                if unread is not None:
                    unread.append((k, fut.result()))
            else:
                fut.cancel()


class Executor:
    """Base class: the shared :meth:`map`; subclasses define ``_run`` and ``workers``.

    Attributes
    ----------
    chunksize : int or None
        Items per task; default: about :data:`TASKS_PER_WORKER` tasks per worker
        (:data:`TASKS_PER_WORKER_WITH_STORE` with a store).
    """

    name = "executor"
    chunksize: int | None = None

    @property
    def workers(self) -> int:
        return 1

    def _check(self, fn: Callable[[Any], Any]) -> None:
        """Raise OptionError when ``fn`` cannot run on this executor."""

    def _run(
        self, fn: Callable[[Any], Any], chunks: Iterable[list[Any]]
    ) -> Generator[tuple[int, list[Any]], None, None]:
        """Yield ``(chunk number, results)`` as chunks complete; ``chunks`` is an iterator
        (read as work is submitted: at most :meth:`in_flight` chunks ahead)."""
        raise NotImplementedError

    def in_flight(self) -> int:
        """Chunks submitted at a time (:data:`CHUNKS_IN_FLIGHT_PER_WORKER` per worker)."""
        return CHUNKS_IN_FLIGHT_PER_WORKER * self.workers

    def next_chunk_size(self, size: int, seconds: float) -> int:
        """Items per task after a chunk of ``size`` items took ``seconds`` (here: unchanged;
        not asked with a store).

        Parameters
        ----------
        size : int
            Items in the chunk that just finished.
        seconds : float
            Wall time since the previous chunk finished (or since the work started).

        Returns
        -------
        int
            Items in the next chunks, at least 1.
        """
        return size

    def chunk_size(self, n: int, store: bool = False) -> int:
        """Items per task for ``n`` items (at most :data:`MAX_CHUNK_ITEMS` by default).

        Parameters
        ----------
        n : int
            Items still to compute.
        store : bool, default False
            Whether results go to a checkpoint store: smaller chunks
            (:data:`TASKS_PER_WORKER_WITH_STORE` tasks per worker instead of
            :data:`TASKS_PER_WORKER`), so that a kill loses less.

        Returns
        -------
        int
            ``chunksize`` when set, else ``ceil(n / (tasks per worker * workers))`` clipped to
            ``[1, MAX_CHUNK_ITEMS]``.
        """
        if self.chunksize is not None:
            return max(1, int(self.chunksize))
        per = TASKS_PER_WORKER_WITH_STORE if store else TASKS_PER_WORKER
        return max(1, min(MAX_CHUNK_ITEMS, math.ceil(n / (per * self.workers))))

    def map(
        self,
        fn: Callable[[Any], Any],
        items: Iterable[Any],
        *,
        progress: bool | None = None,
        desc: str | None = None,
        store: Store | str | os.PathLike | None = None,
        progress_options: Mapping[str, Any] | None = None,
    ) -> list[Any]:
        """``[fn(item) for item in items]``, in order.

        Parameters
        ----------
        fn : callable
            One argument; picklable for process and Dask executors.
        items : iterable
        progress : bool, optional
            tqdm progress bar (default: for 200 items or more, on a terminal or notebook).
        desc : str, optional
            Label of the bar.
        store : path or Store, optional
            Checkpoint store: finished items are loaded from it, the others computed and
            written as they complete (see :mod:`fluidnet.sweep.store`).
        progress_options : dict, optional
            Passed to :func:`fluidnet.progress.progress_bar`.

        Raises
        ------
        StoreError
            When the store was made by a different call (the message says what differs), or
            the disk under it is full.
        KeyboardInterrupt
            On Ctrl-C, after stopping the workers and saving the finished items to the store.
        """
        items = items if isinstance(items, Sequence) else list(items)
        results: list[Any] = [_MISSING] * len(items)

        def receive(indices: Sequence[int] | np.ndarray, out: list[Any]) -> None:
            for i, r in zip(indices, out, strict=True):
                results[i] = r

        self.map_chunks(
            fn,
            items,
            receive,
            progress=progress,
            desc=desc,
            store=store,
            progress_options=progress_options,
        )
        return results

    def map_chunks(
        self,
        fn: Callable[[Any], Any],
        items: Sequence[Any],
        receive: Callable[[Sequence[int] | np.ndarray, list[Any]], None],
        *,
        progress: bool | None = None,
        desc: str | None = None,
        store: Store | str | os.PathLike | None = None,
        progress_options: Mapping[str, Any] | None = None,
    ) -> None:
        """Compute ``fn(item)`` for every item and hand the results over as they complete:
        ``receive(indices, results)`` once per chunk (the results of ``items[i]`` for ``i`` in
        ``indices``), every index exactly once, in no particular order (a store's items first).

        Memory stays proportional to what ``receive`` keeps: items are read from the sequence
        a chunk at a time (at most :meth:`in_flight` chunks ahead), and results are not
        collected here.

        Parameters
        ----------
        fn : callable
            One argument; picklable for process and Dask executors.
        items : sequence
            The items (another iterable is read into a list first).
        receive : callable
            ``receive(indices, results)``: called in this process once per finished chunk,
            ``indices`` a sequence of positions in ``items`` and ``results`` the list of
            ``fn`` of those items, in the same order.
        progress : bool, optional
            tqdm progress bar (default: for 200 items or more, on a terminal or notebook).
        desc : str, optional
            Label of the bar.
        store : path or Store, optional
            Checkpoint store: finished items are handed over from it first, the others
            computed and written as they complete (see :mod:`fluidnet.sweep.store`).
        progress_options : dict, optional
            Passed to :func:`fluidnet.progress.progress_bar`.

        Raises
        ------
        OptionError
            When ``fn`` cannot run on this executor (e.g. not picklable for processes).
        StoreError
            When the store was made by a different call, the disk under it is full, or it
            cannot be written and items are missing from it.
        KeyboardInterrupt
            On Ctrl-C, after stopping the workers and saving the finished items to the store;
            :class:`~fluidnet.sweep.signals.Terminated` (a ``KeyboardInterrupt``) on SIGTERM
            or SIGHUP, likewise.
        """
        if not isinstance(items, Sequence):
            items = list(items)
        self._check(fn)
        with stop_signals() as handler:
            self._map_chunks(fn, items, receive, handler, progress, desc, store, progress_options)

    def _map_chunks(
        self, fn, items, receive, handler, progress, desc, store, progress_options
    ) -> None:
        """:meth:`map_chunks` with SIGTERM and SIGHUP raising ``Terminated`` (``handler``)."""
        n = len(items)
        target = as_store(store)
        ckpt = Checkpoint(target, fn, items) if target is not None else None
        try:
            done_mask = None
            if ckpt is not None:
                done_mask = np.zeros(n, dtype=bool)
                for indices, out in ckpt.parts():
                    fresh = ~done_mask[indices]  # a part that repeats items: once each
                    if not fresh.all():
                        indices = indices[fresh]
                        out = [r for r, f in zip(out, fresh, strict=True) if f]
                    if indices.size:
                        receive(indices, out)
                        done_mask[indices] = True
                ckpt.require_writable(int(done_mask.sum()))
            done = 0 if done_mask is None else int(done_mask.sum())
            loaded = done
            size = [self.chunk_size(n - done, ckpt is not None)]
            spans: dict[int, range] = {}

            def chunks() -> Iterator[list[Any]]:
                for k, span in enumerate(_spans(done_mask, n, lambda: size[0])):
                    spans[k] = span
                    yield _take(items, span)

            options = dict(progress_options or {})
            # chunks that had finished but were not handed over when the sweep stopped (put
            # here by _run as it is closed): stored with the others
            self._unread: list[tuple[int, list[Any]]] = []

            def keep_unread() -> None:
                for k, out in self._unread:
                    span = spans.pop(k, None)
                    if span is not None and ckpt is not None:
                        ckpt.add(span, out)
                self._unread = []

            with progress_bar(n, progress, desc, initial=done, **options) as bar:
                running = self._run(fn, chunks())
                last = time.monotonic()
                try:
                    for k, out in running:
                        now = time.monotonic()
                        span = spans.pop(k)
                        if ckpt is None:  # with a store, chunks keep their size
                            size[0] = self.next_chunk_size(len(span), now - last)
                        last = now
                        if ckpt is not None:  # queued first: a stop inside receive keeps it
                            ckpt.add(span, out)
                        receive(span, out)
                        done += len(out)
                        bar.update(len(out))
                except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP (Terminated)
                    if handler is not None:
                        handler.saving = True  # a second SIGTERM does not cut the write short
                    running.close()
                    keep_unread()
                    kept = ""
                    if ckpt is not None:
                        assert target is not None  # the checkpoint's store
                        ckpt.flush()
                        done = loaded + ckpt.written  # what the store holds
                        kept = f"; they are kept in {target.path}: run the same call to resume"
                    how = "interrupted"
                    if isinstance(exc, Terminated):
                        how = f"stopped by {signal.Signals(exc.signum).name}"
                    message = f"sweep {how} with {done} of {n} items done{kept}"
                    if isinstance(exc, Terminated):
                        raise Terminated(exc.signum, message) from None
                    raise KeyboardInterrupt(message) from None
                except BaseException:
                    running.close()
                    keep_unread()
                    if ckpt is not None:  # keep what finished, unless writing is what failed
                        try:
                            ckpt.flush()
                        except StoreError:
                            ckpt.discard_pending()
                    raise
                finally:
                    running.close()  # stops the workers unless every chunk finished
                if ckpt is not None:
                    ckpt.flush()
        finally:
            if ckpt is not None:
                ckpt.close()


class SerialExecutor(Executor):
    """Run every item in this process, in order.

    With a store, items go one at a time (the store follows every item: a kill loses at most
    the item running). Without one, items go one at a time while they are slow and in growing
    chunks while they are fast (up to :data:`SERIAL_CHUNK_SECONDS` of work each, at most
    :data:`MAX_CHUNK_ITEMS` items), so that a sweep of a cheap function is not spent on
    bookkeeping.
    """

    name = "serial"

    def chunk_size(self, n: int, store: bool = False) -> int:
        """Items in the first task: always 1, as how long an item takes is not known yet.

        Parameters
        ----------
        n : int
            Items still to compute (not used).
        store : bool, default False
            Whether results go to a checkpoint store (not used: with a store every chunk keeps
            this size of 1).

        Returns
        -------
        int
            1.
        """
        return 1  # the first item alone: how long items take is not known yet

    def next_chunk_size(self, size: int, seconds: float) -> int:
        """Items per task after a chunk of ``size`` items took ``seconds``: doubled (at most
        :data:`MAX_CHUNK_ITEMS`) below a quarter of :data:`SERIAL_CHUNK_SECONDS`, halved (at
        least 1) above it, else unchanged.

        Parameters
        ----------
        size : int
            Items in the chunk that just finished.
        seconds : float
            Wall time the chunk took.

        Returns
        -------
        int
        """
        if seconds < SERIAL_CHUNK_SECONDS / 4:
            return min(MAX_CHUNK_ITEMS, 2 * size)
        if seconds > SERIAL_CHUNK_SECONDS:
            return max(1, size // 2)
        return size

    def _run(self, fn, chunks):
        for k, chunk in enumerate(chunks):
            yield k, [fn(item) for item in chunk]

    def in_flight(self) -> int:
        return 1

    def __repr__(self) -> str:
        return "SerialExecutor()"


class FuturesExecutor(Executor):
    """Adapt any :class:`concurrent.futures.Executor` (items sent in chunks).

    Parameters
    ----------
    pool : concurrent.futures.Executor
        Not shut down here: an interrupted sweep only cancels its pending tasks.
    chunksize : int, optional
        Items per task (default: see :meth:`Executor.chunk_size`).
    workers : int, optional
        Used for the default chunk size (default: the pool's ``_max_workers``, else the CPU
        count).
    """

    name = "futures"

    def __init__(
        self, pool: cf.Executor, chunksize: int | None = None, workers: int | None = None
    ) -> None:
        self.pool = pool
        self.chunksize = chunksize
        self._workers = workers or getattr(pool, "_max_workers", None) or os.cpu_count() or 1

    @property
    def workers(self) -> int:
        return int(self._workers)

    def _check(self, fn) -> None:
        if isinstance(self.pool, cf.ProcessPoolExecutor):
            _check_picklable(fn, "processes")

    def _run(self, fn, chunks):
        yield from _in_flight(
            lambda chunk: self.pool.submit(_run_chunk, fn, chunk),
            chunks,
            self.in_flight(),
            getattr(self, "_unread", None),
        )

    def __repr__(self) -> str:
        return f"FuturesExecutor({self.pool!r})"


class ProcessExecutor(Executor):
    """A process pool, created per :meth:`map` call (nothing lingers between sweeps).

    Its workers use one BLAS thread, ignore Ctrl-C, SIGTERM and SIGHUP (the parent handles them
    and stops the workers), and exit when the parent dies, even by SIGKILL (see
    :mod:`fluidnet.sweep.workers`). An interrupted or failed sweep kills them at once.

    Parameters
    ----------
    max_workers : int, optional
        Default: the CPU count.
    chunksize : int, optional
        Items per task (default: see :meth:`Executor.chunk_size`).
    mp_context : multiprocessing context, optional
    """

    name = "processes"

    def __init__(
        self,
        max_workers: int | None = None,
        chunksize: int | None = None,
        mp_context: BaseContext | None = None,
    ) -> None:
        if max_workers is not None and (isinstance(max_workers, bool) or int(max_workers) < 1):
            raise OptionError(f"max_workers = {max_workers!r} must be a positive integer")
        self.max_workers = int(max_workers) if max_workers is not None else (os.cpu_count() or 1)
        self.chunksize = chunksize
        self.mp_context = mp_context

    @property
    def workers(self) -> int:
        return self.max_workers

    def _check(self, fn) -> None:
        _check_picklable(fn, "processes")

    def _run(self, fn, chunks):
        chunks = iter(chunks)
        first = list(itertools.islice(chunks, self.max_workers))
        if not first:
            return
        pool = cf.ProcessPoolExecutor(
            max_workers=len(first),
            mp_context=self.mp_context,
            initializer=init_worker,
            initargs=(os.getpid(),),
        )
        submit = lambda chunk: pool.submit(_run_chunk, fn, chunk)  # noqa: E731
        finished = False
        try:
            yield from _in_flight(
                submit,
                itertools.chain(first, chunks),
                self.in_flight(),
                getattr(self, "_unread", None),
            )
            finished = True
        finally:
            if finished:
                pool.shutdown(wait=True)
            else:  # interrupted, failed, or abandoned: stop the workers now
                _terminate(pool)

    def __repr__(self) -> str:
        return f"ProcessExecutor(max_workers={self.max_workers})"


def _terminate(pool: cf.ProcessPoolExecutor) -> None:
    """Stop a process pool without waiting for its running tasks (SIGKILL: the workers ignore
    SIGINT, SIGTERM and SIGHUP, which the parent handles)."""
    processes = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        if p.is_alive():
            p.kill()
    for p in processes:
        p.join(timeout=10)


def _is_dask_client(obj: Any) -> TypeGuard[Client]:
    return type(obj).__name__ == "Client" and type(obj).__module__.startswith("distributed")


class DaskExecutor(Executor):
    """Run on a ``dask.distributed`` cluster (``pip install 'fluidnet[dask]'``).

    A worker that dies mid-sweep costs nothing but time: the scheduler runs its tasks again
    elsewhere.

    Parameters
    ----------
    client : dask.distributed.Client or str, optional
        A client, or the address of a running scheduler (``"tcp://host:8786"``: connected for
        each sweep and disconnected after it). Default: the current client, or a new local
        cluster (processes, one per core) kept for the rest of the session.
    chunksize : int, optional
        Items per task (default: see :meth:`Executor.chunk_size`).

    Raises
    ------
    ImportError
        When ``dask.distributed`` is not installed.
    """

    name = "dask"

    def __init__(self, client: Client | str | None = None, chunksize: int | None = None) -> None:
        try:
            from dask import distributed
        except ImportError as exc:
            raise ImportError(
                "executor='dask' needs dask.distributed: pip install 'fluidnet[dask]'"
            ) from exc
        self.address: str | None = None
        if isinstance(client, str):
            self.address, client = client, None
        elif client is None:
            try:
                client = distributed.get_client()
            except ValueError:
                client = distributed.Client()
        elif not _is_dask_client(client):
            raise OptionError(
                f"client = {client!r}: give a dask.distributed.Client or a scheduler address"
            )
        self.client = client
        self.chunksize = chunksize

    @property
    def workers(self) -> int:
        assert self.client is not None  # set while a map runs, or given
        info = self.client.scheduler_info().get("workers", {})
        return max(1, sum(int(w.get("nthreads", 1)) for w in info.values()))

    def map_chunks(
        self,
        fn: Callable[[Any], Any],
        items: Sequence[Any],
        receive: Callable[[Sequence[int] | np.ndarray, list[Any]], None],
        **kwargs: Any,
    ) -> None:
        """:meth:`Executor.map_chunks` on the Dask cluster; an executor made with a scheduler
        address connects for this call and closes the connection after it.

        Parameters
        ----------
        fn : callable
            One argument, picklable.
        items : sequence
            The items.
        receive : callable
            ``receive(indices, results)``, called once per finished chunk.
        **kwargs
            ``progress``, ``desc``, ``store`` and ``progress_options`` of
            :meth:`Executor.map_chunks`.

        Raises
        ------
        OptionError
            When no Dask scheduler answers at the executor's address.
        StoreError, KeyboardInterrupt
            As :meth:`Executor.map_chunks`.
        """
        if self.address is None or self.client is not None:
            return super().map_chunks(fn, items, receive, **kwargs)
        from dask.distributed import Client

        try:
            self.client = Client(self.address, set_as_default=False)
        except OSError as exc:
            raise OptionError(
                f"executor = {self.address!r}: no Dask scheduler answers there ({exc})"
            ) from exc
        try:
            return super().map_chunks(fn, items, receive, **kwargs)
        finally:
            self.client.close()
            self.client = None

    def _run(self, fn, chunks):
        from dask.distributed import as_completed

        client = self.client
        assert client is not None  # set while a map runs, or given
        numbered = enumerate(chunks)
        index: dict[Any, int] = {}  # by the futures' keys
        pending: dict[Any, Any] = {}
        running = as_completed(loop=client.loop)  # this client: there may be no default one

        def submit(k: int, chunk: list[Any]) -> None:
            fut = client.submit(_run_chunk_one_blas_thread, fn, chunk, pure=False)
            index[fut.key], pending[fut.key] = k, fut
            running.add(fut)

        try:
            for k, chunk in itertools.islice(numbered, max(1, self.in_flight())):
                submit(k, chunk)
            for fut in running:
                k, out = index.pop(fut.key), fut.result()
                del pending[fut.key]
                fut.release()
                for k2, chunk in itertools.islice(numbered, 1):
                    submit(k2, chunk)
                yield k, out
        finally:
            unread = getattr(self, "_unread", None)
            try:
                if unread is not None and pending:
                    _settle(list(pending.values()))
            finally:  # a second Ctrl-C during the wait: what finished is kept all the same
                for key, f in pending.items():
                    if unread is not None and f.done() and f.status == "finished":
                        try:
                            unread.append((index[key], f.result()))
                        except Exception:  # noqa: BLE001 - gone with the cluster: not kept
                            pass
                client.cancel([f for f in pending.values() if not f.done()])

    def __repr__(self) -> str:
        return f"DaskExecutor({self.address or self.client!r})"


def _settle(futures: list[Any]) -> None:
    """Wait up to :data:`DASK_STOP_GRACE_S` for Dask futures of a stopped sweep to finish (a
    finished chunk still on its way to this client), whatever the cluster's state."""
    from dask.distributed import wait

    try:
        wait(futures, timeout=DASK_STOP_GRACE_S)
    except Exception:  # noqa: BLE001 - still running (a timeout), or gone with the cluster
        pass


#: What ``executor=`` accepts (see :func:`resolve_executor`).
ExecutorSpec: TypeAlias = "Executor | cf.Executor | Client | str | int | None"


def resolve_executor(spec: ExecutorSpec = None) -> Executor:
    """An executor object from a specification.

    ``None`` or ``"serial"``; ``"processes"`` or a number of processes; ``"dask"`` (the current
    Dask client, or a new local cluster), a scheduler address such as ``"tcp://host:8786"``, or
    a ``dask.distributed.Client``; an :class:`Executor`; any
    :class:`concurrent.futures.Executor`.

    Parameters
    ----------
    spec : None, str, int, Executor, dask.distributed.Client or concurrent.futures.Executor
        The specification (see above).

    Returns
    -------
    Executor

    Raises
    ------
    OptionError
        For an unknown specification.
    """
    if spec is None or (isinstance(spec, str) and spec.lower() == "serial"):
        return SerialExecutor()
    if isinstance(spec, str):
        key = spec.lower()
        if key in ("processes", "process"):
            return ProcessExecutor()
        if key == "dask":
            return DaskExecutor()
        if "://" in spec:
            return DaskExecutor(spec)
        raise OptionError(
            f"executor = {spec!r}: use 'serial', 'processes', 'dask', a Dask scheduler address "
            "('tcp://host:port'), a number of processes, an executor object or a "
            "concurrent.futures.Executor"
        )
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        if spec < 1:
            raise OptionError(f"executor = {spec!r}: the number of processes must be >= 1")
        return SerialExecutor() if spec == 1 else ProcessExecutor(int(spec))
    if isinstance(spec, Executor):
        return spec
    if isinstance(spec, cf.Executor):
        return FuturesExecutor(spec)
    if _is_dask_client(spec):
        return DaskExecutor(spec)
    raise OptionError(
        f"executor = {spec!r} ({type(spec).__name__}) is not an executor: use 'serial', "
        "'processes', 'dask', a Dask scheduler address or Client, a number of processes or a "
        "concurrent.futures.Executor"
    )

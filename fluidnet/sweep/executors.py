"""Executors: map a function over items, in chunks, serially, on processes or on Dask.

Every executor shares one :meth:`map` (in :class:`Executor`): it keeps the items' order, shows
a progress bar, cuts the items into chunks, and — given ``store=`` — loads the finished items
from a checkpoint store (:mod:`fluidnet.sweep.store`), computes only the others and writes them
as they complete. Subclasses only say how chunks run (:meth:`Executor._run`).

Interrupting a sweep (Ctrl-C) stops its worker processes or cancels its Dask tasks, writes
what finished to the store, and raises :class:`KeyboardInterrupt` saying how much was kept.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import os
import pickle
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import OptionError
from ..progress import progress_bar
from ..threads import single_threaded_blas
from .store import Checkpoint, Store, as_store
from .workers import init_worker

__all__ = [
    "Executor",
    "SerialExecutor",
    "ProcessExecutor",
    "FuturesExecutor",
    "DaskExecutor",
    "resolve_executor",
    "TASKS_PER_WORKER",
    "TASKS_PER_WORKER_WITH_STORE",
]

#: Default chunking: about this many tasks per worker (enough to balance the load).
TASKS_PER_WORKER = 4
#: With a store, smaller chunks: a kill loses at most the chunks in flight.
TASKS_PER_WORKER_WITH_STORE = 16

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


def _runs(indices: Sequence[int], size: int) -> list[list[int]]:
    """Cut sorted indices into chunks of at most ``size`` consecutive indices."""
    chunks: list[list[int]] = []
    for i in indices:
        if chunks and len(chunks[-1]) < size and chunks[-1][-1] == i - 1:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    return chunks


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
        self, fn: Callable[[Any], Any], chunks: list[list[Any]]
    ) -> Iterator[tuple[int, list[Any]]]:
        """Yield ``(chunk index, results)`` as chunks complete."""
        raise NotImplementedError

    def chunk_size(self, n: int, store: bool = False) -> int:
        """Items per task for ``n`` items."""
        if self.chunksize is not None:
            return max(1, int(self.chunksize))
        per = TASKS_PER_WORKER_WITH_STORE if store else TASKS_PER_WORKER
        return max(1, math.ceil(n / (per * self.workers)))

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
            When the store was made by a different call (the message says what differs).
        KeyboardInterrupt
            On Ctrl-C, after stopping the workers and saving the finished items to the store.
        """
        items = list(items)
        self._check(fn)
        results: list[Any] = [_MISSING] * len(items)
        target = as_store(store)
        ckpt = Checkpoint(target, fn, items) if target is not None else None
        try:
            if ckpt is not None:
                for i, r in ckpt.load().items():
                    results[i] = r
            todo = [i for i, r in enumerate(results) if r is _MISSING]
            chunks = _runs(todo, self.chunk_size(len(todo), ckpt is not None))
            options = dict(progress_options or {})
            with progress_bar(
                len(items), progress, desc, initial=len(items) - len(todo), **options
            ) as bar:
                running = self._run(fn, [[items[i] for i in c] for c in chunks])
                try:
                    for k, out in running:
                        for i, r in zip(chunks[k], out, strict=True):
                            results[i] = r
                        if ckpt is not None:
                            ckpt.add(chunks[k], out)
                        bar.update(len(out))
                except KeyboardInterrupt:
                    running.close()
                    done = sum(r is not _MISSING for r in results)
                    kept = ""
                    if ckpt is not None:
                        ckpt.flush()
                        kept = f"; they are kept in {target.path}: run the same call to resume"
                    raise KeyboardInterrupt(
                        f"sweep interrupted with {done} of {len(items)} items done{kept}"
                    ) from None
                finally:
                    running.close()  # stops the workers unless every chunk finished
                    if ckpt is not None:
                        ckpt.flush()
        finally:
            if ckpt is not None:
                ckpt.close()
        return results


class SerialExecutor(Executor):
    """Run every item in this process, in order."""

    name = "serial"

    def chunk_size(self, n: int, store: bool = False) -> int:
        return 1  # one item at a time: the bar and the store follow every item

    def _run(self, fn, chunks):
        for k, chunk in enumerate(chunks):
            yield k, [fn(item) for item in chunk]

    def __repr__(self) -> str:
        return "SerialExecutor()"


def _consume(futures: dict[cf.Future, int]) -> Iterator[tuple[int, list[Any]]]:
    for fut in cf.as_completed(futures):
        yield futures.pop(fut), fut.result()


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

    def __init__(self, pool: cf.Executor, chunksize: int | None = None, workers: int | None = None):
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
        futures = {self.pool.submit(_run_chunk, fn, c): k for k, c in enumerate(chunks)}
        try:
            yield from _consume(futures)
        finally:
            for fut in futures:
                fut.cancel()

    def __repr__(self) -> str:
        return f"FuturesExecutor({self.pool!r})"


class ProcessExecutor(Executor):
    """A process pool, created per :meth:`map` call (nothing lingers between sweeps).

    Its workers use one BLAS thread, ignore Ctrl-C (the parent stops them), and exit when the
    parent dies, even by SIGKILL (see :mod:`fluidnet.sweep.workers`). An interrupted or failed
    sweep terminates them at once.

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
        self, max_workers: int | None = None, chunksize: int | None = None, mp_context=None
    ):
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
        if not chunks:
            return
        pool = cf.ProcessPoolExecutor(
            max_workers=min(self.max_workers, len(chunks)),
            mp_context=self.mp_context,
            initializer=init_worker,
            initargs=(os.getpid(),),
        )
        futures = {pool.submit(_run_chunk, fn, c): k for k, c in enumerate(chunks)}
        finished = False
        try:
            yield from _consume(futures)
            finished = True
        finally:
            if finished:
                pool.shutdown(wait=True)
            else:  # interrupted, failed, or abandoned: stop the workers now
                _terminate(pool)

    def __repr__(self) -> str:
        return f"ProcessExecutor(max_workers={self.max_workers})"


def _terminate(pool: cf.ProcessPoolExecutor) -> None:
    """Stop a process pool without waiting for its running tasks."""
    processes = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        if p.is_alive():
            p.terminate()
    for p in processes:
        p.join(timeout=5)
        if p.is_alive():  # pragma: no cover - SIGTERM is not ignored by the workers
            p.kill()
            p.join(timeout=5)


def _is_dask_client(obj: Any) -> bool:
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

    def __init__(self, client=None, chunksize: int | None = None):
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
        info = self.client.scheduler_info().get("workers", {})
        return max(1, sum(int(w.get("nthreads", 1)) for w in info.values()))

    def map(self, fn, items, **kwargs):
        if self.address is None or self.client is not None:
            return super().map(fn, items, **kwargs)
        from dask.distributed import Client

        try:
            self.client = Client(self.address, set_as_default=False)
        except OSError as exc:
            raise OptionError(
                f"executor = {self.address!r}: no Dask scheduler answers there ({exc})"
            ) from exc
        try:
            return super().map(fn, items, **kwargs)
        finally:
            self.client.close()
            self.client = None

    map.__doc__ = Executor.map.__doc__

    def _run(self, fn, chunks):
        from dask.distributed import as_completed

        futures = [
            self.client.submit(_run_chunk_one_blas_thread, fn, c, pure=False) for c in chunks
        ]
        index = {f.key: k for k, f in enumerate(futures)}
        try:
            for fut in as_completed(futures):
                yield index[fut.key], fut.result()
                fut.release()
        finally:
            self.client.cancel([f for f in futures if not f.done()])

    def __repr__(self) -> str:
        return f"DaskExecutor({self.address or self.client!r})"


def resolve_executor(spec=None) -> Executor:
    """An executor object from a specification.

    ``None`` or ``"serial"``; ``"processes"`` or a number of processes; ``"dask"`` (the current
    Dask client, or a new local cluster), a scheduler address such as ``"tcp://host:8786"``, or
    a ``dask.distributed.Client``; an :class:`Executor`; any
    :class:`concurrent.futures.Executor`.

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

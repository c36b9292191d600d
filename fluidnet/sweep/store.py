"""Checkpoint stores: a sweep's finished work kept on disk, so that a rerun computes only the rest.

A store is a directory holding a Zarr group (format 3)::

    <store>/zarr.json        the call that made it: {"fluidnet_store": 2, "signature": {...},
                             "n_items": N, "items_sha256": ..., "store_id": ...,
                             "call_sha256": ...}  (written last on creation)
    <store>/items/           one 64-bit digest per item of the sweep (uint64, N)
    <store>/parts/<name>/    one group per batch of finished items: their indices and results
    <store>/.lock            held (flock) while a sweep uses the store

Every sweep that runs through an executor (:mod:`fluidnet.sweep`) gets it from the same code:
results are flushed to a new part every :data:`FLUSH_SECONDS` (or every
:data:`MAX_PART_ITEMS` items) as they complete, and once more when the sweep ends or is
interrupted. A part is written in a temporary directory and renamed into ``parts/`` (an atomic
step), so a kill at any moment leaves a usable store: at worst the batch being written is
computed again.

**Digests.** A part carries the SHA-256 of each of its arrays (of the values Zarr decodes,
with their dtype and shape) in its attributes, and its name
``<first>-<last>-<digest>-<id>`` carries the digest of those attributes (everything that says
how its results are rebuilt), so the rename that publishes a part also seals it. A part is read
only when its name, its attributes and every array match: a missing chunk file (which Zarr
would silently read as fill values), a flipped byte, a replaced ``zarr.json`` or a part written
without digests is moved aside (``.corrupt-<name>``), named in a warning with what was wrong,
and its items are computed again. A rerun therefore returns exactly what an uninterrupted run
returns. The digests detect damage; they are not a signature: whoever can write the store can
write a consistent part (keep stores where only you can write).

**Ownership.** Every part records, under its digests, the id of its store and the digest of the
call that computed it (``call_sha256``: the task's description, which covers the code and what
it reads — see :mod:`fluidnet.sweep.signature` — and the items). A part of another store
(copied in, even from a sweep with as many items) is moved aside (``.foreign-<name>``) with a
warning and its items computed again. A store that lost its ``zarr.json`` is rebuilt from its
parts by the same call: the parts that record this call are kept (with a warning), the others
moved aside (``.orphan-<name>``), none deleted.

**Reading without writing.** A finished store is read where it cannot be written (a read-only
file system or directory): no lock file is created, nothing is moved. An unfinished one there is
a :class:`~fluidnet.errors.StoreError` saying how many items it holds and how to finish it.

Opening a store checks that it was made by the same call (the same task — model, fixed values,
options, the code and what it reads — and the same items); otherwise
:class:`~fluidnet.errors.StoreError` says what differs. A disk that is full (or over quota, or
read-only, or a file-size limit) is a :class:`~fluidnet.errors.StoreError` saying so and what
to do, and what was written before is kept; so is a path that cannot hold a store (``/proc``, a
file in the way, no permission). Results
are stored as arrays: numbers, booleans, strings, ``None``, numpy scalars and arrays, nested in
tuples, lists and dicts with string keys; they come back with the same types and bit for bit.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import time
import uuid
import warnings
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..diskfull import unwritable_errno, unwritable_reason, unwritable_remedy
from ..errors import OptionError, StoreError
from .signature import describe, differences, item_digests

__all__ = ["Store", "FLUSH_SECONDS", "MAX_PART_ITEMS"]

#: Results are written to the store at least this often while a sweep runs (seconds); less
#: often when writing is slow, so that writing takes at most 1/:data:`WRITE_SHARE` of the time.
FLUSH_SECONDS = 2.0
WRITE_SHARE = 20
#: ... and at the latest when this many results wait (the memory a sweep holds for its store).
MAX_PART_ITEMS = 16384
#: Item digests are written and compared in blocks of this many items (2 MB) ...
ITEM_BLOCK = 1 << 18
#: ... computed from this many items at a time (the items of a lazy sequence are made then).
ITEMS_AT_ONCE = 1 << 13
_FORMAT = 2
_OURS = {"zarr.json", "items", "parts", ".lock"}
_ASIDE = (".tmp-", ".corrupt-", ".foreign-", ".orphan-")
#: errno values that mean "this process may not write here" (a store there can still be read)
_NOT_WRITABLE = {errno.EACCES, errno.EPERM, errno.EROFS}
#: ``<first index>-<last index>-<digest of the part's attributes>-<random id>``
_PART_NAME = re.compile(r"(\d{9,})-(\d{9,})-([0-9a-f]{32})-([0-9a-f]{8})")


class Store:
    """A checkpoint directory for a sweep (see the module docstring).

    Pass it, or just its path, as ``store=`` to a sweep (:func:`fluidnet.sweep.sweep`,
    :func:`fluidnet.stability_chart`, :func:`fluidnet.simulate_ensemble`,
    :func:`fluidnet.nonlinear_chart`).

    Parameters
    ----------
    path : str or os.PathLike
        The directory (created on first use).

    Examples
    --------
    >>> import os, shutil, tempfile
    >>> from fluidnet.sweep import Store, sweep
    >>> path = tempfile.mkdtemp() + "/squares"
    >>> ds = sweep(lambda x: x**2, {"x": [1.0, 2.0, 3.0]}, store=path)
    >>> Store(path).progress()
    (3, 3)
    >>> shutil.rmtree(os.path.dirname(path))
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    def __fspath__(self) -> str:
        return str(self.path)

    @property
    def exists(self) -> bool:
        """Whether a store has been created at this path."""
        return (self.path / "zarr.json").is_file()

    def _root_attrs(self) -> dict[str, Any]:
        import zarr

        try:
            attrs = dict(zarr.open_group(str(self.path), mode="r").attrs)
        except Exception as exc:  # noqa: BLE001 - zarr raises many types on bad metadata
            raise StoreError(
                f"{self.path / 'zarr.json'} cannot be read as a Zarr group ({exc}): not a "
                "fluidnet store. If it is one whose zarr.json was damaged, delete that file: "
                "its parts record the call that computed them, and the same call recovers them"
            ) from exc
        made = attrs.get("fluidnet_store")
        if made == 1:
            raise StoreError(
                f"store {self.path} was made by an older fluidnet (store format 1), whose parts "
                "do not record which store and call computed them: its results cannot be "
                "checked. Delete it (or use another path) to compute them again"
            )
        if made != _FORMAT:
            raise StoreError(
                f"{self.path} is a Zarr group but not a fluidnet store (no 'fluidnet_store' "
                f"= {_FORMAT} attribute); use another path"
            )
        return attrs

    def _owner(self, attrs: Mapping[str, Any] | None = None) -> dict[str, str]:
        attrs = self._root_attrs() if attrs is None else attrs
        return {"id": str(attrs.get("store_id")), "call": str(attrs.get("call_sha256"))}

    def signature(self) -> dict[str, str]:
        """The description of the call that made the store (``{path: text}``)."""
        return dict(self._root_attrs()["signature"])

    def progress(self) -> tuple[int, int]:
        """``(items done, items in the sweep)``: items of the parts that pass their digests
        (a damaged part counts as not done; the next run computes its items again)."""
        attrs = self._root_attrs()
        total, owner = int(attrs["n_items"]), self._owner(attrs)
        done = np.zeros(total, dtype=bool)
        for part in _parts(self.path):
            with contextlib.suppress(StoreError):
                indices, _ = _read_part(part, owner)
                done[indices[(indices >= 0) & (indices < total)]] = True
        return int(done.sum()), total


def as_store(store: Store | str | os.PathLike | None) -> Store | None:
    """A :class:`Store` from ``store=`` (None stays None)."""
    if store is None or isinstance(store, Store):
        return store
    if isinstance(store, (str, os.PathLike)):
        return Store(store)
    raise OptionError(
        f"store = {store!r} ({type(store).__name__}): give a directory path or a "
        "fluidnet.sweep.Store"
    )


class Checkpoint:
    """A store opened for one sweep: checked against the call, locked, ready to load and write.

    Parameters
    ----------
    store : Store
    task : object
        The function mapped over the items (described by :func:`~.signature.describe`).
    items : sequence
        The sweep's items (any sequence; read in blocks, never copied whole).

    Attributes
    ----------
    writable : bool
        False for a store read where this process may not write (a read-only file system or
        directory): it can serve a finished sweep, not keep new results.
    written : int
        Items written to the store by this checkpoint (not counting those it held).
    """

    def __init__(self, store: Store, task: Any, items: Sequence[Any]):
        self.store = store
        self.path = store.path
        self.n = len(items)
        self._signature = describe(task)
        self._items = items
        self._lock: _Lock | None = None
        self._pending: dict[int, Any] = {}
        self._interval = FLUSH_SECONDS
        self.writable = True
        self.written = 0  # items written to new parts by this checkpoint
        self._not_writable = ""
        self._owner: dict[str, str] = {}
        try:
            with _disk_errors(self.path, "create or open the store", kept=False):
                self._open()
        except BaseException:
            self.close()
            raise
        self._last_flush = time.monotonic()

    # ---------------------------------------------------------------- opening
    def _open(self) -> None:
        path = self.path
        if path.exists() and not path.is_dir():
            raise StoreError(
                f"store path {path} exists and is not a directory; give store= a directory"
            )
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if unwritable_errno(exc) is not None:
                raise
            raise StoreError(
                f"store path {path} cannot be made a directory ({_os_reason(exc)}); give "
                "store= a path in a directory where you can write"
            ) from exc
        root = path / "zarr.json"
        if root.exists() and not root.is_file():
            raise StoreError(
                f"{root} is not a file (a directory is in its place), where the store keeps the "
                f"record of the call that made it: remove it (rmdir {root}) and run the same "
                "call again (the parts are recovered from their own records)"
            )
        if not self.store.exists:
            foreign = [
                p.name
                for p in path.iterdir()
                if p.name not in _OURS and not p.name.startswith(_ASIDE)
            ]
            if foreign:
                raise StoreError(
                    f"store path {path} is a non-empty directory that is not a fluidnet store "
                    f"(it holds {', '.join(sorted(foreign)[:5])}); use a new or empty directory"
                )
        self._lock, self._not_writable = _lock(path)
        self.writable = not self._not_writable
        if self.store.exists:
            self._check()
        elif not self.writable:
            raise StoreError(
                f"store path {path} holds no finished store and cannot be written "
                f"({self._not_writable}); give store= a directory where you can write"
            )
        else:
            _remove_temporaries(path)
            self._create()
            return
        if self.writable:
            _remove_temporaries(path)

    def _digest_blocks(self) -> Iterator[tuple[int, np.ndarray]]:
        """``(start, digests of items[start:start + ITEM_BLOCK])`` for every block."""
        for start in range(0, self.n, ITEM_BLOCK):
            stop = min(start + ITEM_BLOCK, self.n)
            block = np.empty(stop - start, dtype=np.uint64)
            for a in range(start, stop, ITEMS_AT_ONCE):
                b = min(a + ITEMS_AT_ONCE, stop)
                block[a - start : b - start] = item_digests(self._items[a:b])
            yield start, block

    def _call_digest(self, items_sha256: str) -> str:
        """The digest of the call: the task's description and the items."""
        text = json.dumps(
            [self._signature, self.n, items_sha256],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=True,
        )
        return hashlib.sha256(text.encode()).hexdigest()

    def _create(self) -> None:
        """A new store; parts left by a store that lost its ``zarr.json`` are recovered when
        they record this call, moved aside otherwise (never deleted)."""
        import zarr

        shutil.rmtree(self.path / "items", ignore_errors=True)
        items = zarr.create_array(
            str(self.path / "items"),
            shape=(self.n,),
            dtype="uint64",
            chunks=(max(1, min(self.n, ITEM_BLOCK)),),
        )
        total = hashlib.sha256()
        for start, block in self._digest_blocks():
            items[start : start + block.size] = block
            total.update(block.astype("<u8").tobytes())
        call = self._call_digest(total.hexdigest())
        store_id = self._recover(call)
        self._owner = {"id": store_id, "call": call}
        if not (self.path / "parts" / "zarr.json").is_file():
            zarr.open_group(str(self.path / "parts"), mode="w")
        zarr.open_group(  # written last: a store without it is an unfinished creation
            str(self.path),
            mode="a",
            attributes={
                "fluidnet_store": _FORMAT,
                "signature": self._signature,
                "n_items": self.n,
                "items_sha256": total.hexdigest(),
                "store_id": store_id,
                "call_sha256": call,
                "created": time.strftime("%Y-%m-%d %H:%M:%S"),
            },
        )

    def _recover(self, call: str) -> str:
        """The store id of the parts already in ``parts/`` that record ``call`` (a store whose
        ``zarr.json`` was lost), or a new one; the other parts are moved aside, with a warning."""
        found = _parts(self.path)
        if not found:
            return uuid.uuid4().hex
        owners: dict[Path, Any] = {}
        sizes: dict[Path, int] = {}
        for part in found:
            try:
                attrs, arrays = _verified_arrays(part)
                owners[part], sizes[part] = attrs.get("store"), int(arrays["indices"].size)
            except StoreError:
                owners[part] = None
        ids = Counter(
            o["id"] for o in owners.values() if isinstance(o, Mapping) and o.get("call") == call
        )
        store_id = min(ids, key=lambda k: (-ids[k], k)) if ids else uuid.uuid4().hex
        mine = {"id": store_id, "call": call}
        kept = [p for p in found if owners[p] == mine]
        aside = []
        for part in found:
            if owners[part] != mine:
                target = part.parent.parent / f".orphan-{part.name}"
                with contextlib.suppress(OSError):
                    part.rename(target)
                aside.append(target.name)
        lines = []
        if kept:
            n_items = sum(sizes[p] for p in kept)
            lines.append(f"{len(kept)} parts ({n_items} items) record this very call and are kept")
        if aside:
            lines.append(
                f"{len(aside)} parts made by another call, by another store or damaged were "
                f"moved aside ({', '.join(aside[:3])}{', ...' if len(aside) > 3 else ''}): "
                "delete them when you no longer need them"
            )
        warnings.warn(
            f"store {self.path} had lost its zarr.json (the record of the call that made it); "
            "rebuilt it for this call: " + "; ".join(lines),
            RuntimeWarning,
            stacklevel=5,
        )
        return store_id

    def _check(self) -> None:
        attrs = self.store._root_attrs()
        lines = differences(self._signature, attrs.get("signature", {}))
        stored_n = int(attrs.get("n_items", -1))
        if stored_n != self.n:
            lines.append(
                f"number of items (grid points, blocks, members): {self.n} here, "
                f"{stored_n} in the store"
            )
        else:
            total = hashlib.sha256()
            for _, block in self._digest_blocks():
                total.update(block.astype("<u8").tobytes())
            if attrs.get("items_sha256") != total.hexdigest():
                lines.extend(self._item_differences(attrs.get("items_sha256")))
            elif not lines and attrs.get("call_sha256") != self._call_digest(total.hexdigest()):
                lines.append("the store's record of the call does not match its description")
        if lines:
            raise StoreError(
                f"store {self.path} was made by a different call; refusing to mix results "
                "(use another path, or delete the store to start over):\n  " + "\n  ".join(lines)
            )
        self._owner = self.store._owner(attrs)

    def _item_differences(self, recorded: str | None) -> list[str]:
        """How the items differ from the store's (a second pass, on refusal only)."""
        import zarr

        first, count = -1, 0
        total = hashlib.sha256()
        try:
            stored = zarr.open_array(str(self.path / "items"), mode="r")
            for start, block in self._digest_blocks():
                theirs = np.asarray(stored[start : start + block.size])
                total.update(theirs.astype("<u8").tobytes())
                bad = np.flatnonzero(theirs != block)
                if bad.size and first < 0:
                    first = start + int(bad[0])
                count += bad.size
        except Exception as exc:  # noqa: BLE001 - zarr raises many types
            return [f"the items differ (and the store's item list is unreadable: {exc})"]
        if recorded is not None and total.hexdigest() != recorded:
            return ["the items differ (the store's item list is damaged: which, cannot be said)"]
        if first >= 0:
            return [
                f"{count} of {self.n} items differ, the first is item {first}: "
                f"{_short_item(self._items[first])} here"
            ]
        return [] if recorded is None else ["the items differ"]

    # ---------------------------------------------------------------- reading
    def parts(self) -> Iterator[tuple[np.ndarray, list[Any]]]:
        """``(item indices, results)`` of every stored part that passes its digests and belongs
        to this store, one part at a time; another is moved aside with a warning (its items are
        not done)."""
        for part in _parts(self.path):
            try:
                indices, results = _read_part(part, self._owner)
                if indices.size and (indices.min() < 0 or indices.max() >= self.n):
                    raise StoreError(f"item index out of range 0..{self.n - 1}")
            except StoreError as exc:
                foreign = isinstance(exc, _ForeignPart)
                aside = part.parent.parent / f".{'foreign' if foreign else 'corrupt'}-{part.name}"
                what = "belongs to another store" if foreign else "is damaged or unreadable"
                moved = False
                if self.writable:
                    with contextlib.suppress(OSError):
                        part.rename(aside)
                        moved = True
                where = f"moved aside to {aside.name}" if moved else "left in place, not read"
                warnings.warn(
                    f"store {self.path}: part {part.name} {what} ({exc}); {where}, its items "
                    "are computed again",
                    RuntimeWarning,
                    stacklevel=4,
                )
                continue
            yield indices, results

    def require_writable(self, done: int) -> None:
        """Raise when items remain to be computed and this store cannot keep them.

        Raises
        ------
        StoreError
            For a store that cannot be written holding ``done`` of its items (fewer than all).
        """
        if self.writable or done >= self.n:
            return
        raise StoreError(
            f"store {self.path} cannot be written ({self._not_writable}) and holds {done} of "
            f"{self.n} items: the other {self.n - done} could not be kept. Make it writable, or "
            f"copy it (cp -r {self.path} <new path>) and give store= the copy"
        )

    # ---------------------------------------------------------------- writing
    def add(self, indices: Sequence[int], results: Sequence[Any]) -> None:
        """Queue finished results; write them when :data:`FLUSH_SECONDS` have passed or
        :data:`MAX_PART_ITEMS` results wait."""
        self._pending.update(zip(map(int, indices), results, strict=True))
        if (
            time.monotonic() - self._last_flush >= self._interval
            or len(self._pending) >= MAX_PART_ITEMS
        ):
            self.flush()

    def flush(self) -> None:
        """Write the queued results as one part (atomically).

        Raises
        ------
        StoreError
            When the disk is full, over quota or read-only (the parts written before are kept).
        """
        if not self._pending:
            return
        indices = sorted(self._pending)
        start = time.monotonic()
        results = [self._pending[i] for i in indices]
        with _disk_errors(self.path, f"write the results of {len(indices)} items"):
            _write_part(self.path, indices, results, self._owner)
        self.written += len(indices)
        self._pending.clear()
        self._last_flush = time.monotonic()
        self._interval = max(FLUSH_SECONDS, WRITE_SHARE * (self._last_flush - start))

    def discard_pending(self) -> int:
        """Forget the queued results (after a failed write); returns how many there were."""
        n = len(self._pending)
        self._pending.clear()
        return n

    def close(self) -> None:
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None


# -------------------------------------------------------------------- files
def _os_reason(exc: OSError) -> str:
    """``"Permission denied, EACCES, at /x/y"``: an OSError in a few words."""
    code = errno.errorcode.get(exc.errno or 0, "")
    where = f", at {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or exc}{', ' + code if code else ''}{where}"


@contextlib.contextmanager
def _disk_errors(path: Path, what: str, kept: bool = True):
    """Turn a write that failed for want of disk space (or of a writable disk, or of a
    file-size limit) into a StoreError that says so; and any other failure of the file system
    into a StoreError naming the file and the reason."""
    try:
        yield
    except OSError as exc:
        then = ": the parts written before are kept" if kept else ""
        reason = unwritable_reason(exc)
        if reason is not None:
            remedy = unwritable_remedy(unwritable_errno(exc), "give store=")
            raise StoreError(
                f"store {path}: cannot {what}: {reason}. {remedy}, and run the same call "
                f"again{then}"
            ) from exc
        if exc.errno == errno.EISDIR and exc.filename:
            name = exc.filename2 or exc.filename
            fix = f"a directory is where the store keeps a file ({name}): remove it"
        elif exc.errno == errno.ENOTDIR:
            fix = "a file is where the store keeps a directory: remove it"
        else:
            fix = "give store= a directory where you can write"
        raise StoreError(f"store {path}: cannot {what} ({_os_reason(exc)}); {fix}{then}") from exc


#: Descriptors of the store locks this process holds. A forked process (a worker of a process
#: pool) would share the lock with its parent and keep the store locked after the parent is
#: killed, until the last worker exits; so a child points these descriptors at /dev/null at once.
_HELD_LOCKS: set[int] = set()


def _drop_inherited_locks() -> None:
    if not _HELD_LOCKS:
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        for fd in _HELD_LOCKS:
            os.dup2(null, fd)  # the number stays valid for the copied file object
    finally:
        os.close(null)
    _HELD_LOCKS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_inherited_locks)


class _Lock:
    """The open lock file of a store; closing it releases the lock."""

    def __init__(self, fh) -> None:
        self._fh = fh
        _HELD_LOCKS.add(fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            _HELD_LOCKS.discard(self._fh.fileno())
            self._fh.close()


def _lock(path: Path) -> tuple[_Lock | None, str]:
    """``(lock, "")``: the store's lock file, locked exclusively for a sweep that writes; or,
    where this process may not write (a read-only file system or directory), ``(lock or None,
    why)``: an existing lock file locked shared (so that no sweep writes while it is read)."""
    import fcntl

    why = ""
    mode = fcntl.LOCK_EX
    try:
        fh = open(path / ".lock", "a+")  # noqa: SIM115 - held for the sweep
    except OSError as exc:
        if exc.errno not in _NOT_WRITABLE:
            raise
        why, mode = _os_reason(exc), fcntl.LOCK_SH
        try:
            fh = open(path / ".lock")  # noqa: SIM115 - held for the sweep
        except FileNotFoundError:
            return None, why
    try:
        fcntl.flock(fh.fileno(), mode | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        fh.close()
        raise StoreError(
            f"store {path} is in use by another running sweep; wait for it to finish, or use "
            "another path"
        ) from exc
    return _Lock(fh), why


def _remove_temporaries(path: Path) -> None:
    """Parts whose writing was interrupted (never renamed into parts/)."""
    for p in path.glob(".tmp-*"):
        shutil.rmtree(p, ignore_errors=True)


def _parts(path: Path) -> list[Path]:
    parts = path / "parts"
    if not parts.is_dir():
        return []
    return sorted(p for p in parts.iterdir() if p.is_dir())


def _short_item(item: Any, width: int = 100) -> str:
    text = repr(item)
    return text if len(text) <= width else text[: width - 3] + "..."


# -------------------------------------------------------------------- encoding
# A result is flattened into a tree (JSON: its structure and the kind of every leaf) and a list
# of leaves. A part stores, for every leaf position, the leaves of all its items in one array
# ("stacked"), or one array per item when their shapes differ ("separate"); a part whose items
# have different trees stores every leaf separately.

_SCALAR_KINDS = {bool: "bool", int: "int", float: "float", complex: "complex", str: "str"}
_LEAF = {kind: {"t": kind} for kind in _SCALAR_KINDS.values()}


def _flatten(obj: Any, leaves: list[Any]) -> Any:
    kind = _SCALAR_KINDS.get(type(obj))
    if kind is not None:
        leaves.append(obj)
        return _LEAF[kind]
    if type(obj) is tuple or type(obj) is list:
        return {"t": type(obj).__name__, "c": [_flatten(v, leaves) for v in obj]}
    if isinstance(obj, Mapping):
        if not all(isinstance(k, str) for k in obj):
            raise StoreError("a result dict with non-string keys cannot be stored")
        return {"t": "dict", "k": list(obj), "c": [_flatten(v, leaves) for v in obj.values()]}
    if obj is None:
        return {"t": "none"}
    if isinstance(obj, (np.generic, np.ndarray)):
        arr = np.asarray(obj)
        kind = "scalar" if isinstance(obj, np.generic) else "array"
        if arr.dtype == object:
            if not all(isinstance(v, str) for v in arr.ravel()):
                raise StoreError(
                    "a result array of Python objects that are not all strings cannot be stored"
                )
            leaves.append(arr.astype(str) if arr.size else np.zeros(arr.shape, "U1"))
            return {"t": kind, "d": "object"}
        if arr.dtype.kind not in "biufcUS":
            raise StoreError(f"a result array of dtype {arr.dtype} cannot be stored")
        leaves.append(arr)
        # strings come back with the narrowest width that holds them
        return {"t": kind, "d": arr.dtype.kind if arr.dtype.kind in "US" else arr.dtype.str}
    raise StoreError(
        f"a result of type {type(obj).__name__} cannot be stored: results must be numbers, "
        "strings, None, numpy arrays, or tuples, lists and dicts of them"
    )


def _leaf_kinds(tree: Mapping[str, Any], out: list[Mapping[str, Any]]) -> list:
    if tree["t"] in ("tuple", "list", "dict"):
        for c in tree["c"]:
            _leaf_kinds(c, out)
    elif tree["t"] != "none":
        out.append(tree)
    return out


def _builder(tree: Mapping[str, Any]):
    """A function rebuilding a result from an iterator over its decoded leaves."""
    kind = tree["t"]
    if kind in ("tuple", "list"):
        subs = [_builder(c) for c in tree["c"]]
        cls = tuple if kind == "tuple" else list
        return lambda it: cls([b(it) for b in subs])
    if kind == "dict":
        keys, subs = tree["k"], [_builder(c) for c in tree["c"]]
        return lambda it: {k: b(it) for k, b in zip(keys, subs, strict=True)}
    if kind == "none":
        return lambda it: None
    return next


def _column(kind: Mapping[str, Any], values: list[Any]) -> np.ndarray:
    """The leaves of one position across items, as one array (same shapes: stacked)."""
    if kind["t"] in _LEAF:
        return np.array(values, dtype=None if kind["t"] != "str" else str)
    return np.stack([np.asarray(v) for v in values])


def _decode_column(kind: Mapping[str, Any], col: np.ndarray) -> list[Any]:
    """Stored leaves (one per item along the first axis) back to the objects they were."""
    t = kind["t"]
    if t in ("bool", "int", "float", "complex"):
        cast = {"bool": bool, "int": int, "float": float, "complex": complex}[t]
        return [cast(v) for v in col.tolist()]
    if t == "str":
        return [str(v) for v in col.tolist()]
    if kind["d"] == "object":  # strings in an object array, as they were
        out = [np.array(np.asarray(v).astype(str).tolist(), dtype=object) for v in col]
        return [o[()] for o in out] if t == "scalar" else out
    if kind["d"] in ("U", "S"):
        out = [np.array(np.asarray(v).tolist(), dtype=kind["d"]) for v in col]
    else:
        out = [np.array(v, dtype=np.dtype(kind["d"])) for v in col]
    return [o[()] for o in out] if t == "scalar" else out


def _to_stored(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Strings as UTF-8 bytes (uint8) plus their lengths: a stable Zarr v3 representation."""
    if arr.dtype.kind not in "US":
        return arr, None
    flat = [s.encode() if isinstance(s, str) else bytes(s) for s in arr.ravel().tolist()]
    lengths = np.array([len(b) for b in flat], dtype=np.int64)
    return np.frombuffer(b"".join(flat), dtype=np.uint8).copy(), lengths


def _from_stored(data: np.ndarray, meta: Mapping[str, Any], lengths) -> np.ndarray:
    if not meta.get("strings"):
        return data.reshape(meta["shape"])
    raw = data.tobytes()
    cuts = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    words: list[Any] = [raw[cuts[i] : cuts[i + 1]] for i in range(len(lengths))]
    if meta["strings"] == "U":
        words = [w.decode() for w in words]
    out = np.array(words) if words else np.zeros(0, "U1" if meta["strings"] == "U" else "S1")
    return out.reshape(meta["shape"])


def _same_tree(tree: Mapping[str, Any], obj: Any, leaves: list[Any]) -> bool:
    """Whether ``obj`` flattens to ``tree`` (appending its leaves); no tree is built."""
    t = tree["t"]
    if t in _LEAF:
        if _SCALAR_KINDS.get(type(obj)) != t:
            return False
        leaves.append(obj)
        return True
    if t == "tuple" or t == "list":
        children = tree["c"]
        if type(obj) is not (tuple if t == "tuple" else list) or len(obj) != len(children):
            return False
        for c, v in zip(children, obj, strict=True):
            if not _same_tree(c, v, leaves):
                return False
        return True
    if t == "dict":
        return (
            isinstance(obj, Mapping)
            and list(obj) == tree["k"]
            and all(_same_tree(c, v, leaves) for c, v in zip(tree["c"], obj.values(), strict=True))
        )
    if t == "none":
        return obj is None
    own: list[Any] = []
    if not isinstance(obj, (np.generic, np.ndarray)) or _flatten(obj, own) != tree:
        return False
    leaves.extend(own)
    return True


def _flatten_all(results: list[Any]) -> tuple[list[Any], list[list[Any]]]:
    """The tree and leaves of every result (the first one's tree checked against the others
    without building theirs: the common case)."""
    first: list[Any] = []
    tree = _flatten(results[0], first)
    per_item = [first]
    for r in results[1:]:
        leaves: list[Any] = []
        if not _same_tree(tree, r, leaves):
            break
        per_item.append(leaves)
    else:
        return [tree] * len(results), per_item
    trees, per_item = [], []
    for r in results:
        leaves = []
        trees.append(_flatten(r, leaves))
        per_item.append(leaves)
    return trees, per_item


def _encode_part(results: list[Any]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Attributes and arrays of a part holding ``results``."""
    trees, per_item = _flatten_all(results)
    arrays: dict[str, np.ndarray] = {}
    if all(t is trees[0] or t == trees[0] for t in trees):
        layout = []
        for j, kind in enumerate(_leaf_kinds(trees[0], [])):
            col = [leaves[j] for leaves in per_item]
            if kind["t"] in _LEAF or all(np.shape(a) == np.shape(col[0]) for a in col):
                arrays[f"leaf{j}"] = _column(kind, col)
                layout.append("stacked")
            else:
                for i, a in enumerate(col):
                    arrays[f"leaf{j}_{i}"] = _column(kind, [a])
                layout.append("separate")
        attrs: dict[str, Any] = {"trees": [trees[0]], "layout": layout}
    else:
        for i, (tree, leaves) in enumerate(zip(trees, per_item, strict=True)):
            for j, (kind, a) in enumerate(zip(_leaf_kinds(tree, []), leaves, strict=True)):
                arrays[f"leaf{j}_{i}"] = _column(kind, [a])
        attrs = {"trees": trees, "layout": "separate"}
    return attrs, arrays


def _array_digest(data: np.ndarray) -> str:
    """SHA-256 of an array's values, dtype and shape."""
    data = np.ascontiguousarray(data)
    h = hashlib.sha256(f"{data.dtype.str}{list(data.shape)}|".encode())
    h.update(data.reshape(-1).view(np.uint8).data if data.size else b"")
    return h.hexdigest()


def _attrs_digest(attrs: Mapping[str, Any]) -> str:
    """SHA-256 of a part's attributes (canonical JSON): the part's name carries it."""
    text = json.dumps(attrs, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _write_part(
    path: Path, indices: list[int], results: list[Any], owner: Mapping[str, str]
) -> None:
    """Write one part: arrays and their digests, and ``owner`` (the store's id and the digest
    of the call), in a temporary directory, renamed into ``parts/`` under a name carrying the
    digest of its attributes."""
    import zarr

    attrs, arrays = _encode_part(results)
    arrays["indices"] = np.asarray(indices, dtype=np.int64)
    stored: dict[str, np.ndarray] = {}
    meta: dict[str, Any] = {}
    for name, arr in arrays.items():
        data, lengths = _to_stored(arr)
        stored[name] = data.reshape(-1)
        meta[name] = {"shape": list(arr.shape)}
        if lengths is not None:
            meta[name]["strings"] = arr.dtype.kind
            stored[f"{name}.lengths"] = lengths
    attrs = {
        **attrs,
        "store": dict(owner),
        "arrays": meta,
        "sha256": {name: _array_digest(data) for name, data in stored.items()},
    }
    tmp = path / f".tmp-{uuid.uuid4().hex}"
    try:
        group = zarr.open_group(str(tmp), mode="w", attributes=attrs)
        for name, data in stored.items():
            group.create_array(
                name,
                data=data,
                chunks=(max(1, data.size),),  # one chunk file: c/0
                compressors=None,
                config={"write_empty_chunks": True},  # every chunk file exists
            )
        final = (
            path
            / "parts"
            / (f"{indices[0]:09d}-{indices[-1]:09d}-{_attrs_digest(attrs)[:32]}-{tmp.name[5:13]}")
        )
        os.rename(tmp, final)  # atomic: the part appears whole or not at all
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # frees the space a full disk needs
        raise


def _mismatch(part: Path, name: str) -> str:
    """What is wrong with an array whose values do not match their digest."""
    chunk = part / name / "c" / "0"
    if not chunk.is_file():
        return f"array {name!r}: its chunk file {name}/c/0 is missing (Zarr reads fill values)"
    return (
        f"array {name!r} does not match the digest written with the part (chunk file "
        f"{name}/c/0 or metadata {name}/zarr.json altered)"
    )


def _verified_arrays(part: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A part's attributes and arrays, each checked against its digest.

    Raises
    ------
    StoreError
        Naming what is wrong: no digests, attributes or an array that do not match.
    """
    import zarr

    named = _PART_NAME.fullmatch(part.name)
    if named is None:
        raise StoreError(
            "its name carries no digest (written by a fluidnet before parts had digests, "
            "or not by fluidnet)"
        )
    try:
        group = zarr.open_group(str(part), mode="r")
        attrs = dict(group.attrs)
    except Exception as exc:  # noqa: BLE001 - zarr raises many types on bad metadata
        raise StoreError(f"its metadata zarr.json cannot be read ({exc})") from exc
    if _attrs_digest(attrs)[:32] != named[3]:
        raise StoreError(
            "its metadata zarr.json does not match the digest in its name (altered or replaced)"
        )
    arrays = {}
    digests = attrs.get("sha256")
    if not isinstance(digests, Mapping):
        raise StoreError("its metadata zarr.json has no table of array digests")
    for name, digest in digests.items():
        try:
            member = group[name]
            data = np.asarray(member[...]) if isinstance(member, zarr.Array) else None
        except Exception as exc:  # noqa: BLE001 - zarr raises many types on bad chunks
            raise StoreError(
                f"array {name!r} cannot be read ({type(exc).__name__}: {exc})"
            ) from exc
        if data is None:
            raise StoreError(f"{name!r} is a group, not an array")
        if _array_digest(data) != digest:
            raise StoreError(_mismatch(part, name))
        arrays[name] = data
    first, last = int(named[1]), int(named[2])
    indices = arrays["indices"]
    if indices.size == 0 or int(indices[0]) != first or int(indices[-1]) != last:
        raise StoreError(f"its indices do not run from {first} to {last} as its name says")
    if np.any(np.diff(indices) <= 0):
        raise StoreError("its indices are not increasing")
    return attrs, arrays


class _ForeignPart(StoreError):
    """A sound part of another store (or of another call)."""


def _read_part(part: Path, owner: Mapping[str, str]) -> tuple[np.ndarray, list[Any]]:
    """``(indices, results)`` of a part that passes its digests and was written by the store
    and call ``owner`` (``{"id": ..., "call": ...}``).

    Raises
    ------
    StoreError
        When the part is damaged, incomplete or written without digests (says what is wrong);
        a ``_ForeignPart`` when it belongs to another store or call.
    """
    try:
        attrs, arrays = _verified_arrays(part)
        theirs = attrs.get("store")
        if theirs != dict(owner):
            if not isinstance(theirs, Mapping):
                raise StoreError("it does not record the store and call that wrote it")
            if theirs.get("call") != owner.get("call"):
                raise _ForeignPart(
                    "it was computed by another call (another function, code, global value or "
                    "items), in store "
                    f"{str(theirs.get('id'))[:8]}, not this store {str(owner.get('id'))[:8]}"
                )
            raise _ForeignPart(
                f"it was written by store {str(theirs.get('id'))[:8]}, not by this store "
                f"{str(owner.get('id'))[:8]} (copied from another store?)"
            )
        meta = attrs["arrays"]

        def read(name: str) -> np.ndarray:
            m = meta[name]
            lengths = arrays[f"{name}.lengths"] if m.get("strings") else None
            return _from_stored(arrays[name], m, lengths)

        indices = read("indices")
        trees, layout = attrs["trees"], attrs["layout"]
        if layout == "separate":
            results = []
            for i, tree in enumerate(trees):
                kinds = _leaf_kinds(tree, [])
                leaves = [_decode_column(k, read(f"leaf{j}_{i}"))[0] for j, k in enumerate(kinds)]
                results.append(_builder(tree)(iter(leaves)))
        else:
            columns = []
            for j, (kind, how) in enumerate(zip(_leaf_kinds(trees[0], []), layout, strict=True)):
                if how == "stacked":
                    columns.append(_decode_column(kind, read(f"leaf{j}")))
                else:
                    columns.append(
                        [_decode_column(kind, read(f"leaf{j}_{i}"))[0] for i in range(indices.size)]
                    )
            build = _builder(trees[0])
            results = [build(iter(row)) for row in zip(*columns, strict=True)]
            if not columns:
                results = [build(iter(())) for _ in range(indices.size)]
    except StoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged part raises many types
        raise StoreError(f"{type(exc).__name__}: {exc}") from exc
    if len(results) != indices.size:
        raise StoreError(f"{indices.size} indices but {len(results)} results")
    return indices, results

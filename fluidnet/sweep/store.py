"""Checkpoint stores: a sweep's finished work kept on disk, so that a rerun computes only the rest.

A store is a directory holding a Zarr group (format 3)::

    <store>/zarr.json        the call that made it: {"fluidnet_store": 1, "signature": {...},
                             "n_items": N}  (written last when the store is created)
    <store>/items/           one 64-bit digest per item of the sweep (uint64, N)
    <store>/parts/<name>/    one group per batch of finished items: their indices and results
    <store>/.lock            held (flock) while a sweep uses the store

Every sweep that runs through an executor (:mod:`fluidnet.sweep`) gets it from the same code:
results are flushed to a new part every :data:`FLUSH_SECONDS` as they complete, and once more
when the sweep ends or is interrupted. A part is written in a temporary directory and renamed
into ``parts/`` (an atomic step), so a kill at any moment leaves a usable store: at worst the
batch being written is computed again.

Opening a store checks that it was made by the same call (the same task — model, fixed values,
options — and the same items); otherwise :class:`~fluidnet.errors.StoreError` says what
differs. Results are stored as arrays: numbers, booleans, strings, ``None``, numpy scalars and
arrays, nested in tuples, lists and dicts with string keys; they come back with the same types
and bit for bit.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import uuid
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import OptionError, StoreError
from .signature import describe, differences, item_digests

__all__ = ["Store", "FLUSH_SECONDS"]

#: Results are written to the store at least this often while a sweep runs (seconds); less
#: often when writing is slow, so that writing takes at most 1/:data:`WRITE_SHARE` of the time.
FLUSH_SECONDS = 2.0
WRITE_SHARE = 20
_FORMAT = 1
_OURS = {"zarr.json", "items", "parts", ".lock"}


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

    def __init__(self, path: str | os.PathLike):
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
                f"{self.path / 'zarr.json'} cannot be read as a Zarr group ({exc}): "
                "not a fluidnet store"
            ) from exc
        if attrs.get("fluidnet_store") != _FORMAT:
            raise StoreError(
                f"{self.path} is a Zarr group but not a fluidnet store (no 'fluidnet_store' "
                f"= {_FORMAT} attribute); use another path"
            )
        return attrs

    def signature(self) -> dict[str, str]:
        """The description of the call that made the store (``{path: text}``)."""
        return dict(self._root_attrs()["signature"])

    def progress(self) -> tuple[int, int]:
        """``(items done, items in the sweep)``."""
        total = int(self._root_attrs()["n_items"])
        done: set[int] = set()
        for part in _parts(self.path):
            with contextlib.suppress(StoreError):
                done.update(_read_indices(part).tolist())
        return len(done), total


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
        The sweep's items.
    """

    def __init__(self, store: Store, task: Any, items: Sequence[Any]):
        self.store = store
        self.path = store.path
        self.n = len(items)
        self._signature = describe(task)
        self._digests = item_digests(items)
        self._items = items
        self._lock = None
        self._pending: dict[int, Any] = {}
        self._last_flush = time.monotonic()
        self._interval = FLUSH_SECONDS
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    # ---------------------------------------------------------------- opening
    def _open(self) -> None:
        path = self.path
        if path.exists() and not path.is_dir():
            raise StoreError(f"store path {path} exists and is not a directory")
        path.mkdir(parents=True, exist_ok=True)
        if not self.store.exists:
            foreign = [
                p.name
                for p in path.iterdir()
                if p.name not in _OURS and not p.name.startswith((".tmp-", ".corrupt-"))
            ]
            if foreign:
                raise StoreError(
                    f"store path {path} is a non-empty directory that is not a fluidnet store "
                    f"(it holds {', '.join(sorted(foreign)[:5])}); use a new or empty directory"
                )
        self._lock = _lock(path)
        _remove_temporaries(path)
        if self.store.exists:
            self._check()
        else:
            self._create()

    def _create(self) -> None:
        import zarr

        for name in ("items", "parts"):
            shutil.rmtree(self.path / name, ignore_errors=True)
        zarr.create_array(str(self.path / "items"), data=self._digests, chunks=(max(1, self.n),))
        zarr.open_group(str(self.path / "parts"), mode="w")
        zarr.open_group(  # written last: a store without it is an unfinished creation
            str(self.path),
            mode="a",
            attributes={
                "fluidnet_store": _FORMAT,
                "signature": self._signature,
                "n_items": self.n,
                "created": time.strftime("%Y-%m-%d %H:%M:%S"),
            },
        )

    def _check(self) -> None:
        import zarr

        attrs = self.store._root_attrs()
        lines = differences(self._signature, attrs.get("signature", {}))
        stored_n = int(attrs.get("n_items", -1))
        if stored_n != self.n:
            lines.append(
                f"number of items (grid points, blocks, members): {self.n} here, "
                f"{stored_n} in the store"
            )
        else:
            try:
                stored = zarr.open_array(str(self.path / "items"), mode="r")[...]
            except Exception as exc:  # noqa: BLE001
                raise StoreError(f"{self.path / 'items'} is unreadable ({exc})") from exc
            bad = np.flatnonzero(stored != self._digests)
            if bad.size:
                i = int(bad[0])
                lines.append(
                    f"{bad.size} of {self.n} items differ, the first is item {i}: "
                    f"{_short_item(self._items[i])} here"
                )
        if lines:
            raise StoreError(
                f"store {self.path} was made by a different call; refusing to mix results "
                "(use another path, or delete the store to start over):\n  " + "\n  ".join(lines)
            )

    # ---------------------------------------------------------------- reading
    def load(self) -> dict[int, Any]:
        """Results of the finished items, ``{item index: result}``."""
        done: dict[int, Any] = {}
        for part in _parts(self.path):
            try:
                indices, results = _read_part(part)
                if indices.size and (indices.min() < 0 or indices.max() >= self.n):
                    raise StoreError(f"item index out of range 0..{self.n - 1}")
            except StoreError as exc:
                aside = part.parent.parent / f".corrupt-{part.name}"
                with contextlib.suppress(OSError):
                    part.rename(aside)
                warnings.warn(
                    f"store {self.path}: part {part.name} is unreadable ({exc}); moved aside "
                    f"to {aside.name}, its items are computed again",
                    RuntimeWarning,
                    stacklevel=3,
                )
                continue
            done.update(zip(indices.tolist(), results, strict=True))
        return done

    # ---------------------------------------------------------------- writing
    def add(self, indices: Sequence[int], results: Sequence[Any]) -> None:
        """Queue finished results; write them when :data:`FLUSH_SECONDS` have passed."""
        self._pending.update(zip(indices, results, strict=True))
        if time.monotonic() - self._last_flush >= self._interval:
            self.flush()

    def flush(self) -> None:
        """Write the queued results as one part (atomically)."""
        if not self._pending:
            return
        indices = sorted(self._pending)
        start = time.monotonic()
        _write_part(self.path, indices, [self._pending[i] for i in indices])
        self._pending.clear()
        self._last_flush = time.monotonic()
        self._interval = max(FLUSH_SECONDS, WRITE_SHARE * (self._last_flush - start))

    def close(self) -> None:
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None


# -------------------------------------------------------------------- files
def _lock(path: Path):
    fh = open(path / ".lock", "a+")  # noqa: SIM115 - held for the sweep
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no locking
        return fh
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        fh.close()
        raise StoreError(
            f"store {path} is in use by another running sweep; wait for it to finish, or use "
            "another path"
        ) from exc
    return fh


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


def _encode_part(results: list[Any]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Attributes and arrays of a part holding ``results``."""
    trees, per_item = [], []
    for r in results:
        leaves: list[Any] = []
        trees.append(_flatten(r, leaves))
        per_item.append(leaves)
    arrays: dict[str, np.ndarray] = {}
    if all(t == trees[0] for t in trees):
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


def _write_part(path: Path, indices: list[int], results: list[Any]) -> None:
    import zarr

    attrs, arrays = _encode_part(results)
    arrays["indices"] = np.asarray(indices, dtype=np.int64)
    stored: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    meta: dict[str, Any] = {}
    for name, arr in arrays.items():
        data, lengths = _to_stored(arr)
        stored[name] = (data, lengths)
        meta[name] = {"shape": list(arr.shape)}
        if lengths is not None:
            meta[name]["strings"] = arr.dtype.kind
    tmp = path / f".tmp-{uuid.uuid4().hex}"
    group = zarr.open_group(str(tmp), mode="w", attributes={**attrs, "arrays": meta})
    for name, (data, lengths) in stored.items():
        group.create_array(name, data=data.reshape(-1), compressors=None)
        if lengths is not None:
            group.create_array(f"{name}.lengths", data=lengths, compressors=None)
    final = path / "parts" / f"{indices[0]:09d}-{indices[-1]:09d}-{tmp.name[5:13]}"
    os.rename(tmp, final)  # atomic: the part appears whole or not at all


def _read_indices(part: Path) -> np.ndarray:
    import zarr

    try:
        return zarr.open_array(str(part / "indices"), mode="r")[...]
    except Exception as exc:  # noqa: BLE001
        raise StoreError(f"part {part.name}: {exc}") from exc


def _read_part(part: Path) -> tuple[np.ndarray, list[Any]]:
    import zarr

    try:
        group = zarr.open_group(str(part), mode="r")
        attrs = dict(group.attrs)
        meta = attrs["arrays"]

        def read(name: str) -> np.ndarray:
            m = meta[name]
            lengths = group[f"{name}.lengths"][...] if m.get("strings") else None
            return _from_stored(group[name][...], m, lengths)

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

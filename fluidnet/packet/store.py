"""A content-keyed store of ns-3 runs: a run computed once is read back, never run again.

A run of :func:`fluidnet.packet.simulate` is a function of what the ns-3 worker receives and of
the code that runs it. Its **key** (:func:`run_key`) holds all of it, as plain data:

* the scenario's *plan* for the run's length and seed (:meth:`Scenario.plan`: links, queue
  discs and their attributes, flow groups with their drawn start times and sizes) -- the
  complete description ns-3 receives, so two scenarios that plan alike share their runs;
* the length, seed and number of trace samples;
* the versions of ns-3 and cppyy (the installed ``ns3``, ``cppyy``, ``cppyy-cling``,
  ``cppyy-backend`` and ``CPyCppyy`` distributions) and of fluidnet;
* the SHA-256 of fluidnet's ns-3 components: the C++ sources compiled into ns-3
  (``cxx/*.cc``), the worker that builds and runs an experiment (``_worker.py``), the server that
  forks it and the loader (``_server.py``, ``_ns3.py``), and the plan of the warm-up scenario the
  server runs before it forks (it leaves ns-3's global state that every run starts from).

An entry is one file, ``<root>/<k[:2]>/<k>-<c>.npz``: ``k`` the SHA-256 of the key (canonical
JSON), ``c`` the first 32 hex digits of the SHA-256 of the file's bytes. The file holds the
run's arrays and the key itself; it is written to a temporary file and renamed into place
(whole or not at all), and is read only when **its bytes match the digest in its name** and
**the key inside equals the key asked for** (so an entry copied or renamed to another key is
never taken for it). Arrays are read with ``allow_pickle=False``: nothing in the store runs
code. An entry that fails either check is moved aside (``.corrupt-<name>``) with a warning
naming it and why, and the run is made again. A store that cannot be written (a full or
read-only disk) costs only the reuse: the run is returned, with a warning.

The digests detect damage and mix-ups, not forgery: whoever can write the store can write a
consistent entry, so keep it where only you can write (see the README's Safety section).

Which store a run uses: ``store=`` of :func:`~fluidnet.packet.simulate` (a directory or a
:class:`RunStore`; ``False`` for none), else the directory in the environment variable
``FLUIDNET_PACKET_STORE`` (``fluidnet reproduce`` sets it to ``<out>/.cache/packet-runs``), else
none.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import tempfile
import time
import uuid
import warnings
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..diskfull import unwritable_reason
from ..errors import OptionError
from ._ns3 import _SOURCES

__all__ = ["RunStore", "run_key", "key_digest", "resolve_store", "ENV", "FORMAT"]

#: The environment variable naming the default store directory.
ENV = "FLUIDNET_PACKET_STORE"
#: Version of the entries' layout (part of every key).
FORMAT = 1
#: The distributions whose versions are part of every key.
DISTRIBUTIONS = ("ns3", "cppyy", "cppyy-cling", "cppyy-backend", "CPyCppyy")
#: fluidnet's files that run inside the packet server (their digests are part of every key).
#: Every file that determines what a run does: the C++ sources the packet server compiles (all of
#: them, in its order) and the Python that loads ns-3 and runs a plan.
COMPONENTS = (*(f"cxx/{name}" for name in _SOURCES), "_worker.py", "_server.py", "_ns3.py")
_KEY_ARRAY = "__fluidnet_run_key__"
_HERE = Path(__file__).resolve().parent


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(obj: Any) -> bytes:
    """JSON with sorted keys; floats by their shortest exact repr (json's own)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True).encode()


def _version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@lru_cache(maxsize=1)
def component_digests() -> dict[str, str]:
    """SHA-256 of fluidnet's ns-3 components and of the warm-up plan (see the module notes)."""
    from ._worker import warm_scenario

    out = {name: _sha256((_HERE / name).read_bytes()) for name in COMPONENTS}
    out["warm-up plan"] = _sha256(_canonical(warm_scenario().plan(0.3, 0)))
    return out


@lru_cache(maxsize=1)
def _versions() -> dict[str, str | None]:
    from .. import __version__

    return {"fluidnet": __version__, **{name: _version(name) for name in DISTRIBUTIONS}}


def run_key(plan: Mapping[str, Any], t_end: float, seed: int, n_points: int) -> dict[str, Any]:
    """The key of one run: everything that determines its traces (see the module notes).

    Parameters
    ----------
    plan : dict
        The scenario's plan for this run (:meth:`fluidnet.packet.Scenario.plan`).
    t_end : float
        Simulated seconds.
    seed : int
        The run's seed.
    n_points : int
        Trace samples.

    Returns
    -------
    dict
        Plain data (JSON): ``format``, ``plan``, ``t_end``, ``seed``, ``n_points``,
        ``versions`` and ``components``.
    """
    return {
        "format": FORMAT,
        "plan": json.loads(_canonical(plan)),
        "t_end": float(t_end),
        "seed": int(seed),
        "n_points": int(n_points),
        "versions": _versions(),
        "components": component_digests(),
    }


def key_digest(key: Mapping[str, Any]) -> str:
    """The SHA-256 (hex) of a key's canonical JSON: the entry's file name starts with it.

    Parameters
    ----------
    key : dict
        A key made by :func:`run_key`.

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    return _sha256(_canonical(key))


class RunStore:
    """A directory of ns-3 runs keyed by content (see :mod:`fluidnet.packet.store`).

    Parameters
    ----------
    path : str or os.PathLike
        The directory (created on the first write).

    Examples
    --------
    >>> import tempfile
    >>> import fluidnet as fn
    >>> store = fn.packet.RunStore(tempfile.mkdtemp())
    >>> len(store)
    0
    >>> # fn.packet.simulate(scenario, 10.0, seed=1, store=store) writes a run, the same call
    >>> # again reads it back
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"

    def __fspath__(self) -> str:
        return str(self.path)

    def __len__(self) -> int:
        """Entries in the store (not verified)."""
        if not self.path.is_dir():
            return 0
        return sum(1 for _ in self.path.glob("??/*.npz"))

    def _candidates(self, digest: str) -> list[Path]:
        folder = self.path / digest[:2]
        if not folder.is_dir():
            return []
        return sorted(folder.glob(f"{digest}-*.npz"))

    def get(self, key: Mapping[str, Any]) -> dict[str, np.ndarray] | None:
        """The arrays of the run with ``key``, or ``None`` when the store has no sound entry.

        Every candidate is checked (its bytes against the digest in its name, the key inside
        against ``key``) before anything in it is used; one that fails is moved aside with a
        warning.

        Parameters
        ----------
        key : dict
            Made by :func:`run_key`.

        Returns
        -------
        dict of str to ndarray, or None
        """
        digest = key_digest(key)
        wanted = _canonical(key)
        for path in self._candidates(digest):
            try:
                data = path.read_bytes()
            except OSError:
                continue
            why = _check_entry(path, data, wanted)
            if why is None:
                with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                    return {k: npz[k] for k in npz.files if k != _KEY_ARRAY}
            self._set_aside(path, why)
        return None

    def put(self, key: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Path | None:
        """Write the run with ``key`` (unless a sound entry is there already).

        Parameters
        ----------
        key : dict
            Made by :func:`run_key`.
        arrays : dict of str to ndarray
            The run's traces, as the worker returned them.

        Returns
        -------
        pathlib.Path or None
            The entry; ``None`` when it could not be written (a warning says why; the run
            itself is not affected).
        """
        digest = key_digest(key)
        buffer = io.BytesIO()
        # Any: savez's stub types **kwds apart from its allow_pickle keyword
        payload: dict[str, Any] = {k: np.asarray(v) for k, v in arrays.items() if k != _KEY_ARRAY}
        payload[_KEY_ARRAY] = np.frombuffer(_canonical(key), dtype=np.uint8)
        np.savez_compressed(buffer, **payload)
        data = buffer.getvalue()
        folder = self.path / digest[:2]
        final = folder / f"{digest}-{_sha256(data)[:32]}.npz"
        if final.exists():
            return final
        tmp = None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".npz")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, final)
            tmp = None
        except OSError as exc:
            reason = unwritable_reason(exc) or f"{type(exc).__name__}: {exc}"
            warnings.warn(
                f"packet run store {self.path}: the run could not be stored ({reason}); it is "
                "returned, and will be run again next time",
                RuntimeWarning,
                stacklevel=3,
            )
            return None
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        return final

    def _set_aside(self, path: Path, why: str) -> None:
        aside = path.with_name(f".corrupt-{int(time.time())}-{uuid.uuid4().hex[:6]}-{path.name}")
        with contextlib.suppress(OSError):
            path.rename(aside)
        warnings.warn(
            f"packet run store {self.path}: entry {path.name} is not used ({why}); moved aside "
            f"to {aside.name}, the run is made again",
            RuntimeWarning,
            stacklevel=4,
        )


def _check_entry(path: Path, data: bytes, wanted: bytes) -> str | None:
    """Why the entry at ``path`` (its bytes ``data``) is not the run keyed ``wanted``; None
    when it is."""
    named = path.stem.rpartition("-")[2]
    if _sha256(data)[:32] != named:
        return "its bytes do not match the digest in its name (damaged or altered)"
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            if _KEY_ARRAY not in npz.files:
                return "it holds no key"
            stored = npz[_KEY_ARRAY].tobytes()
    except Exception as exc:  # noqa: BLE001 - a damaged archive raises many types
        return f"it cannot be read ({type(exc).__name__}: {exc})"
    if stored != wanted:
        return "the key inside is another run's (copied or renamed)"
    return None


def resolve_store(store: RunStore | str | os.PathLike | bool | None) -> RunStore | None:
    """The store a run uses from ``store=``: a :class:`RunStore`, a directory, ``False`` (none),
    or ``None`` (the directory in ``$FLUIDNET_PACKET_STORE``, if set and not empty).

    Parameters
    ----------
    store : RunStore, path, bool or None

    Returns
    -------
    RunStore or None

    Raises
    ------
    OptionError
        For another type, or ``store=True`` (say which directory).
    """
    if store is None:
        env = os.environ.get(ENV, "")
        return RunStore(env) if env else None
    if store is False:
        return None
    if isinstance(store, RunStore):
        return store
    if isinstance(store, (str, os.PathLike)) and not isinstance(store, bool):
        return RunStore(store)
    raise OptionError(
        f"store = {store!r}: give a directory, a fluidnet.packet.RunStore, False (no store) "
        f"or None (the directory in ${ENV}, if set)"
    )

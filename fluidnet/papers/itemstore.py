"""What a run of :func:`fluidnet.reproduce` keeps so that the next run redoes only what changed.

An item is a deterministic function of fluidnet's code, the installed packages and a few
environment variables: its targets and files are kept in a **record**, and a later run with the
same **key** reads the record instead of running the item again. The key
(:func:`item_key`) holds

* the item (paper, name), whether the run is quick, and the sizes it is run with;
* the SHA-256 of every source file of fluidnet that the item can reach: the whole package
  (Python, stubs, C and C++ sources, the compiled integrator) except the other papers'
  packages (``fluidnet/papers/<other>/``; an item imports only its own paper's modules), and
  the file that defines the item's function when it lies outside the package;
* the Python version and platform, the version of every installed distribution, and the
  environment variables that change results (``FLUIDNET_BACKEND``, ``CC``, ...).

A record, ``<store>/items/<paper>/<item>[.quick].json``, holds the key, the checked targets and
the SHA-256 of every file the item wrote (relative to the output root). It is used only when
its own digest (of its canonical JSON) holds, its key equals the run's, and every file it lists
is in the output root with its recorded digest; otherwise the item runs again (a damaged record
with a warning). Items that raised, or with a target that fails, are not recorded: they run
every time.

Records are data (JSON), never code. The ns-3 runs of the packet items have their own
content-keyed store (:mod:`fluidnet.packet.store`), so an item whose fluid code changed reruns
its fluid half and reads its unchanged ns-3 runs back.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import os
import platform
import sys
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..sweep.signature import describe
from .output import write_file
from .targets import Target

__all__ = ["ItemStore", "item_key", "ENVIRONMENT", "FORMAT"]

#: Version of the records' layout (part of every key).
FORMAT = 1
#: Environment variables whose values can change an item's results.
ENVIRONMENT = ("FLUIDNET_BACKEND", "CC", "CFLAGS", "NUMBA_OPT", "NUMBA_DISABLE_JIT")
#: Files of the package whose contents the key covers.
SOURCE_SUFFIXES = (".py", ".pyi", ".c", ".h", ".cc", ".so", ".toml", ".json", ".csv", ".txt")
_PACKAGE = Path(__file__).resolve().parents[1]
_TARGET_FIELDS = [f.name for f in fields(Target)]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True).encode()


def _sources(root: Path, skip: Iterable[Path]) -> dict[str, str]:
    """``{relative path: sha256}`` of the source files under ``root`` outside ``skip``."""
    skipped = tuple(str(p) + os.sep for p in skip)
    out = {}
    for path in sorted(root.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        if "__pycache__" in path.parts or str(path).startswith(skipped):
            continue
        out[str(path.relative_to(root))] = _sha256(path.read_bytes())
    return out


@lru_cache(maxsize=8)
def _package_digest(paper: str | None) -> str:
    """Digest of fluidnet's sources without the paper packages other than ``paper``."""
    papers = _PACKAGE / "papers"
    others = [p for p in papers.iterdir() if p.is_dir() and p.name not in (paper, "__pycache__")]
    return _sha256(_canonical(_sources(_PACKAGE, others)))


@lru_cache(maxsize=1)
def _environment() -> dict[str, Any]:
    from importlib import metadata

    packages = {}
    for dist in metadata.distributions():
        name = dist.metadata.get("Name")
        if name:
            packages[name.lower()] = dist.version
    return {
        "python": sys.version,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "packages": dict(sorted(packages.items())),
    }


def item_key(item: Any, quick: bool) -> dict[str, Any]:
    """The key of a run of ``item`` (a registered item; see the module notes).

    Parameters
    ----------
    item : fluidnet.papers.registry.Item
    quick : bool
        Whether the run uses the item's quick sizes.

    Returns
    -------
    dict
        Plain data (JSON).
    """
    paper = item.paper
    source = inspect.getsourcefile(item.func)
    own = Path(source).resolve() if source else None
    outside = None
    if own is not None and _PACKAGE not in own.parents:
        outside = {str(own): _sha256(own.read_bytes())}
    return {
        "format": FORMAT,
        "item": f"{item.paper}:{item.name}",
        "quick": bool(quick),
        "sizes": describe(item.quick if quick else {}, "sizes"),  # arrays and tuples too
        "package": _package_digest(paper if (_PACKAGE / "papers" / paper).is_dir() else None),
        "outside": outside,
        "environment": _environment(),
        "variables": {k: os.environ.get(k) for k in ENVIRONMENT},
    }


@dataclass
class Reused:
    """A record that holds: the item's targets and files as its last run left them."""

    targets: list[Target]
    files: list[Path]
    seconds: float
    created: str


def _plain(value: Any) -> bool:
    """Whether JSON gives ``value`` back as the report shows and writes it: Python's scalars,
    and numpy's float64 (a float: the report formats and writes it as one)."""
    return type(value) in (bool, int, float, str, type(None)) or isinstance(value, float)


def _value(value: Any) -> Any:
    return float(value) if isinstance(value, float) else value


class ItemStore:
    """The records of items (see :mod:`fluidnet.papers.itemstore`) under ``<path>/items``.

    Parameters
    ----------
    path : str or os.PathLike
        The store directory (``<out>/.cache`` by default in :func:`fluidnet.reproduce`).
    out : str or os.PathLike
        The output root the items write to (the records' file paths are relative to it).
    """

    def __init__(self, path: str | os.PathLike, out: str | os.PathLike) -> None:
        self.path = Path(path)
        self.out = Path(out)

    def _file(self, item: Any, quick: bool) -> Path:
        return self.path / "items" / item.paper / f"{item.name}{'.quick' if quick else ''}.json"

    def get(self, item: Any, quick: bool, key: Mapping[str, Any]) -> Reused | None:
        """The item's last results when its record holds for ``key`` (else ``None``)."""
        path = self._file(item, quick)
        try:
            text = path.read_bytes()
        except OSError:
            return None
        try:
            record = json.loads(text)
            body = record["body"]
            sound = record["sha256"] == _sha256(_canonical(body))
        except (ValueError, KeyError, TypeError):
            sound = False
        if not sound:
            warnings.warn(
                f"reproduce store {self.path}: the record of {item.paper}:{item.name} is "
                "damaged (its digest does not hold); the item runs again",
                RuntimeWarning,
                stacklevel=3,
            )
            return None
        if _canonical(body.get("key")) != _canonical(key):
            return None  # made by other code or another environment: run again
        files = []
        for rel, digest in body["files"].items():
            f = self.out / rel
            try:
                if _sha256(f.read_bytes()) != digest:
                    return None
            except OSError:
                return None
            files.append(f)
        targets = [Target(**dict(zip(_TARGET_FIELDS, row, strict=True))) for row in body["targets"]]
        return Reused(targets, files, float(body["seconds"]), str(body["created"]))

    def put(
        self,
        item: Any,
        quick: bool,
        key: Mapping[str, Any],
        targets: list[Target],
        files: list[Path],
        seconds: float,
    ) -> None:
        """Record a run of the item that raised nothing and whose targets are all ok."""
        if not all(_plain(getattr(t, name)) for t in targets for name in _TARGET_FIELDS):
            return  # a value JSON would not give back as it is (numpy's int): not recorded
        digests = {}
        for f in files:
            with contextlib.suppress(OSError):
                digests[str(Path(f).relative_to(self.out))] = _sha256(Path(f).read_bytes())
        if len(digests) != len(files):
            return  # a file is gone or outside the output root: nothing to vouch for
        body = {
            "key": key,
            "targets": [[_value(getattr(t, name)) for name in _TARGET_FIELDS] for t in targets],
            "files": digests,
            "seconds": float(seconds),
            "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        try:
            data = _canonical({"body": body, "sha256": _sha256(_canonical(body))})
        except (TypeError, ValueError):
            return  # a value JSON cannot hold exactly: not recorded, the item runs next time
        path = self._file(item, quick)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_file(path, data)
        except OSError as exc:
            warnings.warn(
                f"reproduce store {self.path}: the record of {item.paper}:{item.name} could not "
                f"be written ({exc}); the item runs again next time",
                RuntimeWarning,
                stacklevel=3,
            )

"""Stores a lower stage uses and a higher stage provides, wired by the package root.

``"model pieces"``: bytes kept between processes under a file name (a model's steady-state
code, its closed-form equilibria), returned only exactly as they were written. The symbolic
stage keeps what it builds there (:mod:`fluidnet.symbolic.steadycode`); the compile cache of
:mod:`fluidnet.codegen` provides it (:mod:`fluidnet.codegen.pieces`: the private cache
directory, every file checked against the digest recorded when it was written), registered by
``fluidnet/__init__.py``. The symbolic stage cannot import the code generation stage above it;
this module, below both, is where they meet. Without a provider nothing is kept.
"""

from __future__ import annotations

__all__ = ["Store", "provide", "provided"]


class Store:
    """Bytes under a file name (letters, digits, ``_``, ``-``, ``.``); a provider subclasses
    it. (Not a ``typing.Protocol``: ``import fluidnet`` loads this module, and ``typing``
    costs more than the rest of it.)"""

    def load(self, name: str) -> bytes | None:
        """The bytes saved under ``name``, or ``None`` (missing, or not as written)."""
        raise NotImplementedError

    def save(self, name: str, data: bytes) -> None:
        """Keep ``data`` under ``name`` (whole or not at all)."""
        raise NotImplementedError


_PROVIDED: dict[str, Store] = {}


def provide(kind: str, store: Store) -> None:
    """Register ``store`` as the provider of ``kind`` (replacing an earlier one).

    Parameters
    ----------
    kind : str
        What the store keeps (``"model pieces"``).
    store : Store
    """
    _PROVIDED[kind] = store


def provided(kind: str) -> Store | None:
    """The store registered for ``kind``, or ``None``.

    Parameters
    ----------
    kind : str
        What the store keeps (``"model pieces"``).

    Returns
    -------
    Store or None
    """
    return _PROVIDED.get(kind)

# The names of the compiled integrator (fluidnet/dde/src/module.c), for type checkers: pyright
# does not read extension modules. fluidnet.dde.engine.integrator checks their values against
# the Python driver when it imports the module.

from typing import Any

STATE_FIELDS: tuple[tuple[str, int, str], ...]
STATE_SIZE: int
RUN_FIELDS: tuple[tuple[str, tuple[str, ...]], ...]
CODES: dict[str, int]
NCOEF: int
MAX_SLIDING: int
SOURCE_DIGEST: str

def advance(st: Any, run: Any, budget: int, /) -> int:
    """Integrate ``run`` from the state record ``st`` for at most ``budget`` steps; the status
    code."""

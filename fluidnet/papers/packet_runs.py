"""ns-3 runs of the papers' packet items, and the table that says what a fluid scenario became
in ns-3.

Several items measure the same run (Kunniyur & Srikant's Experiment 3 is the reference of its
short-flow variant; Ye et al.'s Case I gives both the rate ratio and the utility of Fig 3).
:func:`packet_runs` makes them one batch (:func:`fluidnet.packet.simulate_many`: the content-keyed
run store of ``fluidnet reproduce`` reads a run made by another item back, and a Dask cluster
takes the batch when one is named) and keeps the runs of the process, so that an item run
without a store does not make the same run twice either.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..packet.results import PacketRun
    from ..packet.scenario import Scenario

__all__ = ["packet_runs", "mapping_rows", "cpu_seconds"]

_RUNS: dict[tuple, Any] = {}


def packet_runs(
    scenarios: Sequence[Scenario], t_end: float, *, seed: int = 1, n_points: int | None = None
) -> list[PacketRun]:
    """One run of each scenario (``t_end`` simulated seconds, ``seed``), as one batch; runs
    already made in this process are not made again."""
    from ..packet.batch import simulate_many

    keys = [(sc, float(t_end), int(seed), n_points) for sc in scenarios]
    todo = [k for k in dict.fromkeys(keys) if k not in _RUNS]
    if todo:
        runs = simulate_many([k[0] for k in todo], t_end, seeds=(seed,), n_points=n_points)
        for k, (run,) in zip(todo, runs, strict=True):
            _RUNS[k] = run
    return [_RUNS[k] for k in keys]


def cpu_seconds(runs: Iterable[PacketRun]) -> float:
    """CPU seconds the ns-3 runs took (their workers' simulation time; for a run read back from
    the store, the time it took when it was made)."""
    return float(sum(r.cpu_time for r in runs))


def mapping_rows(scenario: Scenario, mapping: Mapping[str, tuple[str, str]]) -> list[dict]:
    """Rows ``{"quantity", "paper / fluid model", "ns-3"}``: ``mapping`` (quantity -> (the
    paper's or fluid model's value, what it became in ns-3)), then the scenario's own
    description line by line."""
    rows = [
        {"quantity": k, "paper / fluid model": fluid, "ns-3": packet}
        for k, (fluid, packet) in mapping.items()
    ]
    rows += [
        {"quantity": "scenario", "paper / fluid model": "", "ns-3": line.strip()}
        for line in scenario.describe().splitlines()
    ]
    return rows

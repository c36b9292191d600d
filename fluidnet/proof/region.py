"""Proved stability of whole parameter boxes: :func:`certify_region` and its search.

The box of the swept parameters is split by bisecting every swept parameter at once (a binary
tree in 1-D, a quadtree in 2-D, an octree in 3-D), down to ``depth`` levels, until every cell is
proved (:func:`fluidnet.proof.leaves.prove_leaf`) or left undecided with the reason of its last
failure. Proved cells that touch and share their equilibrium branch are joined, and each joined
set gets one root count (:func:`fluidnet.proof.leaves.prove_count`). The result is a
:class:`~fluidnet.proof.certificate.RegionCertificate`.
"""

from __future__ import annotations

import time
import warnings
from collections import deque
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import FluidnetError, OptionError, ParameterError
from ..options import count_option
from .arbcode import NotProved
from .certificate import (
    FORMAT,
    VERSION,
    RegionCertificate,
    cell_box,
    decimal_text,
    interval_texts,
)
from .exact import (
    PRECISION,
    Interval,
    ball,
    exact_value,
    fixed_interval,
    read_interval,
    working_precision,
)
from .expressions import digest
from .leaves import LeafProof, check_join, prove_count, prove_leaf
from .problem import ModelRecord, Problem, problem_of

if TYPE_CHECKING:
    from ..symbolic.model import Model

__all__ = ["certify_region", "SearchSetup"]

#: Largest number of swept parameters (the tree splits all of them at once).
MAX_SWEPT = 3


def _flint():
    import flint

    return flint


class SearchSetup:
    """The box, the fixed parameters and the problem of one certification.

    Parameters
    ----------
    record : ModelRecord
    names : sequence of str
        The swept parameters, in the box's order.
    root : sequence of (Fraction, Fraction)
        Their intervals.
    fixed : dict of str to (Fraction, Fraction)
        Every other parameter's interval.
    problem : Problem, optional
        The derived problem (default: the cached one of ``record``).
    """

    def __init__(
        self,
        record: ModelRecord,
        names: Sequence[str],
        root: Sequence[Interval],
        fixed: Mapping[str, Interval],
        problem: Problem | None = None,
    ):
        self.record = record
        self.problem = problem_of(record) if problem is None else problem
        self.names = tuple(names)
        self.root = list(root)
        self.fixed = dict(fixed)
        self.k = len(self.names)
        missing = [p for p in record.params if p not in self.names and p not in self.fixed]
        if missing:
            raise ParameterError(f"no value for parameter(s) {missing}")

    def box(self, path: str) -> list[Interval]:
        """The exact box of the cell at ``path`` (one base-``2^k`` digit per level)."""
        return cell_box(self.root, path, self.k)

    def balls(self, box: Sequence[Interval]) -> list:
        """Parameter balls in the record's order: the box's, then the fixed intervals."""
        where = dict(zip(self.names, box, strict=True))
        return [ball(where[p]) if p in where else ball(self.fixed[p]) for p in self.record.params]

    def point(self, box: Sequence[Interval]) -> list[Fraction]:
        return [(lo + hi) / 2 for lo, hi in box]

    def point_balls(self, point: Sequence[Fraction]) -> list:
        return self.balls([(v, v) for v in point])

    def float_params(self, box: Sequence[Interval]) -> dict[str, float]:
        """Floating-point values at the box's centre (for approximations only)."""
        out = {p: float((iv[0] + iv[1]) / 2) for p, iv in self.fixed.items()}
        out.update({n: float((lo + hi) / 2) for n, (lo, hi) in zip(self.names, box, strict=True)})
        return out


def _parse_box(model: Any, box: Any) -> tuple[list[str], list[Interval]]:
    if not isinstance(box, Mapping) or not box:
        raise OptionError(
            f"box = {box!r} must be a dict {{parameter: (lo, hi)}} of the swept parameters"
        )
    if len(box) > MAX_SWEPT:
        raise OptionError(f"box has {len(box)} parameters: at most {MAX_SWEPT} can be swept")
    names, root = [], []
    for name, rng in box.items():
        if name not in model.param_names:
            model.resolve_params({name: 0.0})  # raises the unknown-parameter error
        if isinstance(rng, (str, bytes, Mapping)) or np.ndim(rng) != 1 or len(rng) != 2:
            raise OptionError(f"box[{name!r}] = {rng!r} must be a pair (lo, hi)")
        lo = exact_value(f"box[{name!r}] lower end", rng[0])
        hi = exact_value(f"box[{name!r}] upper end", rng[1])
        if not lo < hi:
            raise OptionError(f"box[{name!r}] = {rng!r}: need lo < hi")
        blo, bhi = model.params[name].bounds
        if (blo is not None and lo < Fraction(blo)) or (bhi is not None and hi > Fraction(bhi)):
            raise ParameterError(
                f"box[{name!r}] = {rng!r} leaves the parameter's bounds {(blo, bhi)}"
            )
        names.append(str(name))
        root.append((lo, hi))
    return names, root


def _parse_fixed(model: Any, names: Sequence[str], params: Any, fixed: Mapping[str, Any]):
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise OptionError(f"params must be a dict {{name: value}}, got {type(params).__name__}")
    twice = sorted(set(params) & set(fixed))
    if twice:
        raise OptionError(f"{twice} given both in params={{...}} and as keywords")
    given = {**{str(k): v for k, v in params.items()}, **fixed}
    swept = sorted(set(given) & set(names))
    if swept:
        raise OptionError(f"{swept} are swept in the box and cannot also be fixed")
    out = {}
    for p in model.param_names:
        if p in names:
            continue
        if p in given:
            value = given.pop(p)
        else:
            value = model.params[p].value
            if value is None:
                model.resolve_params()  # raises the missing-value error
        out[p] = fixed_interval(f"parameter {p!r}", value)
        blo, bhi = model.params[p].bounds
        lo, hi = out[p]
        if (blo is not None and lo < Fraction(blo)) or (bhi is not None and hi > Fraction(bhi)):
            raise ParameterError(f"parameter {p!r} = {value!r} leaves its bounds {(blo, bhi)}")
    if given:
        model.resolve_params({k: 0.0 for k in given})  # raises the unknown-parameter error
    return out


def _approximate(model: Any, setup: SearchSetup, box: Sequence[Interval]) -> list[float]:
    """fluidnet's equilibrium at the box's centre (floats), refused when held at a boundary."""
    values = setup.float_params(box)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eq = model.equilibrium(params=values)
    except FluidnetError as exc:
        raise NotProved(f"no equilibrium at the box centre: {exc}") from None
    held = getattr(eq, "boundary", ())
    if held:
        raise NotProved(
            f"the equilibrium is held at the boundary of the projected state(s) {list(held)} "
            "(their equation is negative there): the model is not smooth at it, and the smooth "
            "theory does not apply"
        )
    return [float(eq[s]) for s in setup.record.states]


def search(model: Any, setup: SearchSetup, depth: int, progress: Any = None) -> dict[str, Any]:
    """Prove cells breadth first; return the certificate's data."""
    start = time.process_time()
    k = setup.k
    problem = setup.problem
    queue: deque[tuple[str, list[float] | None]] = deque([("", None)])
    proved: dict[str, LeafProof] = {}
    undecided: dict[str, str] = {}
    cells = evaluations = 0
    while queue:
        path, x0 = queue.popleft()
        box = setup.box(path)
        P = setup.balls(box)
        cells += 1
        proof = None
        try:
            if x0 is None:
                x0 = _approximate(model, setup, box)
            proof, used = prove_leaf(problem, P, x0)
            evaluations += used
        except NotProved as exc:
            reason = str(exc)
        if proof is not None:
            proved[path] = proof
            continue
        if len(path) < depth:
            for digit in range(2**k):
                queue.append((path + format(digit, "x"), x0))
        else:
            undecided[path] = reason
    components = _components(setup, proved)
    counts: dict[str, int] = {}
    comp_data = []
    for members, edges in components:
        anchor = min(members, key=lambda p: (len(p), p))
        point = setup.point(setup.box(anchor))
        try:
            cp = prove_count(problem, setup.point_balls(point), proved[anchor].X)
        except NotProved as exc:
            for p in members:
                undecided[p] = f"no root crosses the axis here, but the count failed: {exc}"
                del proved[p]
            continue
        comp_data.append((members, edges, anchor, point, cp))
        for p in members:
            counts[p] = cp.count
    order = sorted(set(proved) | set(undecided), key=_path_key)
    index = {p: i for i, p in enumerate(order)}
    leaves = []
    notes: list[str] = []
    for p in order:
        if p in proved:
            lp = proved[p]
            leaves.append(
                {
                    "path": p,
                    "status": "proved",
                    "equilibrium": [interval_texts(iv) for iv in lp.X],
                    "omega_max": decimal_text(lp.omega_max),
                    "omega_tree": lp.tree,
                }
            )
            notes += [n for n in lp.notes if n not in notes]
        else:
            leaves.append({"path": p, "status": "undecided", "reason": undecided[p]})
    comps = [
        {
            "leaves": sorted(index[p] for p in members),
            "edges": [[index[a], index[b]] for a, b in edges],
            "anchor": index[anchor],
            "point": [decimal_text(v) for v in point],
            "equilibrium": [interval_texts(iv) for iv in cp.X],
            "radius": decimal_text(cp.radius),
            "tree": cp.tree,
            "count": cp.count,
        }
        for members, edges, anchor, point, cp in comp_data
    ]
    verdict, count = verdict_of(
        [counts.get(p) for p in order], [leaf["status"] == "proved" for leaf in leaves]
    )
    data = {
        "format": FORMAT,
        "version": VERSION,
        "precision_bits": PRECISION,
        "model": {**setup.record.to_dict(), "digest": setup.record.digest},
        "box": [
            [n, decimal_text(lo), decimal_text(hi)]
            for n, (lo, hi) in zip(setup.names, setup.root, strict=True)
        ],
        "fixed": {p: interval_texts(iv) for p, iv in setup.fixed.items()},
        "depth": depth,
        "leaves": leaves,
        "components": comps,
        "verdict": verdict,
        "count": count,
        "caveats": notes,
        "work": {
            "cells": cells,
            "evaluations": evaluations,
            "cpu_seconds": round(time.process_time() - start, 3),
        },
    }
    data["digest"] = digest(data)
    del k
    return data


def verdict_of(counts: Sequence[int | None], proved: Sequence[bool]) -> tuple[str, int | None]:
    """The verdict of a box from its leaves' counts (None where undecided)."""
    if not all(proved) or any(c is None for c in counts):
        return "undecided", None
    values = {c for c in counts if c is not None}
    if values == {0}:
        return "stable", 0
    if 0 in values:
        return "undecided", None
    return "unstable", (values.pop() if len(values) == 1 else None)


def _path_key(path: str) -> tuple:
    return tuple(int(c, 16) for c in path), len(path)


def integer_boxes(paths: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer corners ``lo, hi`` (``(L, k)``) of the cells at the finest level among them."""
    D = max((len(p) for p in paths), default=0)
    lo = np.zeros((len(paths), k), dtype=np.int64)
    hi = np.zeros((len(paths), k), dtype=np.int64)
    for i, p in enumerate(paths):
        c = [0] * k
        for ch in p:
            digit = int(ch, 16)
            c = [2 * c[d] + (digit >> d & 1) for d in range(k)]
        size = 1 << (D - len(p))
        lo[i] = [v * size for v in c]
        hi[i] = [(v + 1) * size for v in c]
    return lo, hi


def touching_pairs(paths: Sequence[str], k: int) -> list[tuple[int, int]]:
    """Pairs of cells whose closed boxes intersect."""
    lo, hi = integer_boxes(paths, k)
    L = len(paths)
    out = []
    for s in range(0, L, 256):
        a = slice(s, min(L, s + 256))
        ok = np.all((lo[a, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[a, None, :]), -1)
        for i, j in zip(*np.nonzero(ok), strict=True):
            i = int(i) + s
            if i < int(j):
                out.append((i, int(j)))
    return out


def intersection(a: Sequence[Interval], b: Sequence[Interval]) -> list[Interval]:
    return [(max(x[0], y[0]), min(x[1], y[1])) for x, y in zip(a, b, strict=True)]


def _components(setup: SearchSetup, proved: Mapping[str, LeafProof]):
    """Joined sets of proved cells: ``[(members, spanning edges)]``."""
    paths = sorted(proved, key=_path_key)
    parent = list(range(len(paths)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    edges: list[tuple[str, str]] = []
    for i, j in touching_pairs(paths, setup.k):
        ri, rj = find(i), find(j)
        if ri == rj:
            continue
        a, b = paths[i], paths[j]
        S = setup.balls(intersection(setup.box(a), setup.box(b)))
        try:
            check_join(setup.problem, proved[a].X, proved[b].X, S)
        except NotProved:
            continue
        parent[ri] = rj
        edges.append((a, b))
    groups: dict[int, list[str]] = {}
    for i, p in enumerate(paths):
        groups.setdefault(find(i), []).append(p)
    out = []
    for members in groups.values():
        mset = set(members)
        out.append((members, [(a, b) for a, b in edges if a in mset]))
    return out


def certify_region(
    model: Model,
    box: Mapping[str, tuple[Any, Any]],
    *,
    depth: int = 4,
    params: Mapping[str, Any] | None = None,
    **fixed: Any,
) -> RegionCertificate:
    """Prove the stability of a model's linearization over a whole box of parameters.

    The proof, in rigorous interval arithmetic (arb balls, python-flint), holds for every point
    of the box (read exactly) and for every value of each fixed parameter's interval:

    1. the equilibrium is enclosed over each cell of the box by Krawczyk's test (existence and
       uniqueness in the enclosure), from the steady-state equations and their Jacobian
       derived symbolically from the model;
    2. the linearization's matrices and delays are enclosed over the cell;
    3. ``omega_max`` bounds ``|lambda|`` of every root with ``Re lambda >= 0``;
    4. ``Delta(j omega) != 0`` for every ``omega`` in ``[0, omega_max]`` and every point of the
       cell (a bisection tree of frequency pieces), so the number of roots in the right
       half-plane is constant on the cell;
    5. that number is counted at one point by the argument principle, once per connected set
       of cells whose equilibria are one branch.

    Cells where a step fails are bisected (every swept parameter at once) down to ``depth``
    levels; those still failing are left undecided with the reason.

    Parameters
    ----------
    model : fluidnet.Model
        A model with an isolated smooth equilibrium (delays may depend on parameters and on
        the state; they are frozen at the enclosed equilibrium).
    box : dict
        ``{parameter: (lo, hi)}`` for one to three swept parameters. The ends are read
        exactly: a float as the shortest decimal that prints it (``0.1`` is 1/10), or give a
        :class:`fractions.Fraction`.
    depth : int, default 4
        Bisection levels: the smallest cells are ``2**-depth`` of the box in each parameter.
    params : dict, optional
        Values of the other parameters (default the model's). Each float is enclosed with both
        its decimal and its binary value.
    **fixed
        The same as keywords.

    Returns
    -------
    RegionCertificate
        ``verdict`` ("stable", "unstable" or "undecided"), ``count`` (roots in the open right
        half-plane when decided), ``undecided`` (the boxes left), ``leaves``, ``caveats``,
        ``work``; ``save(path)`` writes it for :func:`fluidnet.check_certificate`.

    Raises
    ------
    OptionError
        For a malformed box or option.
    ParameterError
        For an unknown parameter, a value that is not a real number, or a box outside a
        parameter's bounds.
    ModelError
        For a model that cannot be enclosed (explicit time dependence, an unsupported function,
        more than eight states).

    Examples
    --------
    The Hayes equation ``x' = a x + b x(t - 1)``, stable where ``a + |b| < 0``:

    >>> import fluidnet as fn
    >>> x = fn.states("x")
    >>> a, b = fn.params("a b")
    >>> hayes = fn.Model(rhs={x: a * x(fn.t) + b * x(fn.t - 1)}, params={a: -2.0, b: 0.5})
    >>> cert = fn.certify_region(hayes, {"a": (-3, -2), "b": (-0.5, 0.5)})
    >>> cert.verdict, cert.count
    ('stable', 0)
    """
    depth = count_option("depth", depth, minimum=0, where="certify_region")
    names, root = _parse_box(model, box)
    # the intervals as the certificate writes them are the ones proved (and checked)
    fixed_iv = {
        p: read_interval(interval_texts(iv), p)
        for p, iv in _parse_fixed(model, names, params, fixed).items()
    }
    record = ModelRecord.from_model(model)
    setup = SearchSetup(record, names, root, fixed_iv)
    with working_precision(PRECISION):
        data = search(model, setup, depth)
    return RegionCertificate.from_data(data, model=model)

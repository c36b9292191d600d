"""Re-verifying a certificate from its file alone: :func:`check_certificate`."""

from __future__ import annotations

import json
import os
import time
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from .arbcode import NotProved
from .certificate import FORMAT, VERSION, CertificateError, RegionCertificate
from .exact import PRECISION, read_interval, read_number, working_precision
from .expressions import TreeError, digest
from .leaves import CountProof, LeafProof, check_count, check_join, check_leaf
from .problem import ModelRecord, Problem
from .region import SearchSetup, verdict_of

if TYPE_CHECKING:
    from ..symbolic.model import Model

__all__ = ["check_certificate"]


def check_certificate(path: str | os.PathLike, *, model: Model | None = None) -> RegionCertificate:
    """Re-verify a saved certificate, independently of how it was found.

    Every claim is checked again in ball arithmetic from the numbers in the file: the file's
    digest, that the cells tile the box, Krawczyk's test on each proved cell's equilibrium box,
    the root bound, ``Delta(j omega) != 0`` on every piece of each frequency tree, the joins
    between touching cells, the root counts by the argument principle, and that the verdict
    follows. Checking evaluates only the stored pieces, so it costs no more than finding did.

    Parameters
    ----------
    path : str or path-like
        A file written by :meth:`RegionCertificate.save`.
    model : fluidnet.Model, optional
        When given, the certificate must be about this model (same digest).

    Returns
    -------
    RegionCertificate
        The certificate, with ``checked = True`` and the check's effort in
        ``work["check_cpu_seconds"]`` and ``work["check_evaluations"]``.

    Raises
    ------
    CertificateError
        When the file is not a certificate, was edited, is about another model, or a claim
        fails (the message names the cell and the step).

    Examples
    --------
    >>> import os, tempfile, fluidnet as fn
    >>> x = fn.states("x")
    >>> a, b = fn.params("a b")
    >>> hayes = fn.Model(rhs={x: a * x(fn.t) + b * x(fn.t - 1)}, params={a: -2.0, b: 0.5})
    >>> path = os.path.join(tempfile.mkdtemp(), "hayes.json")
    >>> fn.certify_region(hayes, {"a": (-3, -2), "b": (-0.5, 0.5)}).save(path)
    >>> fn.check_certificate(path).verdict
    'stable'
    """
    start = time.process_time()
    data = _load(path)
    bits = data.get("precision_bits")
    if not isinstance(bits, int) or not PRECISION <= bits <= 4096:
        raise CertificateError(f"precision_bits = {bits!r}: need an integer from {PRECISION}")
    try:
        with working_precision(bits):
            cert, evaluations = _check(data, model)
    except (KeyError, TypeError, ValueError, TreeError, IndexError) as exc:
        if isinstance(exc, CertificateError):
            raise
        raise CertificateError(
            f"{os.fspath(path)}: the certificate is malformed ({exc!r})"
        ) from None
    cert.work["check_cpu_seconds"] = round(time.process_time() - start, 3)
    cert.work["check_evaluations"] = evaluations
    return cert


def _load(path: str | os.PathLike) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise CertificateError(
            f"{os.fspath(path)} cannot be read as a certificate: {exc}"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CertificateError(f"{os.fspath(path)} is not a {FORMAT} file")
    if data.get("version") != VERSION:
        raise CertificateError(
            f"{os.fspath(path)} has version {data.get('version')!r}; this checker reads {VERSION}"
        )
    stored = data.get("digest")
    body = {k: v for k, v in data.items() if k != "digest"}
    if stored != digest(body):
        raise CertificateError(
            f"{os.fspath(path)} was edited after it was made: its digest {stored!r} does not "
            "match its content"
        )
    return data


def _check(data: dict[str, Any], model: Any) -> tuple[RegionCertificate, int]:
    record = ModelRecord.from_dict(data["model"])
    if record.digest != data["model"]["digest"]:
        raise CertificateError("the model's digest does not match the model it records")
    if model is not None and ModelRecord.from_model(model).digest != record.digest:
        raise CertificateError(
            f"the certificate is about model {record.name!r} ({record.digest}), not the model given"
        )
    names = [str(b[0]) for b in data["box"]]
    root = [read_interval(b[1:], f"box {b[0]!r}") for b in data["box"]]
    fixed = {p: read_interval(v, f"fixed {p!r}") for p, v in data["fixed"].items()}
    # derived again from the record, not taken from a search in this process
    setup = SearchSetup(record, names, root, fixed, problem=Problem(record))
    leaves = data["leaves"]
    paths = [str(leaf["path"]) for leaf in leaves]
    _check_tiling(paths, len(names))
    problem = setup.problem
    evaluations = 0
    proofs: dict[int, LeafProof] = {}
    notes: list[str] = []
    for i, leaf in enumerate(leaves):
        if leaf["status"] == "undecided":
            continue
        if leaf["status"] != "proved":
            raise CertificateError(f"cell {i}: unknown status {leaf['status']!r}")
        proof = LeafProof(
            X=[read_interval(iv, f"cell {i} equilibrium") for iv in leaf["equilibrium"]],
            omega_max=read_number(leaf["omega_max"]),
            tree=str(leaf["omega_tree"]),
            notes=[],
        )
        P = setup.balls(setup.box(paths[i]))
        try:
            evaluations += check_leaf(problem, P, proof)
            from .leaves import enclosed_linearization

            notes += enclosed_linearization(problem, proof.X, P)[2]
        except NotProved as exc:
            raise CertificateError(f"cell {i} (path {paths[i]!r}) does not check: {exc}") from None
        proofs[i] = proof
    missing = [n for n in dict.fromkeys(notes) if n not in data["caveats"]]
    if missing:
        raise CertificateError(f"the certificate omits the caveat(s) {missing}")
    counts: dict[int, int] = {}
    for c, comp in enumerate(data["components"]):
        members = [int(i) for i in comp["leaves"]]
        for i in members:
            if i not in proofs or i in counts:
                raise CertificateError(f"component {c}: cell {i} is not proved or is counted twice")
            counts[i] = int(comp["count"])
        _check_component(setup, paths, proofs, members, comp, c)
    if set(counts) != set(proofs):
        raise CertificateError("a proved cell belongs to no component")
    verdict = verdict_of(
        [counts.get(i) for i in range(len(leaves))],
        [leaf["status"] == "proved" for leaf in leaves],
    )
    if verdict != (data["verdict"], data["count"]):
        raise CertificateError(
            f"the cells prove {verdict[0]!r} (count {verdict[1]}), but the certificate says "
            f"{data['verdict']!r} (count {data['count']})"
        )
    return RegionCertificate.from_data(data, model=model, checked=True), evaluations


def _check_tiling(paths: list[str], k: int) -> None:
    """The paths are a complete prefix code of the ``2^k``-ary tree: the cells tile the box."""
    digits = "0123456789abcdef"[: 2**k]
    total = Fraction(0)
    for p in paths:
        if any(ch not in digits for ch in p):
            raise CertificateError(f"cell path {p!r} has a digit outside {digits!r}")
        total += Fraction(1, 2 ** (k * len(p)))
    ordered = sorted(paths)
    for a, b in zip(ordered, ordered[1:], strict=False):
        if b.startswith(a):
            raise CertificateError(f"cell {a!r} contains cell {b!r}: the cells overlap")
    if total != 1:
        raise CertificateError(f"the cells cover {float(total):.6g} of the box, not all of it")


def _touch(a, b) -> bool:
    return all(x[0] <= y[1] and y[0] <= x[1] for x, y in zip(a, b, strict=True))


def _check_component(setup, paths, proofs, members, comp, c) -> None:
    problem = setup.problem
    parent = {i: i for i in members}

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for a, b in comp["edges"]:
        a, b = int(a), int(b)
        if a not in parent or b not in parent:
            raise CertificateError(f"component {c}: edge ({a}, {b}) leaves the component")
        ba, bb = setup.box(paths[a]), setup.box(paths[b])
        if not _touch(ba, bb):
            raise CertificateError(f"component {c}: cells {a} and {b} do not touch")
        S = setup.balls([(max(x[0], y[0]), min(x[1], y[1])) for x, y in zip(ba, bb, strict=True)])
        try:
            check_join(problem, proofs[a].X, proofs[b].X, S)
        except NotProved as exc:
            raise CertificateError(f"component {c}, cells {a} and {b}: {exc}") from None
        parent[find(a)] = find(b)
    if len({find(i) for i in members}) != 1:
        raise CertificateError(f"component {c}: its edges do not connect its cells")
    anchor = int(comp["anchor"])
    if anchor not in parent:
        raise CertificateError(f"component {c}: the anchor {anchor} is not one of its cells")
    point = [read_number(v) for v in comp["point"]]
    box = setup.box(paths[anchor])
    if not all(lo <= v <= hi for v, (lo, hi) in zip(point, box, strict=True)):
        raise CertificateError(f"component {c}: the counting point is outside its anchor cell")
    proof = CountProof(
        X=[read_interval(iv, f"component {c} equilibrium") for iv in comp["equilibrium"]],
        radius=read_number(comp["radius"]),
        tree=str(comp["tree"]),
        count=int(comp["count"]),
    )
    try:
        check_count(problem, setup.point_balls(point), proofs[anchor].X, proof)
    except NotProved as exc:
        raise CertificateError(f"component {c}: the root count does not check: {exc}") from None

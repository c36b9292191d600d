"""Certificates (fluidnet.proof.certificate, .checker, .expressions) outlive the process: saved,
re-checked in a new process, and refused when tampered with -- an edit the digest shows, and
edits a forger re-digests, which the proof itself refuses."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fluidnet as fn
from fluidnet.proof.expressions import digest, from_tree, to_tree

ROOT = Path(__file__).resolve().parents[1]


def hayes() -> fn.Model:
    x = fn.states("x")
    a, b = fn.params("a b")
    return fn.Model(rhs={x: a * x(fn.t) + b * x(fn.t - 1)}, params={a: -1.0, b: 0.5}, name="hayes")


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, fn.RegionCertificate]:
    path = tmp_path_factory.mktemp("cert") / "hayes.json"
    cert = fn.certify_region(hayes(), {"a": (-1.0, 0.5), "b": (-2.5, 1.0)}, depth=3)
    cert.save(path)
    return path, cert


def forged(path: Path, tmp: Path, edit) -> Path:
    """A copy of the certificate with ``edit`` applied and the digest recomputed."""
    data = json.loads(path.read_text())
    edit(data)
    data["digest"] = digest({k: v for k, v in data.items() if k != "digest"})
    out = tmp / "forged.json"
    out.write_text(json.dumps(data))
    return out


def test_a_certificate_is_rechecked_in_a_new_process(saved):
    path, cert = saved
    code = (
        "import sys, fluidnet as fn\n"
        "c = fn.check_certificate(sys.argv[1])\n"
        "print(c.verdict, c.count, len(c.leaves), c.checked, c.work['check_evaluations'])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    verdict, count, n, checked, evaluations = out.stdout.split()
    assert (verdict, count, checked) == (cert.verdict, str(cert.count), "True")
    assert int(n) == len(cert.leaves)
    # checking evaluates only the stored pieces: no more than finding did
    assert 0 < int(evaluations) <= cert.work["evaluations"]


def test_the_checked_certificate_matches_what_was_found(saved):
    path, cert = saved
    back = fn.check_certificate(path, model=hayes())
    assert back.checked and back.verdict == cert.verdict == "undecided"
    assert [(l.path, l.verdict, l.count) for l in back.leaves] == [
        (l.path, l.verdict, l.count) for l in cert.leaves
    ]
    assert {l.count for l in back.leaves} == {0, 1, 2, None}


def test_an_edited_number_is_refused_by_the_digest(saved, tmp_path):
    path, _ = saved
    text = path.read_text()
    edited = tmp_path / "edited.json"
    edited.write_text(text.replace('"omega_max": "', '"omega_max": "1', 1))
    with pytest.raises(fn.CertificateError, match="edited"):
        fn.check_certificate(edited)


def _first(data, status="proved"):
    return next(i for i, leaf in enumerate(data["leaves"]) if leaf["status"] == status)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        # a widened box: the cells now straddle the boundary
        (lambda d: d["box"][1].__setitem__(2, "3.5"), "does not check|component"),
        # a root bound too small
        (
            lambda d: d["leaves"][_first(d)].__setitem__("omega_max", "0.001"),
            "root bound",
        ),
        # a piece of the frequency axis dropped
        (
            lambda d: d["leaves"][_first(d)].__setitem__("omega_tree", "0"),
            "not proved nonzero",
        ),
        # a count changed
        (lambda d: d["components"][0].__setitem__("count", 3), "count|prove"),
        # an undecided cell passed off as proved
        (
            lambda d: d["leaves"][_first(d, "undecided")].update(
                status="proved",
                equilibrium=[["-1", "1"]],
                omega_max="10",
                omega_tree="0",
            ),
            "does not check",
        ),
        # the verdict claimed stable
        (lambda d: d.update(verdict="stable", count=0), "prove"),
        # a cell removed: the rest no longer tile the box
        (lambda d: d["leaves"].pop(), "cover|component|cell"),
        # the model's equation changed (and its digest with it)
        (
            lambda d: (
                d["model"]["rhs"].__setitem__(0, ["*", ["n", "2"], d["model"]["rhs"][0]]),
                d["model"].__setitem__(
                    "digest", digest({k: v for k, v in d["model"].items() if k != "digest"})
                ),
            ),
            "does not check|component",
        ),
    ],
)
def test_a_forged_certificate_is_refused_by_the_proof(saved, tmp_path, edit, match):
    path, _ = saved
    with pytest.raises(fn.CertificateError, match=match):
        fn.check_certificate(forged(path, tmp_path, edit))


def test_a_certificate_about_another_model_is_refused(saved):
    path, _ = saved
    x = fn.states("x")
    a, b = fn.params("a b")
    other = fn.Model(rhs={x: a * x(fn.t) + b * x(fn.t - 2)}, params={a: -1.0, b: 0.5})
    with pytest.raises(fn.CertificateError, match="another model|not the model"):
        fn.check_certificate(path, model=other)


def test_a_file_that_is_not_a_certificate_is_refused(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    with pytest.raises(fn.CertificateError, match="not a"):
        fn.check_certificate(bad)
    bad.write_text("not json")
    with pytest.raises(fn.CertificateError, match="cannot be read"):
        fn.check_certificate(bad)


def test_expression_trees_round_trip_and_refuse_what_they_cannot_hold():
    import sympy

    x, p = sympy.symbols("x p", real=True)
    names = {x: ["x", 0], p: ["p", "p"]}
    e = sympy.Piecewise((sympy.exp(-x) * p**2 / 3, x < 1), (sympy.Max(0, x - 2) + 0.1, True))
    tree = to_tree(e, names)
    json.dumps(tree)  # plain JSON
    back = from_tree(tree, lambda kind, key: {"x": x, "p": p}[kind])
    assert sympy.simplify(back - e) == 0
    with pytest.raises(ValueError, match="cannot be enclosed"):
        to_tree(sympy.gamma(x), names)
    with pytest.raises(ValueError, match="unknown expression node"):
        from_tree(["__import__", "os"], lambda kind, key: x)
    assert copy.deepcopy(tree) == tree

"""The content-keyed store of ns-3 runs (fluidnet.packet.store): what the key holds, entries
checked before they are used, damage and mix-ups refused, and a stored run identical to the run
it came from."""

from __future__ import annotations

import os
import shutil
import warnings

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.packet import store as run_store
from fluidnet.packet.runner import RunRequest
from fluidnet.packet.store import RunStore, key_digest, resolve_store

needs_ns3 = pytest.mark.skipif(
    not fn.packet.ns3_available(), reason="needs ns-3 (pip install 'fluidnet[packet]')"
)


def _scenario(n: int = 3) -> fn.packet.Dumbbell:
    return fn.packet.Dumbbell(
        link=fn.packet.Link.from_packets(1250, buffer=100, aqm=fn.packet.RED()),
        flows=[fn.packet.Flows(n=n, rtt=0.05, start=(0.0, 0.5))],
    )


def _key(n: int = 3, seed: int = 1, t_end: float = 2.0) -> dict:
    return RunRequest.checked(_scenario(n), t_end, seed).key()


ARRAYS = {"time": np.linspace(0.0, 2.0, 5), "queue": np.arange(10.0).reshape(5, 2)}


def test_the_key_holds_what_determines_a_run():
    key = _key()
    assert key == _key()  # deterministic
    plan = _scenario().plan(2.0, 1)
    assert key["plan"]["links"][0]["qdisc"] == plan["links"][0]["qdisc"] == "ns3::RedQueueDisc"
    assert key["plan"]["groups"][0]["starts"] == plan["groups"][0]["starts"]  # the draws
    assert (key["t_end"], key["seed"], key["n_points"]) == (2.0, 1, 201)
    assert set(key["versions"]) == {"fluidnet", *run_store.DISTRIBUTIONS}
    assert set(key["components"]) == {*run_store.COMPONENTS, "warm-up plan"}
    # each of these changes the run, and the key
    digests = {key_digest(k) for k in (key, _key(n=4), _key(seed=2), _key(t_end=3.0))}
    assert len(digests) == 4
    other = RunRequest.checked(_scenario(), 2.0, 1, n_points=11).key()
    assert key_digest(other) != key_digest(key)


def test_a_change_of_the_cpp_sources_changes_the_key(tmp_path, monkeypatch):
    copy = tmp_path / "packet"
    shutil.copytree(os.path.dirname(run_store.__file__), copy)
    before = run_store.component_digests()
    with open(copy / "cxx" / "experiment.cc", "a") as fh:
        fh.write("// changed\n")
    monkeypatch.setattr(run_store, "_HERE", copy)
    run_store.component_digests.cache_clear()
    try:
        after = run_store.component_digests()
    finally:
        run_store.component_digests.cache_clear()
    assert after["cxx/experiment.cc"] != before["cxx/experiment.cc"]
    assert after["cxx/components.cc"] == before["cxx/components.cc"]


def test_an_entry_comes_back_bit_for_bit(tmp_path):
    store = RunStore(tmp_path / "runs")
    key = _key()
    assert store.get(key) is None and len(store) == 0
    path = store.put(key, ARRAYS)
    assert path is not None and path.name.startswith(key_digest(key))
    got = store.get(key)
    assert got is not None and set(got) == set(ARRAYS)
    for name, value in ARRAYS.items():
        np.testing.assert_array_equal(got[name], value)
        assert got[name].dtype == value.dtype
    assert store.put(key, ARRAYS) == path and len(store) == 1  # written once
    assert store.get(_key(seed=2)) is None


def test_a_damaged_entry_is_set_aside_and_named(tmp_path):
    store = RunStore(tmp_path)
    key = _key()
    path = store.put(key, ARRAYS)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.warns(RuntimeWarning, match="do not match the digest in its name"):
        assert store.get(key) is None
    assert not path.exists()
    assert any(p.name.startswith(".corrupt-") for p in path.parent.iterdir())
    assert store.put(key, ARRAYS) is not None and store.get(key) is not None


def test_an_entry_copied_to_another_key_is_refused(tmp_path):
    # issue 33's "part copied from another store": a sound file under another key's name
    store = RunStore(tmp_path)
    mine, other = _key(seed=1), _key(seed=2)
    path = store.put(mine, ARRAYS)
    target = tmp_path / key_digest(other)[:2]
    target.mkdir(exist_ok=True)
    digest = path.stem.rpartition("-")[2]
    shutil.copy(path, target / f"{key_digest(other)}-{digest}.npz")
    with pytest.warns(RuntimeWarning, match="another run's"):
        assert store.get(other) is None
    assert store.get(mine) is not None


def test_an_unwritable_store_costs_only_the_reuse(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    with pytest.warns(RuntimeWarning, match="could not be stored"):
        assert RunStore(blocked / "runs").put(_key(), ARRAYS) is None


def test_which_store_a_run_uses(tmp_path, monkeypatch):
    monkeypatch.delenv(run_store.ENV, raising=False)
    assert resolve_store(None) is None
    monkeypatch.setenv(run_store.ENV, str(tmp_path))
    assert resolve_store(None).path == tmp_path
    assert resolve_store(False) is None
    assert resolve_store(tmp_path / "x").path == tmp_path / "x"
    for bad in (True, 3):
        with pytest.raises(fn.OptionError, match="store = "):
            resolve_store(bad)


@needs_ns3
def test_a_stored_run_is_the_run(tmp_path):
    sc = _scenario()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing set aside, nothing unwritable
        first = fn.packet.simulate(sc, 2.0, seed=5, store=tmp_path)
        again = fn.packet.simulate(sc, 2.0, seed=5, store=tmp_path)
        fresh = fn.packet.simulate(sc, 2.0, seed=5, store=False)
    assert first.stored is None and again.stored == str(tmp_path) and fresh.stored is None
    for name in ("time", "queue", "drops", "marks", "departed", "cwnd", "rtt", "received"):
        np.testing.assert_array_equal(getattr(again, name), getattr(first, name))
        np.testing.assert_array_equal(getattr(fresh, name), getattr(first, name))
    assert again.events == first.events == fresh.events
    batch = fn.packet.simulate_many([sc, _scenario(4)], 2.0, seeds=(5, 6), store=tmp_path)
    assert [[r.seed for r in runs] for runs in batch] == [[5, 6], [5, 6]]
    assert batch[0][0].stored == str(tmp_path) and batch[0][1].stored is None
    np.testing.assert_array_equal(batch[0][0].queue, first.queue)
    assert len(RunStore(tmp_path)) == 4

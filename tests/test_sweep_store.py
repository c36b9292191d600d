"""Checkpoint stores: results come back bit for bit, reruns compute only what is missing, and a
store made by another call, a damaged store or a foreign directory is refused or repaired with
a message that says why."""

import errno
import fcntl
import os
import shutil
import time
import warnings

import numpy as np
import pytest
from sweep_helpers import calls, delayed_scalar_dde, logged_square, square_root_or_fail

import fluidnet as fn
from fluidnet.sweep import Store, sweep
from fluidnet.sweep.store import _read_part, _write_part


@pytest.fixture
def write_every_result(monkeypatch):
    """One part per finished chunk (here, per point)."""
    monkeypatch.setattr("fluidnet.sweep.store.FLUSH_SECONDS", 0.0)
    monkeypatch.setattr("fluidnet.sweep.store.WRITE_SHARE", 0.0)


def _parts(path):
    return sorted(p for p in (path / "parts").iterdir() if p.is_dir())


def test_results_round_trip_with_their_types(tmp_path):
    results = [
        (1.5, np.float64(-0.0), "", np.arange(3), {"a": None, "b": [True, 7]}, 1 + 2j),
        (np.nan, np.float64(2.0), "é", np.arange(2), {"a": None, "b": [False, -1]}, 0j),
        (np.inf, np.float32(3.0), "x", np.array(["p", "qq"]), np.array(["", "r"], dtype=object)),
    ]
    (tmp_path / "parts").mkdir()
    owner = {"id": "0" * 32, "call": "1" * 64}
    _write_part(tmp_path, [4, 5, 9], results, owner)
    indices, back = _read_part(_parts(tmp_path)[0], owner)
    assert indices.tolist() == [4, 5, 9]
    for r, b in zip(results, back, strict=True):
        assert type(b) is type(r) and len(b) == len(r)
        for x, y in zip(r, b, strict=True):
            assert type(y) is type(x)
            if isinstance(x, np.ndarray):
                assert y.dtype == x.dtype
                np.testing.assert_array_equal(y, x)
            elif isinstance(x, (float, np.floating)):
                assert np.array(x).tobytes() == np.array(y).tobytes()  # bit for bit, -0.0 too
            else:
                assert y == x


def test_unstorable_result_is_refused_clearly(tmp_path):
    with pytest.raises(fn.StoreError, match="type object cannot be stored"):
        sweep(lambda x: {"v": object()}, {"x": [1.0]}, store=tmp_path / "s")


def test_sweep_resumes_computing_only_the_missing_points(tmp_path, monkeypatch, write_every_result):
    log = tmp_path / "calls.log"
    monkeypatch.setenv("FLUIDNET_TEST_LOG", str(log))
    grid = {"x": np.arange(8.0)}
    reference = sweep(logged_square, grid)
    path = tmp_path / "store"
    first = sweep(logged_square, grid, store=path)
    assert first.identical(reference) and calls(log) == 16
    assert Store(path).progress() == (8, 8)
    for part in _parts(path)[::3]:  # lose points 0, 3, 6
        shutil.rmtree(part)
    assert Store(path).progress() == (5, 8)
    again = sweep(logged_square, grid, store=path)
    assert again.identical(reference)
    assert calls(log) == 16 + 3
    assert sweep(logged_square, grid, store=path).identical(reference)  # nothing left to do
    assert calls(log) == 19


def test_chart_with_store_equals_chart_without(tmp_path):
    grid = {"a": [0.5, 1.0, 2.0], "tau": [0.5, 1.0]}
    plain = fn.stability_chart(delayed_scalar_dde, grid)
    stored = fn.stability_chart(delayed_scalar_dde, grid, store=tmp_path / "c")
    resumed = fn.stability_chart(delayed_scalar_dde, grid, store=tmp_path / "c")
    assert stored.identical(plain) and resumed.identical(plain)
    a, tau = np.meshgrid(grid["a"], grid["tau"], indexing="ij")
    np.testing.assert_array_equal(plain["stable"].values, a * tau < np.pi / 2)  # Hayes 1950


def test_ensemble_and_nonlinear_chart_with_store(tmp_path):
    m = fn.models.rcp()
    C, d0 = 18750.0, 0.2
    kw = {
        "params": {"alpha": [0.4, 0.8]},
        "history": [{"R": 375.0, "q": 0.0}, {"R": 3750.0, "q": 0.0}],
        "n_points": 51,
    }
    plain = fn.simulate_ensemble(m, 10.0, **kw)
    assert fn.simulate_ensemble(m, 10.0, **kw, store=tmp_path / "e").identical(plain)
    assert fn.simulate_ensemble(m, 10.0, **kw, store=tmp_path / "e").identical(plain)
    chart = {"alpha": [0.6, 1.4], "beta": [0.8]}
    opts = {"ics": [{"R": 0.01 * C, "q": 2 * C * d0}], "t_end": 300 * d0, "n_points": 2001}
    ref = fn.nonlinear_chart(m, chart, **opts)
    assert ref["stable"].values.ravel().tolist() == [True, False]  # Dukkipati Figs 42, 43
    assert fn.nonlinear_chart(m, chart, **opts, store=tmp_path / "n").identical(ref)
    assert fn.nonlinear_chart(m, chart, **opts, store=tmp_path / "n").identical(ref)


def test_a_store_of_another_call_is_refused_saying_what_differs(tmp_path):
    path = tmp_path / "s"
    grid = {"x": [1.0, 4.0]}
    sweep(square_root_or_fail, grid, store=path)
    with pytest.raises(fn.StoreError, match=r"item 1: \{'x': 9.0\} here"):
        sweep(square_root_or_fail, {"x": [1.0, 9.0]}, store=path)
    with pytest.raises(fn.StoreError, match="number of items.*3 here, 2 in the store"):
        sweep(square_root_or_fail, {"x": [1.0, 4.0, 9.0]}, store=path)
    with pytest.raises(fn.StoreError, match=r"task.fixed.delay: 0.0 here, \(absent\)"):
        sweep(square_root_or_fail, grid, store=path, delay=0.0)
    with pytest.raises(fn.StoreError, match="task.on_error: 'nan' here, 'raise' in the store"):
        sweep(square_root_or_fail, grid, store=path, on_error="nan")
    with pytest.raises(fn.StoreError, match="task.fn: .*logged_square"):
        sweep(logged_square, grid, store=path)


def test_a_store_of_another_model_or_option_is_refused(tmp_path):
    m = fn.models.rcp()
    grid = {"alpha": [0.2, 0.8], "beta": [0.3]}
    path = tmp_path / "c"
    fn.stability_chart(m, grid, store=path)
    with pytest.raises(fn.StoreError, match="task.factory.fixed.N: 20.0 here, .absent. in"):
        fn.stability_chart(m, grid, store=path, N=20.0)
    with pytest.raises(fn.StoreError, match=r"_params.C.value: 1000.0 here, 18750.0 in the st"):
        fn.stability_chart(m.with_params(C=1000.0), grid, store=path)
    with pytest.raises(fn.StoreError, match="task.on_error: 'nan' here, 'raise'"):
        fn.stability_chart(m, grid, store=path, on_error="nan")
    ens = {"params": {"alpha": [0.4]}, "n_points": 11}
    fn.simulate_ensemble(m, 1.0, **ens, store=tmp_path / "e")
    with pytest.raises(fn.StoreError, match="task.opts.rtol: 1e-08 here, 1e-06 in the store"):
        fn.simulate_ensemble(m, 1.0, **ens, rtol=1e-8, store=tmp_path / "e")


def test_foreign_directories_and_files_are_refused(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine")
    with pytest.raises(fn.StoreError, match="non-empty directory that is not a fluidnet store"):
        sweep(logged_square, {"x": [1.0]}, store=tmp_path / "notes")
    (tmp_path / "file").write_text("x")
    with pytest.raises(fn.StoreError, match="not a directory"):
        sweep(logged_square, {"x": [1.0]}, store=tmp_path / "file")
    import zarr

    zarr.open_group(str(tmp_path / "other.zarr"), mode="w", attributes={"owner": "someone"})
    with pytest.raises(fn.StoreError, match="Zarr group but not a fluidnet store"):
        sweep(logged_square, {"x": [1.0]}, store=tmp_path / "other.zarr")
    with pytest.raises(fn.OptionError, match="store = 3"):
        sweep(logged_square, {"x": [1.0]}, store=3)


def test_a_store_in_use_is_refused(tmp_path):
    grid = {"x": [1.0, 2.0]}
    sweep(logged_square, grid, store=tmp_path / "s")
    with open(tmp_path / "s" / ".lock") as other:  # as another running sweep holds it
        fcntl.flock(other.fileno(), fcntl.LOCK_EX)
        with pytest.raises(fn.StoreError, match="in use by another running sweep"):
            sweep(logged_square, grid, store=tmp_path / "s")
    assert sweep(logged_square, grid, store=tmp_path / "s")["value"].values.tolist() == [1, 4]


def test_interrupted_writes_and_damaged_parts_leave_a_usable_store(tmp_path, write_every_result):
    grid = {"x": [1.0, 4.0, 9.0]}
    reference = sweep(square_root_or_fail, grid)
    path = tmp_path / "s"
    sweep(square_root_or_fail, grid, store=path)
    # a part whose writing was cut short never left its temporary directory
    (path / ".tmp-0123456789abcdef").mkdir()
    (path / ".tmp-0123456789abcdef" / "zarr.json").write_text("{trunc")
    # a part damaged on disk
    damaged = _parts(path)[1]
    (damaged / "zarr.json").write_text("garbage")
    with pytest.warns(RuntimeWarning, match="unreadable.*moved aside.*computed again"):
        again = sweep(square_root_or_fail, grid, store=path)
    assert again.identical(reference)
    assert not list(path.glob(".tmp-*")) and len(list(path.glob(".corrupt-*"))) == 1
    assert Store(path).progress() == (3, 3)


def test_ensemble_takes_threads_or_an_executor_not_both():
    with pytest.raises(fn.OptionError, match="workers= .threads. or executor="):
        fn.simulate_ensemble(fn.models.rcp(), 1.0, workers=2, executor="processes")


# ------------------------------------------------------------------ damaged parts (issue 23)
def _square(x):
    return x * x


@pytest.fixture
def one_part(monkeypatch):
    """A sweep writes all its results as one part (when it ends)."""
    monkeypatch.setattr("fluidnet.sweep.store.FLUSH_SECONDS", 1e9)


def _only_part(path):
    (part,) = _parts(path)
    return part


def _unlink(relative):
    return lambda part: (part / relative).unlink()


def _overwrite_8_bytes(part):
    chunk = part / "leaf0" / "c" / "0"
    data = bytearray(chunk.read_bytes())
    data[8:16] = np.float64(1.38e306).tobytes()  # item 1's value, as the issue found it
    chunk.write_bytes(bytes(data))


def _edit_json(relative, edit):
    def damage(part):
        import json

        meta = json.loads((part / relative).read_text())
        edit(meta)
        (part / relative).write_text(json.dumps(meta))

    return damage


def _values_read_as_ints(meta):  # the group's metadata: results rebuilt as ints
    meta["attributes"]["trees"][0]["c"][0]["t"] = "int"


def _values_stored_as_ints(meta):  # the array's metadata: the bytes read as int64
    meta["data_type"] = "int64"


@pytest.mark.parametrize(
    ("damage", "what"),
    [
        (_unlink("leaf0/c/0"), "chunk file leaf0/c/0 is missing"),
        (_unlink("indices/c/0"), "chunk file indices/c/0 is missing"),
        (_overwrite_8_bytes, "'leaf0' does not match the digest"),
        (_edit_json("zarr.json", _values_read_as_ints), "zarr.json does not match the digest"),
        (_edit_json("leaf0/zarr.json", _values_stored_as_ints), "'leaf0' does not match"),
    ],
    ids=["value-chunk", "indices-chunk", "flipped-bytes", "group-metadata", "array-metadata"],
)
def test_a_damaged_part_is_computed_again_never_read(tmp_path, monkeypatch, one_part, damage, what):
    # on the old code these reruns returned [0, 0, 0], [9, 4, 9], 1.38e306, ints and garbage
    log = tmp_path / "calls.log"
    monkeypatch.setenv("FLUIDNET_TEST_LOG", str(log))
    grid = {"x": [1.0, 2.0, 3.0]}
    path = tmp_path / "s"
    first = sweep(logged_square, grid, store=path)
    np.testing.assert_array_equal(first["value"].values, [1.0, 4.0, 9.0])
    part = _only_part(path)
    damage(part)
    assert Store(path).progress() == (0, 3)  # a damaged part counts as not done
    with pytest.warns(RuntimeWarning, match=rf"part {part.name} is damaged.*{what}") as rec:
        again = sweep(logged_square, grid, store=path)
    assert "computed again" in str(rec[0].message)
    assert again.identical(first)
    assert calls(log) == 6  # all three points computed again
    assert (path / f".corrupt-{part.name}").is_dir()
    assert Store(path).progress() == (3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sweep(logged_square, grid, store=path).identical(first)  # now sound: no work
    assert calls(log) == 6


def test_the_issue_example_with_a_lambda(tmp_path, one_part):
    path = tmp_path / "s"
    sweep(lambda x: x * x, {"x": [1, 2, 3]}, store=path)
    for relative in ("leaf0/c/0", "indices/c/0"):
        (_only_part(path) / relative).unlink()
        with pytest.warns(RuntimeWarning, match=f"{relative} is missing"):
            again = sweep(lambda x: x * x, {"x": [1, 2, 3]}, store=path)
        assert again["value"].values.tolist() == [1.0, 4.0, 9.0]


def test_a_part_without_digests_is_computed_again(tmp_path, one_part):
    # a part as fluidnet wrote them before parts had digests: <first>-<last>-<id>
    grid = {"x": [1.0, 2.0]}
    path = tmp_path / "s"
    reference = sweep(_square, grid, store=path)
    part = _only_part(path)
    part.rename(part.with_name("000000000-000000001-0123abcd"))
    with pytest.warns(RuntimeWarning, match="000000000-000000001-0123abcd is damaged.*no digest"):
        assert sweep(_square, grid, store=path).identical(reference)


def test_a_deleted_chunk_of_a_chart_never_moves_results_to_another_point(tmp_path, monkeypatch):
    # issue 23: on an 800x800 RCP chart one deleted indices chunk put another block's results
    # into item 0; here a 16 x 8 chart in blocks of 2 rows, one part per block
    monkeypatch.setattr("fluidnet.stability.chart.CHUNK_POINTS", 16)
    monkeypatch.setattr("fluidnet.sweep.store.FLUSH_SECONDS", 0.0)
    monkeypatch.setattr("fluidnet.sweep.store.WRITE_SHARE", 0.0)
    grid = {"a": np.linspace(0.1, 3.0, 16), "tau": np.linspace(0.2, 2.0, 8)}
    plain = fn.stability_chart(delayed_scalar_dde, grid, method="batch")
    a, tau = np.meshgrid(grid["a"], grid["tau"], indexing="ij")
    np.testing.assert_array_equal(plain["stable"].values, a * tau < np.pi / 2)  # Hayes 1950
    path = tmp_path / "chart"
    assert fn.stability_chart(delayed_scalar_dde, grid, method="batch", store=path).identical(plain)
    parts = _parts(path)
    assert len(parts) == 8
    (parts[5] / "indices" / "c" / "0").unlink()
    (parts[2] / "leaf1" / "c" / "0").unlink()
    with pytest.warns(RuntimeWarning, match="is missing") as rec:
        again = fn.stability_chart(delayed_scalar_dde, grid, method="batch", store=path)
    assert {parts[5].name, parts[2].name} == {
        m for w in rec for m in (parts[5].name, parts[2].name) if m in str(w.message)
    }
    assert again.identical(plain)


# ------------------------------------------------------------------ a full disk (issue 23)
@pytest.fixture
def disk_fills_up(monkeypatch):
    """Zarr's file writes fail with ``errno`` from the ``after``-th part written on (a part is
    written in its own temporary directory); returns a function to set both."""
    import zarr.storage._local as local

    real, parts, state = local._put, set(), {"after": float("inf"), "errno": errno.ENOSPC}

    def put(path, value, exclusive=False):
        tmp = next((p for p in path.parents if p.name.startswith(".tmp-")), None)
        if tmp is not None:
            parts.add(tmp)
        if len(parts) > state["after"] or (tmp is None and state["after"] == 0):
            code = state["errno"]
            raise OSError(code, os.strerror(code), str(path))
        return real(path, value, exclusive=exclusive)

    monkeypatch.setattr(local, "_put", put)

    def set_(after, code=errno.ENOSPC):
        state["after"], state["errno"] = after, code

    return set_


@pytest.mark.parametrize(
    ("code", "says"),
    [(errno.ENOSPC, "the disk is full"), (errno.EDQUOT, "the disk quota is exceeded")],
)
def test_a_full_disk_is_a_store_error_and_what_was_written_is_kept(
    tmp_path, monkeypatch, write_every_result, disk_fills_up, code, says
):
    log, path = tmp_path / "calls.log", tmp_path / "s"
    monkeypatch.setenv("FLUIDNET_TEST_LOG", str(log))
    grid = {"x": [float(i) for i in range(6)]}
    disk_fills_up(after=2, code=code)  # two parts fit, the third does not
    with pytest.raises(fn.StoreError, match=rf"store {path}: cannot write .*: {says} \(") as info:
        sweep(logged_square, grid, store=path)
    assert "run the same call again" in str(info.value)
    assert not list(path.glob(".tmp-*"))  # the half-written part is gone (space freed)
    monkeypatch.undo()
    monkeypatch.setenv("FLUIDNET_TEST_LOG", str(log))
    assert Store(path).progress() == (2, 6)
    before = calls(log)
    ds = sweep(logged_square, grid, store=path)
    assert calls(log) - before == 4
    np.testing.assert_array_equal(ds["value"].values, np.arange(6.0) ** 2)


def test_a_store_on_a_full_disk_cannot_be_created(tmp_path, disk_fills_up):
    disk_fills_up(after=0)
    where = tmp_path / "s"
    with pytest.raises(fn.StoreError, match=f"store {where}: cannot create or open the store: "):
        sweep(logged_square, {"x": [1.0]}, store=tmp_path / "s")


def _sleep(started, seconds: float) -> None:
    started.set()
    time.sleep(seconds)


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="needs fork")
def test_a_forked_worker_does_not_keep_the_store_locked(tmp_path):
    # Workers forked while a sweep holds its store share the lock's open file; if they kept it,
    # a rerun right after the parent was killed would be refused while they wind down.
    import multiprocessing

    from fluidnet.sweep.store import _lock

    (tmp_path / "s").mkdir()
    held, _ = _lock(tmp_path / "s")
    fork = multiprocessing.get_context("fork")
    started = fork.Event()
    child = fork.Process(target=_sleep, args=(started, 30.0))
    child.start()
    try:
        assert started.wait(timeout=60)  # the child runs (after fork's hooks)
        held.close()  # the parent is done; the child still runs
        _lock(tmp_path / "s")[0].close()  # refused with StoreError if the child held the lock
    finally:
        child.terminate()
        child.join()


# ------------------------------------------------------------------ issue 33: what computed a part
SCALE = 1.0


def _scaled(x):
    return x * SCALE


def test_a_changed_global_is_a_different_call_never_stale_results(tmp_path, monkeypatch):
    # main returned [1, 2, 3] again after SCALE = 2
    path = tmp_path / "s"
    grid = {"x": [1.0, 2.0, 3.0]}
    np.testing.assert_array_equal(sweep(_scaled, grid, store=path)["value"], [1.0, 2.0, 3.0])
    monkeypatch.setitem(globals(), "SCALE", 2.0)
    with pytest.raises(fn.StoreError, match=r"_scaled\.SCALE: 2\.0 here, 1\.0 in the store"):
        sweep(_scaled, grid, store=path)
    np.testing.assert_array_equal(
        sweep(_scaled, grid, store=tmp_path / "new")["value"], [2.0, 4.0, 6.0]
    )


def _negative(y):
    return -y


def test_a_part_copied_from_another_store_is_never_read(tmp_path, one_part):
    # main read the copied part as results: [-1, -2, -3]
    sweep(_square, {"x": [1.0, 2.0, 3.0]}, store=tmp_path / "a")
    sweep(_negative, {"y": [1.0, 2.0, 3.0]}, store=tmp_path / "b")
    shutil.rmtree(_only_part(tmp_path / "a"))
    copied = _only_part(tmp_path / "b")
    shutil.copytree(copied, tmp_path / "a" / "parts" / copied.name)
    with pytest.warns(RuntimeWarning, match="belongs to another store .*computed by another call"):
        ds = sweep(_square, {"x": [1.0, 2.0, 3.0]}, store=tmp_path / "a")
    np.testing.assert_array_equal(ds["value"], [1.0, 4.0, 9.0])
    assert (tmp_path / "a" / f".foreign-{copied.name}").is_dir()  # kept aside, not deleted


def test_a_part_of_the_same_call_in_another_store_is_not_read(tmp_path, one_part):
    sweep(_square, {"x": [1.0, 2.0, 3.0]}, store=tmp_path / "a")
    sweep(_square, {"x": [1.0, 2.0, 3.0]}, store=tmp_path / "b")
    mine = _only_part(tmp_path / "a")
    shutil.rmtree(mine)
    theirs = _only_part(tmp_path / "b")
    shutil.copytree(theirs, tmp_path / "a" / "parts" / theirs.name)
    with pytest.warns(RuntimeWarning, match="written by store .*copied from another store"):
        sweep(_square, {"x": [1.0, 2.0, 3.0]}, store=tmp_path / "a")


def test_a_store_that_lost_its_root_metadata_is_recovered_from_its_parts(
    tmp_path, monkeypatch, write_every_result
):
    # main deleted every part and computed everything again, without a word
    log, path = tmp_path / "calls.log", tmp_path / "s"
    monkeypatch.setenv("FLUIDNET_TEST_LOG", str(log))
    grid = {"x": [float(i) for i in range(5)]}
    first = sweep(logged_square, grid, store=path)
    (path / "zarr.json").unlink()
    before = calls(log)
    with pytest.warns(RuntimeWarning, match=r"lost its zarr.json.*5 parts \(5 items\) record"):
        again = sweep(logged_square, grid, store=path)
    assert calls(log) == before  # nothing computed again
    assert again.identical(first)
    assert Store(path).progress() == (5, 5)
    sweep(logged_square, grid, store=path)  # a sound store again: no warning


def test_parts_of_another_call_are_kept_aside_when_the_root_metadata_is_lost(
    tmp_path, monkeypatch, one_part
):
    log, path = tmp_path / "calls.log", tmp_path / "s"
    monkeypatch.setenv("FLUIDNET_TEST_LOG", str(log))
    sweep(logged_square, {"x": [1.0, 2.0]}, store=path)
    old = _only_part(path)
    (path / "zarr.json").unlink()
    with pytest.warns(RuntimeWarning, match="1 parts made by another call.*moved aside"):
        ds = sweep(_square, {"x": [1.0, 2.0]}, store=path)  # another function
    np.testing.assert_array_equal(ds["value"], [1.0, 4.0])
    assert (path / f".orphan-{old.name}").is_dir()


def test_a_damaged_root_metadata_is_refused_and_the_remedy_recovers_the_parts(tmp_path, one_part):
    path = tmp_path / "s"
    first = sweep(_square, {"x": [1.0, 2.0]}, store=path)
    (path / "zarr.json").write_text("{not json")
    with pytest.raises(fn.StoreError, match="delete that file: its parts record the call"):
        sweep(_square, {"x": [1.0, 2.0]}, store=path)
    (path / "zarr.json").unlink()  # the remedy
    with pytest.warns(RuntimeWarning, match=r"1 parts \(2 items\) record this very call"):
        assert sweep(_square, {"x": [1.0, 2.0]}, store=path).identical(first)


def test_a_store_of_the_previous_format_is_refused_saying_why(tmp_path):
    import json

    path = tmp_path / "s"
    sweep(_square, {"x": [1.0]}, store=path)
    meta = json.loads((path / "zarr.json").read_text())
    meta["attributes"]["fluidnet_store"] = 1
    (path / "zarr.json").write_text(json.dumps(meta))
    with pytest.raises(fn.StoreError, match=r"older fluidnet \(store format 1\).*Delete it"):
        sweep(_square, {"x": [1.0]}, store=path)


# ------------------------------------------------------------------ issue 33: unusable paths
@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("/proc/fluidnet-test-store", "cannot be made a directory .No such file or directory"),
        ("/dev/null/store", "cannot be made a directory .Not a directory"),
    ],
)
def test_a_path_that_cannot_hold_a_store_is_a_store_error(where, says):
    with pytest.raises(fn.StoreError, match=f"store path {where} {says}"):
        sweep(_square, {"x": [1.0]}, store=where)


@pytest.mark.parametrize("name", [".lock", "zarr.json"])
def test_a_directory_in_place_of_a_file_is_named_and_removing_it_works(tmp_path, name):
    path = tmp_path / "s"
    first = sweep(_square, {"x": [1.0, 2.0]}, store=path)
    (path / name).unlink()
    (path / name).mkdir()
    with pytest.raises(fn.StoreError, match=f"{path / name}.*remove it"):
        sweep(_square, {"x": [1.0, 2.0]}, store=path)
    (path / name).rmdir()  # the remedy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr.json: rebuilt from the parts, with a warning
        assert sweep(_square, {"x": [1.0, 2.0]}, store=path).identical(first)


def test_a_file_size_limit_is_a_store_error_saying_so(tmp_path, disk_fills_up):
    disk_fills_up(after=0, code=errno.EFBIG)
    with pytest.raises(fn.StoreError, match=r"file-size limit.*ulimit -f unlimited"):
        sweep(logged_square, {"x": [1.0]}, store=tmp_path / "s")


# ------------------------------------------------------------------ issue 33: read-only stores
READ = """
import json, sys
import fluidnet as fn
from fluidnet.sweep import sweep
from test_sweep_store import _square
try:
    ds = sweep(_square, {"x": [1.0, 2.0, 3.0, 4.0]}, store=sys.argv[1])
    print(json.dumps([[float(v) for v in ds["value"].values]]))
except fn.StoreError as exc:
    print(json.dumps(["StoreError", str(exc)]))
"""


def _read_where_not_writable(tmp_path, path) -> list:
    """Run READ on ``path`` where it cannot be written: a read-only bind mount in a private
    mount namespace (as root, who may write any directory), else directories made read-only."""
    import json
    import subprocess

    from sweep_helpers import PYTHON, script_env

    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            pytest.skip("root without unshare: no read-only file system to try")
        mount = 'mount --bind -o ro "$1" "$1" && exec "$2" -c "$3" "$4"'
        cmd = ["unshare", "-m", "sh", "-c", mount, "sh", str(path.parent), PYTHON, READ, str(path)]
    else:
        for p in [path, *path.rglob("*")]:
            if p.is_dir():
                p.chmod(0o555)
        cmd = [PYTHON, "-c", READ, str(path)]
    try:
        out = subprocess.run(cmd, env=script_env(), capture_output=True, text=True, timeout=120)
    finally:
        for p in [path, *path.rglob("*")]:
            if p.is_dir():
                p.chmod(0o755)
    if os.geteuid() == 0 and "mount" in out.stderr and out.returncode:
        pytest.skip(f"no read-only bind mount here: {out.stderr.strip()[:200]}")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_finished_store_is_read_where_it_cannot_be_written(tmp_path):
    # main: "cannot create or open the store: the file system is read-only"
    path = tmp_path / "ro" / "s"
    first = sweep(_square, {"x": [1.0, 2.0, 3.0, 4.0]}, store=path)
    assert _read_where_not_writable(tmp_path, path) == [first["value"].values.tolist()]


def test_an_unfinished_store_that_cannot_be_written_says_how_to_finish_it(tmp_path, one_part):
    path = tmp_path / "ro" / "s"
    sweep(_square, {"x": [1.0, 2.0, 3.0, 4.0]}, store=path)
    part = _only_part(path)
    shutil.rmtree(part)
    reply = _read_where_not_writable(tmp_path, path)
    assert reply[0] == "StoreError"
    assert f"store {path} cannot be written" in reply[1]
    assert "holds 0 of 4 items" in reply[1] and "cp -r" in reply[1]
    copy = tmp_path / "copy"
    shutil.copytree(path, copy)  # the remedy: a writable copy
    np.testing.assert_array_equal(
        sweep(_square, {"x": [1.0, 2.0, 3.0, 4.0]}, store=copy)["value"], [1.0, 4.0, 9.0, 16.0]
    )


def _no_write_under(root):
    """``open`` refusing to write below ``root``, as for a directory this user may not write
    (EACCES; root may write anywhere, so it is simulated)."""
    import builtins

    def no_write(file, mode="r", *args, **kwargs):
        if str(file).startswith(str(root)) and any(c in mode for c in "wax+"):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return builtins.open(file, mode, *args, **kwargs)

    return no_write


def test_a_store_without_write_permission_is_read_without_a_lock_file(tmp_path, monkeypatch):
    # the read-only bind mount above is the real thing (EROFS); this is the permission case
    import fluidnet.sweep.store as store_module

    path = tmp_path / "s"
    first = sweep(_square, {"x": [1.0, 2.0]}, store=path)
    (path / ".lock").unlink()
    monkeypatch.setattr(store_module, "open", _no_write_under(tmp_path), raising=False)
    assert sweep(_square, {"x": [1.0, 2.0]}, store=path).identical(first)
    assert not (path / ".lock").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(fn.StoreError, match="holds no finished store and cannot be written"):
        sweep(_square, {"x": [1.0, 2.0]}, store=tmp_path / "empty")

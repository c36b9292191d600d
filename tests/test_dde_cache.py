"""The compile cache of fluidnet.codegen: private directories, verified modules, recovery
from corrupt files and one compilation across concurrent processes.

These tests use the numba backend (generated Python modules and numba's machine-code cache);
the C backend's libraries are tested in tests/test_dde_codegen_c.py.
"""

from __future__ import annotations

import errno
import os
import pathlib
import pickle
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import warnings

import numpy as np
import pytest
from process_helpers import run_together

import fluidnet as fn
from fluidnet.codegen import cache as cache_module
from fluidnet.codegen import compiled, keys, loading, numbacache
from fluidnet.codegen.cache import cache_dir
from fluidnet.codegen.compiled import compile_form
from fluidnet.errors import CacheError

PLANTED = textwrap.dedent(
    """
    import pathlib
    pathlib.Path({marker!r}).write_text("planted code ran")
    N_STATES = N_LAGS = N_SWITCHES = N_PARAMS = 0
    """
)


def _model():
    x = fn.states("x")
    a = fn.params("a")
    return fn.Model(rhs={x: -a * x(fn.t - 1) + fn.sympy.sin(x(fn.t))}, params={a: 1.0})


def _forget(key: str) -> None:
    """Make this process behave as a new one for model ``key`` (memo, module, warnings)."""
    compiled._MEMO.pop(key, None)
    loading._WARNED.discard(key)
    numbacache._WARNED.discard(f"fluidnet_gen_{key}")
    sys.modules.pop(f"fluidnet_gen_{key}", None)


def _rhs_value(cm) -> float:
    """``rhs`` at x = 0.5, z = 0.25, a = 2 through the compiled function: -2*0.25 + sin(0.5)."""
    import ctypes

    dp = ctypes.POINTER(ctypes.c_double)
    arrs = [np.array(v, dtype=float) for v in ([0.5], [0.25], [2.0], [0.0], [0.0], [0.0])]
    cm.module.rhs.ctypes(0.0, *[a.ctypes.data_as(dp) for a in arrs])
    return float(arrs[-1][0])


EXPECTED = -2 * 0.25 + np.sin(0.5)


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A model, its cache key and an empty cache directory named by FLUIDNET_CACHE."""
    m = _model()
    key, c_key = keys.form_key(m.form), keys.form_key(m.form, "c")
    _forget(key)
    _forget(c_key)
    cache = tmp_path / "cache"
    monkeypatch.setenv("FLUIDNET_CACHE", str(cache))
    monkeypatch.setenv("FLUIDNET_BACKEND", "numba")
    monkeypatch.setattr(cache_module, "_FALLBACK", [])
    yield m, key, cache
    _forget(key)
    _forget(c_key)


def test_cache_directory_is_created_private(fresh):
    _, _, cache = fresh
    assert cache_dir() == cache
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE((cache / "__pycache__").stat().st_mode) == 0o700


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722])
def test_cache_writable_by_others_is_refused_and_planted_code_not_run(fresh, tmp_path, mode):
    m, key, cache = fresh
    cache.mkdir()
    marker = tmp_path / "marker"
    (cache / f"fluidnet_gen_{key}.py").write_text(PLANTED.format(marker=str(marker)))
    os.chmod(cache, mode)
    with pytest.raises(CacheError, match=str(cache)):
        compile_form(m.form)
    assert not marker.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_cache_of_another_user_is_refused(fresh, tmp_path):
    m, key, cache = fresh
    cache.mkdir(mode=0o700)
    marker = tmp_path / "marker"
    (cache / f"fluidnet_gen_{key}.py").write_text(PLANTED.format(marker=str(marker)))
    os.chown(cache, 65534, -1)
    with pytest.raises(CacheError, match=f"{cache}.*belongs to user id 65534"):
        compile_form(m.form)
    assert not marker.exists()


def test_planted_module_in_own_cache_is_replaced_not_run(fresh, tmp_path):
    m, key, cache = fresh
    cache.mkdir(mode=0o700)
    marker = tmp_path / "marker"
    planted = cache / f"fluidnet_gen_{key}.py"
    planted.write_text(PLANTED.format(marker=str(marker)))
    cm = compile_form(m.form)
    assert not marker.exists()
    assert "planted" not in planted.read_text()
    assert _rhs_value(cm) == pytest.approx(EXPECTED, rel=1e-15)


def test_unusable_cache_falls_back_to_a_private_directory(fresh, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("FLUIDNET_CACHE", str(blocker / "cache"))
    with pytest.warns(RuntimeWarning, match="not usable"):
        first = cache_dir()
    assert first != blocker / "cache"
    assert first.name.startswith("fluidnet-cache-") and first.is_dir()
    assert stat.S_IMODE(first.stat().st_mode) == 0o700
    assert first.stat().st_uid == os.getuid()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache_dir() == first  # the same private directory for the rest of the process
    shutil.rmtree(first)


# ----------------------------------------------------------------------- corrupt caches
@pytest.fixture(scope="module")
def compiled_cache(tmp_path_factory):
    """A cache directory holding the compiled test model (compiled once for these tests)."""
    cache = tmp_path_factory.mktemp("compiled") / "cache"
    m = _model()
    key = keys.form_key(m.form)
    old = os.environ.get("FLUIDNET_CACHE")
    os.environ["FLUIDNET_CACHE"] = str(cache)
    try:
        _forget(key)
        compile_form(m.form, "numba")
    finally:
        _forget(key)
        if old is None:
            del os.environ["FLUIDNET_CACHE"]
        else:
            os.environ["FLUIDNET_CACHE"] = old
    return cache


def _copy(compiled_cache, cache):
    shutil.copytree(compiled_cache, cache, copy_function=shutil.copy2)
    os.chmod(cache, 0o700)


def test_intact_cache_loads_machine_code_without_warning(fresh, compiled_cache):
    m, key, cache = fresh
    _copy(compiled_cache, cache)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cm = compile_form(m.form)
    assert cm.module.rhs.cache_hits == 1
    assert _rhs_value(cm) == pytest.approx(EXPECTED, rel=1e-15)


def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _garbage(path):
    path.write_bytes(b"\x80\x04garbage, not a pickle" * 10)


@pytest.mark.parametrize(
    ("pattern", "damage"),
    [
        ("__pycache__/*.rhs-*.nbi", _truncate),
        ("__pycache__/*.rhs-*.nbi", _garbage),
        ("__pycache__/*.delay-*.nbc", _truncate),
        ("__pycache__/*.sgrad-*.nbc", _garbage),
        ("fluidnet_gen_*.py", _truncate),
        ("index.json", _garbage),
    ],
)
def test_corrupt_cache_is_discarded_and_recompiled_with_one_warning(
    fresh, compiled_cache, pattern, damage
):
    m, key, cache = fresh
    _copy(compiled_cache, cache)
    (target,) = cache.glob(pattern)
    damage(target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cm = compile_form(m.form)
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and "corrupt" in messages[0] and str(cache) in messages[0]
    assert _rhs_value(cm) == pytest.approx(EXPECTED, rel=1e-15)
    # the next process finds a sound cache again
    _forget(key)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cm2 = compile_form(m.form)
    assert cm2.module.rhs.cache_hits == 1


# ----------------------------------------------------------------------- concurrency
_COMPILE = textwrap.dedent(
    """
    import os, sys, time, pathlib
    import fluidnet as fn
    from fluidnet.codegen.compiled import compile_form
    x = fn.states("x")
    a, b = fn.params("a b")
    m = fn.Model(rhs={x: -a * x(fn.t - 1) + fn.sympy.cos(b * x(fn.t))}, params={a: 1.0, b: 2.0})
    form = m.form
    pathlib.Path(sys.argv[1]).write_text("ready")
    go = pathlib.Path(sys.argv[2])
    while not go.exists():
        time.sleep(0.01)
    mod = compile_form(form).module
    print(sum(f.cache_hits for f in (mod.rhs, mod.delay, mod.switch, mod.sgrad)))
    """
)


def test_concurrent_processes_compile_a_model_once(tmp_path):
    env = dict(os.environ, FLUIDNET_CACHE=str(tmp_path / "cache"), FLUIDNET_BACKEND="numba")
    outs = run_together(_COMPILE, env, tmp_path, timeout=300)
    # one process compiled the four functions, the other waited and loaded all four
    assert sorted(int(o.strip()) for o, _ in outs) == [0, 4]


def test_other_generated_modules_are_verified_too(fresh, tmp_path):
    # load_generated serves generated code outside the integrator (fluidnet.stochastic)
    _, _, cache = fresh
    cache.mkdir(mode=0o700)
    marker = tmp_path / "marker"
    name = "fluidnet_chain_test_planted"
    (cache / f"{name}.py").write_text(PLANTED.format(marker=str(marker)))
    sys.modules.pop(name, None)
    try:
        module = loading.load_generated(name, lambda: "ANSWER = 42\n")
        assert module.ANSWER == 42 and not marker.exists()
    finally:
        sys.modules.pop(name, None)


# ----------------------------------------------------------------------- issue 23
class _PlantedPickle:
    """Unpickling it writes a marker file: code planted in numba's cache would run."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (pathlib.Path(self.marker).write_text, ("planted code ran",))


def _plant_index(nbi, marker):
    """Replace numba's index file by a pickle that runs code, behind a valid version header."""
    import numba

    nbi.write_bytes(
        pickle.dumps(numba.__version__, protocol=-1)
        + pickle.dumps(_PlantedPickle(marker), protocol=-1)
    )


def test_planted_machine_code_never_runs(fresh, compiled_cache, tmp_path):
    # issue 23: numba's cache files (pickles) were not covered by the index of digests
    m, key, cache = fresh
    _copy(compiled_cache, cache)
    marker = tmp_path / "marker"
    (nbi,) = cache.glob("__pycache__/*.rhs-*.nbi")
    _plant_index(nbi, marker)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cm = compile_form(m.form)
    assert not marker.exists()
    assert cm.module.rhs.cache_hits == 0  # compiled again, not loaded
    assert [w for w in caught if "corrupt" in str(w.message)]  # it did not match its digest
    assert _rhs_value(cm) == pytest.approx(EXPECTED, rel=1e-15)
    _forget(key)  # the next process loads the machine code written in its place
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compile_form(m.form).module.rhs.cache_hits == 1


_NJIT_SOURCE = textwrap.dedent(
    """
    from numba import njit

    @njit(cache=True)
    def triple(x):
        return 3.0 * x
    """
)


def test_planted_machine_code_of_a_lazily_compiled_module_never_runs(fresh, tmp_path):
    # the Monte Carlo loops of fluidnet.stochastic: njit functions compiled at their first call
    _, _, cache = fresh
    name = f"fluidnet_chain_test_njit_{os.getpid()}"
    marker = tmp_path / "marker"

    def load():
        sys.modules.pop(name, None)
        return loading.load_generated(name, lambda: _NJIT_SOURCE)

    try:
        assert load().triple(2.0) == 6.0  # compiled, machine code written and recorded
        (nbi,) = cache.glob(f"__pycache__/{name}.triple-*.nbi")
        assert cache_module.read_index(cache)[f"__pycache__/{nbi.name}"]
        module = load()
        assert module.triple(2.0) == 6.0 and module.triple.stats.cache_hits  # loaded
        _plant_index(nbi, marker)  # bytes that do not match the index: never unpickled
        module = load()
        with pytest.warns(RuntimeWarning, match=f"corrupt .*{nbi.name} does not match"):
            assert module.triple(2.0) == 6.0 and not module.triple.stats.cache_hits
        assert not marker.exists()
    finally:
        sys.modules.pop(name, None)


def test_machine_code_stays_in_the_verified_directory(fresh, monkeypatch, tmp_path):
    import numba

    m, key, cache = fresh
    elsewhere = tmp_path / "numba-cache"
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(elsewhere))  # NUMBA_CACHE_DIR
    compile_form(m.form)
    files = sorted(p.name for p in cache.glob("__pycache__/*.nb[ic]"))
    assert len(files) == 8  # rhs, delay, switch, sgrad: an index and a data file each
    index = cache_module.read_index(cache)
    for f in files:
        assert index[f"__pycache__/{f}"] == cache_module.digest(
            (cache / "__pycache__" / f).read_bytes()
        )
    assert not elsewhere.exists() or not list(elsewhere.rglob("*.nb[ic]"))


# a full disk: every write fails with ENOSPC (files can still be created and read)
class _FullFile:
    def __init__(self, fh, path):
        self._fh, self._path = fh, path

    def write(self, data):
        if not data:  # nothing to store: a full disk takes it
            return 0
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self._path))

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


@pytest.fixture
def full_disk(monkeypatch):
    """``full_disk(True)``: writes to files opened for writing under ``root`` fail with ENOSPC
    from then on (``full_disk(False)``: the disk has space again)."""
    import builtins
    import io

    state = {"on": False, "root": None}
    paths: dict[int, str] = {}
    real_open, real_fdopen, real_os_open = builtins.open, os.fdopen, os.open

    def full(path) -> bool:
        return state["on"] and str(path).startswith(str(state["root"]))

    def os_open(path, flags, *args, **kwargs):
        fd = real_os_open(path, flags, *args, **kwargs)
        paths[fd] = os.fspath(path)
        return fd

    def fdopen(fd, mode="r", *args, **kwargs):
        fh = real_fdopen(fd, mode, *args, **kwargs)
        where = paths.pop(fd, "")
        return _FullFile(fh, where) if any(c in mode for c in "wax+") and full(where) else fh

    def open_(file, mode="r", *args, **kwargs):
        fh = real_open(file, mode, *args, **kwargs)
        if isinstance(file, (str, os.PathLike)) and any(c in mode for c in "wax+"):
            if full(os.fspath(file)):
                return _FullFile(fh, file)
        return fh

    for target, name, value in (
        (os, "open", os_open),
        (os, "fdopen", fdopen),
        (builtins, "open", open_),
        (io, "open", open_),
    ):
        monkeypatch.setattr(target, name, value)

    def set_(on, root):
        state["on"], state["root"] = on, root

    return set_


def _corrupt_warnings(caught):
    return [str(w.message) for w in caught if "corrupt" in str(w.message)]


def test_a_full_disk_never_makes_a_sound_library_corrupt(fresh, monkeypatch, full_disk):
    # issue 23: the library could not be copied to be loaded; it was called corrupt, deleted,
    # compiled again, and a raw OSError [Errno 28] came out
    m, key, cache = fresh
    monkeypatch.setenv("FLUIDNET_BACKEND", "c")
    cm = compile_form(m.form)
    so = cm.path.with_suffix(".so")
    data, index = so.read_bytes(), (cache / "index.json").read_bytes()
    written = so.stat().st_mtime_ns
    _forget(cm.key)
    full_disk(True, cache)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(CacheError, match=rf"{cache}: cannot copy {so.name} .*disk is full"):
            compile_form(m.form)
    assert not _corrupt_warnings(caught)
    assert so.read_bytes() == data and (cache / "index.json").read_bytes() == index
    assert not list(cache.glob(".load-*")) and not list(cache.glob(".tmp-*"))
    full_disk(False, cache)
    _forget(cm.key)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = compile_form(m.form)  # loaded as it was: not compiled again
    assert so.stat().st_mtime_ns == written and so.read_bytes() == data
    assert _rhs_value(again) == pytest.approx(EXPECTED, rel=1e-15)


@pytest.mark.parametrize("backend", ["c", "numba"])
def test_a_full_disk_while_compiling_is_a_cache_error(fresh, monkeypatch, full_disk, backend):
    m, key, cache = fresh
    monkeypatch.setenv("FLUIDNET_BACKEND", backend)
    cache_dir()
    full_disk(True, cache)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(CacheError, match=rf"{cache}: cannot write .*: the disk is full"):
            compile_form(m.form)
    assert not _corrupt_warnings(caught)
    full_disk(False, cache)
    assert _rhs_value(compile_form(m.form)) == pytest.approx(EXPECTED, rel=1e-15)


def test_a_full_disk_while_numba_writes_machine_code_is_a_cache_error(fresh, full_disk):
    m, key, cache = fresh
    (cache / "__pycache__").mkdir(parents=True)
    cache_dir()
    full_disk(True, cache / "__pycache__")  # the module fits, its machine code does not
    with pytest.raises(CacheError, match=r"cannot write numba's machine code .*disk is full"):
        compile_form(m.form)


# ----------------------------------------------------------------------- fallback directories
_CACHE_DIR = "from fluidnet.codegen.cache import cache_dir; print(cache_dir())"


def _fallback_in_a_process(env):
    out = subprocess.run(
        [sys.executable, "-W", "always", "-c", _CACHE_DIR],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return pathlib.Path(out.stdout.strip()), out.stderr


def test_processes_with_an_unusable_cache_share_one_private_directory(tmp_path):
    # issue 23: every process with a read-only cache left a /tmp/fluidnet-cache-* behind
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, FLUIDNET_CACHE=str(blocker / "cache"), TMPDIR=str(tmp))
    first, err = _fallback_in_a_process(env)
    second, _ = _fallback_in_a_process(env)
    assert first == second == tmp / f"fluidnet-cache-{os.getuid()}"
    assert "not usable" in err and "shared by your processes" in err
    assert [p.name for p in tmp.iterdir()] == [first.name]
    assert stat.S_IMODE(first.stat().st_mode) == 0o700


def test_an_unsafe_shared_fallback_gives_a_directory_removed_at_exit(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    (tmp / f"fluidnet-cache-{os.getuid()}").mkdir(mode=0o777)
    os.chmod(tmp / f"fluidnet-cache-{os.getuid()}", 0o777)  # writable by others: refused
    env = dict(os.environ, FLUIDNET_CACHE=str(blocker / "cache"), TMPDIR=str(tmp))
    own, err = _fallback_in_a_process(env)
    assert own.parent == tmp and own.name != f"fluidnet-cache-{os.getuid()}"
    assert "removed when it exits" in err
    assert not own.exists()  # removed when the process exited
    assert [p.name for p in tmp.iterdir()] == [f"fluidnet-cache-{os.getuid()}"]


def test_a_file_named_as_the_cache_falls_back_with_a_warning(fresh, tmp_path, monkeypatch):
    # issue 23: FLUIDNET_CACHE naming a regular file was a CacheError, not the README's fallback
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    target = tmp_path / "not-a-directory"
    target.write_text("my notes")
    monkeypatch.setenv("FLUIDNET_CACHE", str(target))
    with pytest.warns(RuntimeWarning, match=f"{target} is not usable .*a file, not a directory"):
        used = cache_dir()
    assert used == tmp_path / f"fluidnet-cache-{os.getuid()}"
    assert target.read_text() == "my notes"


def test_a_compiler_that_found_the_disk_full_is_not_called_broken(fresh, monkeypatch):
    import subprocess as sp

    from fluidnet.codegen import build

    m, key, cache = fresh
    monkeypatch.setenv("FLUIDNET_BACKEND", "c")
    message = f"/usr/bin/ld: final link failed: {os.strerror(errno.ENOSPC)}\n".encode()
    monkeypatch.setattr(
        build, "_run", lambda cmd, source, out: sp.CompletedProcess(cmd, 1, b"", message)
    )
    with pytest.raises(CacheError, match=rf"{cache}: cannot compile .*the disk is full"):
        compile_form(m.form)
    assert not build.known_broken()  # the compiler works: only the disk was full


# ------------------------------------------------------------------ issue 33: cannot load here
_LOAD = textwrap.dedent(
    """
    import json, resource, sys, warnings
    sys.path.insert(0, sys.argv[1])
    if len(sys.argv) > 2:  # a file-size limit, as `ulimit -f` sets
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), int(sys.argv[2])))
    from fluidnet.codegen.compiled import compile_form
    from fluidnet.errors import FluidnetError
    from test_dde_cache import _model, _rhs_value
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cm = compile_form(_model().form)
            out = {"backend": cm.backend, "rhs": _rhs_value(cm)}
        except FluidnetError as exc:
            out = {"error": type(exc).__name__, "message": str(exc)}
    out["warnings"] = [str(w.message) for w in caught]
    print(json.dumps(out))
    """
)
HERE = pathlib.Path(__file__).parent


def _load_elsewhere(cache, *args, wrap=(), backend=None):
    env = dict(os.environ, FLUIDNET_CACHE=str(cache))
    env.pop("FLUIDNET_BACKEND", None)
    if backend is not None:
        env["FLUIDNET_BACKEND"] = backend
    # -B: a child under a file-size limit wrote test_dde_cache's bytecode cut at the limit into
    # tests/__pycache__, and every later import of it failed ("marshal data too short")
    out = subprocess.run(
        [*wrap, sys.executable, "-B", "-c", _LOAD, str(HERE), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return __import__("json").loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def c_library_cached(fresh, monkeypatch):
    """The model compiled by the C backend into the fresh cache: (cache, library, its bytes)."""
    m, key, cache = fresh
    monkeypatch.setenv("FLUIDNET_BACKEND", "c")
    cm = compile_form(m.form)
    so = cm.path.with_suffix(".so")
    return cache, so, so.read_bytes()


def test_a_file_size_limit_never_makes_a_sound_library_corrupt(c_library_cached):
    # main: "corrupt (... File too large)", the library deleted, then a raw OSError [Errno 27]
    cache, so, data = c_library_cached
    written = so.stat().st_mtime_ns
    out = _load_elsewhere(cache, str(len(data) // 2))
    assert out["error"] == "CacheError", out
    assert (
        f"cannot copy {so.name} to load it: a file would exceed the file-size limit"
        in (out["message"])
    )
    assert "ulimit -f unlimited" in out["message"]
    assert not [w for w in out["warnings"] if "corrupt" in w]
    assert so.read_bytes() == data and so.stat().st_mtime_ns == written
    again = _load_elsewhere(cache)  # the remedy: no limit
    assert again["backend"] == "c" and again["rhs"] == pytest.approx(EXPECTED, rel=1e-15)
    assert so.stat().st_mtime_ns == written  # loaded as it was, not compiled again


def _noexec_mount(cache) -> tuple[str, ...]:
    """A command prefix running in a private mount namespace where ``cache`` is a fresh
    ``noexec`` tmpfs holding a copy of its files (root only)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a noexec mount needs root and unshare (see the simulated test below)")
    copy = f"{cache}.copy"
    shutil.copytree(cache, copy)
    script = (
        'mount -t tmpfs -o noexec,mode=0700 tmpfs "$1" && cp -a "$2"/. "$1"/ && shift 2 && '
        'exec "$@"'
    )
    return ("unshare", "-m", "sh", "-c", script, "sh", str(cache), copy)


def test_a_noexec_cache_keeps_its_libraries_says_why_and_the_remedy_works(
    c_library_cached, tmp_path
):
    # main: "corrupt (... failed to map segment from shared object); discarded it"; here C is
    # asked for (with "auto", numba compiles instead, with the same words in a warning: see
    # the simulated test below)
    cache, so, data = c_library_cached
    out = _load_elsewhere(cache, wrap=_noexec_mount(cache), backend="c")
    assert out["error"] == "OptionError", out
    assert not [w for w in out["warnings"] if "corrupt" in w], out["warnings"]
    said = out["message"]
    assert f"cannot be loaded from {cache}: that directory is on a file system mounted noexec" in (
        said
    )
    assert "(the file is sound and kept)" in said
    assert "Set FLUIDNET_CACHE to a directory on a file system that allows running" in said
    assert so.read_bytes() == data  # the mount hid the directory: its files are untouched
    elsewhere = tmp_path / "elsewhere"  # the remedy
    assert _load_elsewhere(elsewhere)["backend"] == "c"


def test_a_library_the_loader_refuses_is_kept_not_called_corrupt(c_library_cached, monkeypatch):
    # where no noexec mount can be made: the dynamic loader's refusal, simulated
    cache, so, data = c_library_cached
    _forget(keys.form_key(_model().form, "c"))
    monkeypatch.setenv("FLUIDNET_BACKEND", "auto")

    def refuse(data, path, names):
        raise OSError(f"{path}: failed to map segment from shared object")

    monkeypatch.setattr(loading, "open_library", refuse)
    monkeypatch.setattr(loading, "_FELL_BACK", set())
    with pytest.warns(RuntimeWarning, match="dynamic loader refuses it here") as caught:
        cm = compile_form(_model().form)
    assert cm.backend == "numba" and _rhs_value(cm) == pytest.approx(EXPECTED, rel=1e-15)
    assert not _corrupt_warnings(caught)
    assert so.read_bytes() == data
    monkeypatch.setenv("FLUIDNET_BACKEND", "c")
    _forget(keys.form_key(_model().form, "c"))
    with pytest.raises(fn.OptionError, match="Set FLUIDNET_CACHE to a directory on a file sys"):
        compile_form(_model().form)
    monkeypatch.setattr(loading, "noexec", lambda directory: True)  # as on a noexec mount
    _forget(keys.form_key(_model().form, "c"))
    with pytest.raises(fn.OptionError, match="mounted noexec, where compiled code cannot run"):
        compile_form(_model().form)
    assert so.read_bytes() == data


@pytest.mark.parametrize("name", ["index.json", "{stem}.so", "{stem}.lock"])
def test_a_directory_in_place_of_a_cache_file_is_named_and_removing_it_works(
    c_library_cached, name
):
    # main: raw IsADirectoryError
    cache, so, data = c_library_cached
    target = cache / name.format(stem=so.stem)
    target.unlink()
    target.mkdir()
    key = keys.form_key(_model().form, "c")
    _forget(key)
    with pytest.raises(CacheError, match=f"{target}.*remove it"):
        compile_form(_model().form)
    target.rmdir()  # the remedy
    _forget(key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # index.json gone: compiled again, with a warning
        assert _rhs_value(compile_form(_model().form)) == pytest.approx(EXPECTED, rel=1e-15)


_LOAD_SAVED = textwrap.dedent(
    """
    import sys
    import fluidnet as fn
    try:
        saved = fn.load_compiled(sys.argv[1])
        print("LOADED", fn.simulate(saved, 1.0, history={"x": 1.0}, t_eval=[1.0])["x"][0])
    except fn.CacheError as exc:
        print("REFUSED", exc)
    """
)


def test_a_saved_model_on_a_noexec_cache_says_why_and_the_remedy_works(fresh, tmp_path):
    m, key, cache = fresh
    saved = fn.save_compiled(m, tmp_path / "m.fnc", equilibrium=False)
    cache.mkdir(exist_ok=True, mode=0o700)
    env = dict(os.environ, FLUIDNET_CACHE=str(cache))
    out = subprocess.run(
        [*_noexec_mount(cache), sys.executable, "-c", _LOAD_SAVED, str(saved)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"REFUSED {saved}: its machine code cannot be loaded from the compile cache" in (
        out.stdout
    )
    assert "mounted noexec" in out.stdout and "Set FLUIDNET_CACHE" in out.stdout
    env["FLUIDNET_CACHE"] = str(tmp_path / "elsewhere")  # the remedy
    again = subprocess.run(
        [sys.executable, "-c", _LOAD_SAVED, str(saved)], env=env, capture_output=True, text=True
    )
    assert again.stdout.startswith("LOADED"), again.stderr[-2000:]

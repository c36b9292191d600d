"""Reliability probe of stores, compiled libraries, files and signals (issue 33, part A).

Each case runs in a fresh process (own ``FLUIDNET_CACHE``) and reports one outcome:

``right``
    the right value, or the documented behaviour (a resumed sweep, a recovered store);
``named``
    a :class:`fluidnet.FluidnetError` naming the value or path at fault (the intended answer
    where the input is bad);
``silent_wrong``
    a wrong answer without a word;
``data_lost``
    valid data deleted or finished work thrown away;
``raw``
    a raw Python error, or a fluidnet error that blames the wrong thing;
``crash``
    the interpreter killed by a signal (SIGBUS, SIGSEGV, ...);
``hang``
    no answer within :data:`TIMEOUT` seconds.

``python benchmarks/probe_stores.py`` prints every case and the counts; ``--case NAME`` runs one
case in this process. :func:`main` is called by ``bench_reliability.py`` (``make bench``).
Cases that need a mount (``noexec`` tmpfs, read-only bind mount) run it in a private mount
namespace (``unshare -m``, root only); elsewhere they report ``skipped``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Seconds a case may take before it counts as a hang.
TIMEOUT = 120.0
OUTCOMES = ("right", "named", "silent_wrong", "data_lost", "raw", "crash", "hang", "skipped")
CASES: dict[str, object] = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _verdict(exc: BaseException, *expect: str) -> tuple[str, str]:
    """``named`` for a FluidnetError whose message mentions every word of ``expect``, else
    ``raw`` (a raw error, or one that does not say what is wrong)."""
    import fluidnet as fn

    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, fn.FluidnetError) and all(e.lower() in text.lower() for e in expect):
        return "named", text[:300]
    return "raw", text[:300]


def _grid():
    return {"x": [1.0, 2.0, 3.0]}


def _values(ds):
    return [float(v) for v in ds["value"].values]


# ------------------------------------------------------------------ stores: what computed
SCALE = 1


def _scaled(x):
    return x * SCALE


@case
def store_global_changes():
    global SCALE
    from fluidnet.sweep import sweep

    path = tempfile.mkdtemp() + "/s"
    SCALE = 1
    sweep(_scaled, _grid(), store=path)
    SCALE = 2
    try:
        got = _values(sweep(_scaled, _grid(), store=path))
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc, "SCALE")
    return ("right" if got == [2.0, 4.0, 6.0] else "silent_wrong"), str(got)


def _helper(x):
    return x + 1


def _calls_helper(x):
    return _helper(x)


@case
def store_helper_redefined():
    global _helper
    from fluidnet.sweep import sweep

    path = tempfile.mkdtemp() + "/s"
    sweep(_calls_helper, _grid(), store=path)

    def _helper(x):  # noqa: F811 - redefined on purpose
        return x + 100

    globals()["_helper"] = _helper
    try:
        got = _values(sweep(_calls_helper, _grid(), store=path))
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc, "_helper")
    return ("right" if got == [101.0, 102.0, 103.0] else "silent_wrong"), str(got)


@case
def store_module_constant_changes():
    import importlib

    from fluidnet.sweep import sweep

    tmp = tempfile.mkdtemp()
    Path(tmp, "probe_consts.py").write_text("GAIN = 1.0\n")
    sys.path.insert(0, tmp)
    mod = importlib.import_module("probe_consts")
    scope: dict = {"probe_consts": mod}
    exec("def f(x):\n    return x * probe_consts.GAIN\n", scope)  # noqa: S102
    f = scope["f"]
    f.__module__ = "probe_user"
    path = tmp + "/s"
    sweep(f, _grid(), store=path)
    mod.GAIN = 3.0
    try:
        got = _values(sweep(f, _grid(), store=path))
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc, "GAIN")
    return ("right" if got == [3.0, 6.0, 9.0] else "silent_wrong"), str(got)


class _Gain:
    def value(self):
        return 1.0


_GAIN = _Gain()


def _times_gain(x):
    return x * _GAIN.value()


@case
def store_method_redefined():
    from fluidnet.sweep import sweep

    path = tempfile.mkdtemp() + "/s"
    sweep(_times_gain, _grid(), store=path)
    _Gain.value = lambda self: 5.0
    try:
        got = _values(sweep(_times_gain, _grid(), store=path))
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc, "value")
    return ("right" if got == [5.0, 10.0, 15.0] else "silent_wrong"), str(got)


@case
def store_part_from_another_store():
    from fluidnet.sweep import sweep

    tmp = tempfile.mkdtemp()

    def square(x):
        return x * x

    def negative(y):
        return -y

    sweep(square, _grid(), store=tmp + "/a")
    sweep(negative, {"y": [1.0, 2.0, 3.0]}, store=tmp + "/b")
    for p in Path(tmp, "a", "parts").glob("0*"):
        shutil.rmtree(p)
    for p in Path(tmp, "b", "parts").glob("0*"):
        shutil.copytree(p, Path(tmp, "a", "parts", p.name))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = _values(sweep(square, _grid(), store=tmp + "/a"))
        except Exception as exc:  # noqa: BLE001
            return _verdict(exc)
    if got != [1.0, 4.0, 9.0]:
        return "silent_wrong", str(got)
    said = any("another store" in str(w.message) for w in caught)
    return ("right" if said else "raw"), str([str(w.message)[:200] for w in caught])


# ------------------------------------------------------------------ stores: data kept
def _count(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@case
def store_root_metadata_lost():
    from fluidnet.sweep import sweep

    tmp = Path(tempfile.mkdtemp())
    log = tmp / "calls"
    os.environ["FLUIDNET_PROBE_LOG"] = str(log)
    sys.path.insert(0, str(HERE))
    from probe_stores import _logged_square

    sweep(_logged_square, _grid(), store=tmp / "s")
    (tmp / "s" / "zarr.json").unlink()
    before = _count(log)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = _values(sweep(_logged_square, _grid(), store=tmp / "s"))
        except Exception as exc:  # noqa: BLE001
            return _verdict(exc, "zarr.json")
    if got != [1.0, 4.0, 9.0]:
        return "silent_wrong", str(got)
    again = _count(log) - before
    if again == 0:
        return "right", "recovered without computing again"
    if caught and any(".orphan" in str(w.message) or "aside" in str(w.message) for w in caught):
        return "named", "computed again, old parts kept aside with a warning"
    return "data_lost", f"{again} items computed again, parts deleted without a warning"


def _logged_square(x):
    log = os.environ.get("FLUIDNET_PROBE_LOG")
    if log:
        with open(log, "a") as fh:
            fh.write("1\n")
    time.sleep(float(os.environ.get("FLUIDNET_PROBE_DELAY", "0")))
    return x * x


_SIGNALLED = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[3])
    import fluidnet.sweep.store as st
    from fluidnet.sweep import sweep, ProcessExecutor
    from probe_stores import _logged_square
    st.FLUSH_SECONDS = 1e9   # written only when the sweep ends or is stopped
    ex = ProcessExecutor(2, chunksize=1) if sys.argv[2] == "processes" else None
    sweep(_logged_square, {"x": [float(i) for i in range(40)]}, store=sys.argv[1], executor=ex)
    """
)


def _signal_mid_sweep(sig: int, executor: str):
    from fluidnet.sweep import Store

    tmp = Path(tempfile.mkdtemp())
    log = tmp / "calls"
    env = dict(os.environ, FLUIDNET_PROBE_LOG=str(log), FLUIDNET_PROBE_DELAY="0.1")
    proc = subprocess.Popen(
        [sys.executable, "-c", _SIGNALLED, str(tmp / "s"), executor, str(HERE)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    end = time.monotonic() + 60
    while _count(log) < 6 and time.monotonic() < end:
        time.sleep(0.05)
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    finished = _count(log) - (2 if executor == "processes" else 1)  # at most these in flight
    try:
        kept = Store(tmp / "s").progress()[0] if Store(tmp / "s").exists else 0
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc)
    if kept >= max(1, finished - 2):
        return "right", f"{kept} items kept of about {finished} finished"
    return "data_lost", f"{kept} items kept of about {finished} finished"


@case
def sigterm_serial_sweep():
    return _signal_mid_sweep(signal.SIGTERM, "serial")


@case
def sighup_serial_sweep():
    return _signal_mid_sweep(signal.SIGHUP, "serial")


@case
def sigterm_process_sweep():
    return _signal_mid_sweep(signal.SIGTERM, "processes")


def _as_root_in_namespace(script: str) -> subprocess.CompletedProcess | None:
    """``sh -c script`` in a private mount namespace (None when that is not possible)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return None
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=TIMEOUT
    )


_READ = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[2])
    import fluidnet as fn
    from fluidnet.sweep import sweep
    from probe_stores import _logged_square
    try:
        ds = sweep(_logged_square, {"x": [1.0, 2.0, 3.0]}, store=sys.argv[1])
        print(json.dumps(["value", [float(v) for v in ds["value"].values]]))
    except Exception as exc:
        print(json.dumps(["error", type(exc).__name__, isinstance(exc, fn.FluidnetError),
                          str(exc)]))
    """
)


@case
def store_read_only_finished():
    from fluidnet.sweep import sweep

    tmp = Path(tempfile.mkdtemp())
    sys.path.insert(0, str(HERE))
    from probe_stores import _logged_square

    sweep(_logged_square, _grid(), store=tmp / "ro" / "s")
    script = tmp / "read.py"
    script.write_text(_READ)
    ro = tmp / "ro"
    out = _as_root_in_namespace(
        f"mount --bind -o ro {ro} {ro} && {sys.executable} {script} {ro / 's'} {HERE}"
    )
    if out is None:
        return "skipped", "needs root for a read-only bind mount"
    reply = json.loads(out.stdout.strip().splitlines()[-1]) if out.stdout.strip() else None
    if reply is None:
        return "crash" if out.returncode < 0 else "raw", out.stderr[-300:]
    if reply[0] == "value":
        return ("right" if reply[1] == [1.0, 4.0, 9.0] else "silent_wrong"), str(reply[1])
    return "raw", f"{reply[1]}: {reply[3][:250]} (a finished store could not be read)"


@case
def store_under_proc():
    from fluidnet.sweep import sweep

    try:
        sweep(_scaled, _grid(), store="/proc/fluidnet-probe")
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc, "/proc/fluidnet-probe")
    return "silent_wrong", "a store under /proc was accepted"


@case
def store_lock_is_a_directory():
    from fluidnet.sweep import sweep

    path = Path(tempfile.mkdtemp()) / "s"
    sweep(_scaled, _grid(), store=path)
    (path / ".lock").unlink()
    (path / ".lock").mkdir()
    try:
        got = _values(sweep(_scaled, _grid(), store=path))
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc, ".lock")
    return ("right" if got == [1.0, 2.0, 3.0] else "silent_wrong"), str(got)


@case
def store_root_metadata_is_a_directory():
    from fluidnet.sweep import sweep

    path = Path(tempfile.mkdtemp()) / "s"
    sweep(_scaled, _grid(), store=path)
    (path / "zarr.json").unlink()
    (path / "zarr.json").mkdir()
    try:
        got = _values(sweep(_scaled, _grid(), store=path))
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc, "zarr.json")
    return ("right" if got == [1.0, 2.0, 3.0] else "silent_wrong"), str(got)


# ------------------------------------------------------------------ saved models
def _models():
    import fluidnet as fn

    x = fn.states("x")
    k, T = fn.params("kappa T")
    kelly = fn.Model(
        rhs={x: k * (1 - x(fn.t) * x(fn.t - T) ** 10)}, params={k: 0.2, T: 1.0}, name="kelly"
    )
    other = fn.Model(
        rhs={x: k * (2 - x(fn.t) * x(fn.t - T) ** 2)}, params={k: 0.2, T: 1.0}, name="other"
    )
    return kelly, other


def _rezip(source: Path, target: Path, **replace: bytes) -> None:
    import zipfile

    with zipfile.ZipFile(source) as z:
        members = {n: z.read(n) for n in z.namelist()}
    members.update({k.replace("_", "."): v for k, v in replace.items()})
    with zipfile.ZipFile(target, "w") as z:
        for n, data in members.items():
            z.writestr(n, data)


@case
def saved_model_with_another_models_library():
    import zipfile

    import fluidnet as fn

    kelly, other = _models()
    tmp = Path(tempfile.mkdtemp())
    a = fn.save_compiled(kelly, tmp / "a.fnc", equilibrium={"x": 1.0})
    b = fn.save_compiled(other, tmp / "b.fnc", equilibrium={"x": 2**0.5})
    with zipfile.ZipFile(b) as z:
        _rezip(a, tmp / "c.fnc", model_so=z.read("model.so"), jac_so=z.read("jac.so"))
    try:
        saved = fn.load_compiled(tmp / "c.fnc")
        got = fn.simulate(saved, 50.0, history={"x": 0.5}, t_eval=[50.0])["x"][0]
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc, "model.so")
    want = fn.simulate(kelly, 50.0, history={"x": 0.5}, t_eval=[50.0])["x"][0]
    return ("right" if got == want else "silent_wrong"), f"{got} (kelly: {want})"


@case
def saved_model_truncated_library():
    import zipfile

    import fluidnet as fn

    kelly, _ = _models()
    tmp = Path(tempfile.mkdtemp())
    a = fn.save_compiled(kelly, tmp / "a.fnc", equilibrium={"x": 1.0})
    with zipfile.ZipFile(a) as z:
        so = z.read("model.so")
    _rezip(a, tmp / "c.fnc", model_so=so[: len(so) // 2])
    try:
        fn.load_compiled(tmp / "c.fnc")
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc, "model.so")
    return "silent_wrong", "a truncated library was loaded"


@case
def saved_model_negative_delay():
    import fluidnet as fn

    kelly, _ = _models()
    saved = fn.load_compiled(fn.save_compiled(kelly, Path(tempfile.mkdtemp()) / "a.fnc"))
    try:
        fn.simulate(saved, 10.0, history={"x": 0.5}, params={"T": -1.0})
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc, "delay", "-1")
    return "silent_wrong", "a negative delay was integrated"


@case
def save_compiled_to_a_directory():
    import fluidnet as fn

    kelly, _ = _models()
    tmp = Path(tempfile.mkdtemp())
    try:
        fn.save_compiled(kelly, tmp)
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc, str(tmp))
    return "silent_wrong", "saved over a directory"


@case
def save_compiled_below_a_file():
    import fluidnet as fn

    kelly, _ = _models()
    tmp = Path(tempfile.mkdtemp())
    (tmp / "afile").write_text("")
    try:
        fn.save_compiled(kelly, tmp / "afile" / "m.fnc")
    except Exception as exc:  # noqa: BLE001
        return _verdict(exc, "afile")
    return "silent_wrong", "saved below a file"


# ------------------------------------------------------------------ compile cache
def _compiled_cache() -> tuple[Path, Path]:
    """A cache holding the compiled kelly model (its library path)."""
    from fluidnet.codegen.compiled import compile_model

    cm = compile_model(_models()[0])
    return Path(os.environ["FLUIDNET_CACHE"]), cm.path.with_suffix(".so")


_COMPILE = textwrap.dedent(
    """
    import json, resource, sys, warnings
    sys.path.insert(0, sys.argv[1])
    if len(sys.argv) > 2:
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), int(sys.argv[2])))
    import fluidnet as fn
    from fluidnet.codegen.compiled import compile_model
    from probe_stores import _models
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cm = compile_model(_models()[0])
            out = ["ok", cm.backend]
        except Exception as exc:
            out = ["error", type(exc).__name__, isinstance(exc, fn.FluidnetError), str(exc)]
    print(json.dumps([out, [str(w.message) for w in caught]]))
    """
)


def _compile_reply(out: subprocess.CompletedProcess):
    if out.returncode < 0:
        return None
    lines = out.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else None


@case
def cache_file_size_limit():
    cache, so = _compiled_cache()
    size = so.stat().st_size
    out = subprocess.run(
        [sys.executable, "-c", _COMPILE, str(HERE), str(size // 2)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    reply = _compile_reply(out)
    if reply is None:
        return ("crash" if out.returncode < 0 else "raw"), out.stderr[-300:]
    if not so.exists() or so.stat().st_size != size:
        return "data_lost", f"the valid library was deleted; {reply}"[:300]
    (result, said) = reply
    if any("corrupt" in w for w in said):
        return "raw", f"a valid library was called corrupt: {said[0][:200]}"
    if result[0] == "error" and result[2] and ("ulimit" in result[3] or "EFBIG" in result[3]):
        return "named", result[3][:300]
    return ("right" if result[0] == "ok" else "raw"), str(result)[:300]


@case
def cache_on_noexec_mount():
    cache, so = _compiled_cache()
    tmp = Path(tempfile.mkdtemp())
    mnt = tmp / "mnt"
    mnt.mkdir()
    script = tmp / "compile.py"
    script.write_text(_COMPILE)
    out = _as_root_in_namespace(
        f"mount -t tmpfs -o noexec,mode=0700 tmpfs {mnt} && cp -a {cache}/. {mnt}/ && "
        f"FLUIDNET_CACHE={mnt} {sys.executable} {script} {HERE} && ls {mnt}"
    )
    if out is None:
        return "skipped", "needs root for a noexec tmpfs"
    lines = out.stdout.strip().splitlines()
    reply = json.loads(lines[0]) if lines else None
    if reply is None:
        return ("crash" if out.returncode < 0 else "raw"), out.stderr[-300:]
    result, said = reply
    if any("corrupt" in w for w in said):
        return "data_lost", f"a valid library was called corrupt and discarded: {said[0][:200]}"
    if result[0] == "ok" and any("noexec" in w and "FLUIDNET_CACHE" in w for w in said):
        return "right", said[0][:300]
    if result[0] == "error" and result[2] and "noexec" in result[3]:
        return "named", result[3][:300]
    return "raw", str(reply)[:300]


def _replaced_by_directory(pattern: str):
    cache, _ = _compiled_cache()
    for p in cache.glob(pattern):
        p.unlink()
        p.mkdir()
    out = subprocess.run(
        [sys.executable, "-c", _COMPILE, str(HERE)], capture_output=True, text=True, timeout=TIMEOUT
    )
    reply = _compile_reply(out)
    if reply is None:
        return ("crash" if out.returncode < 0 else "raw"), out.stderr[-300:]
    result, _ = reply
    if result[0] == "ok":
        return "right", f"compiled ({result[1]})"
    if result[2] and pattern.split("*")[-1] in result[3] and "remove it" in result[3]:
        return "named", result[3][:300]
    return "raw", f"{result[1]}: {result[3]}"[:300]


@case
def cache_library_is_a_directory():
    return _replaced_by_directory("fluidnet_cgen_*.so")


@case
def cache_index_is_a_directory():
    return _replaced_by_directory("index.json")


@case
def cache_lock_is_a_directory():
    return _replaced_by_directory("fluidnet_cgen_*.lock")


# ------------------------------------------------------------------ running
def run_case(name: str) -> tuple[str, str, float]:
    """``(outcome, detail, seconds)`` of one case, in a fresh process."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, FLUIDNET_CACHE=cache, OPENBLAS_NUM_THREADS="1")
        try:
            out = subprocess.run(
                [sys.executable, __file__, "--case", name],
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return "hang", f"no answer in {TIMEOUT:g} s", time.perf_counter() - t0
    took = time.perf_counter() - t0
    if out.returncode < 0:
        return "crash", f"killed by {signal.Signals(-out.returncode).name}", took
    lines = out.stdout.strip().splitlines()
    if out.returncode or not lines:
        return "raw", f"the case failed: {out.stderr[-300:]}", took
    outcome, detail = json.loads(lines[-1])
    return outcome, detail, took


def main() -> dict:
    results = {}
    for name in CASES:
        outcome, detail, took = run_case(name)
        results[name] = {"outcome": outcome, "detail": detail, "seconds": round(took, 1)}
        print(f"{name:40s} {outcome:12s} {detail[:150]}".replace("\n", " | "), flush=True)
    counts = Counter(r["outcome"] for r in results.values())
    summary = {k: counts.get(k, 0) for k in OUTCOMES}
    print(
        "probe of stores, libraries, files and signals: "
        + ", ".join(f"{k} {v}" for k, v in summary.items()),
        flush=True,
    )
    return {"cases": results, "counts": summary}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        sys.path.insert(0, str(HERE))
        outcome, detail = CASES[sys.argv[2]]()  # type: ignore[operator]
        print(json.dumps([outcome, detail]))
    else:
        main()

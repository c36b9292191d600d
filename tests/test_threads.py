"""BLAS threads (fluidnet.threads): one thread inside the block, restored after it, for every
BLAS library loaded, including one loaded after the first call."""

import json
import os
import subprocess
import sys
import textwrap

_CHILD = """
import json
import numpy
from threadpoolctl import threadpool_info, threadpool_limits
from fluidnet.threads import single_threaded_blas

def blas():
    return sorted((i["filepath"], i["num_threads"]) for i in threadpool_info()
                  if i["user_api"] == "blas")

out = {}
with threadpool_limits(limits=2, user_api="blas"):
    with single_threaded_blas():
        out["numpy_inside"] = blas()
    out["numpy_after"] = blas()
    import scipy.linalg  # scipy's own OpenBLAS, loaded after the first call
    with single_threaded_blas():
        out["both_inside"] = blas()
    out["both_after"] = blas()
print(json.dumps(out))
"""


def _child_result(code: str, drop: tuple[str, ...] = ()) -> dict:
    """The JSON line a child process running ``code`` prints last, its BLAS thread settings
    (and ``drop``) removed from its environment: it starts as a user's process does."""
    gone = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", *drop)
    env = {k: v for k, v in os.environ.items() if k not in gone}
    res = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_every_blas_is_single_threaded_inside_and_restored_after():
    """Measured: the controller found once and kept costs 0.05 ms per block, where a scan of the
    loaded libraries per block cost 1.2-1.5 ms (three blocks per Hopf point). A cache that is
    never refreshed fails here: scipy's OpenBLAS, loaded after the first block, stays at 2."""
    out = _child_result(_CHILD)
    assert out["numpy_inside"] and all(n == 1 for _, n in out["numpy_inside"])
    assert all(n == 2 for _, n in out["numpy_after"])
    assert len(out["both_inside"]) >= len(out["numpy_inside"])
    assert all(n == 1 for _, n in out["both_inside"]), out
    assert all(n == 2 for _, n in out["both_after"]), out


_ENTRY_CHILD = """
import json
import numpy  # the user's situation: NumPy (and its multi-threaded OpenBLAS) loaded first
import scipy.linalg
from threadpoolctl import threadpool_info, threadpool_limits

import fluidnet as fn
from fluidnet.linear import characteristic_roots

def blas():
    return sorted(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

seen = {}


def spy(f):
    def spied(*args, **kwargs):
        mine = seen.setdefault(current, [])
        if len(mine) < 40:  # threadpool_info takes a millisecond
            mine.extend(blas())
        return f(*args, **kwargs)

    return spied


for name in ("eigvals", "svd", "solve", "lstsq", "eig"):
    setattr(numpy.linalg, name, spy(getattr(numpy.linalg, name)))
x = fn.states("x")
a, T = fn.params("a T")
m = fn.Model({x: -a * x(fn.t - T) * (1 + x(fn.t))}, {a: 1.0, T: 1.0}, name="wright")
current = "setup"  # (the symbolic stage is not one of the analyses checked here)
lin = m.linearize()
calls = {
    "characteristic_roots": lambda: characteristic_roots(lin, k=2),
    "critical_value": lambda: fn.critical_value(m, "a", 0.5, 3.0),
    "hopf_point": lambda: fn.hopf_point(m, "a", 1.0, 2.0),
}
with threadpool_limits(limits=2, user_api="blas"):
    before = blas()
    for current, call in calls.items():
        call()
    after = blas()
seen.pop("setup", None)
print(json.dumps({"before": before, "seen": seen, "after": after}))
"""


def test_entry_points_run_single_threaded_when_numpy_came_first():
    """Issue 34: with NumPy imported before fluidnet, OpenBLAS keeps a thread per core and
    continuation cost 75 ms of CPU per orbit instead of 4. Every analysis entry point runs
    its dense algebra with one BLAS thread (seen from inside ``numpy.linalg``'s ``svd``,
    ``solve``, ``eig``...) and the
    user's setting is back afterwards. On main, hopf_point and critical_value saw 2 threads."""
    out = _child_result(_ENTRY_CHILD)
    assert out["before"] and all(n == 2 for n in out["before"]), out
    assert set(out["seen"]) == {"characteristic_roots", "critical_value", "hopf_point"}, out
    for name, threads in out["seen"].items():
        assert threads and set(threads) == {1}, (name, out)
    assert out["after"] == out["before"], out


_SCAN_CHILD = """
import json
import numpy  # NumPy first: its OpenBLAS has a thread per core
from threadpoolctl import threadpool_limits
import fluidnet.threads as th

scans = []
scan = th._scan_openblas
th._scan_openblas = lambda: scans.append(1) or scan()

out = {}
with threadpool_limits(limits=2, user_api="blas"):
    with th.single_threaded_blas():
        pass
    out["first"] = len(scans)
    import colorsys  # pure Python: no library loaded
    with th.single_threaded_blas():
        pass
    out["pure"] = len(scans)
    import scipy.linalg  # extension modules (and scipy's own OpenBLAS)
    with th.single_threaded_blas():
        out["inside"] = sorted(
            i["num_threads"] for i in __import__("threadpoolctl").threadpool_info()
            if i["user_api"] == "blas"
        )
    out["extension"] = len(scans)
print(json.dumps(out))
"""


def test_libraries_rescanned_after_extension_imports_only():
    """Issue 34: the first ``critical_value`` of a process imports seven pure-Python modules of
    fluidnet, and the library scan that followed (reading ``/proc/self/maps`` and a new
    threadpoolctl controller) cost 4 ms of its 65. A pure-Python import now leaves the scan
    alone; an extension module's import (scipy's, which brings its own OpenBLAS) still
    rescans, and that library is limited too. On main the pure import rescanned (2 scans)."""
    out = _child_result(_SCAN_CHILD, drop=("PYTHONDONTWRITEBYTECODE",))
    assert out["first"] == 1, out
    assert out["pure"] == 1, out
    assert out["extension"] == 2, out
    assert out["inside"] and set(out["inside"]) == {1}, out


_LOADED_INSIDE = """
import json, os
{preset}
import numpy  # the user's situation: NumPy's OpenBLAS first, a thread per core
from threadpoolctl import threadpool_info
from fluidnet.threads import single_threaded_blas

def blas():
    return {{("scipy" if "scipy.libs" in i["filepath"] else "numpy"): i["num_threads"]
            for i in threadpool_info() if i["user_api"] == "blas"}}

out = {{"env_before": os.environ.get("OPENBLAS_NUM_THREADS"), "numpy_before": blas()["numpy"]}}
with single_threaded_blas():
    out["env_inside"] = os.environ.get("OPENBLAS_NUM_THREADS")
    threads = len(os.listdir("/proc/self/task"))
    import scipy.linalg  # SciPy's own OpenBLAS, loaded inside the section
    out["new_threads"] = len(os.listdir("/proc/self/task")) - threads
    with single_threaded_blas():  # an inner section (a bound function) limits it too
        out["inside"] = blas()
        scipy.linalg.lu_factor(numpy.eye(300) + 0.1)
out["env_after"] = os.environ.get("OPENBLAS_NUM_THREADS")
out["after"] = blas()
print(json.dumps(out))
"""


def test_a_blas_loaded_inside_a_section_starts_single_threaded():
    """SciPy's OpenBLAS loaded during a section (an analysis's first ``import scipy.linalg`` in
    a process that imported NumPy first) starts with one thread: no worker thread is started
    (their spinning cost 0.1 s of CPU at load), the variable is set only while sections run,
    and NumPy's library gets its thread count back."""
    out = _child_result(_LOADED_INSIDE.format(preset=""))
    assert out["env_before"] is None and out["env_after"] is None
    assert out["env_inside"] == "1"
    assert out["new_threads"] == 0
    assert out["inside"] == {"numpy": 1, "scipy": 1}
    assert out["after"] == {"numpy": out["numpy_before"], "scipy": 1}


def test_a_user_thread_count_is_kept_for_libraries_loaded_inside():
    out = _child_result(_LOADED_INSIDE.format(preset='os.environ["OPENBLAS_NUM_THREADS"] = "2"'))
    assert out["env_before"] == out["env_inside"] == out["env_after"] == "2"
    assert out["inside"] == {"numpy": 1, "scipy": 1}  # limited inside the section
    n = out["numpy_before"]  # the count the user's setting gives on this machine
    assert out["after"] == {"numpy": n, "scipy": n}  # restored; SciPy's started with it too


_OWN_FUNCTIONS = """
import json, sys
import numpy  # NumPy first: its OpenBLAS has a thread per core
import fluidnet.threads as th
{other}

def counts():
    from threadpoolctl import threadpool_info
    return sorted(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

from threadpoolctl import threadpool_limits
threadpool_limits(limits=2, user_api="blas")  # two threads (on a machine of any size)
before = counts()
del sys.modules["threadpoolctl"]  # imported again only if the section needs its controller
with th.single_threaded_blas():
    out = {{"controller": "threadpoolctl" in sys.modules}}
    out["inside"] = counts()
out["before"], out["after"] = before, counts()
print(json.dumps(out))
"""


def test_openblas_alone_is_limited_by_its_own_functions():
    """With only OpenBLAS loaded (NumPy's wheel) a section sets its threads through OpenBLAS's
    own functions: threadpoolctl's controller (7 ms of every first analysis of a process that
    imported NumPy first) is not built, and threadpoolctl itself sees one thread inside and the
    count before after. With another BLAS loaded (here NumPy's OpenBLAS taken for one by its
    name) the section falls back to threadpoolctl, which limits every BLAS it knows."""
    own = _child_result(_OWN_FUNCTIONS.format(other=""))
    assert own["before"] and set(own["before"]) == {2}, own
    assert own["controller"] is False, own
    assert own["inside"] and set(own["inside"]) == {1}, own
    assert own["after"] == own["before"], own
    other = _child_result(_OWN_FUNCTIONS.format(other='th._OTHER_BLAS += ("libscipy_openblas",)'))
    assert other["controller"] is True, other
    assert other["inside"] and set(other["inside"]) == {1}, other
    assert other["after"] == other["before"], other

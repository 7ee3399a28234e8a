"""`mlprof serve` answers several endpoints at once (issue 33): with every computed analysis
made slow (MLPROF_SERVE_DELAY_MS, a test knob: each computation first waits that long), two
endpoints of one trace requested together are computed on two workers at the same time, from
one load: the server's busy-worker high-water mark reaches 2, the two answers come in about one
delay rather than two, and the trace was parsed once.
Usage: test_serve_concurrency.py MLPROF DATA_DIR"""
import json
import os
import shutil
import sys
import tempfile
import threading
import time

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from serve_process import Serve  # noqa: E402
from serve_big_trace import generate  # noqa: E402

DELAY_S = 2.0
tmp = tempfile.mkdtemp(prefix="mlprof-concurrency-")
os.environ["MLPROF_SERVE_DELAY_MS"] = str(int(DELAY_S * 1000))
try:
    generate(5000, os.path.join(tmp, "t.json"))
    with Serve(MLPROF, tmp) as srv:
        srv.text("/api/profiler/summary?trace=t.json")  # the load, and one slow analysis
        st = json.loads(srv.text("/api/status"))
        check(st["workers"] >= 2, f"at least 2 workers ({st['workers']})")
        ends = {}

        def fetch(name):
            ends[name] = (srv.get(f"/api/profiler/{name}?trace=t.json", timeout=120)[0], time.time())

        start = time.time()
        threads = [threading.Thread(target=fetch, args=(n,)) for n in ("ops", "kernels")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.time() - start
        check(all(s == 200 for s, _ in ends.values()), f"both answered 200 ({ends})")
        st = json.loads(srv.text("/api/status"))
        check(st["max_busy_workers"] >= 2, f"two analyses computed at once (high-water {st['max_busy_workers']})")
        # One after the other would take >= 2 delays; together, one delay plus the work.
        check(wall < 2 * DELAY_S, f"two {DELAY_S:.0f} s endpoints answered in {wall:.2f} s (< {2 * DELAY_S:.0f} s)")
        check(st["cache"]["loads"] == 1, f"one load for every endpoint ({st['cache']['loads']})")
        print(f"two slow endpoints together: {wall:.2f} s (each {DELAY_S:.1f} s)")
finally:
    os.environ.pop("MLPROF_SERVE_DELAY_MS", None)
    shutil.rmtree(tmp, ignore_errors=True)
finish()

"""`mlprof serve`'s result cache (issue 33): a second open of the same trace is answered from the
cache (the same bytes, no new parse, a hit counted), keyed by the file's name, size and mtime (a
rewritten file is parsed again), and bounded by --cache-mb: with 1 MiB, many tiles later the cache
holds at most 1 MiB (plus the newest answer) and the first tile, evicted, is computed again.
Usage: test_serve_cache.py MLPROF DATA_DIR"""
import json
import os
import shutil
import sys
import tempfile
import time

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from serve_process import Serve  # noqa: E402
from serve_big_trace import generate  # noqa: E402

tmp = tempfile.mkdtemp(prefix="mlprof-cache-")
try:
    path = generate(30000, os.path.join(tmp, "t.json"))
    with Serve(MLPROF, tmp, extra=("--cache-mb", "1")) as srv:
        status = lambda: json.loads(srv.text("/api/status"))["cache"]  # noqa: E731
        check(status()["max_bytes"] == 1 << 20, "--cache-mb 1 is 1 MiB")
        t = time.time()
        first = srv.text("/api/profiler/summary?trace=t.json")
        t_first = time.time() - t
        s1 = status()
        t = time.time()
        second = srv.text("/api/profiler/summary?trace=t.json")
        t_second = time.time() - t
        s2 = status()
        check(second == first, "the second open answers the same JSON")
        check(s2["loads"] == s1["loads"] == 1, f"parsed once ({s1['loads']}, {s2['loads']})")
        check(s2["hits"] == s1["hits"] + 1 and s2["misses"] == s1["misses"], f"the second open is a cache hit ({s1} -> {s2})")
        print(f"summary: first open {t_first * 1000:.0f} ms, second {t_second * 1000:.1f} ms")
        # Fill past 1 MiB with tiles of distinct windows (each a few tens of KB).
        span = json.loads(first)["span_ns"]
        sizes = []
        for k in range(40):
            body = srv.text(f"/api/profiler/timeline/tiles?trace=t.json&t0=0&t1={span - k}&px=4000")
            sizes.append(len(body))
        s3 = status()
        check(sum(sizes) > 1 << 20, f"the tiles total {sum(sizes)} bytes, past the bound")
        check(s3["cached_bytes"] <= (1 << 20) + max(sizes) + 4096, f"the cache holds {s3['cached_bytes']} bytes within 1 MiB + the newest")
        srv.text(f"/api/profiler/timeline/tiles?trace=t.json&t0=0&t1={span}&px=4000")
        s4 = status()
        check(s4["misses"] == s3["misses"] + 1, "the first tile was evicted: computed again")
        check(s4["loads"] == 1, "from the kept trace, not a new parse")
        srv.text(f"/api/profiler/timeline/tiles?trace=t.json&t0=0&t1={span}&px=4000")
        check(status()["hits"] == s4["hits"] + 1, "and then answered from the cache")
        # A rewritten file (new mtime) is another version: parsed again.
        os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
        srv.text("/api/profiler/summary?trace=t.json")
        check(status()["loads"] == 2, "a changed mtime is a new version: parsed again")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()

#!/usr/bin/env python3
"""`mlprof serve` on a big trace (issue 33 item 3): what the dashboard waits for, and holds.

    python3 bench/serve_big_bench.py build/mlprof BIG.json   # e.g. bench/gen_big_trace.py 1000000

Copies nothing: serves BIG.json's directory. Prints, in one run:
  - time to first progress: from the first request until /api/profiler/progress reports bytes read;
  - time to Overview: until the Overview's four endpoints (summary, steps, bottlenecks, gpu), asked
    together as the page asks them, have all answered;
  - second open: the same four again (answered from the cache);
  - browser-held marks: the Timeline's first tile (1,500 px, the whole trace) against the slices
    the trace has (what /api/profiler/timeline/events sends the browser without tiles), and a
    narrow window's tile;
  - baseline in the same run: `mlprof summary BIG.json` (parse + summary, no server).
"""
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "py"))
from serve_process import Serve  # noqa: E402

mlprof, trace = sys.argv[1], os.path.abspath(sys.argv[2])
name = os.path.basename(trace)
size = os.path.getsize(trace)
t = time.time()
subprocess.run([mlprof, "summary", trace], check=True, capture_output=True)
cli = time.time() - t
OVERVIEW = ("summary", "steps", "bottlenecks", "gpu")

with Serve(mlprof, os.path.dirname(trace), extra=("--max-input-mb", "4096")) as srv:
    def overview():
        ends = {}

        def one(n):
            srv.text(f"/api/profiler/{n}?trace={name}", timeout=1200)
            ends[n] = time.time()
        threads = [threading.Thread(target=one, args=(n,)) for n in OVERVIEW]
        for th in threads:
            th.start()
        return threads, ends

    start = time.time()
    threads, ends = overview()
    first_progress = None
    samples = 0
    while any(th.is_alive() for th in threads):
        p = json.loads(srv.text(f"/api/profiler/progress?trace={name}"))
        samples += 1
        if first_progress is None and p["state"] == "loading" and p["bytes_read"] > 0:
            first_progress = (time.time() - start, p)
        time.sleep(0.05)
    for th in threads:
        th.join()
    t_overview = max(ends.values()) - start
    start = time.time()
    threads, ends = overview()
    for th in threads:
        th.join()
    t_second = max(ends.values()) - start
    tl = json.loads(srv.text(f"/api/profiler/timeline?trace={name}", timeout=1200))
    span = tl["end_ns"] - tl["begin_ns"]
    t = time.time()
    wide = json.loads(srv.text(f"/api/profiler/timeline/tiles?trace={name}&t0=0&t1={span}&px=1500", timeout=1200))
    t_tile = time.time() - t
    held = sum(len(l["slices"]) + len(l["runs"]) for l in wide["lanes"])
    t = time.time()
    narrow = json.loads(srv.text(f"/api/profiler/timeline/tiles?trace={name}&t0={span // 2}&t1={span // 2 + 200000}&px=1500"))
    t_narrow = time.time() - t
    held_narrow = sum(len(l["slices"]) + len(l["runs"]) for l in narrow["lanes"])
    status = json.loads(srv.text("/api/status"))
    rss = srv.rss()

print(f"trace {name}: {size / 1e6:.0f} MB, {tl.get('slices', 0):,} slices")
print(f"baseline mlprof summary (same run): {cli:.2f} s")
if first_progress:
    fp, p = first_progress
    print(f"first progress: {fp:.2f} s after the first request ({p['bytes_read'] / 1e6:.1f} MB, "
          f"{p['events_read']:,} events read, ETA {p.get('eta_s', -1):.1f} s); {samples} polls")
print(f"time to Overview (summary, steps, bottlenecks, gpu together): {t_overview:.2f} s "
      f"= {t_overview / cli:.2f}x mlprof summary")
print(f"second open (the same four, cached): {t_second * 1000:.1f} ms")
print(f"timeline tile, whole trace at 1,500 px: {held:,} marks ({wide['slices']:,} slices + "
      f"{wide['runs']:,} merged runs) for {tl.get('slices', 0):,} slices "
      f"({held / max(1, tl.get('slices', 1)):.2%}), {t_tile * 1000:.0f} ms")
print(f"timeline tile, 200 us window: {held_narrow:,} marks, exact={narrow['exact']}, {t_narrow * 1000:.0f} ms")
print(f"cache: {status['cache']['cached_bytes'] / 2**20:.1f} MiB of {status['cache']['max_bytes'] / 2**20:.0f}, "
      f"{status['cache']['hits']} hits, {status['cache']['misses']} misses, {status['cache']['loads']} load(s); "
      f"server RSS {rss:.0f} MiB")

"""`mlprof serve`'s loading progress (issue 33): while a big trace parses,
/api/profiler/progress?trace=T answers at once with the bytes and events read so far, the file's
size and an ETA; the bytes never go back nor past the size; once parsed the state is "ready".
The trace (bench/gen_big_trace.py, ~75 MB) is big enough to be seen loading.
Usage: test_serve_progress.py MLPROF DATA_DIR"""
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

tmp = tempfile.mkdtemp(prefix="mlprof-progress-")
try:
    trace = generate(400000, os.path.join(tmp, "big.json"))
    size = os.path.getsize(trace)
    with Serve(MLPROF, tmp) as srv:
        idle = json.loads(srv.text("/api/profiler/progress?trace=big.json"))
        check(idle["state"] == "idle" and idle["total_bytes"] == size, f"before any request: idle, {size} bytes ({idle})")
        done = {}

        def summary():
            done["body"] = srv.text("/api/profiler/summary?trace=big.json", timeout=600)
            done["t"] = time.time()

        start = time.time()
        th = threading.Thread(target=summary)
        th.start()
        samples, latencies = [], []
        while th.is_alive():
            t = time.time()
            p = json.loads(srv.text("/api/profiler/progress?trace=big.json"))
            latencies.append(time.time() - t)
            samples.append((time.time() - start, p))
            time.sleep(0.02)
        th.join()
        loading = [p for _, p in samples if p["state"] == "loading"]
        check(len(loading) >= 2, f"the load was seen in progress ({len(loading)} of {len(samples)} samples)")
        if loading:
            bytes_read = [p["bytes_read"] for p in loading]
            check(all(a <= b for a, b in zip(bytes_read, bytes_read[1:])), "bytes read never go back")
            check(all(0 <= b <= size for b in bytes_read), "bytes read within the file's size")
            check(all(p["total_bytes"] == size for p in loading), "total_bytes is the file's size")
            check(any(p["bytes_read"] > 0 and p.get("eta_s", -1) >= 0 for p in loading), "an ETA once bytes are read")
            check(any(p["events_read"] > 0 for p in loading), "events read are counted as chunks parse")
            ev = [p["events_read"] for p in loading]
            check(all(a <= b for a, b in zip(ev, ev[1:])), "events read never go back")
            first = next(t for t, p in samples if p["state"] == "loading")
            print(f"first progress {first:.2f} s after the request; load took {done['t'] - start:.2f} s; "
                  f"slowest progress answer {max(latencies) * 1000:.0f} ms over {len(samples)} samples")
        check(json.loads(done["body"]).get("events", 1) != 0, "the summary came")
        final = json.loads(srv.text("/api/profiler/progress?trace=big.json"))
        check(final["state"] == "ready", f"after the load: ready ({final})")
        status, _, _ = srv.get("/api/profiler/progress?trace=missing.json")
        check(status == 404, f"progress of a missing trace: HTTP {status}")
        status, _, _ = srv.get("/api/profiler/progress")
        check(status == 400, f"progress without ?trace: HTTP {status}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()

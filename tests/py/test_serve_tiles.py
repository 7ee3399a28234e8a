"""`mlprof serve`'s level-of-detail timeline tiles (issue 33): /api/profiler/timeline/tiles?trace=T
&t0=&t1=&px= merges runs of sub-pixel slices per lane and row into marks with a count and busy
time, and sends narrow windows' slices exactly. Checked against the trace JSON read here: per
lane, the tile's slices plus its runs' counts are the lane's slices overlapping the window, and
their durations sum to the same busy time; a narrow window's slices are exactly the JSON's.
Usage: test_serve_tiles.py MLPROF DATA_DIR"""
import json
import os
import shutil
import sys
import tempfile

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from serve_process import Serve  # noqa: E402
from serve_big_trace import generate, slices_by_lane  # noqa: E402

tmp = tempfile.mkdtemp(prefix="mlprof-tiles-")
try:
    trace = generate(30000, os.path.join(tmp, "big.json"))
    want = slices_by_lane(trace)
    with Serve(MLPROF, tmp) as srv:
        def tile(t0, t1, px):
            return json.loads(srv.text(f"/api/profiler/timeline/tiles?trace=big.json&t0={t0}&t1={t1}&px={px}"))

        first = tile(0, 1, 1)
        begin = first["begin_ns"]
        span = max(ts + d for v in want.values() for ts, d, _ in v) - begin
        lanes_seen = {(l["pid"], l["tid"]) for l in first["lanes"]}
        numeric = {k for k in want if isinstance(k[0], int)}
        check(numeric <= lanes_seen, f"every thread and stream of the JSON is a lane: {sorted(numeric - lanes_seen)}")

        def compare(t0, t1, px, label):
            t = tile(t0, t1, px)
            a, b = begin + t0, begin + t1
            items = 0
            for lane in t["lanes"]:
                key = (lane["pid"], lane["tid"])
                if key not in want:
                    continue
                inside = [(ts, d, n) for ts, d, n in want[key] if ts < b and ts + d > a]
                count = len(lane["slices"]) + sum(r[3] for r in lane["runs"])
                busy = sum(s[1] for s in lane["slices"]) + sum(r[4] for r in lane["runs"])
                check(count == len(inside), f"{label} lane {key}: {count} slices in the tile, {len(inside)} in the JSON")
                check(busy == sum(d for _, d, _ in inside), f"{label} lane {key}: busy {busy} ns == the JSON's {sum(d for _, d, _ in inside)}")
                check(all(r[3] >= 2 and r[0] < r[1] and r[4] <= (r[1] - r[0]) for r in lane["runs"]),
                      f"{label} lane {key}: each run merges >= 2 slices, busy within its extent")
                rows = max(1, lane["rows"])
                n = len(lane["slices"]) + len(lane["runs"])
                items += n
                # Per row, a run ends a pixel before the next mark starts and a slice is >= 1 px.
                check(n <= rows * (2 * px + 2), f"{label} lane {key}: {n} marks for {rows} rows x {px} px")
                if t["exact"]:
                    got = sorted((begin + s[0], s[1], t["names"][s[3]]) for s in lane["slices"])
                    check(got == inside, f"{label} lane {key}: the exact slices of the JSON")
            return t, items

        wide, wide_items = compare(0, span, 800, "whole trace @800px")
        check(not wide["exact"] and wide["runs"] > 0, "the whole trace at 800 px merges runs")
        total = sum(len(v) for k, v in want.items() if isinstance(k[0], int))
        check(wide_items < total / 5, f"the wide tile holds {wide_items} marks for {total} slices")
        compare(span // 3, span // 3 + span // 20, 1500, "a 5% window @1500px")
        narrow, _ = compare(span // 2, span // 2 + 20000, 2000, "a 20 us window @2000px")
        check(narrow["exact"] and narrow["runs"] == 0 and narrow["slices"] > 0, "a 20 us window is exact")
        # Tile bounds: a bad window is a 400, not a crash.
        for q in ("t0=5&t1=5&px=10", "t0=0&t1=10&px=0", "t0=0&t1=10&px=999999", "t0=a&t1=10&px=10", "t1=10&px=10"):
            status, _, _ = srv.get(f"/api/profiler/timeline/tiles?trace=big.json&{q}")
            check(status == 400, f"tiles?{q}: HTTP {status} (400)")
        status, _, _ = srv.get("/api/profiler/timeline/tiles?trace=nope.json&t0=0&t1=10&px=10")
        check(status == 404, f"a missing trace: HTTP {status} (404)")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()

"""Issue 33: big Kineto-shaped traces (bench/gen_big_trace.py: three CPU threads and two GPU
streams interleaved in the file, launch flows, Kineto args).

1. Ingestion: the per-track sort reorders every column of the slice table (a gather since
   issue 33). Per op name, count, total and self time from `mlprof ops --json` must equal a
   Python computation over the JSON (self time from a per-thread stack of the X events, sorted
   by start, longest first), and `summary --json` must count every slice and flow.
2. The report's size follows what it shows: one step of 20,000 operators has a critical path of
   tens of thousands of edges; the report lists the 1,000 longest (path order, with their place
   on the full path and a note), the rest stays reachable from `mlprof critical-path --json`;
   the whole HTML stays within a budget proportional to its events.
Usage: test_scale_generated.py MLPROF TESTS_DATA"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, mlprof_json  # noqa: E402

MLPROF = os.path.abspath(sys.argv[1])
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(REPO, "bench", "gen_big_trace.py")


def ns(text):
    """Kineto's "123.456" microseconds as integer nanoseconds, exactly."""
    whole, _, frac = str(text).partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


def reference(path):
    """Per op name: [count, total ns, self ns]; and the numbers of X events and flows."""
    raw = open(path).read()
    # json.load reads the three-decimal timestamps as floats: keep their text instead.
    events = json.loads(raw, parse_float=lambda s: s)["traceEvents"]
    by_track = {}
    flows = 0
    for e in events:
        if e["ph"] == "X" and e["cat"] != "Trace":  # Kineto's own span is not an op
            by_track.setdefault((e["pid"], e["tid"]), []).append((ns(e["ts"]), ns(e["dur"]), e["name"]))
        elif e["ph"] == "s":
            flows += 1
    ops = {}
    for evs in by_track.values():
        evs.sort(key=lambda x: (x[0], -x[1]))
        stack = []  # [end, name, self]
        for ts, dur, name in evs:
            while stack and stack[-1][0] <= ts:
                done = stack.pop()
                ops[done[1]][2] += done[2]
            if stack:
                stack[-1][2] -= min(ts + dur, stack[-1][0]) - ts
            row = ops.setdefault(name, [0, 0, 0])
            row[0] += 1
            row[1] += dur
            stack.append([ts + dur, name, dur])
        for done in stack:
            ops[done[1]][2] += done[2]
    return ops, sum(len(v) for v in by_track.values()), flows


def main():
    with tempfile.TemporaryDirectory() as tmp:
        # 1. A few steps, every track interleaved with the others in the file.
        path = os.path.join(tmp, "t.json")
        subprocess.run([sys.executable, GEN, "60000", path, "--ops-per-step", "600"], check=True)
        ref, slices, flows = reference(path)
        check(slices == 60000 - 1, f"the generator wrote 60000 complete events ({slices} + its span)")
        summary = mlprof_json(MLPROF, "summary", path)
        check(summary["events"]["slices"] == slices + 1, f"summary: every slice ({summary['events']})")
        check(summary["events"]["flows"] == flows, f"summary: {flows} flows ({summary['events']})")
        rows = {r["name"]: r for r in mlprof_json(MLPROF, "ops", path)["ops"]}
        check(set(rows) == set(ref), f"ops: the same names ({sorted(set(rows) ^ set(ref))[:5]})")
        for name, (count, total, self_ns) in ref.items():
            r = rows.get(name)
            if r is None:
                continue
            check((r["count"], r["total_ns"], r["self_ns"]) == (count, total, self_ns),
                  f"ops {name}: count/total/self {(r['count'], r['total_ns'], r['self_ns'])} "
                  f"== {(count, total, self_ns)}")

        # 2. One big step: its critical path is long; the report lists its longest edges.
        big = os.path.join(tmp, "big.json")
        events = 200000
        subprocess.run([sys.executable, GEN, str(events), big, "--ops-per-step", "20000"], check=True)
        full = mlprof_json(MLPROF, "critical-path", big)
        weighted = full["path"]
        check(len(weighted) > 5000, f"critical-path --json lists every edge ({len(weighted)})")
        html = os.path.join(tmp, "r.html")
        subprocess.run([MLPROF, "report", big, "-o", html], check=True, capture_output=True)
        data = json.loads(subprocess.run([MLPROF, "report", big, "--data-json"], check=True,
                                         capture_output=True, text=True).stdout)
        cp = data["analyses"]["critical_path"]
        listed = cp["path"]
        check(len(listed) == 1000, f"the report lists 1000 path edges ({len(listed)})")
        check(cp.get("path_listed_total") == len(weighted),
              f"path_listed_total {cp.get('path_listed_total')} == {len(weighted)}")
        check("critical-path TRACE --json" in cp.get("path_cut", ""), f"path_cut says where the rest is: {cp.get('path_cut')}")
        idx = [p["index"] for p in listed]
        check(idx == sorted(idx), "listed edges in path order")
        check(all(weighted[i - 1]["ns"] == p["ns"] and weighted[i - 1]["event"] == p["event"]
                  for i, p in zip(idx, listed)), "each listed edge is the full path's edge at its index")
        longest = sorted((e["ns"] for e in weighted), reverse=True)[:1000]
        check(sorted((p["ns"] for p in listed), reverse=True) == longest, "the listed edges are the longest")
        for k in ("path_ns", "path_edges", "bound_by_ns", "top_events", "nodes", "edges"):
            check(cp[k] == full[k], f"report.critical_path.{k} == critical-path --json's")
        size = os.path.getsize(html)
        # The page's code (~1 MiB) plus at most 8 bytes per event for the timeline and tables
        # (every slice is kept; a 1M-event trace makes an 8 MiB report).
        budget = (1 << 20) + 8 * events
        check(size <= budget, f"report of {events} events: {size} bytes <= {budget}")
    finish()


main()

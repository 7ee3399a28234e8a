"""`mlprof serve`'s /api/profiler/critical_path?step=N / ?annotation=NAME[&instance=K] (issue 15):
the window's path, the JSON's list of steps, `mlprof critical-path --step N`, and bad or hostile
parameter values (HTTP 400/404, never a crash). A hand-built trace whose paths are worked out
below; the shared ns-resolution trace (when present) against the CLI.
Usage: test_serve_critical_path_window.py MLPROF DATA_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shared_data import shared_path  # noqa: E402
from checks import check, finish  # noqa: E402
from serve_process import Serve  # noqa: E402

# Three steps, each with one CPU op: the path of a step is its op (HTA's time base: whole us).
# Step numbers 3, 4, 40: "ProfilerStep#4" is a substring of "ProfilerStep#40", a step number is
# not. Step 40 starts before step 4 in time, so --annotation ProfilerStep#4 would pick #40.
STEPS = [(3, 0, 100, 10, 20), (40, 200, 100, 210, 70), (4, 400, 100, 410, 50)]  # n, ts, dur, op ts, op dur
events = []
for n, ts, dur, op_ts, op_dur in STEPS:
    events.append({"ph": "X", "cat": "user_annotation", "pid": 1, "tid": 1, "name": f"ProfilerStep#{n}",
                   "ts": ts, "dur": dur})
    events.append({"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "name": f"op_of_{n}", "ts": op_ts, "dur": op_dur})
events.append({"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "name": "annotated", "ts": 600, "dur": 30})
events.append({"ph": "X", "cat": "user_annotation", "pid": 1, "tid": 1, "name": "my region", "ts": 590, "dur": 50})


def cli_json(path, *args):
    p = subprocess.run([MLPROF, "critical-path", path, *args, "--json"], capture_output=True)
    check(p.returncode == 0, f"critical-path {args}: exit {p.returncode} {p.stderr[:200]!r}")
    return json.loads(p.stdout) if p.returncode == 0 else None


tmp = tempfile.mkdtemp(prefix="mlprof-cpwin-")
try:
    with open(os.path.join(tmp, "steps.json"), "w") as f:
        json.dump({"traceEvents": events}, f)
    local = os.path.join(tmp, "steps.json")
    cp_trace = shared_path("traces/kineto-gpu/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
    if cp_trace:
        shutil.copy(cp_trace, os.path.join(tmp, "ns.json.gz"))

    # The CLI: the steps listed (time order, offsets from the trace start), --step N exactly.
    d = cli_json(local)
    if d:
        check([(s["number"], s["offset_ns"], s["dur_ns"]) for s in d["steps"]] ==
              [(n, ts * 1000, dur * 1000) for n, ts, dur, _, _ in STEPS], f"steps listed: {d['steps']}")
        check(d["steps_total"] == 3 and "steps_cut" not in d, "steps_total 3, not cut")
        check(d["step"] == 3 and d["path_ns"] == 20000, f"default: the first step, path {d['path_ns']}")
    for n, _, _, _, op_dur in STEPS:
        d = cli_json(local, "--step", str(n))
        if d:
            check(d["step"] == n and d["window_name"] == f"ProfilerStep#{n}" and d["path_ns"] == op_dur * 1000,
                  f"--step {n}: {d['window_name']}, path {d['path_ns']}")
    d = cli_json(local, "--annotation", "ProfilerStep#4")
    if d:
        check(d["window_name"] == "ProfilerStep#40", "--annotation is a substring: ProfilerStep#4 matches #40 first")
    # A step the trace does not have: bad input (exit 2), one line on stderr naming the file and
    # the steps it has, nothing on stdout.
    p = subprocess.run([MLPROF, "critical-path", local, "--step", "5", "--json"], capture_output=True, text=True)
    check(p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1 and
          p.stderr.startswith(f"mlprof: {local}: no step ProfilerStep#5 (3 steps in the trace: #3, #40, #4;"),
          f"--step 5: exit {p.returncode}, stderr {p.stderr!r}")
    p = subprocess.run([MLPROF, "critical-path", local, "--step", "-2"], capture_output=True)
    check(p.returncode != 0, "--step -2 is refused")

    # Thousands of steps: the first 500 listed, the cut said; a step past them still analyzable.
    many = []
    for i in range(600):
        many.append({"ph": "X", "cat": "user_annotation", "pid": 1, "tid": 1, "name": f"ProfilerStep#{i}",
                     "ts": 100 * i, "dur": 90})
        many.append({"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "name": "op", "ts": 100 * i + 1, "dur": 5})
    with open(os.path.join(tmp, "many.json"), "w") as f:
        json.dump({"traceEvents": many}, f)
    d = cli_json(os.path.join(tmp, "many.json"))
    if d:
        check(len(d["steps"]) == 500 and d["steps"][-1]["number"] == 499 and d["steps_total"] == 600 and
              "500 of 600" in d.get("steps_cut", ""), f"600 steps: {len(d['steps'])} listed, cut: {d.get('steps_cut')}")
    d = cli_json(os.path.join(tmp, "many.json"), "--step", "599")
    if d:
        check(d["step"] == 599 and d["window_begin_offset_ns"] == 599 * 100 * 1000 and d["path_ns"] == 5000,
              f"--step 599 (not listed): window +{d['window_begin_offset_ns']}, path {d['path_ns']}")

    srv = Serve(MLPROF, tmp)
    try:
        def api(query, trace="steps.json"):
            """(status, Content-Type, body)"""
            status, headers, body = srv.get("/api/profiler/critical_path?trace=" + urllib.parse.quote(trace) + query)
            return status, headers.get("Content-Type", ""), body

        status, _, default = api("")
        check(status == 200, f"default: HTTP {status}")
        p = subprocess.run([MLPROF, "critical-path", local, "--json"], capture_output=True)
        check(json.loads(default) == json.loads(p.stdout), "default: the CLI's JSON")
        for n, _, _, _, op_dur in STEPS:
            status, ctype, body = api(f"&step={n}")
            ok = status == 200 and ctype.startswith("application/json")
            check(ok, f"?step={n}: HTTP {status}")
            if ok:
                got = json.loads(body)
                check(got == cli_json(local, "--step", str(n)), f"?step={n}: the CLI's --step JSON")
                check(got["path_ns"] == op_dur * 1000, f"?step={n}: path {got['path_ns']}")
        # The same window twice: the same bytes (from the cache).
        check(api("&step=40")[2] == api("&step=40")[2], "?step=40 twice: same bytes")
        status, _, body = api("&annotation=" + urllib.parse.quote("my region"))
        check(status == 200 and json.loads(body)["path_ns"] == 30000, f"?annotation=my region: HTTP {status}")
        status, _, body = api("&annotation=ProfilerStep&instance=2")
        check(status == 200 and json.loads(body) == cli_json(local, "--annotation", "ProfilerStep", "--instance", "2"),
              "?annotation=ProfilerStep&instance=2: the CLI's JSON")
        status, _, body = api("&annotation=")
        check(status == 200 and json.loads(body)["window_name"] == "" and json.loads(body) == cli_json(local, "--annotation", ""),
              "?annotation= (empty): the whole trace, as the CLI")

        # Unknown windows: 404 with a JSON error.
        for q in ["&step=5", "&step=999999999999", "&annotation=nosuch", "&annotation=ProfilerStep&instance=3"]:
            status, ctype, body = api(q)
            check(status == 404 and "error" in json.loads(body), f"{q}: HTTP {status} {body[:100]!r}")
        status, _, body = api("&step=599", trace="many.json")
        check(status == 200 and json.loads(body)["step"] == 599, f"?step=599 of 600 (past the listed steps): HTTP {status}")
        status, _, _ = api("&step=3", trace="nope.json")
        check(status == 404, f"?step=3 of a missing trace: HTTP {status}")
        # Bad values: 400 with a JSON error, the server keeps serving.
        bad = ["&step=", "&step=abc", "&step=-1", "&step=%2B3", "&step=3%20", "&step=1e3", "&step=0x10",
               "&step=99999999999999999999999999999999", "&step=9223372036854775808", "&step=1000000000000",
               "&step=3&annotation=x", "&step=3&instance=1", "&instance=1",
               "&annotation=ProfilerStep&instance=-1", "&annotation=ProfilerStep&instance=99999999999",
               "&annotation=" + "A" * 5000, "&annotation=%FF%FE", "&annotation=%C3%28", "&annotation=%ED%A0%80"]
        for q in bad:
            status, ctype, body = api(q)
            ok = status == 400 and ctype.startswith("application/json")
            try:
                ok = ok and "error" in json.loads(body)
            except ValueError:
                ok = False
            check(ok, f"{q[:60]}: HTTP {status} {body[:100]!r}")
        status, _, body = api("&annotation=" + "A" * 20000)
        check(status == 414, f"a 20,000-byte annotation: HTTP {status} (request URI too long)")
        check(srv.get("/api/traces")[0] == 200 and srv.proc.poll() is None, "serve still answers after the bad requests")

        if cp_trace:
            d = cli_json(cp_trace)
            if d:
                check(len(d["steps"]) == d["steps_total"] >= 2, f"ns trace: {d['steps_total']} steps listed")
                for s in d["steps"][:3]:
                    status, _, body = api(f"&step={s['number']}", trace="ns.json.gz")
                    want = cli_json(cp_trace, "--step", str(s["number"]))
                    check(status == 200 and json.loads(body) == want, f"ns trace ?step={s['number']}: the CLI's JSON")
                    check(want["window_name"] == s["name"] and want["window_end_ns"] - want["window_begin_ns"] <= s["dur_ns"],
                          f"ns trace step {s['number']}: window inside the step")
        else:
            print("NOTE: shared ns-resolution trace absent: only the hand-built trace was checked")
    finally:
        srv.stop()
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()

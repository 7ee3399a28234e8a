"""Thread (CPU) time, `tts`/`tdur`, against an independent reading of Perfetto's rules
(json_trace_parser_impl.cc) over Perfetto's own JSON test traces (shared data, peers/perfetto):

  X     thread_ts = tts, thread_dur = tdur (each when present and a time)
  B/E   thread_ts = the B's tts; thread_dur = the E's tts - the B's tts (both present)
  b/e   thread_ts = the b's tts; no thread_dur (Perfetto: not defined for async slices)

Times are microseconds (numbers or numeric strings) read exactly as decimals here. Checks
`mlprof sql` (slice.thread_ts / thread_dur, NULL when absent), `mlprof ops --json` (cpu_ns per op:
the sum of thread_dur), the exported Chrome JSON (tts/tdur written back once, and a B/E pair's
pass-through keys once) and the `.mlprof` round trip. Usage: test_thread_time.py MLPROF TESTS_DATA.
"""
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from decimal import Decimal, InvalidOperation

sys.path.insert(0, os.path.dirname(__file__))
from shared_data import shared_path  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF = sys.argv[1]



def run(*args):
    p = subprocess.run([MLPROF, *args], capture_output=True, text=True)
    check(p.returncode == 0, f"{args}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def ns(v):
    """Microseconds (a JSON number or numeric string) -> integer ns, or None."""
    if isinstance(v, bool) or v is None:
        return None
    try:
        d = Decimal(str(v).strip())
    except InvalidOperation:
        return None
    if not d.is_finite():
        return None
    return int((d * 1000).to_integral_value(rounding="ROUND_HALF_UP"))


def expected(events):
    """(name, ts, thread_ts, thread_dur) of every slice with a thread time, per Perfetto."""
    out = []
    open_ = defaultdict(list)
    for e in events:
        ph = e.get("ph")
        pid = e.get("pid", 0)
        tid = e.get("tid", pid)
        tts = ns(e.get("tts"))
        if tts is not None and tts < 0:
            tts = None
        if ph == "X" and ns(e.get("dur")) is not None and ns(e.get("ts")) is not None:
            tdur = ns(e.get("tdur"))
            if tts is None or tdur is None or tdur < 0:
                tdur = None
            if tts is not None:
                out.append((e.get("name"), ns(e["ts"]), tts, tdur))
        elif ph == "B":
            open_[(str(pid), str(tid))].append(e)
        elif ph == "E":
            stack = open_[(str(pid), str(tid))]
            if not stack:
                continue
            b = stack.pop()
            bts = ns(b.get("tts"))
            if bts is None or bts < 0:
                continue
            dur = tts - bts if tts is not None and tts >= bts else None
            out.append((b.get("name"), ns(b["ts"]), bts, dur))
    for stack in open_.values():  # unfinished B: thread start only
        for b in stack:
            bts = ns(b.get("tts"))
            if bts is not None and bts >= 0:
                out.append((b.get("name"), ns(b["ts"]), bts, None))
    return sorted(out, key=lambda r: (r[1], r[0]))


def events_of(path):
    with open(path) as f:
        try:
            doc = json.load(f)
        except ValueError:
            return None  # the damaged files (trailing commas...): read by the recovery tests
    return doc["traceEvents"] if isinstance(doc, dict) else doc


FILES = ["string_tts_and_tdur.json", "string_ts_and_dur.json", "json_all_slice_types.json",
         "json_extreme_vals.json", "flow_events_json_v2.json", "json_flow.json"]


def check_file(path):
    events = events_of(path)
    if events is None:
        return
    want = expected(events)
    check(want, f"{path}: the reference found thread times (the file exercises them)")
    rows = json.loads(run("sql", path, "SELECT name, ts, thread_ts, thread_dur FROM slice "
                          "WHERE thread_ts IS NOT NULL ORDER BY ts, name", "--json"))["rows"]
    got = [(r["name"], r["ts"], r["thread_ts"], r["thread_dur"]) for r in rows]
    check(got == want, f"{path}: thread times {got} != {want}")
    # ops: cpu_ns is the sum of the op's thread durations, only on ops that have some.
    cpu = defaultdict(int)
    calls = defaultdict(int)
    for name, _, _, tdur in want:
        if tdur is not None:
            cpu[name] += tdur
            calls[name] += 1
    ops = json.loads(run("ops", path, "--json"))["ops"]
    got_cpu = {o["name"]: o["cpu_ns"] for o in ops if "cpu_ns" in o}
    got_calls = {o["name"]: o["cpu_calls"] for o in ops if "cpu_calls" in o}
    check(got_cpu == dict(cpu), f"{path}: ops cpu_ns {got_cpu} != {dict(cpu)}")
    check(got_calls == dict(calls), f"{path}: ops cpu_calls {got_calls} != {dict(calls)}")
    # The text table with its cpu columns keeps the op names whole (they were cut to 12
    # characters: "Some...Slice").
    text = run("ops", path, "--top", "0")
    for name in cpu:
        if len(name) <= 40:
            check(any(line.startswith(name + " ") for line in text.splitlines()),
                  f"{path}: ops text shows {name!r} whole:\n{text}")
    # Export and .mlprof keep them.
    with tempfile.TemporaryDirectory() as d:
        for out in ("t.json", "t.mlprof"):
            dest = os.path.join(d, out)
            run("export", path, "-o", dest)
            rows = json.loads(run("sql", dest, "SELECT name, ts, thread_ts, thread_dur FROM slice "
                                  "WHERE thread_ts IS NOT NULL ORDER BY ts, name", "--json"))["rows"]
            again = [(r["name"], r["ts"], r["thread_ts"], r["thread_dur"]) for r in rows]
            check(again == want, f"{path} -> {out}: thread times {again} != {want}")


def check_pass_through_once():
    """A B/E pair whose begin and end both carry tts and another unknown key: the exported
    event has each key once (json.loads keeps the last of a duplicated key, so count them
    with object_pairs_hook)."""
    trace = [
        {"ph": "B", "pid": 1, "tid": 1, "ts": 10, "tts": 5, "name": "op", "sf": 7,
         "args": {"k": 1}},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 30, "tts": 12, "sf": 8, "args": {"k": 2, "e": 3}},
    ]
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "be.json")
        with open(src, "w") as f:
            json.dump(trace, f)
        for parse_threads in ("1", "2"):
            dest = os.path.join(d, "out" + parse_threads + ".json")
            env = dict(os.environ, MLPROF_PARSE_THREADS=parse_threads)
            p = subprocess.run([MLPROF, "export", src, "-o", dest], capture_output=True,
                               text=True, env=env)
            check(p.returncode == 0, f"export be.json: {p.stderr.strip()}")
            dup = []

            def hook(pairs):
                keys = [k for k, _ in pairs]
                dup.extend(k for k in set(keys) if keys.count(k) > 1)
                return dict(pairs)

            with open(dest) as f:
                doc = json.load(f, object_pairs_hook=hook)
            check(not dup, f"exported B/E pair repeats keys {dup}")
            ev = [e for e in doc["traceEvents"] if e.get("name") == "op"]
            check(len(ev) == 1, f"one exported slice for the pair, got {ev}")
            if ev:
                e = ev[0]
                check(e.get("tts") == 5 and e.get("tdur") == 7, f"tts/tdur of the pair: {e}")
                check(e.get("sf") == 8, f"the end's value wins for a key both have (Perfetto): {e}")
                check(e.get("args") == {"k": 2, "e": 3}, f"args of the pair: {e.get('args')}")


for name in FILES:
    p = shared_path("peers/perfetto/traces/" + name)
    if p:
        check_file(p)
check_pass_through_once()
finish()

"""`mlprof export DIR -o merged.json [--steps A:B]`: a rank directory as one Chrome trace, checked
against what this script computes from the rank files themselves (bench/gen_ranks.py sets with
known clock skews, from the real NCCL and A100 rank traces in the shared folder):

* every rank is one process named "rank N" (sorted by rank), and every event sits in one of them;
* clocks aligned: the generator shifts rank i by s_i us, so every merged time of rank i is the
  source time + s_0; the same collective kernel ends at the same merged time on every rank, within
  the residual the trace states (base-time alignment and collective-end alignment);
* --steps A:B keeps exactly the complete events that overlap each rank's window (from the start of
  its first ProfilerStep#N, A <= N <= B, on a CPU thread, to the end of its last), clipped to it;
  flows only with both ends inside, with ids unique across ranks; counter samples inside the
  window, plus the value in force at the window start as a sample there (hand-made set: the
  shared rank traces have no counters);
* the output re-imports (`mlprof summary --json`); the real 2-rank set works;
* --max-events refuses a too-large trace and writes nothing; a broken rank file is skipped with
  its name (exit 2 and nothing written under --strict); duplicate/missing ranks are warned.

Usage: test_merged_export.py MLPROF DATA_DIR"""
import gzip
import json
import os
import subprocess
import sys
import tempfile
from decimal import Decimal

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF = sys.argv[1]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(REPO, "bench", "gen_ranks.py")
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "Kernel", "Memcpy",
            "Memset", "mtia_ccp_events", "cuda_profiler_range"}


def run(*args):
    return subprocess.run([MLPROF, *args], capture_output=True, text=True)


def generate(src, out, *args):
    subprocess.run([sys.executable, GEN, src, out, *args], check=True)
    return json.load(open(os.path.join(out, "answers.txt")))


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f, parse_float=Decimal)
    return d if isinstance(d, dict) else {"traceEvents": d}


def ns(us):
    return int(round(Decimal(us) * 1000))


def export(d, out, *args, expect=0):
    p = run("export", d, "-o", out, *args)
    check(p.returncode == expect, f"export {os.path.basename(d)} {args}: exit {p.returncode} == "
                                  f"{expect}: {p.stderr.strip()[-300:]}")
    return p


def processes(m):
    """pid -> process name, and the non-metadata events by pid."""
    names, events = {}, {}
    for e in m["traceEvents"]:
        if e["ph"] == "M":
            if e["name"] == "process_name":
                names[e["pid"]] = e["args"]["name"]
        else:
            events.setdefault(e["pid"], []).append(e)
    return names, events


RUNTIME_CATS = {"runtime", "cuda_runtime", "mtia_runtime", "glow_runtime", "xpu_runtime",
                "privateuse1_runtime"}


def gpu_tracks(events):
    return {(e.get("pid"), e.get("tid")) for e in events
            if e.get("ph") == "X" and e.get("cat") in GPU_CATS}


def step_windows(events, first, last):
    """(host window, GPU window) of steps first..last in ns, or None. Host: from the start of the
    first ProfilerStep#N (first <= N <= last) on a CPU thread to the end of the last (a marker
    starting inside the previous step is a duplicate). GPU: the TensorBoard plugin's device step
    windows: a step's GPU work is what runtime calls lying wholly inside its host window launched
    (by correlation); its window ends at max(host end, that work's end) and starts at
    max(host start, the previous step's window end)."""
    gpu = gpu_tracks(events)
    xs = [e for e in events if e.get("ph") == "X"]
    markers = sorted(((ns(e["ts"]), i, e) for i, e in enumerate(xs)
                      if (e.get("pid"), e.get("tid")) not in gpu
                      and e.get("name", "").startswith("ProfilerStep#")), key=lambda x: x[:2])
    host = []
    for s, _, e in markers:
        if host and s < host[-1][2]:
            continue
        host.append((int(e["name"][len("ProfilerStep#"):]), s, s + ns(e["dur"])))
    corr = lambda e: (e.get("args") or {}).get("correlation")  # noqa: E731
    device = [e for e in xs if (e.get("pid"), e.get("tid")) in gpu
              and e.get("cat") != "gpu_user_annotation"]
    by_corr = {}
    for e in device:
        if corr(e) is not None:
            by_corr.setdefault(corr(e), []).append(e)
    runtimes = [e for e in xs if (e.get("pid"), e.get("tid")) not in gpu
                and str(e.get("cat", "")).lower() in RUNTIME_CATS]
    dev, matched = [], set()
    for _, hs, he in host:
        lo = hi = None
        for r in runtimes:
            rs = ns(r["ts"])
            if rs >= hs and rs + ns(r["dur"]) <= he and corr(r) is not None:
                for d in by_corr.get(corr(r), []):
                    ds, de = ns(d["ts"]), ns(d["ts"]) + ns(d["dur"])
                    lo = ds if lo is None else min(lo, ds)
                    hi = de if hi is None else max(hi, de)
                    matched.add(id(d))
        dev.append((lo, hi))
    cpu_w = [(hs, he) for n, hs, he in host if first <= n <= last]
    if not cpu_w:
        return None
    cpu = (min(x[0] for x in cpu_w), max(x[1] for x in cpu_w))
    if not matched:
        return cpu, cpu
    prev_end = host[0][1]
    if dev[0][0] is not None:
        for d in device:
            de = ns(d["ts"]) + ns(d["dur"])
            if id(d) not in matched and de < dev[0][0]:
                prev_end = max(prev_end, de)
    gw = []
    for (n, hs, he), (lo, hi) in zip(host, dev):
        b = max(prev_end, hs)
        e = max(he, b) if lo is None else max(max(he, hi), b)
        prev_end = e
        if first <= n <= last:
            gw.append((b, e))
    return cpu, (min(x[0] for x in gw), max(x[1] for x in gw))


def expected_slices(events, windows, shift_ns):
    """(name, ts, dur) of the complete events kept (overlapping their track's window, clipped),
    shifted; sorted."""
    gpu = gpu_tracks(events)
    out = []
    for e in events:
        if e.get("ph") != "X":
            continue
        lo, hi = windows[1] if (e.get("pid"), e.get("tid")) in gpu else windows[0]
        s = ns(e["ts"])
        t = s + ns(e.get("dur", 0))
        keep = (s < hi and t > lo) if t > s else lo <= s <= hi
        if keep:
            s2, t2 = max(s, lo), min(t, hi)
            out.append((e["name"], s2 + shift_ns, t2 - s2))
    return sorted(out)


def merged_slices(events):
    return sorted((e["name"], ns(e["ts"]), ns(e["dur"])) for e in events if e["ph"] == "X")


def comm_ends(events):
    """Per thread, the end times of the NCCL kernels in time order (ns)."""
    by = {}
    for e in sorted((e for e in events if e["ph"] == "X" and e.get("cat") == "kernel"
                     and "nccl" in e["name"].lower()), key=lambda e: ns(e["ts"])):
        by.setdefault(e["tid"], []).append(ns(e["ts"]) + ns(e["dur"]))
    return by


def check_aligned(d, ans, method, out):
    tag = os.path.basename(d) + ":"
    p = export(d, out)
    if p.returncode:
        return
    check(f"clocks: {method}" in p.stderr, f"{tag} stderr names the alignment {method}")
    m = load(out)
    info = m["otherData"]["mlprof_merged"]
    check(info["clock_alignment"]["method"] == method,
          f"{tag} otherData method {info['clock_alignment']['method']} == {method}")
    names, events = processes(m)
    n = ans["ranks"]
    check(sorted(names.values()) == sorted(f"rank {r}" for r in range(n)),
          f"{tag} one process per rank: {sorted(names.values())}")
    check(set(events) == set(range(n)) and set(names) == set(range(n)),
          f"{tag} every event in a rank's process (pids {sorted(events)})")
    order = sorted((e["args"]["sort_index"], e["pid"]) for e in m["traceEvents"]
                   if e["ph"] == "M" and e["name"] == "process_sort_index")
    check([pid for _, pid in order] == list(range(n)), f"{tag} processes sorted by rank")
    # Every slice of rank r, shifted: source time + s_0 (the generator's shift of rank 0).
    shifts = ans["offsets_us"]
    tol = 0 if method == "kineto_base_time" else 2  # collective ends: float-us rounding
    for r in range(n):
        got = merged_slices(events[r])
        src = load(os.path.join(d, ans["files"][r]))["traceEvents"]
        everything = (-(1 << 62), 1 << 62)
        exp = expected_slices(src, (everything, everything), (shifts["0"] - shifts[str(r)]) * 1000)
        same = len(exp) == len(got) and all(
            a[0] == b[0] and abs(a[1] - b[1]) <= tol and a[2] == b[2] for a, b in zip(exp, got))
        check(same, f"{tag} rank {r}: {len(got)} slices at source time + s_0 ({len(exp)} in "
                    "the file)")
    # A collective ends together on every rank, within the stated residual.
    residual = info["clock_alignment"]["residual_ns"]
    ends = [comm_ends(events[r]) for r in range(n)]
    worst, calls = 0, 0
    for tid, ref in ends[0].items():
        for k in range(len(ref)):
            e = [ends[r].get(tid, [])[k] for r in range(n) if k < len(ends[r].get(tid, []))]
            check(len(e) == n, f"{tag} call {k} on thread {tid} on every rank")
            worst = max(worst, max(e) - min(e))
            calls += 1
    check(calls == ans["comm_kernels_per_rank"], f"{tag} {calls} collective kernels compared")
    check(worst <= residual + 2, f"{tag} collective ends agree within {worst} ns <= residual "
                                 f"{residual} ns (+2 ns rounding)")
    # Re-imports.
    p = run("summary", "--json", out)
    check(p.returncode == 0, f"{tag} mlprof summary re-imports the merged trace: {p.stderr[-200:]}")


def check_steps(d, ans, first, last, out):
    tag = f"{os.path.basename(d)} --steps {first}:{last}:"
    p = export(d, out, "--steps", f"{first}:{last}")
    if p.returncode:
        return
    m = load(out)
    names, events = processes(m)
    info = m["otherData"]["mlprof_merged"]
    offsets = {x["rank"]: x["clock_offset_ns"] for x in info["rank_list"]}
    listed = {x["rank"]: x for x in info["rank_list"]}
    shifts = ans["offsets_us"]
    total = 0
    gpu_later = []
    for r in range(ans["ranks"]):
        src = load(os.path.join(d, ans["files"][r]))["traceEvents"]
        win = step_windows(src, first, last)
        check(win is not None, f"{tag} rank {r} has the steps")
        (lo, hi), (glo, ghi) = win
        off = offsets[r]
        check(listed[r]["window_ns"] == [lo + off, hi + off]
              and listed[r]["gpu_window_ns"] == [glo + off, ghi + off],
              f"{tag} rank {r} windows {listed[r]['window_ns']} {listed[r]['gpu_window_ns']} == "
              f"{[lo + off, hi + off]} {[glo + off, ghi + off]}")
        if r == 0:
            gpu_later.append(ghi > hi)
        # The offset is the generator's (exact with base times, else within float rounding).
        check(abs(offsets[r] - (shifts["0"] - shifts[str(r)]) * 1000) <= 2,
              f"{tag} rank {r} offset {offsets[r]}")
        exp = expected_slices(src, win, offsets[r])
        got = merged_slices(events.get(r, []))
        check(exp == got, f"{tag} rank {r}: {len(got)} slices == {len(exp)} computed from the file"
                          + ("" if exp == got else f" (first diff: "
                             f"{next((a, b) for a, b in zip(exp + [None] * 9, got + [None] * 9) if a != b)})"))
        lo, hi = min(lo, glo) + off, max(hi, ghi) + off
        others = [e for e in events.get(r, []) if e["ph"] != "X"]
        check(all(lo <= ns(e["ts"]) <= hi for e in others),
              f"{tag} rank {r}: {len(others)} other events inside the window")
        total += len(events.get(r, []))
    check(total == info["events"], f"{tag} {total} events == otherData events {info['events']}")
    # Flows: pairs with one id, unique across ranks.
    flows = {}
    for pid, evs in events.items():
        for e in evs:
            if e["ph"] in "sf":
                flows.setdefault(e["id"], []).append((pid, e["ph"]))
    check(all(sorted(v) == sorted([(v[0][0], "s"), (v[0][0], "f")]) for v in flows.values()),
          f"{tag} {len(flows)} flows: one s and one f per id, in one rank")
    p = run("summary", "--json", out)
    check(p.returncode == 0, f"{tag} re-imports with mlprof summary: {p.stderr[-200:]}")
    return gpu_later


def gpu_lagged(src, out, lag_us):
    """The trace with its GPU work `lag_us` later (correlations kept): the GPU runs behind."""
    with gzip.open(src, "rt") as f:
        d = json.load(f)  # floats, as bench/gen_ranks.py reads it
    gpu = gpu_tracks(d["traceEvents"])
    for e in d["traceEvents"]:
        if e.get("ph") != "M" and "ts" in e and (e.get("pid"), e.get("tid")) in gpu:
            e["ts"] = e["ts"] + lag_us
    with gzip.open(out, "wt") as f:
        json.dump(d, f)
    return out


def handmade_rank(r):
    """A small rank trace with what the real ones lack: async ranges, instants, counters in two
    processes, a flow, a slice across the window; its clock 5 us * r ahead of rank 0's."""
    cpu, gpu = {"pid": 100, "tid": 1}, {"pid": 0, "tid": 7}
    ev = [{"ph": "M", "name": "process_labels", "pid": 100, "tid": 0, "args": {"labels": "CPU"}},
          {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
          {"ph": "M", "name": "thread_name", "pid": 100, "tid": 1, "args": {"name": "main"}}]
    for n in (1, 2, 3):
        ev.append({"ph": "X", "name": f"ProfilerStep#{n}", "cat": "user_annotation",
                   "ts": 100 * (n - 1), "dur": 100, **cpu})
    ev += [{"ph": "X", "name": "long", "cat": "cpu_op", "ts": 50, "dur": 200, **cpu},
           {"ph": "X", "name": "cudaLaunchKernel", "cat": "cuda_runtime", "ts": 110, "dur": 5,
            "args": {"correlation": 5}, **cpu},
           {"ph": "X", "name": "kern", "cat": "kernel", "ts": 160, "dur": 30,
            "args": {"correlation": 5, "device": 0, "stream": 7}, **gpu},
           {"ph": "s", "name": "ac2g", "cat": "ac2g", "id": 5, "ts": 110, **cpu},
           {"ph": "f", "name": "ac2g", "cat": "ac2g", "id": 5, "ts": 160, "bp": "e", **gpu},
           {"ph": "b", "name": "req", "cat": "async", "id": 1, "ts": 120, **cpu},
           {"ph": "e", "name": "req", "cat": "async", "id": 1, "ts": 180, **cpu},
           {"ph": "i", "name": "mark", "s": "t", "ts": 150, **cpu},
           {"ph": "i", "name": "late", "s": "t", "ts": 250, **cpu},
           {"ph": "C", "name": "mem", "ts": 150, "args": {"value": 1}, **cpu},
           {"ph": "C", "name": "mem", "ts": 150, "args": {"value": 2}, **gpu}]
    # Counters sampled before the window: the value in force at its start is repeated there
    # (the later of two samples at one time), unless the series has a sample at the start.
    ev += [{"ph": "C", "name": "mem", "ts": 20, "args": {"value": 7}, **cpu},
           {"ph": "C", "name": "mem", "ts": 60, "args": {"value": 8}, **cpu},
           {"ph": "C", "name": "mem", "ts": 60, "args": {"value": 9.5}, **cpu},
           {"ph": "C", "name": "mem", "ts": 250, "args": {"value": 4}, **cpu},
           {"ph": "C", "name": "util", "ts": 30, "args": {"value": 3}, **cpu},
           {"ph": "C", "name": "at_start", "ts": 40, "args": {"value": 5}, **cpu},
           {"ph": "C", "name": "at_start", "ts": 100, "args": {"value": 6}, **cpu},
           {"ph": "C", "name": "after", "ts": 260, "args": {"value": 1}, **cpu},
           {"ph": "C", "name": "mem", "ts": 10, "args": {"value": 11}, **gpu}]
    for e in ev:
        if "ts" in e:
            e["ts"] += 5 * r
    return {"distributedInfo": {"rank": r, "world_size": 2},
            "baseTimeNanoseconds": 10**9 - 5000 * r, "traceEvents": ev}


def expected_counters(events, windows, shift_ns):
    """(name, ts ns, value) of the counter samples a merged rank holds, sorted: the samples
    inside their process's window (a process with GPU work: the GPU window), plus, per series
    sampled before the window's start and not at it, its last value before the start (the later
    one at equal times) at the start. Names are "<process label> / <name>" when counters come
    from more than one process; counters here have one arg, "value"."""
    gpu_pids = {pid for pid, _ in gpu_tracks(events)}
    labels = {e["pid"]: e["args"]["labels"] for e in events
              if e.get("ph") == "M" and e.get("name") == "process_labels"}
    series = {}  # (pid, name) -> [(ts, value)] in file order
    for e in events:
        if e.get("ph") == "C":
            series.setdefault((e["pid"], e["name"]), []).append((ns(e["ts"]), e["args"]["value"]))
    prefix = len({pid for pid, _ in series}) > 1
    out = []
    for (pid, name), samples in series.items():
        lo, hi = windows[1] if pid in gpu_pids else windows[0]
        shown = f"{labels[pid]} / {name}" if prefix else name
        kept = [(ts, v) for ts, v in samples if lo <= ts <= hi]
        before = [(ts, v) for ts, v in samples if ts < lo]
        if before and all(ts != lo for ts, _ in samples):
            last = max(ts for ts, _ in before)
            kept.append((lo, [v for ts, v in before if ts == last][-1]))
        out += [(shown, ts + shift_ns, Decimal(str(v))) for ts, v in kept]
    return sorted(out)


def merged_counters(events):
    return sorted((e["name"], ns(e["ts"]), Decimal(e["args"]["value"])) for e in events
                  if e["ph"] == "C")


def check_handmade(tmp, out):
    d = os.path.join(tmp, "handmade")
    os.makedirs(d)
    for r in (0, 1):
        json.dump(handmade_rank(r), open(os.path.join(d, f"rank{r}.json"), "w"))
    p = export(d, out, "--steps", "2")
    if p.returncode:
        return
    m = load(out)
    names, events = processes(m)
    info = m["otherData"]["mlprof_merged"]
    check(sum(map(len, events.values())) == info["events"],
          f"handmade: {sum(map(len, events.values()))} events == otherData {info['events']}")
    ids = {}
    for r in (0, 1):
        ev = events.get(r, [])
        tag = f"handmade rank {r}:"
        # Window [100, 200] us on rank 0's clock (base time alignment undoes the 5 us skew).
        check(merged_slices(ev) == sorted([("ProfilerStep#2", 100000, 100000),
                                           ("long", 100000, 100000),  # clipped from 50..250
                                           ("cudaLaunchKernel", 110000, 5000),
                                           ("kern", 160000, 30000)]),
              f"{tag} slices {merged_slices(ev)}")
        check([(e["name"], ns(e["ts"])) for e in ev if e["ph"] == "i"] == [("mark", 150000)],
              f"{tag} only the instant inside the window")
        src = handmade_rank(r)["traceEvents"]
        off = info["rank_list"][r]["clock_offset_ns"]
        exp = expected_counters(src, step_windows(src, 2, 2), off)
        check(merged_counters(ev) == exp,
              f"{tag} counters {merged_counters(ev)} == {exp} (window samples, the value in "
              "force at the window start repeated there, named by process)")
        check(("CPU / util", 100000, 3) in exp and ("CPU / mem", 100000, Decimal("9.5")) in exp
              and ("GPU 0 / mem", 100000, 11) in exp and ("CPU / at_start", 100000, 6) in exp
              and not any(e[0] == "CPU / after" for e in exp), f"{tag} the cases the set covers")
        asy = [e for e in ev if e["ph"] in "be"]
        check(len(asy) == 2 and asy[0]["id"] == asy[1]["id"], f"{tag} one async range")
        fl = [e for e in ev if e["ph"] in "sf"]
        check(len(fl) == 2 and fl[0]["id"] == fl[1]["id"], f"{tag} one flow")
        ids[r] = {str(e["id"]) for e in asy + fl}
    check(not (ids.get(0, set()) & ids.get(1, set())), f"handmade: ids unique across ranks {ids}")
    check(sorted(names.values()) == ["rank 0", "rank 1"], "handmade: two processes")


tmp = tempfile.mkdtemp(prefix="mlprof-merged-")
try:
    out = os.path.join(tmp, "merged.json")
    check_handmade(tmp, out)  # needs no shared data
    shared = shared_data.shared_path("traces/kineto-gpu")
    if shared is None:
        finish()  # exit 77: the rest reads the shared traces
    sampled = os.path.join(shared, "trace_filter", "sampled_rank-0.json.gz")
    nccl = os.path.join(shared, "nccl_parser_config", "nccl_data.json.gz")
    # Base-time alignment: the real NCCL rank as 4 ranks with skewed clocks.
    d = os.path.join(tmp, "nccl4")
    ans = generate(nccl, d, "-n", "4", "--skew-us", "5000", "--gzip")
    check_aligned(d, ans, "kineto_base_time", out)
    check_steps(d, ans, 5, 5, out)
    check_steps(d, ans, 4, 6, out)
    # Collective-end alignment: the sampled A100 rank as 3 ranks without baseTimeNanoseconds.
    d = os.path.join(tmp, "a100x3")
    ans = generate(sampled, d, "-n", "3", "--skew-us", "3000", "--no-base-time")
    check_aligned(d, ans, "collective_end", out)
    check_steps(d, ans, 552, 552, out)
    # GPU work running 30 ms behind the CPU: the GPU window follows it.
    lagged = gpu_lagged(sampled, os.path.join(tmp, "lagged.json.gz"), 30000)
    d = os.path.join(tmp, "lagged2")
    ans = generate(lagged, d, "-n", "2", "--skew-us", "3000", "--no-base-time")
    later = check_steps(d, ans, 552, 552, out)
    check(later == [True], f"lagged: the GPU window ends after the host window ({later})")
    d = os.path.join(tmp, "a100x3")

    # Steps nobody has, malformed --steps: exit 2, nothing written.
    os.remove(out)
    p = export(d, out, "--steps", "900:901", expect=2)
    check("no rank has ProfilerStep#900" in p.stderr and not os.path.exists(out),
          f"--steps 900:901: one line, nothing written: {p.stderr.strip()[-200:]}")
    p = export(d, out, "--steps", "5:2", expect=2)
    # The size guard: nothing written, a message naming the option.
    p = export(d, out, "--max-events", "100", expect=1)
    check("--max-events 100" in p.stderr and not os.path.exists(out),
          f"size guard message, nothing written: {p.stderr.strip()[-300:]}")
    # A broken rank file: skipped with its name; --strict: exit 2, nothing written.
    with open(os.path.join(d, "rank-00009.json"), "w") as f:
        f.write('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": ')
    p = export(d, out, "--steps", "552")
    check("skipped" in p.stderr and "rank-00009.json" in p.stderr, "broken file skipped, named")
    os.remove(out)
    p = export(d, out, "--strict", expect=2)
    check("rank-00009.json" in p.stderr and not os.path.exists(out),
          f"--strict: the broken file named, nothing written: {p.stderr.strip()[-300:]}")
    # Duplicate and missing ranks: warned, the duplicate is a process of its own.
    d = os.path.join(tmp, "dup")
    generate(sampled, d, "-n", "4", "--duplicate", "1", "--missing", "2", "--no-base-time")
    p = export(d, out)
    check("duplicate rank 1" in p.stderr and "missing ranks" in p.stderr,
          f"duplicate/missing warnings: {p.stderr.strip()[-300:]}")
    if p.returncode == 0:
        names, _ = processes(load(out))
        check(sorted(names.values()) == ["rank 0", "rank 1 (rank-00001-dup.json)",
                                         "rank 1 (rank-00001.json)", "rank 3"],
              f"processes {sorted(names.values())}")

    # The real 2-rank set (2 of 128 ranks).
    real = os.path.join(shared, "trace_filter")
    p = export(real, out, "--steps", "552:552")
    if p.returncode == 0:
        m = load(out)
        names, events = processes(m)
        check(sorted(names.values()) == ["rank 0", "rank 1"], f"trace_filter: {names}")
        check("missing ranks: 126 of world size 128" in p.stderr, "trace_filter: missing warned")
        for r in (0, 1):
            src = load(os.path.join(real, f"sampled_rank-{r}.json.gz"))["traceEvents"]
            off = m["otherData"]["mlprof_merged"]["rank_list"][r]["clock_offset_ns"]
            exp = expected_slices(src, step_windows(src, 552, 552), off)
            check(exp == merged_slices(events[r]), f"trace_filter rank {r}: {len(exp)} slices")
        check(run("summary", out).returncode == 0, "trace_filter merged re-imports")
finally:
    import shutil
    shutil.rmtree(tmp, ignore_errors=True)
finish()

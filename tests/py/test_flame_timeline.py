"""`mlprof flame` (collapsed stacks, speedscope, --json) and `mlprof timeline --json` against an
independent Python computation of slice nesting, self time and busy-time unions over the JSON."""
import gzip
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

sys.path.insert(0, os.path.dirname(__file__))
from shared_data import exit_code, shared_path  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]
failures = 0
checked = 0

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}


def check(cond, what):
    global failures, checked
    checked += 1
    if not cond:
        failures += 1
        print("FAIL", what)


def ns(v):
    return int((Decimal(str(v)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def load(name):
    path = name if os.path.isabs(name) else os.path.join(DATA, name)
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return path, doc if isinstance(doc, list) else doc["traceEvents"]


def x_slices(events):
    by_track = defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            by_track[(str(e.get("pid")), str(e.get("tid")))].append(
                (ns(e["ts"]), max(0, ns(e.get("dur", 0))), e.get("name", ""), e.get("cat", "")))
    return by_track


def collapsed_expected(by_track):
    """Self time per call path, threads merged, as flamegraph.pl's collapsed stacks."""
    out = defaultdict(int)
    for sl in by_track.values():
        sl = sorted(sl, key=lambda s: (s[0], -s[1]))
        stack = []  # [ts, end, name, child_time]
        def close(frame, path):
            self_ns = max(0, frame[1] - frame[0] - frame[3])
            if self_ns > 0:
                out[path] += self_ns
        paths = []
        for ts, dur, name, _ in sl:
            # TraceBuilder's nesting: a slice starting before the open one ends is its child
            # (legacy µs rounding makes children overhang parents by 1 µs); its time is clipped.
            while stack and stack[-1][1] <= ts and stack[-1][0] != ts:
                close(stack.pop(), paths.pop())
            if stack:
                stack[-1][3] += min(ts + dur, stack[-1][1]) - ts
            if name.startswith("ProfilerStep#"):  # steps merge into one frame by default
                name = "ProfilerStep#*"
            paths.append((paths[-1] + ";" if paths else "CPU;") + name.replace(";", ":"))
            stack.append([ts, ts + dur, name, 0])
        while stack:
            close(stack.pop(), paths.pop())
    return dict(out)


def union(intervals):
    total, end = 0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def top_level(sl):
    sl = sorted(sl, key=lambda s: (s[0], -s[1]))
    out, end = [], None
    for ts, dur, _, _ in sl:
        if end is None or ts >= end:
            out.append((ts, ts + dur))
            end = ts + dur
        else:
            end = max(end, ts + dur) if ts + dur > end else end
    return out


def roots(sl):
    """(ts, dur) of the slices TraceBuilder's nesting (as in collapsed_expected) puts at the top."""
    out, stack = [], []
    for ts, dur, _, _ in sorted(sl, key=lambda s: (s[0], -s[1])):
        while stack and stack[-1][1] <= ts and stack[-1][0] != ts:
            stack.pop()
        if not stack:
            out.append((ts, dur))
        stack.append((ts, ts + dur))
    return out


def check_gpu_utilization(name, events, tl):
    """timeline.gpu_utilization: per device (GPU events' pid), the busy share of each bucket of
    [begin_ns, end_ns) of the union of kernels, copies and sets, recomputed here bucket by bucket."""
    by_dev = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in GPU_CATS:
            by_dev[int(e["pid"])].append((ns(e["ts"]), ns(e["ts"]) + max(0, ns(e.get("dur", 0)))))
    got = {u["device"]: u for u in tl["gpu_utilization"]}
    check(sorted(got) == sorted(by_dev), f"{name}: utilization devices {sorted(got)} vs {sorted(by_dev)}")
    begin, end = tl["begin_ns"], tl["end_ns"]
    for dev, ivs in by_dev.items():
        u = got.get(dev)
        if not u:
            continue
        w = u["bucket_ns"]
        check(w == max(1, -(-(end - begin) // 200)), f"{name}: bucket width {w}")
        merged = []
        for a, b in sorted(ivs):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        worst = 0.0
        for k, v in enumerate(u["values"]):
            lo, hi = begin + k * w, min(begin + (k + 1) * w, end)
            busy = sum(max(0, min(b, hi) - max(a, lo)) for a, b in merged)
            worst = max(worst, abs(v - busy / (hi - lo)))
        check(worst < 1e-9, f"{name}: GPU {dev} utilization per bucket off by up to {worst}")
        mean_busy = sum(min(b, end) - max(a, begin) for a, b in merged) / (end - begin)
        check(len(u["values"]) == -(-(end - begin) // w), f"{name}: {len(u['values'])} buckets")
        check(0 < mean_busy <= 1, f"{name}: GPU {dev} busy share {mean_busy}")


def run(*args):
    return subprocess.run([MLPROF, *args], capture_output=True, text=True, check=True).stdout


with tempfile.TemporaryDirectory() as tmp:
    for name in ["tiny_linear.json", "mlp_bs64.json.gz"]:
        path, events = load(name)
        by_track = x_slices(events)
        expected = collapsed_expected(by_track)
        txt = os.path.join(tmp, "f.txt")
        run("flame", path, "--merge-threads", "--no-gpu", "-o", txt)
        got = {}
        for line in open(txt):
            stack, _, weight = line.rstrip("\n").rpartition(" ")
            check(weight.isdigit(), f"{name}: integer weight in {line!r}")
            got[stack] = int(weight)
        check(got == expected, f"{name}: collapsed stacks differ: {len(got)} vs {len(expected)} lines; "
              f"first diff {next(((k, got.get(k), expected.get(k)) for k in set(got) | set(expected) if got.get(k) != expected.get(k)), None)}")

        sjson = os.path.join(tmp, "f.json")
        run("flame", path, "--merge-threads", "--no-gpu", "-o", sjson)
        sp = json.load(open(sjson))
        prof = sp["profiles"][0]
        names = [f["name"] for f in sp["shared"]["frames"]]
        check(sp["$schema"].startswith("https://www.speedscope.app/"), f"{name}: speedscope schema")
        check(prof["type"] == "evented", f"{name}: speedscope evented profile")
        # Replay the open/close events: the time while a stack is on top is that stack's self
        # time, which must be the collapsed stacks computed above.
        stack, replay, at, ok = [], {}, 0, True
        for e in prof["events"]:
            ok &= isinstance(e["at"], int) and e["at"] >= at and 0 <= e["frame"] < len(names)
            if stack and e["at"] > at:
                key = ";".join(names[f].replace(";", ":") for f in stack)
                replay[key] = replay.get(key, 0) + e["at"] - at
            at = e["at"]
            if e["type"] == "O":
                stack.append(e["frame"])
            else:
                ok &= bool(stack) and stack.pop() == e["frame"]
        check(ok and not stack and prof["endValue"] == at,
              f"{name}: speedscope events balanced, ordered, integer")
        check(replay == expected, f"{name}: speedscope self times = the collapsed stacks "
              f"({len(replay)} vs {len(expected)} stacks)")

        fj = json.loads(run("flame", path, "--json"))
        all_top = [iv for sl in by_track.values() for iv in top_level(sl)]
        check(fj["cpu_ns"] == sum(b - a for a, b in all_top), f"{name}: flame cpu_ns {fj['cpu_ns']}")
        check(fj["frames"][0]["name"] == "all" and fj["frames"][0]["parent"] == -1, f"{name}: flame root")

        tl = json.loads(run("timeline", path, "--json"))
        check(len(tl["lanes"]) == len(by_track), f"{name}: {len(tl['lanes'])} lanes, expected {len(by_track)}")
        check(tl["slices"] == sum(len(v) for v in by_track.values()), f"{name}: timeline slices")
        check(tl["cpu_busy_ns"] == union(all_top), f"{name}: cpu_busy_ns {tl['cpu_busy_ns']} vs {union(all_top)}")
        check(tl["gpu_busy_ns"] == 0 and tl["overlap_ns"] == 0, f"{name}: no GPU work")

    # GPU: kernels, memcpy and memset under their launching op; busy/overlap unions.
    path = shared_path("traces/kineto-gpu/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz")
    if path:
        name = os.path.basename(path)
        path, events = load(path)
        gpu = [(ns(e["ts"]), ns(e["ts"]) + max(0, ns(e.get("dur", 0)))) for e in events
               if e.get("ph") == "X" and e.get("cat") in GPU_CATS]
        cpu_tracks = defaultdict(list)
        for e in events:
            # CPU busy leaves out Kineto's "PyTorch Profiler (0)" span (category Trace): it covers
            # the whole recording and is not CPU work (HTA leaves it out of the trace's begin too).
            if e.get("ph") == "X" and e.get("cat") not in GPU_CATS and e.get("cat") not in ("gpu_user_annotation", "cuda_sync", "Trace"):
                cpu_tracks[(str(e.get("pid")), str(e.get("tid")))].append((ns(e["ts"]), max(0, ns(e.get("dur", 0))), "", ""))
        cpu_top = [iv for sl in cpu_tracks.values() for iv in top_level(sl)]
        fj = json.loads(run("flame", path, "--json"))
        check(fj["gpu_ns"] == sum(b - a for a, b in gpu), f"{name}: flame gpu_ns {fj['gpu_ns']} vs {sum(b - a for a, b in gpu)}")
        # CPU time: top-level CPU slices' durations, without Kineto's own whole-trace span
        # ("PyTorch Profiler (0)", category Trace), which is not the program's time.
        # (Context-wide syncs, cuda_sync with tid -1, sit on a device thread, not on a stream.)
        program = defaultdict(list)
        for e in events:
            stream_sync = e.get("cat") == "cuda_sync" and str(e.get("tid")) != "-1"
            if (e.get("ph") == "X" and not stream_sync
                    and e.get("cat") not in GPU_CATS | {"gpu_user_annotation", "Trace"}):
                program[(str(e.get("pid")), str(e.get("tid")))].append((ns(e["ts"]), max(0, ns(e.get("dur", 0))), "", ""))
        want = sum(d for sl in program.values() for _, d in roots(sl))
        check(fj["cpu_ns"] == want, f"{name}: flame cpu_ns {fj['cpu_ns']} vs {want} (no profiler span)")
        check(not any(f["name"] == "PyTorch Profiler (0)" for f in fj["frames"]), f"{name}: no profiler-span frame")
        frames = fj["frames"]
        gpu_root = next(i for i, f in enumerate(frames) if f["name"] == "GPU" and f["parent"] == 0)
        launched = [f for f in frames if f["name"] == "cudaLaunchKernel"]
        under_gpu = set()
        for i, f in enumerate(frames):
            p = f["parent"]
            while p > 0 and p != gpu_root:
                p = frames[p]["parent"]
            if p == gpu_root:
                under_gpu.add(i)
        check(any(i in under_gpu for i, f in enumerate(frames) if f["name"] == "cudaLaunchKernel"),
              f"{name}: kernels sit under their cudaLaunchKernel in the GPU subtree ({len(launched)} launch frames)")
        tl = json.loads(run("timeline", path, "--json"))
        check(tl["gpu_busy_ns"] == union(gpu), f"{name}: gpu_busy_ns {tl['gpu_busy_ns']} vs {union(gpu)}")
        check(tl["cpu_busy_ns"] == union(cpu_top), f"{name}: cpu_busy_ns {tl['cpu_busy_ns']} vs {union(cpu_top)}")
        check(tl["flows"] > 0, f"{name}: launch -> kernel flows bound")
        check_gpu_utilization(name, events, tl)

    # GPU utilization over time on a 2-stream DDP trace.
    path = shared_path("traces/kineto-gpu/df_index_resolver/df_index_resolver.json.gz")
    if path:
        name = os.path.basename(path)
        path, events = load(path)
        check_gpu_utilization(name, events, json.loads(run("timeline", path, "--json")))

print(f"{checked} checks, {failures} failures")
sys.exit(exit_code(failures))

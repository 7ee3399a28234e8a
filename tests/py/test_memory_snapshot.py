"""`mlprof memory SNAPSHOT --json` against ../shared/traces/memory-snapshot: the facts in its
EXPECTED.json (computed when the data was collected) and an independent replay here with
Python's own pickle module, for the pickle and the JSON twin of each snapshot. Also hostile
input: truncated and corrupted snapshots give one line on stderr and exit 2.
Skips (exit 77) when the shared data is absent (MLPROF_SHARED_DIR, default ../shared)."""
import gzip
import json
import os
import pickle
import subprocess
import sys
import random
import re
import tempfile
from collections import Counter, defaultdict

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from shared_data import require  # noqa: E402
from snapshot_replay import active_curve, device_trace, load, starting_bytes  # noqa: E402

DIR = os.path.dirname(require("traces/memory-snapshot/EXPECTED.json"))


def run(*args):
    p = subprocess.run([MLPROF, *args], capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def site(frames):
    if not frames:
        return "<no frames>"
    f = frames[0]
    base = f["filename"].replace("\\", "/").rsplit("/", 1)[-1]
    return f"{base}:{f['line']}:{f['name']}"


def block_frames(b):
    if "frames" in b:
        return b["frames"]
    h = b.get("history") or []
    return h[0]["frames"] if h else []


def replay(snap):
    """memory_viz's Active Memory Timeline for device 0 (snapshot_replay.py), its peak and end."""
    start = starting_bytes(snap, 0)
    cur = peak = start
    peak_i = None
    for i, _, cur in active_curve(snap, 0):
        if cur > peak:
            peak, peak_i = cur, i
    trace = device_trace(snap, 0)
    # allocations live at the peak, by innermost frame
    by_site = Counter()
    if peak_i is not None:
        held = {}
        for i, e in enumerate(trace[: peak_i + 1]):
            if e["action"] == "alloc":
                held[e["addr"]] = (e["size"], site(e.get("frames", [])))
            elif e["action"] == "free_completed":
                held.pop(e["addr"], None)
        for size, s in held.values():
            by_site[s] += size
    return start, peak, peak_i, cur, by_site


expected = json.load(open(os.path.join(DIR, "EXPECTED.json")))["files"]
for name, facts in expected.items():
    base = name.replace(".pickle.gz", "").replace(".pickle", "")
    snap = load(os.path.join(DIR, name))
    start, peak, peak_i, end, peak_sites = replay(snap)
    for variant in [name, base + ".json.gz"]:
        path = os.path.join(DIR, variant)
        rc, out, err = run("memory", path, "--json", "--top", "1000")
        check(rc == 0, f"{variant}: exit {rc}: {err.strip()}")
        if rc != 0:
            continue
        got = json.loads(out)
        tag = variant
        check(got["segments"] == facts["segments"], f"{tag}: segments {got['segments']}")
        check(got["blocks"] == facts["blocks"], f"{tag}: blocks {got['blocks']}")
        check(got["blocks_by_state"] == facts["blocks_by_state"], f"{tag}: blocks by state")
        check(got["reserved_bytes"] == facts["reserved_bytes_sum_total_size"], f"{tag}: reserved")
        check(got["allocated_bytes"] == facts["allocated_bytes_sum_allocated_size"], f"{tag}: allocated")
        check(got["requested_bytes"] == facts["requested_bytes_sum_requested_size"], f"{tag}: requested")
        check(got["largest_segment_bytes"] == facts["largest_segment_bytes"], f"{tag}: largest segment")
        check(got["largest_inactive_bytes"] == facts["largest_inactive_block_bytes"], f"{tag}: largest free")
        check(got["large_segments"] == facts["segments_by_type"].get("large", 0), f"{tag}: large")
        check(got["bytes_by_state"].get("inactive", 0) == facts["sum_size_of_inactive_blocks"], f"{tag}: inactive bytes")
        d = got["devices"][0]
        check(d["entries"] == facts["device_traces_lengths"][0], f"{tag}: entries {d['entries']}")
        check(d["actions"] == facts["trace_actions"], f"{tag}: actions {d['actions']}")
        check(d["start_active_bytes"] == facts["active_timeline_start_bytes"], f"{tag}: start {d['start_active_bytes']}")
        check(d["end_active_bytes"] == facts["active_timeline_end_bytes"], f"{tag}: end {d['end_active_bytes']}")
        check(d["peak_active_bytes"] == facts["active_timeline_peak_bytes"], f"{tag}: peak {d['peak_active_bytes']}")
        check(d["peak_index"] == facts["active_timeline_peak_trace_index"], f"{tag}: peak index {d['peak_index']}")
        check(d["alloc_bytes"] == facts["alloc_bytes_total"], f"{tag}: alloc bytes")
        check(d["free_completed_bytes"] == facts["free_completed_bytes_total"], f"{tag}: freed bytes")
        check(d["segment_alloc_bytes"] == facts["segment_alloc_bytes"], f"{tag}: segment bytes")
        check(d["frees_without_alloc"] == facts["frees_without_alloc_in_trace"], f"{tag}: frees w/o alloc")
        check(d["blocks_not_in_trace"] == facts["active_blocks_not_allocated_in_trace"], f"{tag}: blocks not in trace")
        if "trace_time_us_first_last" in facts:
            check([d["first_time_us"], d["last_time_us"]] == facts["trace_time_us_first_last"], f"{tag}: time span")
        # The independent replay here agrees with EXPECTED.json and with mlprof.
        check((start, peak, peak_i, end) == (d["start_active_bytes"], d["peak_active_bytes"],
                                              d["peak_index"], d["end_active_bytes"]), f"{tag}: replay")
        top = facts.get("top_active_bytes_by_innermost_frame [frame, bytes, blocks]", [])
        got_sites = {r["site"]: (r["bytes"], r["blocks"]) for r in got["live_by_site"]}
        for frame, nbytes, nblocks in top:
            check(got_sites.get(frame) == (nbytes, nblocks), f"{tag}: live by site {frame}: {got_sites.get(frame)}")
        # Live at the peak, by innermost frame: summed over mlprof's per-stack rows.
        got_peak = defaultdict(int)
        for r in d["live_at_peak"]:
            got_peak[r["site"]] += r["bytes"]
        if peak_i is not None:
            check(dict(got_peak) == dict(peak_sites), f"{tag}: live at peak by site")
            check(sum(got_peak.values()) == peak, f"{tag}: live at peak sums to the peak")
        if name.startswith("decomfl"):
            check(got["allocator_settings"]["expandable_segments"] is False, f"{tag}: settings")
            check(got["annotations"] == facts["external_annotations"], f"{tag}: annotations")

# The allocator view is an analysis of the stage: `analyze`, the report and `memory` show the
# same JSON, and the text gives times from the start of the trace (the peak's time_us minus the
# earliest time_us, computed here from the pickle), never epoch seconds.
for name in expected:
    path = os.path.join(DIR, name)
    rc, out, err = run("memory", path, "--json")
    single = json.loads(out) if rc == 0 else None
    rc, out, err = run("analyze", path, "--json")
    check(rc == 0, f"analyze {name}: exit {rc}: {err.strip()}")
    analyzed = json.loads(out) if rc == 0 else {}
    check(analyzed.get("memory_snapshot") == single, f"{name}: analyze.memory_snapshot == memory --json")
    rc, out, err = run("report", path, "--data-json")
    check(rc == 0 and json.loads(out)["analyses"].get("memory_snapshot") == single,
          f"{name}: report's memory_snapshot == memory --json")
    rc, text, err = run("analyze", path)
    text = text.decode()
    check("== CUDA memory snapshot" in text, f"{name}: analyze prints the snapshot section")
    check(not re.search(r"\b\d{7,}\.\d+ s\b", text), f"{name}: no epoch-second times in the text")
    snap = load(path)
    entries = snap["device_traces"][0]
    times = [e["time_us"] for t in snap["device_traces"] for e in t if "time_us" in e]
    times += [a["time_us"] for a in snap.get("external_annotations", []) if "time_us" in a]
    peak_i = replay(snap)[2]
    if times and peak_i is not None:
        rel = (entries[peak_i]["time_us"] - min(times)) / 1e6
        want = f"at entry {peak_i} (+{rel:.3f} s)"
        check(want in text, f"{name}: peak time relative to the trace start: want '{want}'")

# The snapshot as a trace: summary reads it through load_trace.
path = os.path.join(DIR, "decomfl_opt_train_memory.pickle.gz")
rc, out, err = run("memory", path, "--json")
rc2, out2, err2 = run("summary", path, "--json")
check(rc2 == 0, f"summary of a snapshot: exit {rc2}: {err2.strip()}")

# Hostile input: truncated / corrupted pickles and JSON, one line on stderr, exit 2.
raw = open(os.path.join(DIR, "kivi_llm_snapshot.pickle"), "rb").read()
js = gzip.decompress(open(os.path.join(DIR, "kivi_llm_snapshot.json.gz"), "rb").read())
cases = {
    "cut.pickle": raw[: len(raw) // 2],
    "cut2.pickle": raw[:3],
    "cut.json": js[: len(js) // 3],
    "reduce.pickle": b"\x80\x04c__builtin__\neval\n.",
    "bigproto.pickle": b"\x80\x09}.",
    "notdict.pickle": b"\x80\x04K\x05.",
    "badmemo.pickle": b"\x80\x04h\x07.",
    "deep.json": b'{"segments":' + b"[" * 100000,
    "garbage.json": b'{"segments": [1, 2, }',
}
for k in range(0, len(raw), max(1, len(raw) // 40)):  # flip one byte at 40 places
    b = bytearray(raw)
    b[k] ^= 0x5A
    cases[f"flip{k}.pickle"] = bytes(b)
with tempfile.TemporaryDirectory() as tmp:
    for fname, data in cases.items():
        p = os.path.join(tmp, fname)
        open(p, "wb").write(data)
        rc, out, err = run("memory", p, "--json")
        lines = err.strip().splitlines()
        if fname.startswith("flip"):
            # a flipped byte may still be a valid pickle; it must never crash or hang
            check(rc in (0, 2) and (rc == 0 or (len(lines) == 1 and p in lines[0])),
                  f"{fname}: rc={rc} err={err.strip()[:200]}")
        else:
            check(rc == 2 and len(lines) == 1 and p in lines[0] and not out,
                  f"{fname}: rc={rc} err={err.strip()[:200]}")

# Python's own pickler (protocol 4), 300k entries with 30,000 distinct frames lists, each list
# object used by ten entries: the reader's memo packs old chunks (2-byte words only while stack
# ids fit 14 bits, 4-byte ones after), and every later entry names its list by LONG_BINGET into
# an older, packed chunk. The replay here is independent of mlprof; the trace is long enough to
# be downsampled in the Trace the snapshot loads as (2^18 entries), not in the allocator view.
rng = random.Random(7)
frame_objs = [{"filename": f"/m/f{k % 97}.py", "line": k, "name": f"fn{k}"} for k in range(3000)]
stack_objs = [[frame_objs[(k * 7) % 3000], frame_objs[k % 3000]] for k in range(30000)]
trace, live, addr = [], [], 1 << 40
for k in range(300000):
    if live and (len(live) > 500 or rng.random() < 0.48):
        a, sz, st = live.pop(rng.randrange(len(live)))
        trace.append({"action": "free_completed", "addr": a, "size": sz, "stream": 0, "time_us": k,
                      "frames": stack_objs[st]})
    else:
        sz = 512 * rng.randrange(1, 100)
        st = (k // 10) % 30000
        live.append((addr, sz, st))
        trace.append({"action": "alloc", "addr": addr, "size": sz, "stream": 0, "time_us": k,
                      "frames": stack_objs[st], "compile_context": "N/A" + ""})
        addr += sz
many = {"segments": [], "device_traces": [trace]}
start, peak, peak_i, end, peak_sites = replay(many)
with tempfile.TemporaryDirectory() as tmp:
    p = os.path.join(tmp, "many_stacks.pickle")
    with open(p, "wb") as f:
        pickle.dump(many, f, protocol=4)
    rc, out, err = run("memory", p, "--json", "--top", "100000")
    check(rc == 0, f"many_stacks: exit {rc}: {err.strip()[:300]}")
    if rc == 0:
        d = json.loads(out)["devices"][0]
        check((d["entries"], d["start_active_bytes"], d["peak_active_bytes"], d["peak_index"], d["end_active_bytes"]) ==
              (len(trace), start, peak, peak_i, end),
              f"many_stacks: replay {d['entries']} {d['peak_active_bytes']} {d['peak_index']} vs {len(trace)} {peak} {peak_i}")
        got_sites = {r["site"]: r["bytes"] for r in d["live_at_peak"]}
        check(sum(got_sites.values()) == sum(peak_sites.values()),
              f"many_stacks: bytes live at the peak {sum(got_sites.values())} vs {sum(peak_sites.values())}")
    rc, out, err = run("analyze", p, "--json")
    check(rc == 0, f"many_stacks analyze: exit {rc}")
    if rc == 0:
        mem = json.loads(out)["memory"]["devices"][0]
        check(mem["peak_allocated"] == peak, f"many_stacks: the downsampled Trace keeps the peak {mem['peak_allocated']} vs {peak}")
        check(mem.get("downsampled_from_entries") == len(trace), f"many_stacks: memory says it is downsampled {mem.get('downsampled_from_entries')}")
    rc, out, err = run("analyze", p)
    check(rc == 0 and f"snapshot of {len(trace)} entries, loaded as each bucket" in out.decode(), "many_stacks: analyze text says downsampled")

# Text: names whole. Caller frames as "file.py:line:name" (the directories of Windows paths made
# rows too long and cut them in the middle), the segment table's sites whole: no "..." anywhere.
# The frames under adam_forward.py:168:<listcomp> at the peak, from the trace entries here.
name = "decomfl_opt_train_memory.pickle.gz"
snap = load(os.path.join(DIR, name))
rc, out, err = run("memory", os.path.join(DIR, name))
text = out.decode()
check("..." not in text, f"{name}: a name cut with '...' in the text")
want = None
for e in snap["device_traces"][0]:
    fr = e.get("frames") or []
    if e["action"] == "alloc" and fr and site(fr) == "adam_forward.py:168:<listcomp>":
        want = [site([f]) for f in fr[1:5]]
        break
lines = text.split("live at the peak", 1)[-1].splitlines()
at = next((i for i, l in enumerate(lines) if l.startswith("adam_forward.py:168:<listcomp>")), None)
check(want and at is not None and [l.strip() for l in lines[at + 1:at + 5]] == want,
      f"{name}: frames under adam_forward.py:168:<listcomp>: {lines[at + 1:at + 5] if at is not None else None} vs {want}")

# Text: "1 entry" / "1 free" where the pickle's trace holds one entry (kivi's), and the two
# stack tables say which bytes they sum: the dump's block sizes, the replay's sizes (for
# aggregation.py:8:mean on DeComFL a 512-byte block holds a 4-byte entry; both were "bytes").
for name in ("kivi_llm_snapshot.pickle", "decomfl_opt_train_memory.pickle.gz"):
    snap = load(os.path.join(DIR, name))
    traces = snap.get("device_traces") or []
    n = len(traces[0]) if traces else 0
    rc, out, err = run("memory", os.path.join(DIR, name))
    text = out.decode()
    want = f"GPU 0 trace: {n} {'entry' if n == 1 else 'entries'}"
    check(want in text, f"{name}: '{want}' in the text")
    check(re.search(r"live memory by innermost frame +block bytes +blocks", text) is not None and
          re.search(r"live at the peak \(\d+ allocations\): stack +replayed bytes +blocks", text) is not None,
          f"{name}: stack tables name their bytes")
finish()

#!/usr/bin/env bash
# `mlprof run --memory` on examples/alloc_test, whose leaks, peak and temporaries are known by
# construction (`alloc_test --expect` prints them): exact leak bytes and counts per call site,
# the peak within its bound, the right function names in the stacks, threads, fork, realloc
# chains, allocations before main and in atexit handlers.
# Usage: run_memory.sh MLPROF_BINARY TESTS_DATA_DIR
set -euo pipefail
mlprof=$1
bindir=$(dirname "$mlprof")
app=$bindir/examples/alloc_test
if [[ ! -x $app ]]; then
  echo "SKIP: $app not built (cmake --build ... --target alloc_test)"; exit 0
fi
if [[ ! -f $bindir/libmlprof_preload.so ]]; then
  echo "FAIL: $bindir/libmlprof_preload.so not built"; exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$app" --expect > "$tmp/expect.json"
# --events: every malloc/free in the trace, so `mlprof heap` sees the temporaries too.
"$mlprof" run --memory --events -q -o "$tmp/run.mlprof" -- "$app" > "$tmp/run.out" 2>&1 || {
  echo "FAIL: mlprof run exited $?"; cat "$tmp/run.out"; exit 1; }
# The default: the reports from the event stream, the trace keeps the peak's and the leaks' rows.
"$mlprof" run --memory -o "$tmp/kept.mlprof" -- "$app" > "$tmp/kept.out" 2>&1 || {
  echo "FAIL: mlprof run exited $?"; cat "$tmp/kept.out"; exit 1; }
"$mlprof" heap --json --top 100000 --frames 12 "$tmp/kept.mlprof" > "$tmp/kept_heap.json"
# Temporaries: a threshold of 1 s so that a loaded machine cannot push a pair past it.
"$mlprof" heap --json --top 100000 --frames 12 --temporary-us 1000000 "$tmp/run.mlprof" > "$tmp/heap.json"
# `mlprof leaks` on the capture (no steps): the blocks never freed, by stack, as in heap.json.
"$mlprof" leaks "$tmp/run.mlprof" > "$tmp/leaks.txt"
"$mlprof" leaks --json "$tmp/run.mlprof" > "$tmp/leaks.json"
"$mlprof" memory --json "$tmp/run.mlprof" > "$tmp/memory.json"
"$mlprof" memory "$tmp/run.mlprof" > "$tmp/memory.txt"
if grep -q "No steps found" "$tmp/leaks.txt" || ! grep -q "Never freed at exit" "$tmp/leaks.txt"; then
  echo "FAIL: mlprof leaks on a capture does not list the unfreed blocks:"; cat "$tmp/leaks.txt"; exit 1
fi

python3 - "$tmp/expect.json" "$tmp/heap.json" "$tmp/leaks.json" "$tmp/memory.json" \
  "$tmp/memory.txt" "$tmp/kept_heap.json" "$tmp/kept.out" <<'PY'
import json, re, sys
expect = json.load(open(sys.argv[1]))
heap = json.load(open(sys.argv[2]))
leaks = json.load(open(sys.argv[3]))
memory = json.load(open(sys.argv[4]))
memory_text = open(sys.argv[5]).read()
kept = json.load(open(sys.argv[6]))
kept_out = open(sys.argv[7]).read()
ALLOCATORS = {"malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign",
              "valloc"}

def site(frames):
    """The first frame that is not the allocator itself: the function that allocated."""
    for f in frames:
        name = f.replace("(anonymous namespace)::", "").split("(")[0].split("@")[0].strip()
        if name not in ALLOCATORS and not name.startswith("operator new"):
            return name
    return None

failures = []
def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        failures.append(msg)

# Group leak stacks by allocating function, per process.
pids = sorted({p for s in heap["leaks"]["stacks"] for p in s["pids"]})
check(heap["processes"] == 2, f"2 processes traced (parent + forked child), got {heap['processes']}")
by_site = {}
for s in heap["leaks"]["stacks"]:
    name = site(s["frames"])
    for_pid = tuple(s["pids"])
    c, b, p = by_site.get(name, (0, 0, set()))
    by_site[name] = (c + s["blocks"], b + s["bytes"], p | set(s["pids"]))
main_pid = min(pids)  # the parent starts first, so it has the lower pid (no wrap-around here)
for name, (count, nbytes) in expect["leaks"].items():
    got = by_site.get(name, (0, 0, set()))
    check((got[0], got[1]) == (count, nbytes),
          f"leak site {name}: expected {count} blocks / {nbytes} B, got {got[0]} / {got[1]}")
for name, (count, nbytes) in expect["child_leaks"].items():
    got = by_site.get(name, (0, 0, set()))
    check((got[0], got[1]) == (count, nbytes) and main_pid not in got[2] and len(got[2]) == 1,
          f"child leak site {name}: expected {count} / {nbytes} B in the child only, got "
          f"{got[0]} / {got[1]} in pids {sorted(got[2])}")

# mlprof leaks: the same blocks, by the same stacks, without steps (exact expectations above).
unfreed = leaks.get("unfreed_at_exit", {})
want_blocks = sum(c for c, _ in expect["leaks"].values()) + sum(c for c, _ in expect["child_leaks"].values())
leak_sites = {}
for s in unfreed.get("stacks", []):
    c, b = leak_sites.get(site(s["frames"]), (0, 0))
    leak_sites[site(s["frames"])] = (c + s["blocks"], b + s["bytes"])
for name, (count, nbytes) in list(expect["leaks"].items()) + list(expect["child_leaks"].items()):
    check(leak_sites.get(name) == (count, nbytes),
          f"mlprof leaks: {name} {count} blocks / {nbytes} B, got {leak_sites.get(name)}")
check(unfreed.get("blocks") == heap["leaks"]["blocks"] and unfreed.get("bytes") == heap["leaks"]["bytes"],
      f"mlprof leaks totals {unfreed.get('blocks')} / {unfreed.get('bytes')} B = heap's "
      f"{heap['leaks']['blocks']} / {heap['leaks']['bytes']}")
check(unfreed.get("blocks", 0) >= want_blocks, f"at least the {want_blocks} known leaked blocks")

# Report times are relative to the start of the run: the peak sits inside the run, not at the
# machine's uptime.
dev = memory["devices"][0]
check(0 <= dev["peak_offset_ns"] <= heap["span_ns"] + 10**9,
      f"memory peak at +{dev['peak_offset_ns']} ns, within the run ({heap['span_ns']} ns)")
m = re.search(r"peak allocated .* at \+([0-9.]+) ?(\S+) in", memory_text)
check(m is not None and not (m.group(2) == "s" and float(m.group(1)) > 60),
      f"memory report prints the peak relative to the run: {m.group(0) if m else memory_text[:200]}")

# Peak: the 4 MiB of build_peak plus what was live before it (leaks so far, libc buffers).
peak = heap["peak"]
check(expect["peak_min"] <= peak["bytes"] <= expect["peak_min"] + 512 * 1024,
      f"peak {peak['bytes']} B within [{expect['peak_min']}, +512 KiB]")
top = peak["stacks"][0]
check(site(top["frames"]) == "build_peak" and top["blocks"] == 64 and top["bytes"] == 64 * 65536,
      f"largest stack at the peak is build_peak with 64 x 64 KiB, got {site(top['frames'])} "
      f"{top['blocks']} / {top['bytes']}")
check(any(f.startswith("main") for f in top["frames"]), "build_peak's stack reaches main")

temps = {site(s["frames"]): s["blocks"] for s in heap["temporaries"]["stacks"]}
check(temps.get("make_temporaries", 0) == expect["temporaries_min"],
      f"make_temporaries: {expect['temporaries_min']} temporaries, got {temps.get('make_temporaries')}")
# Frames carry file:line from the debug info.
check(any("alloc_test.cpp:" in f for s in heap["leaks"]["stacks"] for f in s["frames"]),
      "frames carry alloc_test.cpp:LINE")
# Without --events: the saved trace has the same leaks by site and a peak within the same bound
# (another run of the program), with far fewer rows; the run printed the streamed heap report.
kept_sites = {}
for s in kept["leaks"]["stacks"]:
    c, b = kept_sites.get(site(s["frames"]), (0, 0))
    kept_sites[site(s["frames"])] = (c + s["blocks"], b + s["bytes"])
for name, (count, nbytes) in list(expect["leaks"].items()) + list(expect["child_leaks"].items()):
    check(kept_sites.get(name) == (count, nbytes),
          f"kept rows: leak {name} {count} / {nbytes} B, got {kept_sites.get(name)}")
check(expect["peak_min"] <= kept["peak"]["bytes"] <= expect["peak_min"] + 512 * 1024,
      f"kept rows: peak {kept['peak']['bytes']} B within the bound")
check(site(kept["peak"]["stacks"][0]["frames"]) == "build_peak", "kept rows: build_peak holds the peak")
check(kept["memory_events"] * 10 < heap["memory_events"],
      f"kept rows: {kept['memory_events']} rows instead of {heap['memory_events']}")
check(re.search(r"raw capture: [0-9.]+ [KMG]?i?B written", kept_out) is not None,
      "the run says how much raw data the tracker wrote")
check("make_temporaries" in kept_out and "Peak heap" in kept_out,
      "the run prints the streamed heap report (peak, temporaries)")
sys.exit(1 if failures else 0)
PY
echo "PASS run_memory"

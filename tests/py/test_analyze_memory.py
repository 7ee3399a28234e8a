"""`mlprof memory/leaks --json` against an independent Python computation over the [memory]
events: counts, peak of Total Allocated, never-freed allocations paired by address, leak slope
(Theil-Sen over allocated totals at step ends) and the Mann-Kendall p-value."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import analyze_reference as ar  # noqa: E402
import trace_reference as ref  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]


for name in ["a_mlp_b32_w64.kineto.json.gz", "c_leaky.kineto.json.gz", "b_cnn.kineto.json.gz"]:
    path = os.path.join(DATA, name)
    _, events = ref.load(path)
    mem = ar.memory_events(events)
    got = ar.run_json(MLPROF, "memory", path, "--top", "100000")
    check(got["events"] == len(mem), f"{name}: {got['events']} events vs {len(mem)}")
    d = got["devices"][0]
    check(d["allocs"] == sum(1 for m in mem if m[2] > 0), f"{name}: allocs")
    check(d["frees"] == sum(1 for m in mem if m[2] < 0), f"{name}: frees")
    check(d["peak_allocated"] == max(m[5] for m in mem), f"{name}: peak {d['peak_allocated']}")
    # Never freed: an allocation with no later free at its address (time order per address).
    open_by_addr = {}
    for ts, addr, b, *_ in mem:
        if b > 0:
            open_by_addr[addr] = b  # a second alloc at a live address replaces it (lost free)
        elif b < 0:
            open_by_addr.pop(addr, None)
    unfreed = sum(open_by_addr.values())
    # Allocations replaced without a free are also never freed; count them too.
    lost = 0
    live = {}
    for ts, addr, b, *_ in mem:
        if b > 0:
            if addr in live:
                lost += live[addr]
            live[addr] = b
        elif b < 0:
            live.pop(addr, None)
    check(d["unfreed_bytes"] == unfreed + lost, f"{name}: unfreed {d['unfreed_bytes']} vs {unfreed + lost}")
    check(d["final_allocated"] == mem[-1][5], f"{name}: final allocated")

    # Leaks: allocated total at each step end.
    steps = ar.steps(ref.slices(events))
    y, k, cur = [], 0, None
    for _, ts, dur, _ in steps:
        while k < len(mem) and mem[k][0] <= ts + dur:
            cur = mem[k][5]
            k += 1
        if cur is not None:
            y.append(cur)
    leaks = ar.run_json(MLPROF, "leaks", path)
    ld = leaks["devices"][0]
    check(ld["step_end_allocated"] == y, f"{name}: step-end totals {ld['step_end_allocated']} vs {y}")
    slope = ar.theil_sen(y)
    check(abs(ld["slope_bytes_per_step"] - slope) < 1e-6, f"{name}: slope {ld['slope_bytes_per_step']} vs {slope}")
    if len(y) >= 4:
        p = ar.mann_kendall_p(y)
        check(abs(ld["p_value"] - p) < 1e-9, f"{name}: p {ld['p_value']} vs {p}")
    is_leak = len(y) >= 5 and ar.mann_kendall_p(y) < 0.05 and slope >= 1024
    check(leaks["leak"] == is_leak, f"{name}: leak {leaks['leak']} vs {is_leak}")
    if name.startswith("c_leaky"):
        # The README: Total Allocated grows ~262,780 B per step (276,652 -> 2,641,708).
        check(leaks["leak"], "c_leaky: leak reported")
        check(abs(slope - 262780) < 0.05 * 262780, f"c_leaky: slope {slope} near 262,780")
        # The workload keeps one tensor per step, allocated under record_function("leak_append").
        top = leaks["surviving_ops"][0] if leaks["surviving_ops"] else {}
        check("leak_append" in top.get("context", "") and top.get("steps") == len(y),
              f"c_leaky: biggest survivor allocated in leak_append every step ({top})")
    if name.startswith("a_mlp"):
        check(not leaks["leak"], "a_mlp_b32_w64: no leak")
finish()

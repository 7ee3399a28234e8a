"""mlprof.benchmark / mlprof.compare / MemoryTracker: statistics checked against times the test
measures itself, significance on clearly different and identical workloads, memory."""
import math
import os
import statistics
import time

import pytest

import mlprof


def test_benchmark_statistics_match_the_test_own_timings():
    inner = []
    calls = []

    def work(d, scale=1):
        calls.append(1)
        t0 = time.perf_counter_ns()
        with mlprof.profile("sleep"):
            time.sleep(d * scale)
        inner.append(time.perf_counter_ns() - t0)

    r = mlprof.benchmark(work, 0.001, scale=2, warmup=3, iterations=12)
    assert len(calls) == 15 and r.iterations == 12 and r.warmup == 3
    measured = inner[3:]
    # Each iteration's time encloses the function's own measurement of itself.
    for outer, own in zip(r.times_ns, measured):
        assert outer >= own
        # ...and little more: the call and the profile scope. The bound is loose because a
        # loaded 2-core CI machine can deschedule the thread for tens of ms between the two clocks.
        assert outer - own < 200_000_000
    t = r.times_ns
    assert r.mean_ns == pytest.approx(sum(t) / len(t))
    assert r.std_ns == pytest.approx(statistics.stdev(t))
    assert r.median_ns == pytest.approx(statistics.median(t))
    assert (r.min_ns, r.max_ns) == (min(t), max(t))
    # 95% t-interval: t(0.975, 11) = 2.200985 (tables).
    half = 2.200985 * statistics.stdev(t) / math.sqrt(len(t))
    assert r.ci95_ns[0] == pytest.approx(r.mean_ns - half, rel=1e-5)
    assert r.ci95_ns[1] == pytest.approx(r.mean_ns + half, rel=1e-5)
    assert r.mean_ns >= 2_000_000  # sleeps 2 ms
    ops = r.ops.to_dict("records")
    assert ops[0]["name"] == "sleep" and ops[0]["count"] == 12
    assert r.peak_rss_bytes > 0
    assert r.cuda_peak_allocated_bytes is None or r.cuda_peak_allocated_bytes >= 0
    assert "95% CI" in str(r)


def test_uninstrumented_function_has_no_breakdown():
    r = mlprof.benchmark(lambda: sum(range(1000)), warmup=0, iterations=5)
    assert r.ops is None and r.iterations == 5


def test_compare_finds_a_real_speedup_and_not_noise():
    # 10x apart: a loaded machine stretches sleeps by milliseconds, not by 10x.
    slow = mlprof.benchmark(time.sleep, 0.02, warmup=1, iterations=10, name="slow")
    fast = mlprof.benchmark(time.sleep, 0.002, warmup=1, iterations=10, name="fast")
    c = mlprof.compare(slow, fast)
    assert c.speedup == pytest.approx(slow.mean_ns / fast.mean_ns)
    assert c.speedup > 1.5 and c.significant and c.p_value < 0.01
    same = mlprof.compare(slow, slow)
    assert same.speedup == pytest.approx(1.0) and not same.significant
    assert "peak_rss_delta_bytes" in c.to_dict()


def test_compare_sessions_is_mlprof_compare():
    sessions = []
    for d in (0.01, 0.001):
        with mlprof.Session() as s:
            for _ in range(10):
                with mlprof.profile("step work"):
                    time.sleep(d)
        sessions.append(s)
    c = mlprof.compare(*sessions)
    row = [o for o in c.ops if o["name"] == "step work"][0]
    assert row["verdict"] == "improvement" and row["speedup"] > 1.5
    # str() is `mlprof compare`'s text of the same comparison: the row's delta per step shows.
    text = str(c)
    line = [l for l in text.splitlines() if l.startswith("step work")][0]
    assert "improvement" in line and c.per_step_basis in ("step", "trace")


def test_memory_tracker_timeline_peak_and_leak_verdict():
    keep = []
    with mlprof.MemoryTracker(interval_ms=1) as mem:
        for _ in range(12):
            mem.step()
            keep.append(bytearray(8 << 20))  # 8 MiB kept per step: a leak
            for i in range(0, len(keep[-1]), 4096):
                keep[-1][i] = 1  # touch the pages so RSS grows
            time.sleep(0.003)
    tl = mem.timeline()
    assert len(tl) >= 12
    peak_bytes, when = mem.peak()["host_rss"]
    assert peak_bytes == max(tl["host_rss"])
    assert 0 <= when <= tl["t_s"].iloc[-1]
    growth = mem.growth_per_step()
    assert len(growth) >= 10
    leaks = mem.leaks()
    host = leaks.devices[0]
    assert leaks.leak and host["leak"]
    assert host["slope_bytes_per_step"] == pytest.approx(8 << 20, rel=0.25)
    keep.clear()

    with mlprof.MemoryTracker(interval_ms=1) as steady:
        for _ in range(12):
            steady.step()
            buf = bytearray(8 << 20)
            del buf
            time.sleep(0.002)
    if os.environ.get("MLPROF_ASAN"):
        # ASan's quarantine keeps freed blocks resident, so RSS really grows here under ASan.
        return
    assert not steady.leaks().leak

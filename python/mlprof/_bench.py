"""mlprof.benchmark(fn, ...) and mlprof.compare(a, b): the seeds' profile_function and
compare_sessions, with the statistics done properly (t-based confidence interval, Welch and
Mann-Whitney tests from the C++ stats kit) and memory measured around the run."""

import json
import math
import statistics
import sys
import time

from . import _core
from ._memory import MemoryTracker
from ._results import Result


def t_quantile(p, df):
    """Student's t quantile by bisection on the C++ CDF (stats::student_t_cdf)."""
    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        if _core.student_t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _cuda(torch):
    try:
        return torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized()
    except Exception:
        return False


class BenchmarkResult:
    """What mlprof.benchmark measured. Times in ns.

    times_ns: per-iteration wall times; mean_ns, std_ns (sample), min_ns, max_ns, median_ns;
    ci95_ns: (low, high), the 95% t-interval of the mean; peak_rss_bytes (host, sampled) and
    rss_growth_bytes; cuda_peak_allocated_bytes / cuda_allocated_bytes (None without CUDA);
    ops: the per-op breakdown of the scopes fn recorded (DataFrame/list, None when fn is not
    instrumented); trace: the recorded Trace (None when a session was already running)."""

    def __init__(self, name, times_ns, warmup, confidence=0.95):
        self.name = name
        self.times_ns = list(times_ns)
        self.warmup = warmup
        self.iterations = len(self.times_ns)
        n = self.iterations
        self.mean_ns = statistics.fmean(self.times_ns)
        self.std_ns = statistics.stdev(self.times_ns) if n > 1 else 0.0
        self.min_ns = min(self.times_ns)
        self.max_ns = max(self.times_ns)
        self.median_ns = statistics.median(self.times_ns)
        self.confidence = confidence
        if n > 1:
            half = t_quantile(0.5 + confidence / 2, n - 1) * self.std_ns / math.sqrt(n)
        else:
            half = float("nan")
        self.ci95_ns = (self.mean_ns - half, self.mean_ns + half)
        self.peak_rss_bytes = None
        self.rss_growth_bytes = None
        self.cuda_peak_allocated_bytes = None
        self.cuda_allocated_bytes = None
        self.ops = None
        self.trace = None

    def to_dict(self):
        ops = self.ops
        if ops is not None and hasattr(ops, "to_dict"):
            ops = ops.to_dict("records")
        return {
            "name": self.name, "iterations": self.iterations, "warmup": self.warmup,
            "times_ns": self.times_ns, "mean_ns": self.mean_ns, "std_ns": self.std_ns,
            "min_ns": self.min_ns, "max_ns": self.max_ns, "median_ns": self.median_ns,
            "ci95_ns": list(self.ci95_ns), "peak_rss_bytes": self.peak_rss_bytes,
            "rss_growth_bytes": self.rss_growth_bytes,
            "cuda_peak_allocated_bytes": self.cuda_peak_allocated_bytes,
            "cuda_allocated_bytes": self.cuda_allocated_bytes, "ops": ops,
        }

    def __str__(self):
        ms = 1e6
        lines = [
            f"{self.name}: {self.iterations} iterations (+{self.warmup} warmup)",
            f"  mean {self.mean_ns / ms:.3f} ms ± {self.std_ns / ms:.3f} ms   median "
            f"{self.median_ns / ms:.3f} ms   min {self.min_ns / ms:.3f}   max {self.max_ns / ms:.3f}",
            f"  95% CI of the mean [{self.ci95_ns[0] / ms:.3f}, {self.ci95_ns[1] / ms:.3f}] ms",
        ]
        if self.peak_rss_bytes is not None:
            lines.append(f"  peak host RSS {self.peak_rss_bytes / 2**20:.1f} MiB "
                         f"(growth {self.rss_growth_bytes / 2**20:+.1f} MiB)")
        if self.cuda_peak_allocated_bytes is not None:
            lines.append(f"  CUDA peak allocated {self.cuda_peak_allocated_bytes / 2**20:.1f} MiB")
        if self.ops is not None and len(self.ops):
            lines.append("  per-op breakdown (recorded scopes):")
            rows = self.ops.to_dict("records") if hasattr(self.ops, "to_dict") else self.ops
            for r in rows[:10]:
                lines.append(f"    {r['name']:30s} {r['count']:6d} calls  total "
                             f"{r['total_ns'] / ms:9.3f} ms  mean {r['mean_ns'] / 1e3:9.2f} us")
        return "\n".join(lines)

    def __repr__(self):
        return f"<mlprof.BenchmarkResult {self.name} mean={self.mean_ns / 1e6:.3f} ms n={self.iterations}>"


def benchmark(fn, *args, warmup=5, iterations=20, name=None, memory_interval_ms=1, **kwargs):
    """Runs fn(*args, **kwargs) `warmup` times unmeasured, then `iterations` times measured.

    Each measured iteration is one mlprof step of a recording session (unless a session is
    already running), so scopes inside fn give the per-op breakdown. With CUDA, each iteration
    ends with torch.cuda.synchronize() so the time covers the GPU work."""
    if iterations < 1:
        raise ValueError("benchmark: iterations must be >= 1")
    name = name or getattr(fn, "__qualname__", None) or repr(fn)
    torch = sys.modules.get("torch")
    cuda = _cuda(torch)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for _ in range(warmup):
        fn(*args, **kwargs)
    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    session = None
    if not _core.global_session().running:
        from ._record import Session

        session = Session(rss_interval_ms=0)
        try:
            session.start()
        except _core.Error:
            session = None  # another session records: no breakdown, still timed
    times = []
    perf = time.perf_counter_ns
    mem = MemoryTracker(interval_ms=memory_interval_ms).start()
    try:
        for _ in range(iterations):
            _core.step("benchmark")
            t0 = perf()
            fn(*args, **kwargs)
            sync()
            times.append(perf() - t0)
    finally:
        mem.stop()
        trace = session.stop() if session is not None else None
    r = BenchmarkResult(name, times, warmup)
    rss = [row[1] for row in mem._rows]
    r.peak_rss_bytes = max(rss)
    r.rss_growth_bytes = rss[-1] - rss[0]
    if cuda:
        r.cuda_peak_allocated_bytes = max(torch.cuda.max_memory_allocated(d)
                                          for d in range(torch.cuda.device_count()))
        r.cuda_allocated_bytes = sum(torch.cuda.memory_allocated(d)
                                     for d in range(torch.cuda.device_count()))
    if trace is not None:
        r.trace = trace
        ops = trace.ops()
        rows = ops.to_dict("records") if hasattr(ops, "to_dict") else ops
        rows = [o for o in rows if not o["name"].startswith("ProfilerStep#")]
        if rows:
            from ._results import table

            r.ops = table(rows, list(rows[0].keys()))
    return r


def compare(a, b, alpha=0.05, welch=False):
    """a (baseline) against b (candidate).

    Two BenchmarkResults: speedup = a.mean / b.mean (> 1: b is faster), Welch's t-test and
    Mann-Whitney U on the per-iteration times, `significant` at `alpha`, the memory difference
    (b - a), and when both recorded scopes the per-op comparison of `mlprof compare`.
    Two Traces or Sessions: `mlprof compare A B --json` as a Result."""
    from ._record import Session
    from ._trace import Trace

    def trace_of(x):
        if isinstance(x, Session):
            return x._recorded()
        return x

    if isinstance(a, BenchmarkResult) and isinstance(b, BenchmarkResult):
        w = _core.welch_t_test([float(x) for x in a.times_ns], [float(x) for x in b.times_ns])
        mw = _core.mann_whitney_u([float(x) for x in a.times_ns], [float(x) for x in b.times_ns])
        p = w["p_value"] if welch else mw["p_value"]
        doc = {
            "base": a.name, "new": b.name,
            "base_mean_ns": a.mean_ns, "new_mean_ns": b.mean_ns,
            "speedup": a.mean_ns / b.mean_ns if b.mean_ns else float("inf"),
            "delta_mean_pct": (b.mean_ns - a.mean_ns) / a.mean_ns * 100 if a.mean_ns else 0.0,
            "welch_p_value": w["p_value"], "mann_whitney_p_value": mw["p_value"],
            "test": "welch" if welch else "mann_whitney", "p_value": p,
            "significant": p < alpha, "alpha": alpha,
            "peak_rss_delta_bytes": _delta(a.peak_rss_bytes, b.peak_rss_bytes),
            "cuda_peak_allocated_delta_bytes": _delta(a.cuda_peak_allocated_bytes,
                                                      b.cuda_peak_allocated_bytes),
            "ops": None,
        }
        if a.trace is not None and b.trace is not None and a.ops is not None and b.ops is not None:
            doc["ops"] = json.loads(_core.compare_json(a.trace._core, b.trace._core, alpha, 5.0,
                                                       welch, 0))["ops"]
        verdict = ("faster" if doc["speedup"] > 1 else "slower") if doc["significant"] else "no significant change"
        text = (f"{b.name} vs {a.name}: speedup {doc['speedup']:.3f}x ({verdict}, p = {p:.3g}, "
                f"{doc['test']})")
        return Result("compare", doc, text)
    ta, tb = trace_of(a), trace_of(b)
    if isinstance(ta, Trace) and isinstance(tb, Trace):
        doc, text = _core.compare_json_text(ta._core, tb._core, alpha, 5.0, welch)
        return Result("compare", json.loads(doc), text)
    raise TypeError("compare() takes two BenchmarkResults, or two Traces/Sessions")


def _delta(a, b):
    return None if a is None or b is None else b - a

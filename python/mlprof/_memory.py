"""MemoryTracker: host RSS and, when torch has CUDA, torch.cuda.memory_allocated/reserved sampled
every N ms on a background thread; timeline, peak and when, growth per step, and the leak verdict
of `mlprof leaks` (the C++ analysis, run over the samples and the step boundaries)."""

import json
import os
import sys
import threading
import time

from . import _core
from ._results import Result, table

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def host_rss_bytes():
    """Resident set size of this process now (Linux /proc/self/statm; ru_maxrss elsewhere)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def _cuda_devices():
    """CUDA devices torch can see, without importing torch when the program did not."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None, []
    try:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch, list(range(torch.cuda.device_count()))
    except Exception:  # a broken CUDA setup is not the tracker's business
        pass
    return torch, []


class MemoryTracker:
    """Samples memory every `interval_ms` on a background thread while active.

        with mlprof.MemoryTracker(interval_ms=5) as mem:
            for batch in loader:
                mem.step()          # marks a step boundary (growth per step, leak verdict)
                train(batch)
        mem.peak()                  # {'host_rss': (bytes, t_s), 'cuda:0 allocated': ...}
        mem.timeline()              # DataFrame: t_s, host_rss, cuda:0 allocated, cuda:0 reserved
        mem.leaks()                 # `mlprof leaks` verdict over the step boundaries
    """

    def __init__(self, interval_ms=10, cuda=None):
        self.interval_ms = max(0.1, float(interval_ms))
        self._cuda = cuda
        self._rows = []  # (ts_ns, rss, [(alloc, reserved) per device])
        self._steps = []  # step start times (ns)
        self._devices = []
        self._thread = None
        self._stop = threading.Event()
        self._t0 = None
        self._end = None

    # ---- sampling ------------------------------------------------------------------------
    def _sample(self):
        row = [time.monotonic_ns(), host_rss_bytes()]
        torch = self._torch
        for d in self._devices:
            row.append(torch.cuda.memory_allocated(d))
            row.append(torch.cuda.memory_reserved(d))
        self._rows.append(row)

    def _run(self):
        period = self.interval_ms / 1000.0
        while not self._stop.wait(period):
            self._sample()

    def start(self):
        self._torch, devices = _cuda_devices()
        self._devices = devices if self._cuda in (None, True) else []
        self._rows, self._steps, self._end = [], [], None
        self._stop.clear()
        self._t0 = time.monotonic_ns()
        self._sample()
        self._thread = threading.Thread(target=self._run, name="mlprof-memory", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self._sample()
            self._end = time.monotonic_ns()
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def step(self):
        """Marks the start of a step (call at the top of each iteration); also samples now."""
        now = time.monotonic_ns()
        self._steps.append(now)
        self._sample()

    # ---- results -------------------------------------------------------------------------
    def series_names(self):
        names = ["host_rss"]
        for d in self._devices:
            names += [f"cuda:{d} allocated", f"cuda:{d} reserved"]
        return names

    def _columns(self):
        rows = list(self._rows)
        names = self.series_names()
        cols = {"t_s": [(r[0] - self._t0) / 1e9 for r in rows]}
        for k, n in enumerate(names):
            cols[n] = [r[1 + k] for r in rows]
        return cols

    def timeline(self):
        """Every sample: t_s (seconds since start) and one column per series (bytes)."""
        cols = self._columns()
        return table([dict(zip(cols, r)) for r in zip(*cols.values())], list(cols))

    def peak(self):
        """Per series: (peak bytes, seconds since start when it was first reached)."""
        cols = self._columns()
        out = {}
        for n in self.series_names():
            vals = cols[n]
            if vals:
                i = max(range(len(vals)), key=vals.__getitem__)
                out[n] = (vals[i], cols["t_s"][i])
        return out

    def _step_intervals(self):
        end = self._end or time.monotonic_ns()
        bounds = self._steps + [end]
        return [(bounds[i], bounds[i + 1]) for i in range(len(self._steps))]

    def growth_per_step(self):
        """Per step: the change of each series from its start to its end (last sample in the
        step), as rows (step, series..., bytes)."""
        rows = self._rows
        names = self.series_names()
        out = []
        for i, (b, e) in enumerate(self._step_intervals()):
            inside = [r for r in rows if b <= r[0] <= e]
            if not inside:
                continue
            row = {"step": i}
            for k, n in enumerate(names):
                row[n] = inside[-1][1 + k] - inside[0][1 + k]
            out.append(row)
        return table(out, ["step"] + names)

    def leaks(self):
        """The `mlprof leaks` analysis (Theil-Sen slope, Mann-Kendall test) over each series'
        value at the step boundaries: Result with devices[...]['leak'], 'leak' overall."""
        series = []
        ts = [r[0] for r in self._rows]
        host = _core.SampledSeries()
        host.device = -1
        host.ts_ns = ts
        host.bytes = [r[1] for r in self._rows]
        series.append(host)
        for k, d in enumerate(self._devices):
            s = _core.SampledSeries()
            s.device = d
            s.ts_ns = ts
            s.bytes = [r[2 + 2 * k] for r in self._rows]
            series.append(s)
        doc = json.loads(_core.leaks_from_samples(series, self._step_intervals()))
        return Result("leaks", doc)

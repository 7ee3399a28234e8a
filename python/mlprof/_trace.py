"""mlprof.load() and the Trace: a loaded (or recorded) trace, its analyses as DataFrames/Results
and its raw tables as numpy arrays viewing the C++ columns."""

import json
import os
import tempfile

from . import _core
from ._results import Result, columns_frame, table

_OP_SORTS = ("total", "self", "mean", "count")


def load(source, threads=0):
    """Loads a trace: a path (.json, .json.gz, .mlprof, PyTorch memory timeline) or a directory
    of rank traces, or a finished torch.profiler.profile object. The GIL is released while the
    C++ importer runs. Raises mlprof.LoadError (mlprof.TraceNotFoundError for a missing path)
    with the CLI's one-line message."""
    if hasattr(source, "export_chrome_trace") and not isinstance(source, (str, bytes, os.PathLike)):
        return _load_torch_profile(source, threads)
    path = os.fspath(source)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not os.path.exists(path):
        from ._errors import TraceNotFoundError

        raise TraceNotFoundError(f"{path}: cannot open: No such file or directory")
    if _core.is_dir(path):
        return Trace(_core.load_dir(path, threads))
    return Trace(_core.load_file(path, threads))


def _load_torch_profile(prof, threads):
    fd, path = tempfile.mkstemp(suffix=".json", prefix="mlprof-torch-")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        t = Trace(_core.load_file(path, threads))
    finally:
        os.unlink(path)
    return t


class Trace:
    """A trace loaded with mlprof.load() or recorded by a Session.

    Analyses return pandas DataFrames (plain lists of dicts without pandas) with the CLI's
    column names, or Result objects (.to_dict() is the CLI's --json object). Raw tables are
    numpy arrays over the C++ columns (no copy)."""

    def __init__(self, core):
        self._core = core
        self._strings = None

    # ---- identity ----------------------------------------------------------------------
    @property
    def source(self):
        return self._core.source

    @property
    def format(self):
        return self._core.format

    @property
    def span_ns(self):
        return self._core.span_ns

    @property
    def begin_ns(self):
        return self._core.begin_ns

    @property
    def end_ns(self):
        return self._core.end_ns

    @property
    def event_count(self):
        return self._core.event_count

    @property
    def dropped_events(self):
        return self._core.dropped_events

    def __repr__(self):
        return (f"<mlprof.Trace {self.source!r} format={self.format} events={self.event_count} "
                f"span={self.span_ns / 1e6:.3f} ms>")

    def __str__(self):
        return self.summary_text()

    # ---- analyses ----------------------------------------------------------------------
    def summary(self, top=20):
        """`mlprof summary --json` as a Result (span, event counts, categories, top_ops...)."""
        return Result("summary", json.loads(self._core.summary_json(top)), self._core.summary_text(top))

    def summary_text(self, top=20):
        return self._core.summary_text(top)

    def ops(self, top=0, sort="total", category="", host_only=False):
        """`mlprof ops --json` rows: name, category, count, total_ns, self_ns, mean_ns, std_ns,
        min_ns, max_ns, p50_ns, p90_ns, p99_ns, percent_of_span (all ops by default)."""
        if sort not in _OP_SORTS:
            from ._errors import AnalysisError

            raise AnalysisError(f"ops: sort must be one of {', '.join(_OP_SORTS)} (got {sort!r})")
        doc = json.loads(self._core.ops_json(top, sort, category, host_only))
        return table(doc["ops"], _OP_COLUMNS)

    def op_stats(self, name):
        """Statistics of one op by name (a dict: count, total_ns, mean_ns, std_ns, min_ns,
        max_ns, p50_ns, p90_ns, p99_ns...), None when no slice has that name."""
        doc = json.loads(self._core.ops_json(0, "total", "", False))
        rows = [r for r in doc["ops"] if r["name"] == name]
        if not rows:
            return None
        if len(rows) == 1:
            return rows[0]
        return rows  # the same name under several categories

    def top(self, n=10, by="total"):
        """The n most expensive ops (by total, self, mean or count): the seeds' get_bottlenecks."""
        return self.ops(top=n, sort=by)

    def save(self, path):
        """Writes the trace: *.json as Chrome trace JSON (Perfetto, chrome://tracing), anything
        else as .mlprof."""
        self._core.save(os.fspath(path))

    # ---- raw tables --------------------------------------------------------------------
    @property
    def strings(self):
        """The string table: names and categories in the tables are indices into it."""
        if self._strings is None:
            self._strings = self._core.strings()
        return self._strings

    def _named(self, cols, *keys):
        """Adds decoded names as pandas Categoricals built from the codes (no per-row strings)."""
        try:
            import pandas as pd
        except ImportError:
            return cols
        strings = self.strings
        out = dict(cols)
        for k in keys:
            if k in out:
                out[k + "_id"] = out[k]
                out[k] = pd.Categorical.from_codes(out[k].astype("int64"), categories=_unique(strings))
        return out

    def slice_arrays(self):
        """Slices as numpy arrays: ts, dur, track, name, cat (string ids), depth, parent, self,
        args_begin, args_count. Read-only views of the trace's columns."""
        return self._core.slices()

    def slices(self):
        """Every slice (CPU ops, annotations, GPU kernels...) as a DataFrame; name and cat are
        Categoricals (codes = string ids). Times in ns."""
        return columns_frame(self._named(self._core.slices(), "name", "cat"))

    def kernels_table(self):
        """Slices on GPU stream tracks (kernels, memcpys, memsets) with device and stream."""
        import numpy as np

        cols = self._core.slices()
        tracks = self._core.tracks()
        is_gpu = np.array([k == "gpu_stream" for k in tracks["kind"]], dtype=bool)
        mask = is_gpu[cols["track"]] if len(is_gpu) else np.zeros(len(cols["ts"]), dtype=bool)
        out = {k: v[mask] for k, v in cols.items() if k in ("ts", "dur", "track", "name", "cat")}
        out["device"] = np.asarray(tracks["device"], dtype=np.int32)[out["track"]]
        out["stream"] = np.asarray(tracks["stream"], dtype=np.int64)[out["track"]]
        return columns_frame(self._named(out, "name", "cat"))

    def memory_events(self):
        """Allocations (bytes > 0) and frees (bytes < 0): ts, track, addr, bytes, device_type
        (0 CPU, 1 CUDA), device_id, total_allocated, total_reserved, slice."""
        return columns_frame(self._core.memory())

    def counters(self):
        """Counter samples: ts, series (index into counter_series()), value."""
        cols = dict(self._core.counters())
        series = self._core.counter_series()
        try:
            import pandas as pd
        except ImportError:
            return cols
        cols["name"] = pd.Categorical.from_codes(cols["series"].astype("int64"), categories=_unique(series["name"])) \
            if len(set(series["name"])) == len(series["name"]) else [series["name"][i] for i in cols["series"]]
        return columns_frame(cols)

    def counter_series(self):
        return table([dict(zip(("process", "name", "unit"), r)) for r in zip(*self._core.counter_series().values())])

    def instants(self):
        return columns_frame(self._named(self._core.instants(), "name", "cat"))

    def flows(self):
        return columns_frame(self._core.flows())

    def tracks(self):
        """One row per track (thread, GPU stream, async): kind, pid, tid, device, stream, name,
        label."""
        cols = self._core.tracks()
        return table([dict(zip(cols.keys(), r)) for r in zip(*cols.values())], list(cols.keys()))


def _unique(strings):
    """Categories for Categorical.from_codes: the string table (unique by construction, but
    invalid UTF-8 decoded with replacement can collide: disambiguate those)."""
    if len(set(strings)) == len(strings):
        return strings
    seen, out = set(), []
    for i, s in enumerate(strings):
        out.append(s if s not in seen else f"{s}#{i}")
        seen.add(out[-1])
    return out


_OP_COLUMNS = ["name", "category", "count", "total_ns", "self_ns", "mean_ns", "std_ns", "min_ns",
               "max_ns", "p50_ns", "p90_ns", "p99_ns", "percent_of_span"]

"""mlprof.load() and the Trace: a loaded (or recorded) trace, its analyses as DataFrames/Results
and its raw tables as numpy arrays viewing the C++ columns."""

import json
import os
import tempfile

from . import _core
from . import _results
from ._results import Result, columns_frame, table

_OP_SORTS = ("total", "self", "mean", "count")


def load(source, threads=0, capture=None):
    """Loads a trace: a path (any file `mlprof analyze` reads: .json, .json.gz, .mlprof, PyTorch
    memory timeline, CUDA memory snapshot, torch.compile log), a directory of rank traces or a
    TORCH_TRACE directory, or a finished torch.profiler.profile object. The GIL is released while the
    C++ importer runs. Raises mlprof.LoadError (mlprof.TraceNotFoundError for a missing path)
    with the CLI's one-line message.

    capture: a CUDA/HIP graph capture pass (a capture_traces/ directory or a capture trace file,
    or a list of them), as the CLI's `--capture`: every analysis (ops, modules, kernels, graphs,
    ...) charges the kernels of matched graph replays to the ops that launched them in the
    capture (docs/serving.md). A capture_traces/ beside the trace is not loaded unasked."""
    captures = _capture_paths(capture)
    if hasattr(source, "export_chrome_trace") and not isinstance(source, (str, bytes, os.PathLike)):
        return _load_torch_profile(source, threads, captures)
    path = os.fspath(source)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not os.path.exists(path):
        from ._errors import TraceNotFoundError

        raise TraceNotFoundError(f"{path}: cannot open: No such file or directory")
    return Trace(_core.load(path, threads, captures))


def _capture_paths(capture):
    if capture is None:
        return []
    items = [capture] if isinstance(capture, (str, bytes, os.PathLike)) else list(capture)
    paths = []
    for c in items:
        p = os.fspath(c)
        p = os.fsdecode(p) if isinstance(p, bytes) else p
        if not os.path.exists(p):
            from ._errors import TraceNotFoundError

            raise TraceNotFoundError(f"{p}: cannot open: No such file or directory")
        paths.append(p)
    return paths


def _load_torch_profile(prof, threads, captures=()):
    fd, path = tempfile.mkstemp(suffix=".json", prefix="mlprof-torch-")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        t = Trace(_core.load(path, threads, list(captures)))
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
        # One entry per (form, analysis, options key): the parsed JSON or the columns. The C++
        # side keeps one AnalysisSet per options key, so a result is computed once per key.
        self._cache = {}

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

    # ---- analyses (the one analysis stage: same JSON as `mlprof NAME --json`) ---------------
    @staticmethod
    def analysis_names():
        """Every analysis the stage computes ('summary', 'ops', 'steps', 'kernels', 'gpu', ...)."""
        return _core.analysis_names()

    def unavailable(self, name):
        """Why an analysis cannot run on this trace (no GPU streams; one trace for 'ranks'), or
        None."""
        return _core.unavailable(self._core, name)

    def analysis_json(self, name, **options):
        """`mlprof NAME --json` as a string (compact). Options are the subcommand's switches
        (top, sort, category, host_only, peak_tflops, hta_compatible, ...)."""
        return _core.analysis_json(self._core, name, options)

    def analysis(self, name, **options):
        """Any analysis by name as a Result: .to_dict() is `mlprof NAME --json`, str() its text.
        Cached per options: asking again returns the same (shared) result."""
        return Result(name, self._doc(name, options), _LazyText(self._core, name, options))

    def columns(self, name, **options):
        """A hot table (ops, kernels or steps) as {field: column}: numpy arrays (lists without
        numpy) built in C++ from the analysis result, no JSON. The fields are the JSON rows'
        (steps: phase_ns flattened to phase_<phase>_ns, gpu_class_ns to gpu_<class>_ns;
        kernels: without the nested launch object); values equal `mlprof NAME --json`'s, a field
        missing from a row is NaN. Cached per options (the arrays are read-only)."""
        key = ("columns", name, _options_key(options))
        cols = self._cache.get(key)
        if cols is None:
            cols = _core.table_columns(self._core, name, options)
            if isinstance(cols, str):
                from ._errors import AnalysisError

                raise AnalysisError(f"{self.source}: {name}: {cols}")
            for v in cols.values():
                if hasattr(v, "setflags"):
                    v.setflags(write=False)
            self._cache[key] = cols
        return cols

    def table(self, name, **options):
        """A hot table (ops, kernels or steps) as a DataFrame built from columns() (pandas), or
        the columns dict itself without pandas."""
        cols = self.columns(name, **options)
        if not _results.have_pandas():
            return dict(cols)
        import pandas as pd

        return pd.DataFrame(cols)

    def cache_info(self):
        """What the trace keeps: {"results": entries cached in Python, "option_sets": analysis sets
        kept in C++ (one per non-default options key)}."""
        return {"results": len(self._cache), "option_sets": _core.cached_sets(self._core)}

    def clear_cache(self):
        """Drops every cached result and option set (the default set stays)."""
        self._cache.clear()
        _core.clear_cache(self._core)

    def _doc(self, name, options):
        key = ("json", name, _options_key(options))
        doc = self._cache.get(key)
        if doc is None:
            doc = self._cache[key] = json.loads(_core.analysis_json(self._core, name, options))
        return doc

    def analyze(self, names=None):
        """Several analyses at once (independent ones computed in parallel): {name: Result}.
        Default: everything `mlprof analyze` shows that this trace has data for: """
        names = list(names) if names else [n for n in _core.analyze_names()
                                           if self.unavailable(n) is None]
        todo = [n for n in names if ("json", n, ()) not in self._cache]
        if todo:  # computed in parallel, then cached like analysis(n)
            doc = json.loads(_core.analyses_json(self._core, todo))
            for n in todo:
                self._cache[("json", n, ())] = doc[n]
        return {n: Result(n, self._cache[("json", n, ())]) for n in names}

    def summary(self, top=20):
        """`mlprof summary`: span, event counts, categories, steps, top ops."""
        return self.analysis("summary", **({"top": top} if top != 20 else {}))

    def summary_text(self, top=20):
        return _core.analysis_text(self._core, "summary", {"top": top})

    def ops(self, top=0, sort="total", category="", host_only=False):
        """`mlprof ops --json` rows: name, category, count, total_ns, self_ns, mean_ns, std_ns,
        min_ns, max_ns, p50_ns, p90_ns, p99_ns, percent_of_span (all ops by default)."""
        if sort not in _OP_SORTS:
            from ._errors import AnalysisError

            raise AnalysisError(f"ops: sort must be one of {', '.join(_OP_SORTS)} (got {sort!r})")
        opts = {}
        if top:
            opts["top"] = top
        if sort != "total":
            opts["sort"] = sort
        if category:
            opts["category"] = category
        if host_only:
            opts["host_only"] = True
        if _results.have_pandas():  # columns from C++, no JSON
            return self.table("ops", **opts)
        return table(self._rows_doc("ops", opts)["ops"], _OP_COLUMNS)

    def op_stats(self, name):
        """Statistics of one op by name (a dict: count, total_ns, mean_ns, std_ns, min_ns,
        max_ns, p50_ns, p90_ns, p99_ns...), None when no slice has that name."""
        rows = [r for r in self._rows_doc("ops", {})["ops"] if r["name"] == name]
        if not rows:
            return None
        return rows[0] if len(rows) == 1 else rows  # one name under several categories

    def top(self, n=10, by="total"):
        """The n most expensive ops (by total, self, mean or count): the seeds' get_bottlenecks."""
        return self.ops(top=n, sort=by)

    def steps(self):
        """`mlprof steps`: per-step times and phases, outliers. .table("steps") for rows."""
        return self.analysis("steps")

    def kernels(self, **options):
        """`mlprof kernels`: GPU kernels by time (kernels, kernel_type_breakdown, ...)."""
        return self.analysis("kernels", **options)

    def gpu(self, **options):
        """`mlprof gpu`: temporal breakdown, idle time, overlap, queue length, launch stats."""
        return self.analysis("gpu", **options)

    def memory(self):
        return self.analysis("memory")

    def leaks(self):
        return self.analysis("leaks")

    def heap(self):
        return self.analysis("heap")

    def bottlenecks(self):
        """`mlprof bottlenecks`: ranked findings with evidence and recommendations."""
        return self.analysis("bottlenecks")

    def flops(self, **options):
        """`mlprof flops`: FLOPs per op and step, achieved TFLOP/s, MFU (peak_tflops=...)."""
        return self.analysis("flops", **options)

    def roofline(self, table_name="shapes", device=None, peaks=None, top=0):
        """`mlprof roofline` as a DataFrame: one row per (op, shapes, dtype) with FLOPs, bytes,
        intensity, achieved TFLOP/s and TB/s, % of roofline, bound and wasted time (ns), most
        wasted first. table_name: shapes, ops, families, kernels, modules, steps or unmodeled;
        device: a device name to take peaks for; peaks: a --peaks JSON file's path; top: rows
        kept (0 = all). The whole result: t.analysis("roofline")."""
        options = {"top": top}
        if device:
            options["device"] = device
        if peaks:
            with open(peaks) as f:
                options["peaks"] = f.read()
        doc = self._doc("roofline", options)
        if "unavailable" in doc:
            return table([])
        return table(doc.get(table_name, []))

    def ranks(self):
        """`mlprof ranks` (a rank directory): per-rank times, stragglers, collectives."""
        return self.analysis("ranks")

    # ---- HTA's questions under HTA's names (docs/python.md maps them) ------------------------
    def temporal_breakdown(self, **options):
        """HTA get_temporal_breakdown: per device, idle/compute/non-compute time and shares."""
        return table([d["temporal_breakdown"] for d in self._gpu_doc(options).get("devices", [])])

    def idle_time_breakdown(self, **options):
        """HTA get_idle_time_breakdown: per stream, idle time split into host wait, kernel wait
        and other (time_ns and ratio each)."""
        rows = []
        for r in self._gpu_doc(options).get("idle_time_breakdown", []):
            row = {"device": r["device"], "stream": r["stream"], "idle_ns": r["idle_ns"]}
            for k in ("host_wait", "kernel_wait", "other"):
                row[f"{k}_ns"] = r[k]["time_ns"]
                row[f"{k}_ratio"] = r[k]["ratio"]
            rows.append(row)
        return table(rows)

    def kernel_breakdown(self, **options):
        """HTA get_gpu_kernel_breakdown: (kernel type breakdown, per-kernel breakdown)."""
        doc = self._doc("kernels", options)
        return (table(doc.get("kernel_type_breakdown", [])), table(doc.get("kernel_breakdown", [])))

    def comm_comp_overlap(self, **options):
        """HTA get_comm_comp_overlap: % of communication time overlapped with computation (per
        rank for a rank directory)."""
        if _core.unavailable(self._core, "ranks") is None:
            return table([{"rank": r["rank"], "comp_comm_overlap_pctg": r.get("comm_comp_overlap_pct")}
                          for r in self.ranks().ranks])
        doc = self._gpu_doc(options)
        return table([{"rank": doc.get("rank"), "comp_comm_overlap_pctg": doc.get("comm_comp_overlap_pct")}])

    def queue_length_summary(self, **options):
        """HTA get_queue_length_summary: per stream, count/mean/std/min/p25/p50/p75/max of the
        launch queue length."""
        rows = []
        for r in self._gpu_doc(options).get("queue_length", []):
            row = {"device": r["device"], "stream": r["stream"]}
            row.update(r["hta_summary"])
            rows.append(row)
        return table(rows)

    def cuda_kernel_launch_stats(self, **options):
        """HTA get_cuda_kernel_launch_stats: CPU launch vs GPU duration, launch delays."""
        return Result("launch_stats", self._gpu_doc(options).get("launch_stats", {}))

    def memory_bw_summary(self, **options):
        """HTA get_memory_bw_summary: memcpy/memset kinds with bytes, time and GB/s."""
        return table(self._gpu_doc(options).get("memory_bandwidth", []))

    def _rows_doc(self, name, options):
        """An analysis' JSON for methods that read its rows: an unavailable analysis (ops of a
        torch.compile log, of a memory snapshot) is an AnalysisError, not a KeyError."""
        from ._errors import AnalysisError

        doc = self._doc(name, options)
        if "unavailable" in doc:
            raise AnalysisError(f"{self.source}: {name}: {doc['unavailable']}")
        return doc

    def _gpu_doc(self, options):
        from ._errors import AnalysisError

        why = _core.unavailable(self._core, "gpu")
        if why:
            raise AnalysisError(f"{self.source}: {why}")
        return self._doc("gpu", options)

    # ---- outputs --------------------------------------------------------------------------
    def report(self, path, events=True):
        """The HTML report (`mlprof report`): every analysis, one self-contained file."""
        _core.report_html(self._core, os.fspath(path), os.path.basename(self.source), events)
        return os.fspath(path)

    def flame(self, path=None, format="html", **options):
        """The flame graph: html (interactive page), json, collapsed (flamegraph.pl),
        speedscope, text. Written to `path` when given, else returned."""
        out = _core.flame(self._core, format, os.path.basename(self.source), options)
        if path is None:
            return out
        _core.write_file(os.fspath(path), out)
        return os.fspath(path)

    def timeline(self, path=None, format="html"):
        """The CPU/GPU timeline: html (standalone page), json, text."""
        out = _core.timeline(self._core, format, os.path.basename(self.source))
        if path is None:
            return out
        _core.write_file(os.fspath(path), out)
        return os.fspath(path)

    def export(self, path, format=None):
        """Writes the trace as Chrome trace JSON (format='chrome' or a .json path: Perfetto,
        chrome://tracing) or .mlprof (format='mlprof', any other path)."""
        path = os.fspath(path)
        if format not in (None, "chrome", "mlprof"):
            from ._errors import AnalysisError

            raise AnalysisError(f"export: format must be chrome or mlprof (got {format!r})")
        if format == "chrome" and not path.endswith(".json"):
            from ._errors import Error

            raise Error(f"{path}: Chrome trace JSON is written to a .json path")
        if format == "mlprof" and path.endswith(".json"):
            from ._errors import Error

            raise Error(f"{path}: .mlprof is not written to a .json path")
        self._core.save(path)
        return path

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
        """Device work on GPU stream tracks (kernels, memcpys, memsets; not the gpu_user_annotation
        or cuda_sync ranges) with device and stream."""
        import numpy as np

        cols = self._core.slices()
        tracks = self._core.tracks()
        is_gpu = np.array([k == "gpu_stream" for k in tracks["kind"]], dtype=bool)
        mask = is_gpu[cols["track"]] if len(is_gpu) else np.zeros(len(cols["ts"]), dtype=bool)
        # Annotations and sync markers share the streams' tracks but are not device work.
        strings = self.strings
        for i, name in enumerate(strings):
            if name in ("gpu_user_annotation", "cuda_sync"):
                mask &= cols["cat"] != i
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


def _options_key(options):
    """The cache key of keyword options: sorted (name, repr) pairs (True and 1 differ)."""
    return tuple(sorted((k, repr(v)) for k, v in options.items()))


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


class _LazyText:
    """The analysis's terminal text, rendered only when printed."""

    def __init__(self, core, name, options):
        self._args = (core, name, options)

    def __str__(self):
        return _core.analysis_text(*self._args)


# The default of analyze(), from the analysis catalogue (include/mlprof/analysis_catalog.h).
Trace.analyze.__doc__ += ", ".join(_core.analyze_names()) + "."

_OP_COLUMNS = ["name", "category", "count", "total_ns", "self_ns", "mean_ns", "std_ns", "min_ns",
               "max_ns", "p50_ns", "p90_ns", "p99_ns", "percent_of_span"]

// mlprof._core.Trace: loading (files and rank directories, GIL released), saving, the raw tables
// as numpy arrays that view the Trace's own columns (no copy: the array keeps the Trace alive),
// and the analyses' JSON (the same writers, so the same bytes, as the CLI's --json).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <memory>

#include "bindings.h"
#include "errors.h"
#include "import/graph_capture_files.h"
#include "mlprof/analysis_compare.h"
#include "mlprof/analyze/graph_capture_inputs.h"
#include "mlprof/chrome_export.h"
#include "mlprof/import.h"
#include "mlprof/native_format.h"
#include "render/compare_render.h"
#include "trace/json_writer.h"

namespace py = pybind11;

namespace mlprof::python {
namespace {

using Handle = std::shared_ptr<TraceHandle>;

// A numpy array over a column; `owner` (the Python Trace) stays alive while the array does.
template <typename T>
py::array column(const std::vector<T>& v, const py::object& owner) {
  py::array_t<T> a({static_cast<py::ssize_t>(v.size())}, {static_cast<py::ssize_t>(sizeof(T))},
                   v.data(), owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

// The capture passes of load(capture=...) as the graphs analysis takes them (read by
// load_capture_traces, as the CLI's and serve's --capture).
Result<std::vector<GraphCaptureInput>> load_captures(const std::vector<std::string>& paths,
                                                     unsigned threads) {
  ImportOptions o;
  o.threads = threads;
  MLPROF_ASSIGN_OR_RETURN(std::vector<CaptureTrace> loaded, load_capture_traces(paths, o));
  return graph_capture_inputs(std::move(loaded));
}

// A path as `mlprof analyze PATH` opens it (open_input): a trace file of any format, a TORCH_TRACE
// directory, or a directory of rank traces (every rank loaded, for the tables and per-option sets).
// `captures`: graph capture passes (`--capture`) joined to the replays of every analysis.
Handle load_path(const std::string& path, unsigned threads,
                 const std::vector<std::string>& captures) {
  auto h = std::make_shared<TraceHandle>();
  Status error;  // its code picks the Python class (error_mapping): missing, too large, bad
  {
    py::gil_scoped_release release;
    AnalysisOptions options;
    Result<std::vector<GraphCaptureInput>> c = load_captures(captures, threads);
    if (c) h->captures = options.graphs.captures = std::move(c.value());
    ImportOptions o;
    o.threads = threads;
    Result<Input> in = c ? open_input(path, o) : Result<Input>(c.status());
    if (!in) {
      error = in.status();
    } else if (!in->rank_dir()) {
      h->set = std::make_unique<AnalysisSet>(std::move(*in->trace), options);
    } else {
      std::vector<std::string> errors;
      Result<std::vector<Trace>> loaded =
          load_rank_files(in->rank_files, path, threads, errors, ImportOptions{});
      if (loaded) {
        h->rank_errors = errors;
        h->set =
            std::make_unique<AnalysisSet>(std::move(loaded.value()), options, std::move(errors));
      } else {
        std::string message = loaded.error();
        if (!errors.empty()) message += " (" + errors.front() + ")";
        error = Status::error(loaded.code(), std::move(message));
      }
    }
  }
  if (!h->set) raise(error);
  return h;
}

Status save(const Trace& t, const std::string& path) {
  if (path.ends_with(".json")) return save_chrome_json(t, path);
  return save_native(t, path);
}

py::dict slice_columns(const TraceHandle& h, const py::object& owner) {
  const SliceTable& s = h.trace().slices;
  py::dict d;
  d["ts"] = column(s.ts, owner);
  d["dur"] = column(s.dur, owner);
  d["track"] = column(s.track, owner);
  d["name"] = column(s.name, owner);
  d["cat"] = column(s.cat, owner);
  d["depth"] = column(s.depth, owner);
  d["parent"] = column(s.parent, owner);
  d["self"] = column(s.self, owner);
  d["args_begin"] = column(s.args_begin, owner);
  d["args_count"] = column(s.args_count, owner);
  return d;
}

py::dict instant_columns(const TraceHandle& h, const py::object& owner) {
  const InstantTable& s = h.trace().instants;
  py::dict d;
  d["ts"] = column(s.ts, owner);
  d["track"] = column(s.track, owner);
  d["name"] = column(s.name, owner);
  d["cat"] = column(s.cat, owner);
  d["scope"] = column(s.scope, owner);
  return d;
}

py::dict counter_columns(const TraceHandle& h, const py::object& owner) {
  const CounterTable& c = h.trace().counters;
  py::dict d;
  d["ts"] = column(c.ts, owner);
  d["series"] = column(c.series, owner);
  d["value"] = column(c.value, owner);
  return d;
}

py::dict memory_columns(const TraceHandle& h, const py::object& owner) {
  const MemoryTable& m = h.trace().memory;
  py::dict d;
  d["ts"] = column(m.ts, owner);
  d["track"] = column(m.track, owner);
  d["addr"] = column(m.addr, owner);
  d["bytes"] = column(m.bytes, owner);
  d["device_type"] = column(m.device_type, owner);
  d["device_id"] = column(m.device_id, owner);
  d["total_allocated"] = column(m.total_allocated, owner);
  d["total_reserved"] = column(m.total_reserved, owner);
  d["slice"] = column(m.slice, owner);
  return d;
}

py::dict flow_columns(const TraceHandle& h, const py::object& owner) {
  const FlowTable& f = h.trace().flows;
  py::dict d;
  d["id"] = column(f.id, owner);
  d["cat"] = column(f.cat, owner);
  d["src_ts"] = column(f.src_ts, owner);
  d["dst_ts"] = column(f.dst_ts, owner);
  d["src_track"] = column(f.src_track, owner);
  d["dst_track"] = column(f.dst_track, owner);
  d["src_slice"] = column(f.src_slice, owner);
  d["dst_slice"] = column(f.dst_slice, owner);
  d["dst_next"] = column(f.dst_next, owner);
  return d;
}

// Tracks and counter series are small (one row per thread / stream / series): plain lists.
py::dict track_columns(const TraceHandle& h) {
  const Trace& t = h.trace();
  py::list kind, pid, tid, device, stream, name, label;
  for (uint32_t i = 0; i < t.tracks.size(); ++i) {
    const Track& k = t.tracks[i];
    kind.append(k.kind == TrackKind::kGpuStream ? "gpu_stream"
                : k.kind == TrackKind::kAsync   ? "async"
                                                : "thread");
    pid.append(k.pid);
    tid.append(k.tid);
    device.append(k.device);
    stream.append(k.stream);
    name.append(py::str(std::string(t.str(k.name))));
    label.append(t.track_label(i));
  }
  py::dict d;
  d["kind"] = kind;
  d["pid"] = pid;
  d["tid"] = tid;
  d["device"] = device;
  d["stream"] = stream;
  d["name"] = name;
  d["label"] = label;
  return d;
}

py::dict series_columns(const TraceHandle& h) {
  const Trace& t = h.trace();
  py::list process, name, unit;
  for (const CounterSeries& s : t.counter_series) {
    process.append(s.process);
    name.append(py::str(std::string(t.str(s.name))));
    unit.append(py::str(std::string(t.str(s.unit))));
  }
  py::dict d;
  d["process"] = process;
  d["name"] = name;
  d["unit"] = unit;
  return d;
}

py::list strings(const TraceHandle& h) {
  const StringPool& p = h.trace().strings;
  py::list out(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    std::string_view s = p.get(static_cast<StringId>(i));
    PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
    if (!o) throw py::error_already_set();
    PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), o);
  }
  return out;
}

}  // namespace

void bind_trace(py::module_& m) {
  py::class_<TraceHandle, Handle>(m, "Trace")
      .def_property_readonly("source", [](TraceHandle& h) { return h.trace().meta.source; })
      .def_property_readonly("format", [](TraceHandle& h) { return h.trace().meta.format; })
      .def_property_readonly("rank", [](TraceHandle& h) { return h.trace().meta.rank; })
      .def_property_readonly("event_count", [](TraceHandle& h) { return h.trace().event_count(); })
      .def_property_readonly("begin_ns", [](TraceHandle& h) { return h.trace().begin_ns(); })
      .def_property_readonly("end_ns", [](TraceHandle& h) { return h.trace().end_ns(); })
      .def_property_readonly("span_ns", [](TraceHandle& h) { return h.trace().span_ns(); })
      .def_property_readonly("dropped_events",
                             [](TraceHandle& h) { return h.trace().meta.dropped_events; })
      .def_property_readonly("is_rank_dir", [](TraceHandle& h) { return h.set->is_rank_set(); })
      .def_property_readonly("rank_count",
                             [](TraceHandle& h) { return h.set->rank_traces().size(); })
      .def_property_readonly("rank_errors", [](TraceHandle& h) { return h.rank_errors; })
      .def("save",
           [](TraceHandle& h, const std::string& path) {
             Status s;
             {
               py::gil_scoped_release release;
               s = save(h.trace(), path);
             }
             if (!s) raise(StatusCode::kIo, s.message());
           })
      .def("slices", [](py::object self) { return slice_columns(self.cast<TraceHandle&>(), self); })
      .def("instants",
           [](py::object self) { return instant_columns(self.cast<TraceHandle&>(), self); })
      .def("counters",
           [](py::object self) { return counter_columns(self.cast<TraceHandle&>(), self); })
      .def("memory",
           [](py::object self) { return memory_columns(self.cast<TraceHandle&>(), self); })
      .def("flows", [](py::object self) { return flow_columns(self.cast<TraceHandle&>(), self); })
      .def("tracks", &track_columns)
      .def("counter_series", &series_columns)
      .def("strings", &strings);

  m.def(
      "compare_json",
      [](TraceHandle& base, TraceHandle& next, double alpha, double min_effect_pct, bool welch,
         size_t top) {
        py::gil_scoped_release release;
        CompareOptions o;
        o.alpha = alpha;
        o.min_effect_pct = min_effect_pct;
        o.test = welch ? SignificanceTest::kWelch : SignificanceTest::kMannWhitney;
        o.top = top;
        JsonWriter w(true);
        write_compare_json(
            w, compare_analyses(AnalysisSet(base.trace()), AnalysisSet(next.trace()), o));
        return w.take();
      },
      py::arg("base"), py::arg("next"), py::arg("alpha") = kCompareAlpha,
      py::arg("min_effect_pct") = kCompareMinEffectPct, py::arg("welch") = false,
      py::arg("top") = 0, "`mlprof compare BASE NEW --json`.");
  m.def(
      "compare_json_text",
      [](TraceHandle& base, TraceHandle& next, double alpha, double min_effect_pct, bool welch) {
        std::pair<std::string, std::string> out;
        {
          py::gil_scoped_release release;
          CompareOptions o;
          o.alpha = alpha;
          o.min_effect_pct = min_effect_pct;
          o.test = welch ? SignificanceTest::kWelch : SignificanceTest::kMannWhitney;
          CompareResult r =
              compare_analyses(AnalysisSet(base.trace()), AnalysisSet(next.trace()), o);
          JsonWriter w(true);
          write_compare_json(w, r);
          out = {w.take(), render_compare_text(r, 100)};
        }
        return out;
      },
      py::arg("base"), py::arg("next"), py::arg("alpha") = kCompareAlpha,
      py::arg("min_effect_pct") = kCompareMinEffectPct, py::arg("welch") = false,
      "`mlprof compare BASE NEW`: (the --json output, the text), from one comparison.");
  m.def("load", &load_path, py::arg("path"), py::arg("threads") = 0,
        py::arg("captures") = std::vector<std::string>{});
}

}  // namespace mlprof::python

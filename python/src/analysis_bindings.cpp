// Analyses from Python through the one analysis stage (mlprof::AnalysisSet) and its render side
// (render/analysis_output.h): an analysis by name gives the same JSON bytes as
// `mlprof NAME --json`, and its text what the terminal shows. No analysis is dispatched here.
#include <pybind11/stl.h>

#include <fstream>

#include "analyze/option_values.h"
#include "bindings.h"
#include "errors.h"
#include "render/analysis_output.h"
#include "render/flame_render.h"
#include "render/report.h"
#include "render/timeline_render.h"

namespace py = pybind11;

namespace mlprof::python {
namespace {

AnalysisId id_of(const std::string& name) {
  std::optional<AnalysisId> id = analysis_id(name);
  if (!id) {
    std::string known;
    for (const AnalysisInfo& a : analysis_table())
      known += (known.empty() ? "" : ", ") + std::string(a.name);
    raise(StatusCode::kInvalidArgument, "unknown analysis '" + name + "' (one of: " + known + ")");
  }
  return *id;
}

// Options as keyword arguments, each applied to the analysis it belongs to (the same switches
// as the subcommand's flags, one table for every consumer: analyze/option_values.h). A key the
// analysis does not take is an error, not ignored. hta_compatible is taken by every analysis.
AnalysisOptions options_of(AnalysisId id, const py::dict& kw) {
  AnalysisOptions o;
  for (auto item : kw) {
    std::string key = py::str(item.first);
    py::handle h = item.second;
    if (key == "hta_compatible") {
      o.set_hta_compatible(h.cast<bool>());
      continue;
    }
    OptionValue v;
    if (py::isinstance<py::bool_>(h)) {
      v.kind = OptionValue::kBool;
      v.boolean = h.cast<bool>();
    } else if (py::isinstance<py::str>(h)) {
      v.kind = OptionValue::kString;
      v.text = h.cast<std::string>();
    } else if (PyNumber_Check(h.ptr())) {  // int, float, numpy scalars
      v.kind = OptionValue::kNumber;
      v.number = h.cast<double>();
    } else {
      raise(StatusCode::kInvalidArgument, std::string(analysis_info(id).name) + ": " + key +
                                              " must be a number, string or boolean");
    }
    if (auto why = set_analysis_option(o, id, key, v)) raise(StatusCode::kInvalidArgument, *why);
  }
  return o;
}

// Runs fn on the set for these options (set_for) with the GIL released.
template <typename Fn>
auto with_set(TraceHandle& h, AnalysisId id, const py::dict& kw, Fn&& fn) {
  AnalysisSet& set = set_for(h, id, kw);
  py::gil_scoped_release release;
  return fn(set);
}

void write_file(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  bool ok = false;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) {
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      out.flush();
      ok = static_cast<bool>(out);
    }
  }
  if (ok && std::rename(tmp.c_str(), path.c_str()) == 0) return;
  std::remove(tmp.c_str());
  raise(StatusCode::kIo, path + ": cannot write");
}

}  // namespace

AnalysisSet& set_for(TraceHandle& h, AnalysisId id, const py::dict& kw) {
  if (kw.empty()) return *h.set;
  // The key: the analysis (options apply to it alone) and each option's repr, sorted by name.
  std::map<std::string, std::string> items;
  for (auto item : kw) items[py::str(item.first)] = py::repr(item.second);
  std::string key(analysis_info(id).name);
  for (const auto& [k, v] : items) key += "|" + k + "=" + v;
  if (auto it = h.option_sets.find(key); it != h.option_sets.end()) return *it->second;
  AnalysisOptions o = options_of(id, kw);  // raises on a bad option: nothing is cached
  o.graphs.captures = h.captures;
  std::unique_ptr<AnalysisSet> set =
      h.set->is_rank_set()
          ? std::make_unique<AnalysisSet>(h.set->rank_traces(), std::move(o), h.rank_errors)
          : std::make_unique<AnalysisSet>(h.set->trace(), std::move(o));
  return *h.option_sets.emplace(key, std::move(set)).first->second;
}

void bind_analysis(py::module_& m) {
  m.def("analysis_names", [] {
    std::vector<std::string> names;
    for (const AnalysisInfo& a : analysis_table()) names.emplace_back(a.name);
    return names;
  });
  m.def("analyze_names", [] {  // `mlprof analyze`'s, in its order (Trace.analyze()'s default)
    std::vector<std::string> names;
    for (AnalysisId id : analyze_analyses()) names.emplace_back(analysis_info(id).name);
    return names;
  });
  m.def(
      "unavailable",
      [](TraceHandle& h, const std::string& name) { return h.set->unavailable(id_of(name)); },
      "Why this analysis cannot run on this trace (no GPU streams, a single trace), or None.");
  m.def(
      "analysis_json",
      [](TraceHandle& h, const std::string& name, const py::dict& kw) {
        AnalysisId id = id_of(name);
        return with_set(h, id, kw, [&](AnalysisSet& s) { return analysis_json(s, id); });
      },
      py::arg("trace"), py::arg("name"), py::arg("options") = py::dict(),
      "`mlprof NAME --json` (compact): the analysis's JSON from the analysis stage.");
  m.def(
      "analyses_json",
      [](TraceHandle& h, const std::vector<std::string>& names) {
        std::vector<AnalysisId> ids;
        for (const std::string& n : names) ids.push_back(id_of(n));
        py::gil_scoped_release release;
        return analyses_json(*h.set, ids);
      },
      "Several analyses computed in parallel: one JSON object {name: result}.");
  m.def(
      "analysis_text",
      [](TraceHandle& h, const std::string& name, const py::dict& kw) {
        AnalysisId id = id_of(name);
        return with_set(h, id, kw, [&](AnalysisSet& s) { return render_analysis_text(s, id); });
      },
      py::arg("trace"), py::arg("name"), py::arg("options") = py::dict());
  m.def(
      "report_html",
      [](TraceHandle& h, const std::string& path, const std::string& name, bool events) {
        Result<std::string> html = std::string();
        {
          py::gil_scoped_release release;
          ReportInput in;
          in.set = h.set.get();
          in.name = name;
          in.include_events = events;
          html = render_report_html(in);
        }
        if (!html) raise(html.status());
        write_file(path, *html);
      },
      py::arg("trace"), py::arg("path"), py::arg("name"), py::arg("events") = true);
  m.def(
      "flame",
      [](TraceHandle& h, const std::string& format, const std::string& title, const py::dict& kw) {
        if (format != "html" && format != "json" && format != "collapsed" &&
            format != "speedscope" && format != "text")
          raise(StatusCode::kInvalidArgument,
                "flame: format must be html, json, collapsed, speedscope or text (got '" + format +
                    "')");
        return with_set(h, AnalysisId::kFlame, kw, [&](AnalysisSet& s) -> std::string {
          const FlameGraph& g = s.flame();
          if (format == "html") return render_flame_html(g, title);
          if (format == "collapsed") return render_flame_collapsed(g);
          if (format == "speedscope") return render_flame_speedscope(g, title);
          if (format == "text") return render_flame_text(g);
          return analysis_json(s, AnalysisId::kFlame);
        });
      },
      py::arg("trace"), py::arg("format"), py::arg("title"), py::arg("options") = py::dict());
  m.def(
      "timeline",
      [](TraceHandle& h, const std::string& format, const std::string& title) {
        if (format != "html" && format != "json" && format != "text")
          raise(StatusCode::kInvalidArgument,
                "timeline: format must be html, json or text (got '" + format + "')");
        Result<std::string> out = std::string();
        {
          py::gil_scoped_release release;
          AnalysisSet& s = *h.set;
          if (format == "html")
            out = render_timeline_html(s.trace(), s.timeline(), title);
          else if (format == "text")
            out = render_timeline_text(s.timeline());
          else
            out = analysis_json(s, AnalysisId::kTimeline);
        }
        if (!out) raise(out.status());
        return std::move(out.value());
      },
      py::arg("trace"), py::arg("format"), py::arg("title"));
  m.def("write_file", &write_file, py::arg("path"), py::arg("text"));
  m.def(
      "cached_sets", [](TraceHandle& h) { return h.option_sets.size(); },
      "How many option sets the trace keeps (one per options key asked for).");
  m.def(
      "clear_cache", [](TraceHandle& h) { h.option_sets.clear(); },
      "Drops the option sets (the default set stays).");
}

}  // namespace mlprof::python

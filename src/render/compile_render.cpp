#include "render/compile_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {
namespace {

std::string file_name(const std::string& path) {
  size_t slash = path.find_last_of("/\\");
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  // TORCH_TRACE's own prefix says nothing the column header does not: "rank_1.log.gz".
  constexpr std::string_view kPrefix = "dedicated_log_torch_trace_";
  if (name.size() > kPrefix.size() && name.starts_with(kPrefix)) name.erase(0, kPrefix.size());
  return name;
}
std::string secs(double s) { return std::isnan(s) ? "-" : format_duration_ns(s * 1e9); }
std::string ranks_text(const std::vector<int32_t>& ranks) {
  std::string s;
  for (int32_t r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}
void write_phases(JsonWriter& w, const std::vector<std::pair<std::string, double>>& phases) {
  w.begin_object();
  for (const auto& [name, us] : phases) w.field(name, us);
  w.end_object();
}

// Which compile-id rows the text shows: every rank's (a rank column when there are several); past
// 8 ranks, the rows of one rank per distinct compile-id sequence (the ranks that diverge),
// `--rank N` for any.
struct RowSelection {
  std::vector<int32_t> row_ranks, shown_ranks;
  std::string note;  // what was left out, and how to see it
  bool rank_column = false;
  bool shown(const CompileRow& c) const {
    return std::find(shown_ranks.begin(), shown_ranks.end(), c.rank) != shown_ranks.end();
  }
};

// The per-log table (rank, ids, frames, ...), with why it is all zeros or what "bad md5" means.
std::string ranks_text_table(const CompileResult& r) {
  std::string out;
  if (!r.ranks.empty()) {
    TextTable t;
    t.add_column("log", TextTable::Align::kLeft);
    for (const char* h : {"rank", "ids", "frames", "recompiles", "breaks", "failed", "compile",
                          "autotune", "cache hit/miss", "bad md5"})
      t.add_column(h);
    // The log's file name, whole (the directory is what the user passed; cut in the middle, the
    // path read "/wor...og.gz" for every rank).
    for (const RankCompileSummary& s : r.ranks)
      t.add_row({file_name(s.source), std::to_string(s.rank), std::to_string(s.compile_ids),
                 std::to_string(s.frames), std::to_string(s.recompiles), std::to_string(s.restarts),
                 std::to_string(s.failures), secs(s.compile_s), secs(s.autotune_us / 1e6),
                 std::to_string(s.cache_hits) + "/" + std::to_string(s.cache_misses),
                 std::to_string(s.md5_mismatches)});
    out += t.render_uncut() + "\n";
    // Say why a table is all zeros, and what "bad md5" means.
    uint64_t ids = 0, bad_md5 = 0;
    for (const RankCompileSummary& s : r.ranks) ids += s.compile_ids, bad_md5 += s.md5_mismatches;
    if (ids == 0)
      out += "no compile ids in " + std::string(r.ranks.size() == 1 ? "this log" : "these logs") +
             ": nothing went through torch.compile (a torch.export log, or TORCH_TRACE set "
             "without a compiled call)\n\n";
    if (bad_md5 > 0)
      out += "bad md5: " + std::to_string(bad_md5) +
             (bad_md5 == 1 ? " payload does" : " payloads do") +
             " not match the envelope's has_payload hash (an edited or truncated log); read "
             "anyway\n\n";
  }
  return out;
}

RowSelection select_rows(const CompileResult& r) {
  RowSelection sel;
  std::vector<int32_t>& row_ranks = sel.row_ranks;
  for (const CompileRow& c : r.compiles)
    if (std::find(row_ranks.begin(), row_ranks.end(), c.rank) == row_ranks.end())
      row_ranks.push_back(c.rank);
  std::vector<int32_t>& shown_ranks = sel.shown_ranks;
  shown_ranks = row_ranks;
  if (row_ranks.size() > 8) {
    std::vector<std::string> seen;
    shown_ranks.clear();
    for (const RankCompileSummary& s : r.ranks)
      if (std::find(row_ranks.begin(), row_ranks.end(), s.rank) != row_ranks.end() &&
          std::find(seen.begin(), seen.end(), s.id_sequence) == seen.end()) {
        seen.push_back(s.id_sequence);
        shown_ranks.push_back(s.rank);
      }
    sel.note = "compile ids of rank" + std::string(shown_ranks.size() == 1 ? " " : "s ") +
               ranks_text(shown_ranks) + " of " + std::to_string(row_ranks.size()) +
               " (one per distinct compile-id sequence); --rank N shows another\n\n";
  }
  sel.rank_column = row_ranks.size() > 1;
  return sel;
}

// One row per compile id shown.
std::string compile_rows_text(const CompileResult& r, const RowSelection& sel) {
  const std::vector<int32_t>& row_ranks = sel.row_ranks;
  const bool rank_column = sel.rank_column;
  auto shown = [&](const CompileRow& c) { return sel.shown(c); };
  std::string out;
  if (!r.compiles.empty()) {
    TextTable t;
    if (rank_column) t.add_column("rank");
    // The frame last and whole ("[0/0] inn...ils.py:66)" when it shared the first column).
    t.add_column("compile id" + (row_ranks.size() == 1 && r.ranks.size() > 1
                                     ? " (rank " + std::to_string(row_ranks[0]) + ")"
                                     : std::string()),
                 TextTable::Align::kLeft);
    for (const char* h : {"status", "compile", "backend", "inductor", "codegen", "ops", "kernels",
                          "ops/kernel", "cache"})
      t.add_column(h);
    t.add_column("frame", TextTable::Align::kLeft);
    for (const CompileRow& c : r.compiles) {
      if (!shown(c)) continue;
      std::vector<std::string> row;
      if (rank_column) row.push_back(std::to_string(c.rank));
      for (std::string x :
           {c.id, c.status, secs(c.compile_s), secs(c.backend_s), secs(c.inductor_s),
            secs(c.code_gen_s), c.graph_ops < 0 ? "-" : std::to_string(c.graph_ops),
            std::to_string(c.kernels),
            c.graph_ops > 0 && c.kernels > 0
                ? format_fixed(static_cast<double>(c.graph_ops) / c.kernels, 1)
                : "-",
            c.cache_hits + c.cache_misses == 0
                ? "-"
                : std::to_string(c.cache_hits) + " hit " + std::to_string(c.cache_misses) + " miss",
            c.frame})
        row.push_back(std::move(x));
      t.add_row(std::move(row));
    }
    out += t.render_uncut() + "\n" + sel.note;
  }
  return out;
}

// Every compile phase the chromium events time (dynamo, entire_frame_compile, backend_compile,
// inductor_compile, code_gen, compile_file, ...): its total over the rows shown, how many
// compile ids ran it and the longest; phases with no compile id (compile_file of the
// generated module) on a row of their own.
std::string phases_text(const CompileResult& r, const RowSelection& sel) {
  const bool rank_column = sel.rank_column;
  auto shown = [&](const CompileRow& c) { return sel.shown(c); };
  std::string out;
  struct Phase {
    std::string name;
    double total_us = 0, max_us = -1;
    uint32_t ids = 0;
    std::string longest;
  };
  std::vector<Phase> phases;
  auto add = [&](const std::string& name, double us, const std::string& where) {
    auto it = std::find_if(phases.begin(), phases.end(), [&](auto& p) { return p.name == name; });
    if (it == phases.end()) {
      phases.emplace_back();
      phases.back().name = name;
      it = phases.end() - 1;
    }
    it->total_us += us;
    ++it->ids;
    if (us > it->max_us) it->max_us = us, it->longest = where;
  };
  for (const CompileRow& c : r.compiles)
    if (shown(c))
      for (const auto& [name, us] : c.phases_us)
        add(name, us, rank_column ? "rank " + std::to_string(c.rank) + " " + c.id : c.id);
  for (const auto& [name, us] : r.global_phases_us) add(name + " (no compile id)", us, "-");
  // The longest first; past 20, the rest are in --json (nested phases: totals overlap).
  std::stable_sort(phases.begin(), phases.end(),
                   [](const Phase& a, const Phase& b) { return a.total_us > b.total_us; });
  size_t more = phases.size() > 20 ? phases.size() - 20 : 0;
  if (more) {
    auto global = std::stable_partition(phases.begin(), phases.end(),
                                        [](const Phase& p) { return p.longest == "-"; });
    std::stable_sort(global, phases.end(),
                     [](const Phase& a, const Phase& b) { return a.total_us > b.total_us; });
    phases.erase(phases.begin() + 20, phases.end());
    std::stable_sort(phases.begin(), phases.end(),
                     [](const Phase& a, const Phase& b) { return a.total_us > b.total_us; });
  }
  if (!phases.empty()) {
    TextTable t;
    t.add_column("compile phase", TextTable::Align::kLeft);
    for (const char* h : {"total", "ids", "longest", "in"}) t.add_column(h);
    for (const Phase& p : phases)
      t.add_row({p.name, secs(p.total_us / 1e6), p.longest == "-" ? "-" : std::to_string(p.ids),
                 secs(p.max_us / 1e6), p.longest});
    out += t.render_uncut() + "\n";
    if (more)
      out += std::to_string(more) + " shorter phases in --json (phases_us, global_phases_us)\n\n";
  }
  return out;
}

// Graph breaks, recompiles, failures and where the ranks diverge.
std::string breaks_text(const CompileResult& r, size_t width) {
  std::string out;
  if (!r.graph_breaks.empty()) {
    TextTable t;
    // The reason whole, last (it was cut to "'skip function gr...amo/decorators.py'").
    t.add_column("graph break: frame", TextTable::Align::kLeft);
    t.add_column("count");
    t.add_column("reason", TextTable::Align::kLeft);
    for (const GraphBreak& g : r.graph_breaks)
      t.add_row({g.frame, std::to_string(g.count), g.reason});
    out += t.render_uncut() + "\n";
  }
  if (!r.recompiles.empty()) {
    TextTable t;
    t.add_column("recompile reason, all ranks (numbers as N)", TextTable::Align::kLeft);
    t.add_column("frame", TextTable::Align::kLeft);
    t.add_column("count");
    for (const RecompileGroup& g : r.recompiles)
      t.add_row({g.reason, g.frame, std::to_string(g.count)});
    out += t.render(width) + "\n";
  }
  for (const CompileFailure& f : r.failures) {
    std::string reason = f.reason;
    std::replace(reason.begin(), reason.end(), '\n', ' ');
    out += "failed " + f.id +
           (r.ranks.size() > 1 ? " (rank " + std::to_string(f.rank) + ")" : std::string()) +
           " in " + f.user_frame + ": " + f.type + ": " + reason + "\n";
  }
  for (const RankDivergence& d : r.divergences) {
    out += "ranks diverge in " + d.what + (d.graph.empty() ? "" : " of " + d.graph) + ":\n";
    for (const auto& [v, ranks] : d.groups)
      out += std::string(ranks.size() == 1 ? "  rank " : "  ranks ") + ranks_text(ranks) + ": " +
             (v.empty()       ? "(none)"
              : v.size() > 80 ? v.substr(0, 77) + "..."
                              : v) +
             "\n";
  }
  return out;
}

// A trace joined to the logs: GPU work in and outside compiled regions, the regions. `first`:
// nothing printed before it.
std::string runtime_text(const CompileRuntime& rt, bool first) {
  std::string out;
  char buf[512];
  auto per_op = [](uint64_t events, uint64_t ops) {
    return ops ? format_fixed(static_cast<double>(events) / static_cast<double>(ops), 2) : "-";
  };
  int64_t gpu_total = rt.gpu_ns_in_compiled + rt.gpu_ns_outside;
  std::snprintf(
      buf, sizeof buf,
      "%sruntime: compiled regions launched %llu GPU events (%llu triton), %s of GPU time (%s "
      "of the trace's); outside them %llu events, %s\n  GPU events per CPU op: %s in compiled "
      "code, %s eager (CPU ops %llu / %llu); %llu Dynamo cache lookups (%s)\n",
      first ? "" : "\n", static_cast<unsigned long long>(rt.kernels_in_compiled),
      static_cast<unsigned long long>(rt.triton_in_compiled),
      format_duration_ns(static_cast<double>(rt.gpu_ns_in_compiled)).c_str(),
      gpu_total ? format_percent(static_cast<double>(rt.gpu_ns_in_compiled) /
                                 static_cast<double>(gpu_total))
                      .c_str()
                : "-",
      static_cast<unsigned long long>(rt.kernels_outside),
      format_duration_ns(static_cast<double>(rt.gpu_ns_outside)).c_str(),
      per_op(rt.kernels_in_compiled, rt.cpu_ops_in_compiled).c_str(),
      per_op(rt.kernels_outside, rt.cpu_ops_outside).c_str(),
      static_cast<unsigned long long>(rt.cpu_ops_in_compiled),
      static_cast<unsigned long long>(rt.cpu_ops_outside),
      static_cast<unsigned long long>(rt.cache_lookups),
      format_duration_ns(static_cast<double>(rt.cache_lookup_ns)).c_str());
  out += buf;
  if (rt.graph_captures > 0)
    out += "  " + std::to_string(rt.graph_captures) +
           " CUDA graph capture/instantiate calls: kernels launched under capture are recorded, "
           "not run\n";
  if (!rt.regions.empty()) {
    TextTable t;
    t.add_column("compiled region", TextTable::Align::kLeft);
    for (const char* h :
         {"compile id", "calls", "CPU", "GPU busy", "GPU events", "triton", "kernels"})
      t.add_column(h);
    for (const CompiledRegion& c : rt.regions)
      t.add_row({c.name, c.compile_id.empty() ? "-" : c.compile_id, std::to_string(c.calls),
                 format_duration_ns(static_cast<double>(c.cpu_ns)),
                 format_duration_ns(static_cast<double>(c.gpu_busy_ns)),
                 std::to_string(c.gpu_events), std::to_string(c.triton_kernels),
                 std::to_string(c.distinct_kernels)});
    // Names whole: "## Call Comp...l36x5bf6lh ##" hid the FX graph key.
    out += t.render_uncut();
  }
  return out;
}

}  // namespace

std::string render_compile_text(const CompileResult& r, size_t width) {
  std::string out = ranks_text_table(r);
  RowSelection sel = select_rows(r);
  out += compile_rows_text(r, sel);
  out += phases_text(r, sel);
  out += breaks_text(r, width);
  if (r.runtime.present) out += runtime_text(r.runtime, out.empty());
  if (!r.recommendations.empty()) out += "\n";
  for (const std::string& s : r.recommendations) out += "* " + s + "\n";
  return out;
}

namespace {

// The "runtime" object: GPU work inside and outside the trace's compiled regions, per region.
void write_compile_runtime_json(JsonWriter& w, const CompileRuntime& rt) {
  if (!rt.present) {
    w.null();
    return;
  }
  w.begin_object()
      .field("kernels_in_compiled", rt.kernels_in_compiled)
      .field("kernels_outside", rt.kernels_outside)
      .field("triton_in_compiled", rt.triton_in_compiled)
      .field("triton_total", rt.triton_total)
      .field("gpu_ns_in_compiled", rt.gpu_ns_in_compiled)
      .field("gpu_ns_outside", rt.gpu_ns_outside)
      .field("cpu_ops_in_compiled", rt.cpu_ops_in_compiled)
      .field("cpu_ops_outside", rt.cpu_ops_outside)
      .field("graph_captures", rt.graph_captures)
      .field("cache_lookups", rt.cache_lookups)
      .field("cache_lookup_ns", rt.cache_lookup_ns);
  w.key("regions").begin_array();
  for (const CompiledRegion& c : rt.regions)
    w.begin_object()
        .field("kind", c.kind)
        .field("name", c.name)
        .field("compile_id", c.compile_id)
        .field("fx_key", c.fx_key)
        .field("calls", c.calls)
        .field("cpu_ns", c.cpu_ns)
        .field("gpu_events", c.gpu_events)
        .field("triton_kernels", c.triton_kernels)
        .field("gpu_busy_ns", c.gpu_busy_ns)
        .field("distinct_kernels", c.distinct_kernels)
        .end_object();
  w.end_array().end_object();
}

}  // namespace

void write_compile_json(JsonWriter& w, const CompileResult& r) {
  w.begin_object().field("kind", "torch_compile");
  w.key("ranks").begin_array();
  for (const RankCompileSummary& s : r.ranks)
    w.begin_object()
        .field("source", s.source)
        .field("rank", s.rank)
        .field("compile_ids", s.compile_ids)
        .field("frames", s.frames)
        .field("recompiles", s.recompiles)
        .field("restarts", s.restarts)
        .field("failures", s.failures)
        .field("compile_s", s.compile_s)
        .field("cache_hits", s.cache_hits)
        .field("cache_misses", s.cache_misses)
        .field("cache_bypasses", s.cache_bypasses)
        .field("autotune_events", s.autotune_events)
        .field("autotune_us", s.autotune_us)
        .field("md5_mismatches", s.md5_mismatches)
        .field("json_failures", s.json_failures)
        .field("unrecognized_lines", s.unrecognized_lines)
        .field("blank_lines", s.blank_lines)
        .field("crlf", s.crlf)
        .field("id_sequence", s.id_sequence)
        .field("cache_sequence", s.cache_sequence)
        .end_object();
  w.end_array();
  w.key("compiles").begin_array();
  for (const CompileRow& c : r.compiles) {
    w.begin_object().field("rank", c.rank).field("id", c.id).field("frame", c.frame);
    w.field("user_frame", c.user_frame);
    w.field("status", c.status).field("compile_s", c.compile_s).field("backend_s", c.backend_s);
    w.field("inductor_s", c.inductor_s).field("code_gen_s", c.code_gen_s);
    w.field("graph_ops", c.graph_ops).field("dynamo_starts", c.starts);
    w.key("phases_us");
    write_phases(w, c.phases_us);
    w.key("time_split_s");
    write_phases(w, c.time_split_s);
    w.field("recompile_reason", c.recompile_reason);
    w.field("cache_hits", c.cache_hits).field("cache_misses", c.cache_misses);
    w.key("cache_keys").begin_array();
    for (const std::string& k : c.cache_keys) w.value(k);
    w.end_array();
    w.field("kernels", c.kernels).field("autotune_events", c.autotune);
    // Fusion: FX graph ops per generated kernel (eager runs about one kernel per op).
    w.key("ops_per_kernel");
    if (c.graph_ops > 0 && c.kernels > 0)
      w.value(static_cast<double>(c.graph_ops) / c.kernels);
    else
      w.null();
    w.end_object();
  }
  w.end_array();
  w.key("global_phases_us");
  write_phases(w, r.global_phases_us);
  w.key("graph_breaks").begin_array();
  for (const GraphBreak& g : r.graph_breaks) {
    w.begin_object().field("reason", g.reason).field("frame", g.frame).field("count", g.count);
    w.key("ids").begin_array();
    for (const std::string& id : g.ids) w.value(id);
    w.end_array().key("user_frames").begin_array();
    for (const std::string& f : g.user_frames) w.value(f);
    w.end_array().end_object();
  }
  w.end_array();
  w.key("recompiles").begin_array();
  for (const RecompileGroup& g : r.recompiles)
    w.begin_object()
        .field("frame", g.frame)
        .field("reason", g.reason)
        .field("count", g.count)
        .end_object();
  w.end_array();
  w.key("failures").begin_array();
  for (const CompileFailure& f : r.failures)
    w.begin_object()
        .field("id", f.id)
        .field("type", f.type)
        .field("reason", f.reason)
        .field("frame", f.user_frame)
        .field("rank", f.rank)
        .end_object();
  w.end_array();
  w.key("divergences").begin_array();
  for (const RankDivergence& d : r.divergences) {
    w.begin_object().field("what", d.what).field("graph", d.graph).key("groups").begin_array();
    for (const auto& [v, ranks] : d.groups) {
      w.begin_object().field("value", v).key("ranks").begin_array();
      for (int32_t rk : ranks) w.value(rk);
      w.end_array().end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();
  w.key("runtime");
  write_compile_runtime_json(w, r.runtime);
  w.key("recommendations").begin_array();
  for (const std::string& s : r.recommendations) w.value(s);
  w.end_array().end_object();
}

}  // namespace mlprof

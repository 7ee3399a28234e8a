// `mlprof export DIR -o merged.json`: two streaming passes over the rank files.
//  1. reduce_rank_files (the `ranks` reduction, one trace per worker): each rank's summary, and
//     here also its step window and the number of events it will contribute; then
//     analyze_rank_summaries gives the clock offsets, the warnings and the rank order.
//  2. in rank order: load a rank (a batch of one per worker), write its windows shifted by its
//     offset, free it.
// Peak memory is one trace per worker in both passes, plus the summaries.
#include "cli/merged_export.h"

#include <charconv>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "cli/command.h"
#include "mlprof/analysis_set.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/chrome_export.h"
#include "mlprof/import.h"
#include "trace/file_error.h"
#include "trace/json_writer.h"
#include "trace/output_file.h"
#include "trace/parallel_for.h"
#include "trace/units.h"

namespace mlprof::cli {

namespace {

struct StepRange {
  int64_t first = 0, last = 0;
};

// "A:B" or "N" -> the range; nullopt when malformed.
std::optional<StepRange> parse_steps(const std::string& text) {
  auto number = [](std::string_view s) -> std::optional<int64_t> {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty() || v < 0) return std::nullopt;
    return v;
  };
  size_t colon = text.find(':');
  auto a = number(std::string_view(text).substr(0, colon));
  auto b = colon == std::string::npos ? a : number(std::string_view(text).substr(colon + 1));
  if (!a || !b || *a > *b) return std::nullopt;
  return StepRange{*a, *b};
}

// One rank's windows and size, found while the rank is loaded in pass 1.
struct RankPlan {
  int64_t begin = INT64_MIN, end = INT64_MAX;          // host (CPU threads), the rank's clock
  int64_t gpu_begin = INT64_MIN, gpu_end = INT64_MAX;  // GPU streams
  uint64_t steps_found = 0;                            // distinct step numbers of the range
  int64_t min_step = -1, max_step = -1;                // every step it has
  uint64_t events = 0;
  int64_t base_time_ns = 0;  // the trace's baseTimeNanoseconds
};

MergedRank merged_rank_window(const RankPlan& p) {
  MergedRank r;
  r.begin_ns = p.begin;
  r.end_ns = p.end;
  r.gpu_begin_ns = p.gpu_begin;
  r.gpu_end_ns = p.gpu_end;
  return r;
}

// The windows, by the rules of `mlprof steps`: a step is a ProfilerStep#N slice on a CPU thread
// (step_number; a marker starting inside the previous step is a duplicate), its host window the
// slice; its GPU window is device_step_windows' (the TensorBoard plugin's rule: up to the end of
// the GPU work launched inside the host window, from the previous step's GPU end). The rank's
// windows span steps A..B; without GPU work launched in steps the GPU window is the host one.
// A rank without any step of the range has empty windows.
RankPlan plan_rank(const Trace& t, const std::optional<StepRange>& steps) {
  RankPlan p;
  p.base_time_ns = t.meta.base_time_ns;
  if (steps) {
    const SliceTable& s = t.slices;
    std::vector<int64_t> number;
    std::vector<std::pair<int64_t, int64_t>> host;
    StepMarkers markers = step_markers(t);
    for (size_t k = 0; k < markers.slices.size(); ++k) {
      size_t i = markers.slices[k];
      number.push_back(markers.numbers[k]);
      host.emplace_back(s.ts[i], s.end(i));
    }
    DeviceStepWindows dev = device_step_windows(t, host);
    std::set<int64_t> found;
    int64_t begin = INT64_MAX, end = INT64_MIN, gpu_begin = INT64_MAX, gpu_end = INT64_MIN;
    for (size_t k = 0; k < host.size(); ++k) {
      int64_t n = number[k];
      p.min_step = p.min_step < 0 ? n : std::min(p.min_step, n);
      p.max_step = std::max(p.max_step, n);
      if (n < steps->first || n > steps->last) continue;
      found.insert(n);
      begin = std::min(begin, host[k].first);
      end = std::max(end, host[k].second);
      gpu_begin = std::min(gpu_begin, dev.windows[k].first);
      gpu_end = std::max(gpu_end, dev.windows[k].second);
    }
    p.steps_found = found.size();
    p.begin = begin;  // none found: INT64_MAX..INT64_MIN keeps nothing
    p.end = end;
    p.gpu_begin = dev.uses_gpu ? gpu_begin : begin;
    p.gpu_end = dev.uses_gpu ? gpu_end : end;
  }
  p.events = count_merged_events(t, merged_rank_window(p));
  return p;
}

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// "0-3, 7, 9" (at most `max_parts` parts).
std::string rank_list(std::vector<int32_t> v, size_t max_parts = 8) {
  std::sort(v.begin(), v.end());
  std::string out;
  size_t parts = 0;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (parts++ == max_parts) {
      out += ", ...";
      break;
    }
    if (!out.empty()) out += ", ";
    out += std::to_string(v[i]);
    if (j > i) out += "-" + std::to_string(v[j]);
    i = j + 1;
  }
  return out;
}

// What pass 1 finds and the later phases read.
struct MergePlan {
  const MergedExportArgs& a;
  std::optional<StepRange> steps;
  const std::vector<std::string>& files;
  std::unordered_map<std::string, size_t> index_of;
  std::vector<RankPlan> plans;  // one per file
  std::vector<std::string> errors;
  uint64_t total = 0;  // events the merged trace will hold
  const RankPlan& of(const RankStats& r) const { return plans[index_of.at(r.source)]; }
};

// Pass 1: summaries (clock offsets), step windows and sizes, one trace per worker.
std::vector<RankSummary> plan_ranks(MergePlan& p) {
  const MergedExportArgs& a = p.a;
  const std::vector<std::string>& files = p.files;
  const std::optional<StepRange>& steps = p.steps;
  std::vector<RankPlan>& plans = p.plans;
  std::unordered_map<std::string, size_t>& index_of = p.index_of;
  std::vector<std::string>& errors = p.errors;
  std::vector<RankSummary> summaries;
  {
    Progress progress("reading rank directory " + base_name(a.dir));
    RankLoader load = rank_loader(true, progress.counter());
    RankLoader plan_and_load = [&](const std::string& path) -> Result<Trace> {
      Result<Trace> t = load(path);
      if (t) {
        t->meta.source = path;
        plans[index_of.at(path)] = plan_rank(*t, steps);  // one slot per file: no lock needed
      }
      return t;
    };
    summaries = reduce_rank_files(files, plan_and_load, a.threads, RanksOptions{}, errors);
    progress.done();
  }
  return summaries;
}

// Which ranks lack the steps, and the size guard: an exit code, or kExitOk to go on.
int check_windows(MergePlan& p, const RanksResult& ranks) {
  const MergedExportArgs& a = p.a;
  const std::optional<StepRange>& steps = p.steps;
  uint64_t& total = p.total;
  std::vector<int32_t> no_steps, partial;
  int64_t min_step = -1, max_step = -1;
  for (const RankStats& r : ranks.ranks) {
    const RankPlan& rp = p.of(r);
    total += rp.events;
    if (rp.min_step >= 0) {
      min_step = min_step < 0 ? rp.min_step : std::min(min_step, rp.min_step);
      max_step = std::max(max_step, rp.max_step);
    }
    if (!steps) continue;
    if (rp.steps_found == 0) {
      no_steps.push_back(r.rank);
    } else if (rp.steps_found < static_cast<uint64_t>(steps->last - steps->first + 1)) {
      partial.push_back(r.rank);
    }
  }
  std::string have = min_step < 0
                         ? "no ProfilerStep#N at all"
                         : "steps " + std::to_string(min_step) + " to " + std::to_string(max_step);
  if (steps && no_steps.size() == ranks.ranks.size()) {
    std::fprintf(stderr, "mlprof export: --steps %s: no rank has ProfilerStep#%lld to #%lld (%s)\n",
                 a.steps.c_str(), static_cast<long long>(steps->first),
                 static_cast<long long>(steps->last), have.c_str());
    return kExitBadInput;
  }
  if (!no_steps.empty())
    std::fprintf(stderr, "mlprof: %zu ranks have no step of %s, written without events: rank %s\n",
                 no_steps.size(), a.steps.c_str(), rank_list(no_steps).c_str());
  if (!partial.empty())
    std::fprintf(stderr, "mlprof: %zu ranks have only some steps of %s: rank %s\n", partial.size(),
                 a.steps.c_str(), rank_list(partial).c_str());
  if (a.max_events && total > a.max_events) {
    std::fprintf(stderr,
                 "mlprof export: the merged trace would hold %llu events, over --max-events %llu "
                 "(%zu ranks, %s); narrow --steps A:B or raise --max-events (0: no limit). "
                 "Nothing written\n",
                 static_cast<unsigned long long>(total),
                 static_cast<unsigned long long>(a.max_events), ranks.ranks.size(),
                 steps ? ("steps " + a.steps).c_str() : "every step");
    return kExitFailure;
  }

  return kExitOk;
}

// Processes: pid = rank (a duplicate or unknown rank: 1000000 + its position), in rank order.
std::vector<MergedRank> merged_ranks(const MergePlan& plan, const RanksResult& ranks) {
  std::vector<MergedRank> merged(ranks.ranks.size());
  std::map<int32_t, int> claims;
  for (const RankStats& r : ranks.ranks) ++claims[r.rank];
  std::set<int32_t> used;
  for (size_t i = 0; i < ranks.ranks.size(); ++i) {
    const RankStats& r = ranks.ranks[i];
    const RankPlan& p = plan.of(r);
    MergedRank& m = merged[i];
    m = merged_rank_window(p);
    bool first = r.rank >= 0 && used.insert(r.rank).second;
    m.pid = first ? r.rank : 1'000'000 + static_cast<int64_t>(i);
    m.name = r.rank >= 0 ? "rank " + std::to_string(r.rank) : "rank ?";
    if (r.rank < 0 || claims[r.rank] > 1) m.name += " (" + base_name(r.source) + ")";
    m.labels = base_name(r.source) + ", clock offset " + std::to_string(r.clock_offset_ns) + " ns";
    m.sort_index = static_cast<int32_t>(i);
    m.shift_ns = r.clock_offset_ns;
  }

  return merged;
}

// What the trace says about itself (otherData, read by Perfetto's info page and kept by
// mlprof's importer), and the JSON before the events.
std::string merged_head(const MergePlan& plan, const RanksResult& ranks,
                        const std::vector<MergedRank>& merged) {
  const MergedExportArgs& a = plan.a;
  const std::optional<StepRange>& steps = plan.steps;
  const ClockAlignment& clock = ranks.clock;
  JsonWriter j;
  j.begin_object().key("mlprof_merged").begin_object();
  j.field("tool", "mlprof export DIR");
  j.field("directory", a.dir);
  j.field("ranks", static_cast<uint64_t>(ranks.ranks.size()));
  j.field("world_size", static_cast<int64_t>(ranks.world_size));
  j.key("clock_alignment").begin_object();
  j.field("method", clock.method);
  j.field("reference_rank", static_cast<int64_t>(clock.reference_rank));
  j.field("residual_ns", clock.residual_ns);
  j.field("note", clock.note);
  j.end_object();
  j.key("steps");
  if (steps) {
    j.value(a.steps);
  } else {
    j.null();
  }
  j.field("window",
          steps ? "per rank: CPU threads from the start of its first ProfilerStep#N with N in the "
                  "range to the end of its last; GPU streams the same steps' GPU windows (as "
                  "mlprof steps: to the end of the GPU work they launched); slices overlapping the "
                  "window are clipped to it, instants/counters/memory events kept inside it (a "
                  "counter's value in force at the window start repeated there), flows with both "
                  "ends inside"
                : "everything");
  j.field("events", plan.total);
  j.key("warnings").begin_array();
  for (const std::string& w : ranks.warnings) j.value(w);
  j.end_array();
  j.key("skipped").begin_array();
  for (const std::string& e : plan.errors) j.value(e);
  j.end_array();
  j.key("rank_list").begin_array();
  for (size_t i = 0; i < merged.size(); ++i) {
    const RankStats& r = ranks.ranks[i];
    const MergedRank& m = merged[i];
    const RankPlan& p = plan.of(r);
    j.begin_object();
    j.field("rank", static_cast<int64_t>(r.rank));
    j.field("pid", m.pid);
    j.field("file", r.source);
    j.field("clock_offset_ns", r.clock_offset_ns);
    j.field("base_time_ns", p.base_time_ns);
    if (steps) {
      // On the merged (reference) clock; null: no step of the range.
      j.key("window_ns");
      if (p.steps_found) {
        j.begin_array().value(p.begin + r.clock_offset_ns).value(p.end + r.clock_offset_ns);
        j.end_array();
      } else {
        j.null();
      }
      j.key("gpu_window_ns");
      if (p.steps_found) {
        j.begin_array().value(p.gpu_begin + r.clock_offset_ns);
        j.value(p.gpu_end + r.clock_offset_ns).end_array();
      } else {
        j.null();
      }
    }
    j.field("events", p.events);
    j.end_object();
  }
  j.end_array();
  j.end_object().end_object();
  return "\"schemaVersion\":1,\n\"displayTimeUnit\":\"ms\",\n\"otherData\":" + j.str() + ",\n";
}

// Pass 2: one rank at a time, in rank order, shifted onto the reference clock.
int write_ranks(const MergedExportArgs& a, const RanksResult& ranks,
                const std::vector<MergedRank>& merged, const std::string& head) {
  Result<OutputFile> out = OutputFile::open(a.out);
  if (!out) {
    std::fprintf(stderr, "mlprof export: %s\n", out.error().c_str());
    return kExitFailure;
  }
  {
    Progress progress("writing " + base_name(a.out));
    MergedChromeWriter writer(out->stream(), head);
    // Batches of `workers` ranks loaded at once (as many traces as pass 1 holds), written in
    // rank order and freed one by one.
    unsigned workers = a.threads ? a.threads : std::max(1u, std::thread::hardware_concurrency());
    ImportOptions io;
    io.strict = strict_import();
    io.threads = workers > 1 ? 1 : 0;  // one file per core, else all cores on the one file
    for (size_t start = 0; start < merged.size(); start += workers) {
      size_t count = std::min<size_t>(workers, merged.size() - start);
      std::vector<std::optional<Trace>> batch(count);
      std::vector<std::string> why(count);
      parallel_for(count, workers, [&](size_t k) {
        Result<Trace> t = load_trace(ranks.ranks[start + k].source, io);
        if (t) {
          batch[k] = std::move(t.value());
        } else {
          why[k] = t.error();
        }
      });
      for (size_t k = 0; k < count; ++k) {
        if (!batch[k]) {  // it loaded in pass 1: the file changed underneath
          progress.done();
          std::fprintf(stderr, "mlprof export: %s; nothing written\n",
                       file_error(ranks.ranks[start + k].source, why[k]).c_str());
          return kExitBadInput;
        }
        writer.add(*batch[k], merged[start + k]);
        batch[k].reset();
      }
    }
    writer.finish();
    progress.done();
  }
  if (!out->stream()) {
    std::fprintf(stderr, "mlprof export: %s: write failed\n", a.out.c_str());
    return kExitFailure;
  }
  Status s = out->commit();
  if (!s) {
    std::fprintf(stderr, "mlprof export: %s\n", s.message().c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int export_rank_dir(const MergedExportArgs& a) {
  std::optional<StepRange> steps;
  if (!a.steps.empty()) {
    steps = parse_steps(a.steps);
    if (!steps) {
      std::fprintf(stderr,
                   "mlprof export: --steps %s: expected A:B (ProfilerStep#A to #B, A <= B) or N\n",
                   a.steps.c_str());
      return kExitBadInput;
    }
  }
  if (!a.out.ends_with(".json")) {
    std::fprintf(stderr,
                 "mlprof export: %s: a rank directory is written as one merged Chrome trace "
                 "(-o NAME.json)\n",
                 a.out.c_str());
    return kExitBadInput;
  }
  Result<Input> in = open_input_or_report(a.dir, InputAccept::kRankDir);
  if (!in) return exit_code_of(in.code());
  const std::vector<std::string>& files = in->rank_files;
  MergePlan plan{a, steps, files, {}, std::vector<RankPlan>(files.size()), {}, 0};
  for (size_t i = 0; i < files.size(); ++i) plan.index_of[files[i]] = i;

  std::vector<RankSummary> summaries = plan_ranks(plan);
  const std::vector<std::string>& errors = plan.errors;
  if (!errors.empty() && strict_import()) {
    for (const std::string& e : errors) std::fprintf(stderr, "mlprof: %s\n", e.c_str());
    std::fprintf(stderr, "mlprof export: --strict: %zu of %zu rank files failed; nothing written\n",
                 errors.size(), files.size());
    return kExitBadInput;
  }
  if (!report_rank_errors(a.dir, summaries.size(), errors)) return kExitBadInput;
  // The cross-rank result (clock alignment, stragglers) from the analysis stage, as `mlprof
  // ranks DIR` shows it; the ranks' traces are streamed below, not loaded by the set.
  AnalysisSet stage(std::move(summaries), RankLoader{});
  summaries.clear();
  const RanksResult& ranks = stage.ranks();
  const ClockAlignment& clock = ranks.clock;
  // The residual as `mlprof ranks` prints it ("21.338 ms"; it was raw ns here).
  std::fprintf(stderr, "mlprof: clocks: %s (reference rank %d, residual %s): %s\n",
               clock.method.c_str(), clock.reference_rank,
               format_duration_ns(static_cast<double>(clock.residual_ns)).c_str(),
               clock.note.c_str());
  for (const std::string& w : ranks.warnings) std::fprintf(stderr, "mlprof: %s\n", w.c_str());

  if (int rc = check_windows(plan, ranks); rc != kExitOk) return rc;
  std::vector<MergedRank> merged = merged_ranks(plan, ranks);
  if (int rc = write_ranks(a, ranks, merged, merged_head(plan, ranks, merged)); rc != kExitOk)
    return rc;
  std::fprintf(stderr, "wrote %s: %zu rank%s, %llu events, %s\n", a.out.c_str(), ranks.ranks.size(),
               ranks.ranks.size() == 1 ? "" : "s", static_cast<unsigned long long>(plan.total),
               steps ? ("steps " + a.steps).c_str() : "every step");
  return kExitOk;
}

}  // namespace mlprof::cli

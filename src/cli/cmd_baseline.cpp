// `mlprof baseline save|list|show`: named, compact summaries of a run for `compare --against`
// (docs/baselines.md).
#include <algorithm>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "cli/baseline_store.h"
#include "cli/command.h"
#include "render/analysis_output.h"
#include "trace/units.h"

namespace mlprof::cli {
namespace {

struct BaselineArgs {
  std::string name, path, store = kDefaultBaselineStore;
  bool json = false;
  unsigned threads = 0;
};

std::string date_of(int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  char buf[32] = "?";
  if (gmtime_r(&t, &tm)) std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string one_line(const Baseline& b) {
  const TraceTotals& t = b.summary.totals;
  std::string steps =
      t.steps ? std::to_string(t.steps) + " steps, mean " + format_duration_ns(t.step_mean_ns)
              : "no steps, span " + format_duration_ns(static_cast<double>(t.span_ns));
  return steps + ", " + std::to_string(b.summary.host.size()) + " ops, " +
         std::to_string(b.summary.gpu.size()) + " kernels, device " +
         (b.device.empty() ? "(unrecorded)" : b.device) + ", world size " +
         std::to_string(b.world_size) + ", " + std::to_string(b.findings.size()) + " findings";
}

int save(const BaselineArgs& a) {
  std::optional<std::string> path = baseline_path(a.store, a.name);
  if (!path) return kExitBadInput;
  auto set = open_analysis(a.path, {}, a.threads);
  if (!set) return set.exit_code;
  Baseline b = baseline_of(*set, a.name, true);
  std::error_code ec;
  std::filesystem::create_directories(a.store, ec);
  if (ec) {
    std::fprintf(stderr, "mlprof: %s: cannot create the baseline store: %s\n", a.store.c_str(),
                 ec.message().c_str());
    return kExitFailure;
  }
  if (!write_file_atomic(*path, baseline_json(b) + "\n")) return kExitFailure;
  std::printf("saved baseline %s (%s): %s\n", a.name.c_str(), path->c_str(), one_line(b).c_str());
  return kExitOk;
}

int list(const BaselineArgs& a) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(a.store, ec)) {
    std::string f = e.path().filename().string();
    if (f.size() > 5 && f.ends_with(".json") && f[0] != '.')
      names.push_back(f.substr(0, f.size() - 5));
  }
  std::sort(names.begin(), names.end());
  JsonWriter w(true);
  w.begin_object().field("schema", json_schema_id("baseline_list", 1)).field("store", a.store);
  w.key("baselines").begin_array();
  if (!a.json && names.empty()) std::printf("no baselines in %s\n", a.store.c_str());
  for (const std::string& n : names) {
    std::optional<Baseline> b = load_baseline_or_report(a.store, n);  // a bad file: one line
    if (!b) continue;
    if (a.json) {
      const TraceTotals& t = b->summary.totals;
      w.begin_object().field("name", n).field("created_unix_s", b->created_unix_s);
      w.field("source", b->source).field("device", b->device);
      w.field("world_size", static_cast<int64_t>(b->world_size)).field("steps", t.steps);
      w.field("step_mean_ns", t.step_mean_ns).field("span_ns", t.span_ns);
      w.end_object();
    } else {
      std::printf("%-24s %s  %s\n  %s\n", n.c_str(), date_of(b->created_unix_s).c_str(),
                  b->source.c_str(), one_line(*b).c_str());
    }
  }
  w.end_array().end_object();
  if (a.json) std::cout << w.str() << "\n";
  return kExitOk;
}

int show(const BaselineArgs& a) {
  std::optional<Baseline> b = load_baseline_or_report(a.store, a.name);
  if (!b) return kExitBadInput;
  if (a.json) {
    std::cout << pretty_json(baseline_json(*b)) << "\n";
    return kExitOk;
  }
  std::printf("baseline %s, saved %s from %s (%s)\n%s\n", b->name.c_str(),
              date_of(b->created_unix_s).c_str(), b->source.c_str(), b->format.c_str(),
              one_line(*b).c_str());
  for (const auto& [title, rows] :
       {std::pair{"ops", &b->summary.host}, std::pair{"kernels", &b->summary.gpu}}) {
    std::vector<const CompareGroup*> top;
    for (const CompareGroup& g : *rows) top.push_back(&g);
    std::sort(top.begin(), top.end(), [](auto* x, auto* y) { return x->total_ns > y->total_ns; });
    if (top.empty()) continue;
    std::printf("\ntop %s by total time:\n", title);
    for (size_t i = 0; i < top.size() && i < 10; ++i)
      std::printf("  %10s  %8llu calls  %s\n",
                  format_duration_ns(static_cast<double>(top[i]->total_ns)).c_str(),
                  static_cast<unsigned long long>(top[i]->count), top[i]->name.c_str());
  }
  if (!b->findings.empty()) std::printf("\nfindings:\n");
  for (const BaselineFinding& f : b->findings)
    std::printf("  [%s] %s\n", f.severity.c_str(), f.title.c_str());
  return kExitOk;
}

MLPROF_REGISTER_COMMAND(
    "baseline",
    "Named run summaries for CI: save NAME TRACE|DIR, list, show NAME (compare --against)",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<BaselineArgs>();
      sub.require_subcommand(1);
      auto store = [&](CLI::App* c) {
        c->add_option("--store", a->store, "baseline directory (default .mlprof/baselines)");
      };
      CLI::App* s = sub.add_subcommand("save", "Save TRACE|DIR as baseline NAME");
      s->add_option("name", a->name, "baseline name")->required();
      s->add_option("path", a->path, "trace file or rank directory")->required();
      s->add_option("--threads", a->threads, "rank traces loaded at once (0 = all cores)");
      store(s);
      CLI::App* l = sub.add_subcommand("list", "List the stored baselines");
      l->add_flag("--json", a->json, "machine-readable output");
      store(l);
      CLI::App* sh = sub.add_subcommand("show", "Show baseline NAME");
      sh->add_option("name", a->name, "baseline name")->required();
      sh->add_flag("--json", a->json, "the stored baseline (mlprof.baseline/1)");
      store(sh);
      return [a, s, l]() {
        if (s->parsed()) return save(*a);
        if (l->parsed()) return list(*a);
        return show(*a);
      };
    });

}  // namespace
}  // namespace mlprof::cli

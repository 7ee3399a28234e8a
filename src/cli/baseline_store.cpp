#include "cli/baseline_store.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace mlprof::cli {

std::optional<std::string> baseline_path(const std::string& store, const std::string& name) {
  bool ok = !name.empty() && name.size() <= 100 && name[0] != '.';
  for (char c : name)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-');
  if (!ok) {
    std::fprintf(stderr,
                 "mlprof: baseline name \"%s\": use letters, digits, '.', '_' and '-' (not "
                 "starting with '.', at most 100)\n",
                 name.c_str());
    return std::nullopt;
  }
  return store + "/" + name + ".json";
}

std::optional<Baseline> load_baseline_or_report(const std::string& store, const std::string& name) {
  std::optional<std::string> path = baseline_path(store, name);
  if (!path) return std::nullopt;
  std::ifstream in(*path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "mlprof: %s: no baseline %s in %s (mlprof baseline save %s TRACE)\n",
                 path->c_str(), name.c_str(), store.c_str(), name.c_str());
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    std::fprintf(stderr, "mlprof: %s: cannot be read\n", path->c_str());
    return std::nullopt;
  }
  Result<Baseline> b = parse_baseline_json(text.str());
  if (!b) {
    std::fprintf(stderr, "mlprof: %s: %s\n", path->c_str(), b.error().c_str());
    return std::nullopt;
  }
  return std::move(b.value());
}

Baseline baseline_of(AnalysisSet& set, const std::string& name, bool sample) {
  int32_t world = set.trace().meta.world_size > 0 ? set.trace().meta.world_size : 1;
  if (set.is_rank_set()) {
    const RanksResult& r = set.ranks();
    world = r.world_size > 0 ? r.world_size : static_cast<int32_t>(r.distinct_ranks);
  }
  auto now = std::chrono::system_clock::now().time_since_epoch();
  BottleneckResult none;
  return make_baseline(name, set.trace(), sample ? set.bottlenecks() : none, world,
                       std::chrono::duration_cast<std::chrono::seconds>(now).count(), sample);
}

}  // namespace mlprof::cli

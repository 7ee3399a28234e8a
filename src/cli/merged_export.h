// `mlprof export DIR -o merged.json [--steps A:B]`: the ranks of a directory as one Chrome trace,
// one process per rank, clocks aligned, streamed one rank at a time (docs/ranks.md).
#pragma once

#include <cstdint>
#include <string>

namespace mlprof::cli {

struct MergedExportArgs {
  std::string dir;
  std::string out;
  std::string steps;  // "A:B" (ProfilerStep#A .. ProfilerStep#B), "N", or "" for everything
  uint64_t max_events = 10'000'000;  // 0: no limit
  unsigned threads = 0;
};

// Returns the exit code; every problem is one line on stderr, and `out` is written only whole.
int export_rank_dir(const MergedExportArgs& args);

}  // namespace mlprof::cli

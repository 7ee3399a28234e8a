// What a rank set says about itself: traces without a rank, several traces of one rank, the
// world size (the most common one; mixed ones warned about), ranks missing or outside it.
#include <filesystem>
#include <map>

#include "analyze/rank_phases.h"

namespace mlprof::rank_phases {

namespace {

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

}  // namespace

void add_warnings(RanksResult& r) {
  const std::vector<RankStats>& rows = r.ranks;
  // Unknown ranks.
  std::vector<std::string> unknown;
  for (const RankStats& s : rows)
    if (s.rank < 0) unknown.push_back(file_name(s.source));
  if (!unknown.empty()) {
    std::string w = std::to_string(unknown.size()) +
                    " trace(s) without a rank (no distributedInfo.rank, no number in the file "
                    "name): " +
                    unknown.front();
    if (unknown.size() > 1) w += ", ...";
    r.warnings.push_back(w);
  }
  // Duplicates: several traces claim one rank.
  std::vector<std::pair<int32_t, std::vector<std::string>>> dups;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    while (j < rows.size() && rows[j].rank == rows[i].rank) ++j;
    if (rows[i].rank >= 0 && j - i > 1) {
      std::vector<std::string> files;
      for (size_t k = i; k < j; ++k) files.push_back(file_name(rows[k].source));
      dups.emplace_back(rows[i].rank, std::move(files));
    }
    i = j;
  }
  for (size_t d = 0; d < dups.size() && d < 5; ++d) {
    const auto& [rank, files] = dups[d];
    std::string w = "duplicate rank " + std::to_string(rank) + ": " + std::to_string(files.size()) +
                    " traces (" + files[0] + ", " + files[1];
    if (files.size() > 2) w += ", ...";
    r.warnings.push_back(w + ")");
  }
  if (dups.size() > 5) {
    std::vector<int32_t> ids;
    for (const auto& d : dups) ids.push_back(d.first);
    r.warnings.push_back(std::to_string(dups.size()) +
                         " ranks have several traces: " + ranges(ids));
  }
  // World size: the most common one; others are mixed in.
  std::map<int32_t, std::vector<int32_t>> by_size;
  for (const RankStats& s : rows)
    if (s.world_size > 0) by_size[s.world_size].push_back(s.rank);
  size_t best = 0;
  for (const auto& [size, ranks] : by_size)
    if (ranks.size() > best) {
      best = ranks.size();
      r.world_size = size;
    }
  if (by_size.size() > 1) {
    std::string w = "mixed world sizes:";
    bool first = true;
    for (const auto& [size, ranks] : by_size) {
      w += std::string(first ? " " : "; ") + std::to_string(size) + " (" +
           std::to_string(ranks.size()) + " trace" + (ranks.size() > 1 ? "s" : "") + ": rank " +
           ranges(ranks, 4) + ")";
      first = false;
    }
    r.warnings.push_back(w + "; traces of different jobs?");
  }
  if (r.world_size > 0) {
    std::vector<bool> seen(static_cast<size_t>(r.world_size), false);
    std::vector<int32_t> outside;
    for (const RankStats& s : rows) {
      if (s.rank >= r.world_size) outside.push_back(s.rank);
      if (s.rank >= 0 && s.rank < r.world_size) seen[static_cast<size_t>(s.rank)] = true;
    }
    std::vector<int32_t> missing;
    for (int32_t i = 0; i < r.world_size; ++i)
      if (!seen[static_cast<size_t>(i)]) missing.push_back(i);
    if (!missing.empty())
      r.warnings.push_back("missing ranks: " + std::to_string(missing.size()) + " of world size " +
                           std::to_string(r.world_size) + " have no trace (" + ranges(missing) +
                           ")");
    if (!outside.empty())
      r.warnings.push_back("ranks outside world size " + std::to_string(r.world_size) + ": " +
                           ranges(outside));
  }
}

}  // namespace mlprof::rank_phases

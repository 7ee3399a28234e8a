// What an importer of a non-JSON format read and skipped, per source table or record kind, and
// which expected tables/columns the file lacked: kept in TraceMeta::extra as "mlprofImport" (one
// line of text, shown by `mlprof summary`), with the skipped rows also counted in ImportStats.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof::import {

class ImportReport {
 public:
  void read(const std::string& what, uint64_t n = 1) { read_[what] += n; }
  void skipped(const std::string& why, uint64_t n = 1) { skipped_[why] += n; }
  void missing(const std::string& what) { missing_.push_back(what); }
  void note(const std::string& what) { notes_.push_back(what); }
  uint64_t total_read() const {
    uint64_t n = 0;
    for (const auto& [k, v] : read_) n += v;
    return n;
  }
  uint64_t total_skipped() const {
    uint64_t n = 0;
    for (const auto& [k, v] : skipped_) n += v;
    return n;
  }
  // "nsys: read kernels 3442, ...; skipped 2 (NVTX range without an end 2); missing: ..."
  std::string line(const std::string& format) const;
  // Stores the line and events_read in `t.meta`.
  void store(Trace& t, const std::string& format) const;

 private:
  std::map<std::string, uint64_t> read_, skipped_;
  std::vector<std::string> missing_, notes_;
};

inline constexpr const char* kImportReportKey = "mlprofImport";

}  // namespace mlprof::import

#include "import/import_report.h"

namespace mlprof::import {

namespace {
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}
}  // namespace

std::string ImportReport::line(const std::string& format) const {
  std::string out = format + ": read";
  bool first = true;
  for (const auto& [k, v] : read_) {
    out += (first ? " " : ", ") + k + " " + std::to_string(v);
    first = false;
  }
  if (first) out += " nothing";
  if (!skipped_.empty()) {
    out += "; skipped " + std::to_string(total_skipped()) + " (";
    first = true;
    for (const auto& [k, v] : skipped_) {
      out += (first ? "" : ", ") + k + " " + std::to_string(v);
      first = false;
    }
    out += ")";
  }
  if (!missing_.empty()) {
    out += "; not in this file:";
    for (size_t i = 0; i < missing_.size(); ++i) out += (i ? ", " : " ") + missing_[i];
  }
  for (const std::string& n : notes_) out += "; " + n;
  return out;
}

void ImportReport::store(Trace& t, const std::string& format) const {
  t.meta.extra.emplace_back(kImportReportKey, json_string(line(format)));
  t.meta.import_stats.events_read = total_read();
}

}  // namespace mlprof::import

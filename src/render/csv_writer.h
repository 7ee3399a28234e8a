// CSV as RFC 4180 writes it (and Python's csv module reads it): comma separated, fields quoted
// when they hold a comma, quote, CR or LF, quotes doubled, rows ending in "\n".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlprof {

class CsvWriter {
 public:
  // Appends one field (with the separator before it unless it starts the row).
  CsvWriter& field(std::string_view v);
  CsvWriter& field(int64_t v);
  CsvWriter& field(double v);  // shortest text that reads back to the same double
  CsvWriter& end_row();
  void row(const std::vector<std::string>& fields);

  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }
  void clear() { out_.clear(); }

  static void append_field(std::string& out, std::string_view v);

 private:
  std::string out_;
  bool row_started_ = false;
};

}  // namespace mlprof

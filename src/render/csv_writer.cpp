#include "render/csv_writer.h"

#include <charconv>
#include <cmath>

namespace mlprof {

void CsvWriter::append_field(std::string& out, std::string_view v) {
  if (v.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += v;
    return;
  }
  out += '"';
  for (char c : v) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

CsvWriter& CsvWriter::field(std::string_view v) {
  if (row_started_) out_ += ',';
  row_started_ = true;
  append_field(out_, v);
  return *this;
}

CsvWriter& CsvWriter::field(int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return field(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
}

CsvWriter& CsvWriter::field(double v) {
  if (!std::isfinite(v)) return field(std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return field(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
}

CsvWriter& CsvWriter::end_row() {
  out_ += '\n';
  row_started_ = false;
  return *this;
}

void CsvWriter::row(const std::vector<std::string>& fields) {
  for (const std::string& f : fields) field(f);
  end_row();
}

}  // namespace mlprof

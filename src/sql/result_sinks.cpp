#include "sql/result_sinks.h"

#include <sqlite3.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "render/analysis_output.h"
#include "render/csv_writer.h"
#include "render/text_table.h"
#include "trace/json_writer.h"

namespace mlprof::sql {
namespace {

std::string_view column_text(sqlite3_stmt* st, int c) {
  const unsigned char* p = sqlite3_column_text(st, c);
  return p ? std::string_view(reinterpret_cast<const char*>(p),
                              static_cast<size_t>(sqlite3_column_bytes(st, c)))
           : std::string_view();
}

// Shortest text that reads back to the same double.
std::string real_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, static_cast<size_t>(r.ptr - buf));
}

std::string blob_text(sqlite3_stmt* st, int c) {
  static const char* hex = "0123456789abcdef";
  const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(st, c));
  int n = sqlite3_column_bytes(st, c);
  std::string s = "x'";
  for (int i = 0; i < n; ++i) {
    s += hex[p[i] >> 4];
    s += hex[p[i] & 15];
  }
  return s + "'";
}

std::string cell_text(sqlite3_stmt* st, int c, const char* null_text) {
  switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER:
      return std::to_string(sqlite3_column_int64(st, c));
    case SQLITE_FLOAT:
      return real_text(sqlite3_column_double(st, c));
    case SQLITE_TEXT:
      return std::string(column_text(st, c));
    case SQLITE_BLOB:
      return blob_text(st, c);
    default:
      return null_text;
  }
}

// The table's column widths come from the header and the first kWindow rows (TextTable lays
// them out); later rows stream out in those widths, so a result of any length costs the memory
// of kWindow rows, not of the whole result (a cross join held 1.98 GB before it printed
// anything). A later text cell wider than its column is cut in the middle, a wider number is
// printed whole (the row goes wider).
class TableSink : public RowSink {
 public:
  static constexpr size_t kWindow = 1000;
  static constexpr size_t kGap = 2;  // TextTable's default
  TableSink(std::FILE* out, size_t width) : out_(out), width_(width ? width : SIZE_MAX) {}
  void begin(sqlite3_stmt* st) override {
    n_ = sqlite3_column_count(st);
    headers_.clear();
    for (int c = 0; c < n_; ++c) headers_.emplace_back(sqlite3_column_name(st, c));
    numeric_.assign(static_cast<size_t>(n_), true);
    rows_.clear();
    widths_.clear();
    streaming_ = false;
    count_ = cut_ = 0;
  }
  void row(sqlite3_stmt* st) override {
    std::vector<std::string> r;
    for (int c = 0; c < n_; ++c) {
      int type = sqlite3_column_type(st, c);
      if (!streaming_ && (type == SQLITE_TEXT || type == SQLITE_BLOB))
        numeric_[static_cast<size_t>(c)] = false;
      r.push_back(cell_text(st, c, "NULL"));
    }
    ++count_;
    if (streaming_) {
      write_row(r);
      return;
    }
    rows_.push_back(std::move(r));
    if (rows_.size() < kWindow) return;
    // The window is full: print it, then stream the rest in its column widths (read off the
    // rule under the header, so they are the widths TextTable chose, narrowing included).
    std::string s = table();
    std::fwrite(s.data(), 1, s.size(), out_);
    size_t rule = s.find('\n') + 1;
    size_t rule_end = s.find('\n', rule);
    for (size_t i = rule; i < rule_end;) {
      size_t j = s.find(' ', i);
      if (j == std::string::npos || j > rule_end) j = rule_end;
      widths_.push_back(j - i);
      i = j + kGap;
    }
    widths_.resize(headers_.size(), 0);  // (only if a header was empty: never cut)
    rows_.clear();
    rows_.shrink_to_fit();
    streaming_ = true;
  }
  void end() override {
    if (!streaming_) {
      std::string s = table();
      std::fwrite(s.data(), 1, s.size(), out_);
    }
    std::fprintf(out_, "(%zu row%s", count_, count_ == 1 ? "" : "s");
    if (cut_)
      std::fprintf(out_, "; column widths from the first %zu rows, %llu longer cell%s cut", kWindow,
                   static_cast<unsigned long long>(cut_), cut_ == 1 ? "" : "s");
    std::fprintf(out_, ")\n");
    rows_.clear();
  }

 private:
  std::string table() {
    TextTable t;
    for (size_t c = 0; c < headers_.size(); ++c)
      t.add_column(headers_[c], numeric_[c] ? TextTable::Align::kRight : TextTable::Align::kLeft);
    for (auto& r : rows_) t.add_row(std::move(r));
    return t.render(width_);
  }
  static std::string cut_middle(const std::string& s, size_t w) {  // as TextTable cuts
    if (w <= 3) return s.substr(0, w);
    size_t left = (w - 3) / 2, right = w - 3 - left;
    return s.substr(0, left) + "..." + s.substr(s.size() - right);
  }
  void write_row(const std::vector<std::string>& cells) {
    line_.clear();
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c) line_.append(kGap, ' ');
      const std::string& cell = cells[c];
      size_t w = widths_[c];
      if (!numeric_[c] && w > 0 && cell.size() > w) {
        line_ += cut_middle(cell, w);
        ++cut_;
      } else if (!numeric_[c]) {
        line_ += cell;
        line_.append(w - std::min(w, cell.size()), ' ');
      } else {
        line_.append(w - std::min(w, cell.size()), ' ');
        line_ += cell;
      }
    }
    while (!line_.empty() && line_.back() == ' ') line_.pop_back();
    line_ += '\n';
    std::fwrite(line_.data(), 1, line_.size(), out_);
  }
  std::FILE* out_;
  size_t width_;
  int n_ = 0;
  std::vector<std::string> headers_;
  std::vector<bool> numeric_;
  std::vector<std::vector<std::string>> rows_;  // the first kWindow rows
  std::vector<size_t> widths_;                  // once streaming
  bool streaming_ = false;
  size_t count_ = 0;
  uint64_t cut_ = 0;
  std::string line_;
};

class CsvSink : public RowSink {
 public:
  explicit CsvSink(std::FILE* out) : out_(out) {}
  void begin(sqlite3_stmt* st) override {
    n_ = sqlite3_column_count(st);
    for (int c = 0; c < n_; ++c) w_.field(std::string_view(sqlite3_column_name(st, c)));
    w_.end_row();
  }
  void row(sqlite3_stmt* st) override {
    for (int c = 0; c < n_; ++c) {
      switch (sqlite3_column_type(st, c)) {
        case SQLITE_INTEGER:
          w_.field(static_cast<int64_t>(sqlite3_column_int64(st, c)));
          break;
        case SQLITE_FLOAT:
          w_.field(sqlite3_column_double(st, c));
          break;
        case SQLITE_TEXT:
          w_.field(column_text(st, c));
          break;
        case SQLITE_BLOB:
          w_.field(blob_text(st, c));
          break;
        default:
          w_.field(std::string_view());
          break;
      }
    }
    w_.end_row();
    if (w_.str().size() > (1u << 16)) flush();
  }
  void end() override { flush(); }

 private:
  void flush() {
    std::fwrite(w_.str().data(), 1, w_.str().size(), out_);
    w_.clear();
  }
  std::FILE* out_;
  int n_ = 0;
  CsvWriter w_;
};

class JsonSink : public RowSink {
 public:
  explicit JsonSink(std::FILE* out) : out_(out) {}
  void begin(sqlite3_stmt* st) override {
    n_ = sqlite3_column_count(st);
    names_.clear();
    for (int c = 0; c < n_; ++c) names_.emplace_back(sqlite3_column_name(st, c));
    rows_ = 0;
    // One document per statement: {"schema", "columns", "rows": [one object per row]}, streamed.
    JsonWriter w;
    w.begin_object().field("schema", json_schema_id("sql", 1));
    w.key("columns").begin_array();
    for (const std::string& name : names_) w.value(name);
    w.end_array().key("rows");
    std::fwrite(w.str().data(), 1, w.str().size(), out_);
    std::fputs("[", out_);
  }
  void row(sqlite3_stmt* st) override {
    JsonWriter w;
    w.begin_object();
    for (int c = 0; c < n_; ++c) {
      w.key(names_[static_cast<size_t>(c)]);
      switch (sqlite3_column_type(st, c)) {
        case SQLITE_INTEGER:
          w.value(static_cast<int64_t>(sqlite3_column_int64(st, c)));
          break;
        case SQLITE_FLOAT:
          w.value(sqlite3_column_double(st, c));
          break;
        case SQLITE_TEXT:
          w.value(column_text(st, c));
          break;
        case SQLITE_BLOB:
          w.value(blob_text(st, c));
          break;
        default:
          w.null();
          break;
      }
    }
    w.end_object();
    std::fputs(rows_++ ? ",\n " : "\n ", out_);
    std::fwrite(w.str().data(), 1, w.str().size(), out_);
  }
  void end() override { std::fputs(rows_ ? "\n]}\n" : "]}\n", out_); }

 private:
  std::FILE* out_;
  int n_ = 0;
  size_t rows_ = 0;
  std::vector<std::string> names_;
};

}  // namespace

std::unique_ptr<RowSink> make_sink(OutputFormat format, std::FILE* out, size_t width) {
  switch (format) {
    case OutputFormat::kCsv:
      return std::make_unique<CsvSink>(out);
    case OutputFormat::kJson:
      return std::make_unique<JsonSink>(out);
    default:
      return std::make_unique<TableSink>(out, width);
  }
}

}  // namespace mlprof::sql

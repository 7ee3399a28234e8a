// Aligned terminal tables: text columns left-aligned, numbers right-aligned, long names cut in
// the middle so the table fits the width (100 columns by default).
#pragma once

#include <string>
#include <vector>

namespace mlprof {

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  void add_column(std::string header, Align align = Align::kRight);
  void add_row(std::vector<std::string> cells);
  // Spaces between columns (2 by default; 1 fits wide numeric tables in 100 columns).
  void set_gap(size_t gap) { gap_ = gap; }
  // The first left-aligned column shrinks (cut in the middle with "...") to fit `width`.
  std::string render(size_t width = 100) const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
  size_t gap_ = 2;
};

// Human-readable durations and sizes: "12.3 ms", "850 ns", "1.50 GiB".
std::string format_duration_ns(double ns);
// At most 6 characters, 3 significant digits: "850ns", "12.3us", "1.81ms", "12.0s".
std::string format_duration_compact(double ns);
std::string format_bytes(double bytes);
std::string format_percent(double fraction);  // 0.123 -> "12.3%"
// Fixed decimals; NaN (an undefined ratio) shows as "-".
std::string format_fixed(double v, int digits);

}  // namespace mlprof

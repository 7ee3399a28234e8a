// Aligned terminal tables: text columns left-aligned, numbers right-aligned, long names cut in
// the middle so the table fits the width (100 columns by default).
#pragma once

#include <cstdint>
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
  // The narrowest the shrinking column gets (12 by default, or its header): past that the table
  // goes wider than `width` instead (tables whose names must stay readable beside many columns).
  void set_min_cut_width(size_t w) { min_cut_width_ = w; }
  // The first left-aligned column shrinks (cut in the middle with "...") to fit `width`.
  std::string render(size_t width = 100) const;
  // Every cell whole, however wide the table gets (tables whose names must not be cut: file names,
  // module paths, stack frames).
  std::string render_uncut() const { return render(SIZE_MAX); }

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
  size_t gap_ = 2;
  size_t min_cut_width_ = 12;
};

}  // namespace mlprof

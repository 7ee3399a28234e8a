#include "render/text_table.h"

#include <algorithm>
#include <map>

namespace mlprof {

void TextTable::add_column(std::string header, Align align) {
  headers_.push_back(std::move(header));
  aligns_.push_back(align);
}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

namespace {
std::string cut_middle(const std::string& s, size_t w) {
  if (s.size() <= w) return s;
  if (w <= 3) return s.substr(0, w);
  size_t left = (w - 3) / 2, right = w - 3 - left;
  return s.substr(0, left) + "..." + s.substr(s.size() - right);
}

// Cut to `w` around byte `at` (where the cell differs from another whose middle cut reads the
// same): the head, "...", and a window that holds `at` (with some context before it) or the tail.
std::string cut_around(const std::string& s, size_t w, size_t at) {
  if (s.size() <= w || w < 16) return cut_middle(s, w);
  size_t head = (w - 3) / 3, tail = w - 3 - head;
  if (at < head + tail / 4) return cut_middle(s, w);  // already in the head
  size_t from = std::min(at - tail / 4, s.size() - tail);
  if (from <= head) return s.substr(0, w);
  return s.substr(0, head) + "..." + s.substr(from, tail);
}

// The column's cells cut to `w`. Distinct names whose middle cuts collide (C++ kernel names that
// differ only inside their template arguments: "void at::native::vectorize...Array<char*, 3>)"
// twice) are cut again around where they differ, so no two rows read the same.
std::vector<std::string> cut_column(const std::vector<const std::string*>& cells, size_t w) {
  std::vector<std::string> out;
  out.reserve(cells.size());
  std::map<std::string, std::vector<size_t>> by_cut;
  for (size_t i = 0; i < cells.size(); ++i) {
    out.push_back(cut_middle(*cells[i], w));
    if (cells[i]->size() > w) by_cut[out.back()].push_back(i);
  }
  for (const auto& [cut, rows] : by_cut) {
    if (rows.size() < 2) continue;
    for (size_t i : rows) {
      // The first byte where this cell differs from the most similar other one.
      size_t at = 0;
      for (size_t j : rows) {
        if (*cells[j] == *cells[i]) continue;
        const std::string &a = *cells[i], &b = *cells[j];
        size_t p =
            std::mismatch(a.begin(), a.begin() + std::min(a.size(), b.size()), b.begin()).first -
            a.begin();
        at = std::max(at, p);
      }
      out[i] = cut_around(*cells[i], w, at);
    }
  }
  return out;
}
}  // namespace

std::string TextTable::render(size_t width) const {
  size_t ncol = headers_.size();
  std::vector<size_t> w(ncol);
  for (size_t c = 0; c < ncol; ++c) {
    w[c] = headers_[c].size();
    for (const auto& r : rows_) w[c] = std::max(w[c], r[c].size());
  }
  size_t total = 0;
  for (size_t c = 0; c < ncol; ++c) total += w[c] + (c ? gap_ : 0);
  if (total > width) {
    for (size_t c = 0; c < ncol; ++c) {
      if (aligns_[c] != Align::kLeft) continue;
      size_t excess = total - width;
      size_t minw = std::max(headers_[c].size(), min_cut_width_);
      size_t nw = w[c] > minw + excess ? w[c] - excess : std::min(w[c], minw);
      total -= w[c] - nw;
      w[c] = nw;
      break;
    }
  }
  // The one column that was narrowed: its cells cut so that distinct names stay distinct.
  std::vector<std::string> narrowed;
  size_t narrowed_col = ncol;
  for (size_t c = 0; c < ncol && narrowed_col == ncol; ++c) {
    bool cut = false;
    for (const auto& r : rows_) cut = cut || r[c].size() > w[c];
    if (!cut) continue;
    std::vector<const std::string*> cells;
    for (const auto& r : rows_) cells.push_back(&r[c]);
    narrowed = cut_column(cells, w[c]);
    narrowed_col = c;
  }
  std::string out;
  size_t row = 0;
  auto emit = [&](const std::vector<std::string>& cells, bool body) {
    std::string line;
    for (size_t c = 0; c < ncol; ++c) {
      if (c) line.append(gap_, ' ');
      std::string cell = body && c == narrowed_col ? narrowed[row] : cut_middle(cells[c], w[c]);
      std::string pad(w[c] - cell.size(), ' ');
      line += aligns_[c] == Align::kLeft ? cell + pad : pad + cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  emit(headers_, false);
  std::string rule;
  for (size_t c = 0; c < ncol; ++c)
    rule += (c ? std::string(gap_, ' ') : "") + std::string(w[c], '-');
  out += rule + '\n';
  for (row = 0; row < rows_.size(); ++row) emit(rows_[row], true);
  return out;
}

}  // namespace mlprof

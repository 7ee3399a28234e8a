#include "render/text_table.h"

#include <algorithm>

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
      size_t minw = std::max<size_t>(headers_[c].size(), 12);
      size_t nw = w[c] > minw + excess ? w[c] - excess : std::min(w[c], minw);
      total -= w[c] - nw;
      w[c] = nw;
      break;
    }
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < ncol; ++c) {
      if (c) line.append(gap_, ' ');
      std::string cell = cut_middle(cells[c], w[c]);
      std::string pad(w[c] - cell.size(), ' ');
      line += aligns_[c] == Align::kLeft ? cell + pad : pad + cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  emit(headers_);
  std::string rule;
  for (size_t c = 0; c < ncol; ++c)
    rule += (c ? std::string(gap_, ' ') : "") + std::string(w[c], '-');
  out += rule + '\n';
  for (const auto& r : rows_) emit(r);
  return out;
}

}  // namespace mlprof

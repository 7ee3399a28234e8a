#include "mlprof/analyze/interval_set.h"

#include <algorithm>

namespace mlprof {

void merge_intervals(std::vector<Interval>& v) {
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  size_t out = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    // Touching intervals merge too (HTA groups by ts > running max end).
    if (v[i].first <= v[out].second) {
      v[out].second = std::max(v[out].second, v[i].second);
    } else {
      v[++out] = v[i];
    }
  }
  v.resize(out + 1);
}

int64_t total_length(const std::vector<Interval>& merged) {
  int64_t total = 0;
  for (const auto& [b, e] : merged) total += e - b;
  return total;
}

int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].first, b[j].first);
    int64_t hi = std::min(a[i].second, b[j].second);
    if (hi > lo) total += hi - lo;
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

std::vector<Interval> intersect(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].first, b[j].first);
    int64_t hi = std::min(a[i].second, b[j].second);
    if (hi > lo) out.emplace_back(lo, hi);
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

}  // namespace mlprof

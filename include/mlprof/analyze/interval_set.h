// Unions and intersections of [begin, end) intervals: the arithmetic behind idle time,
// compute time and overlap. Sort once, sweep once.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace mlprof {

using Interval = std::pair<int64_t, int64_t>;  // [first, second)

// Sorts and merges in place; returns the merged, disjoint, sorted intervals.
void merge_intervals(std::vector<Interval>& intervals);
// Total length of disjoint intervals.
int64_t total_length(const std::vector<Interval>& merged);
// Length of the intersection of two merged interval lists.
int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b);
// The intersection itself (both inputs merged).
std::vector<Interval> intersect(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace mlprof

// Numbers as people read them, for text tables and for the sentences analyses write into their
// results (bottleneck titles): "12.3 ms", "850 ns", "1.50 GiB", "12.3%".
#pragma once

#include <string>

namespace mlprof {

// Human-readable durations and sizes: "12.3 ms", "850 ns", "1.50 GiB".
std::string format_duration_ns(double ns);
// At most 6 characters, 3 significant digits: "850ns", "12.3us", "1.81ms", "12.0s".
std::string format_duration_compact(double ns);
std::string format_bytes(double bytes);
std::string format_percent(double fraction);  // 0.123 -> "12.3%"
// Fixed decimals; NaN (an undefined ratio) shows as "-".
std::string format_fixed(double v, int digits);

}  // namespace mlprof

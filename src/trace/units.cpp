#include "trace/units.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mlprof {

std::string format_duration_ns(double ns) {
  char buf[32];
  double a = std::fabs(ns);
  if (a >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  else if (a >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  else if (a >= 1e3)
    std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  return buf;
}

std::string format_duration_compact(double ns) {
  static const char* units[] = {"ns", "us", "ms", "s"};
  double v = ns;
  int u = 0;
  while (u < 3 && std::fabs(v) >= 999.5) {
    v /= 1000.0;
    ++u;
  }
  char buf[32];
  double a = std::fabs(v);
  if (u == 0 || a >= 99.95)
    std::snprintf(buf, sizeof buf, "%.0f%s", v, units[u]);
  else if (a >= 9.995)
    std::snprintf(buf, sizeof buf, "%.1f%s", v, units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.2f%s", v, units[u]);
  return buf;
}

std::string format_bytes(double b) {
  char buf[32];
  double a = std::fabs(b);
  if (a >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024 * 1024));
  else if (a >= 1024.0 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f MiB", b / (1024.0 * 1024));
  else if (a >= 1024.0)
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}

std::string format_fixed(double v, int digits) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string format_percent(double f) {
  // One decimal, more (up to three) where rounding would claim all or nothing: 0.99998 is
  // "99.998%", not "100.0%"; 0.00004 is "0.004%", not "0.0%".
  char buf[32];
  for (int digits = 1;; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*f%%", digits, f * 100.0);
    double shown = std::strtod(buf, nullptr);
    bool claims_all = shown >= 100.0 && f < 1.0, claims_none = shown == 0.0 && f > 0.0;
    if (digits == 3 || !(claims_all || claims_none)) return buf;
  }
}

}  // namespace mlprof

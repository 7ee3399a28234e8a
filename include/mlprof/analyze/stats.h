// Small statistics kit for the analyses: two-sample tests on per-call durations (compare), robust
// slopes and a trend test on memory at step boundaries (leaks), robust location/scale (steps).
// Implemented here (no dependency); formulas and approximations are documented per function and
// in docs/analysis.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mlprof::stats {

// Standard normal CDF.
double normal_cdf(double z);
// Regularized incomplete beta I_x(a, b) (Numerical Recipes' continued fraction, Lentz).
double incomplete_beta(double a, double b, double x);
// CDF of Student's t with `df` degrees of freedom (df may be fractional, as Welch's is).
double student_t_cdf(double t, double df);

double mean(std::span<const double> v);
// Sample variance (n - 1 denominator); 0 for fewer than 2 values.
double variance(std::span<const double> v);
// The one percentile rule (numpy's default "linear" method, pandas' quantile, HTA's describe()):
// the q-quantile (q in [0, 1]) of n sorted values sits at position q * (n - 1), interpolated
// linearly between the two closest ranks. Every percentile and median mlprof reports uses it.
struct QuantilePosition {
  size_t lo = 0, hi = 0;  // the closest ranks (hi == lo at the ends)
  double frac = 0;        // weight of hi
};
QuantilePosition quantile_position(size_t n, double q);
inline double interpolate(double lo, double hi, double frac) { return lo + (hi - lo) * frac; }
template <typename T>
double quantile_sorted(const std::vector<T>& sorted, double q) {
  if (sorted.empty()) return 0;
  QuantilePosition p = quantile_position(sorted.size(), q);
  return interpolate(static_cast<double>(sorted[p.lo]), static_cast<double>(sorted[p.hi]), p.frac);
}
// The 0.5 quantile of a copy of v (the two middle values averaged for even n); 0 when empty.
double median(std::vector<double> v);
// Median absolute deviation (unscaled); multiply by 1.4826 to estimate sigma for normal data.
double mad(const std::vector<double>& v);

struct TestResult {
  double statistic = 0;  // t for Welch, U (of the first sample) for Mann-Whitney, S for Kendall
  double z = 0;          // standardized statistic (t itself for Welch)
  double df = 0;         // Welch only
  double p_value = 1;    // two-sided
  bool valid = false;    // false when a sample is too small or has no spread
};

// Welch's unequal-variance t-test (two-sided), Welch-Satterthwaite degrees of freedom.
// Needs >= 2 values per sample; two constant samples give p = 0 if their means differ, else 1.
TestResult welch_t_test(std::span<const double> a, std::span<const double> b);

// Mann-Whitney U (two-sided), normal approximation with tie correction and continuity
// correction; O((n + m) log(n + m)). Needs >= 1 value per sample (p is meaningful from ~8 each).
TestResult mann_whitney_u(std::span<const double> a, std::span<const double> b);

// Do two event counts differ in rate? k1 events over exposure e1 (e.g. steps) against k2 over
// e2: the conditional test of two Poisson rates (Przyborowski & Wilenski): given n = k1 + k2,
// k2 ~ Binomial(n, e2 / (e1 + e2)) when the rates are equal. Two-sided p: the exact binomial
// sum of the outcomes no likelier than k2 (R's binom.test) up to n = 5000, above that the
// normal approximation with continuity correction. statistic = k2 / e2 over k1 / e1 (the rate
// ratio; infinity when k1 = 0). Call counts of a deterministic program vary less than Poisson,
// so the test is conservative for them. valid = false when n = 0 or an exposure is not > 0.
TestResult poisson_rate_test(uint64_t k1, double e1, uint64_t k2, double e2);

// Theil-Sen slope: median of the pairwise slopes (y_j - y_i) / (x_j - x_i), i < j, x_i != x_j.
// O(n^2) pairs; above `max_points` points the series is thinned evenly first (leak series are
// one point per step, so this only bounds pathological inputs).
double theil_sen_slope(std::span<const double> x, std::span<const double> y,
                       size_t max_points = 2000);

// Mann-Kendall monotonic-trend test over a series in time order (two-sided): S = sum of
// sign(y_j - y_i) for i < j, variance with the tie correction, z with continuity correction.
// Needs >= 4 points (valid = false below that).
TestResult mann_kendall(std::span<const double> y, size_t max_points = 2000);

}  // namespace mlprof::stats

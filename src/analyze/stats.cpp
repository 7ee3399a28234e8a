#include "mlprof/analyze/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace mlprof::stats {

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

namespace {

// Continued fraction for the incomplete beta (modified Lentz), Numerical Recipes 6.4.
double beta_continued_fraction(double a, double b, double x) {
  constexpr int kMaxIterations = 300;
  constexpr double kEps = 1e-15, kTiny = 1e-300;
  double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEps) break;
  }
  return h;
}

// Evenly thinned copy of indices when a series is longer than max_points.
std::vector<size_t> thin(size_t n, size_t max_points) {
  std::vector<size_t> idx;
  if (n <= max_points || max_points < 2) {
    idx.resize(n);
    std::iota(idx.begin(), idx.end(), 0);
    return idx;
  }
  idx.reserve(max_points);
  for (size_t k = 0; k < max_points; ++k) idx.push_back(k * (n - 1) / (max_points - 1));
  return idx;
}

}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double ln_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  double front = std::exp(ln_front);
  // The continued fraction converges fast for x < (a + 1) / (a + b + 2); use symmetry otherwise.
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

double student_t_cdf(double t, double df) {
  if (!(df > 0)) return 0.5;
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  double x = df / (df + t * t);
  double tail = 0.5 * incomplete_beta(df / 2, 0.5, x);  // P(T > |t|)
  return t > 0 ? 1 - tail : tail;
}

double mean(std::span<const double> v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double variance(std::span<const double> v) {
  if (v.size() < 2) return 0;
  double m = mean(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size() - 1);
}

QuantilePosition quantile_position(size_t n, double q) {
  QuantilePosition p;
  if (n == 0) return p;
  q = std::clamp(q, 0.0, 1.0);
  double pos = q * static_cast<double>(n - 1);
  p.lo = static_cast<size_t>(std::floor(pos));
  p.hi = std::min(p.lo + 1, n - 1);
  p.frac = pos - static_cast<double>(p.lo);
  return p;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double hi = v[mid];
  if (n % 2 == 1) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + mid);
  return (lo + hi) / 2;
}

double mad(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double m = median(v);
  std::vector<double> dev(v.size());
  for (size_t i = 0; i < v.size(); ++i) dev[i] = std::fabs(v[i] - m);
  return median(std::move(dev));
}

TestResult welch_t_test(std::span<const double> a, std::span<const double> b) {
  TestResult r;
  if (a.size() < 2 || b.size() < 2) return r;
  double ma = mean(a), mb = mean(b);
  double va = variance(a) / a.size(), vb = variance(b) / b.size();
  double se2 = va + vb;
  r.valid = true;
  if (se2 <= 0) {
    r.statistic = r.z = ma == mb ? 0 : (ma > mb ? INFINITY : -INFINITY);
    r.p_value = ma == mb ? 1 : 0;
    return r;
  }
  double t = (ma - mb) / std::sqrt(se2);
  double df =
      se2 * se2 /
      (va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1));
  r.statistic = r.z = t;
  r.df = df;
  r.p_value = std::min(1.0, 2 * student_t_cdf(-std::fabs(t), df));
  return r;
}

TestResult mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  TestResult r;
  size_t n1 = a.size(), n2 = b.size();
  if (n1 == 0 || n2 == 0) return r;
  // Rank the pooled sample (average ranks for ties) with one sort of (value, from_a) pairs.
  std::vector<std::pair<double, bool>> pooled;
  pooled.reserve(n1 + n2);
  for (double x : a) pooled.emplace_back(x, true);
  for (double x : b) pooled.emplace_back(x, false);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& l, const auto& r2) { return l.first < r2.first; });
  double rank_sum_a = 0, tie_term = 0;
  size_t n = pooled.size();
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_a += avg_rank;
    double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2), dn = dn1 + dn2;
  double u1 = rank_sum_a - dn1 * (dn1 + 1) / 2;
  double mu = dn1 * dn2 / 2;
  double var = dn1 * dn2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  r.statistic = u1;
  r.valid = true;
  if (var <= 0) {  // every value tied: no evidence of a difference
    r.p_value = 1;
    return r;
  }
  double diff = u1 - mu;
  double cc = diff > 0 ? -0.5 : (diff < 0 ? 0.5 : 0);  // continuity correction toward the mean
  r.z = (diff + cc) / std::sqrt(var);
  r.p_value = std::min(1.0, 2 * normal_cdf(-std::fabs(r.z)));
  return r;
}

double theil_sen_slope(std::span<const double> x, std::span<const double> y, size_t max_points) {
  size_t n = std::min(x.size(), y.size());
  std::vector<size_t> idx = thin(n, max_points);
  std::vector<double> slopes;
  slopes.reserve(idx.size() * (idx.size() - (idx.empty() ? 0 : 1)) / 2);
  for (size_t i = 0; i < idx.size(); ++i)
    for (size_t j = i + 1; j < idx.size(); ++j) {
      double dx = x[idx[j]] - x[idx[i]];
      if (dx != 0) slopes.push_back((y[idx[j]] - y[idx[i]]) / dx);
    }
  return median(std::move(slopes));
}

TestResult mann_kendall(std::span<const double> y_all, size_t max_points) {
  TestResult r;
  std::vector<size_t> idx = thin(y_all.size(), max_points);
  size_t n = idx.size();
  if (n < 4) return r;
  double s = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      double d = y_all[idx[j]] - y_all[idx[i]];
      s += d > 0 ? 1 : (d < 0 ? -1 : 0);
    }
  // Tie correction: sum over groups of equal values of t(t-1)(2t+5).
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = y_all[idx[i]];
  std::sort(v.begin(), v.end());
  double ties = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && v[j] == v[i]) ++j;
    double t = static_cast<double>(j - i);
    ties += t * (t - 1) * (2 * t + 5);
    i = j;
  }
  double dn = static_cast<double>(n);
  double var = (dn * (dn - 1) * (2 * dn + 5) - ties) / 18;
  r.statistic = s;
  r.valid = true;
  if (var <= 0) {
    r.p_value = 1;
    return r;
  }
  r.z = s > 0 ? (s - 1) / std::sqrt(var) : (s < 0 ? (s + 1) / std::sqrt(var) : 0);
  r.p_value = std::min(1.0, 2 * normal_cdf(-std::fabs(r.z)));
  return r;
}

TestResult poisson_rate_test(uint64_t k1, double e1, uint64_t k2, double e2) {
  TestResult r;
  uint64_t n = k1 + k2;
  if (n == 0 || !(e1 > 0) || !(e2 > 0)) return r;
  r.valid = true;
  double p0 = e2 / (e1 + e2);
  r.statistic = k1 > 0 ? (static_cast<double>(k2) / e2) / (static_cast<double>(k1) / e1)
                       : std::numeric_limits<double>::infinity();
  double dn = static_cast<double>(n), sd = std::sqrt(dn * p0 * (1 - p0));
  double dev = static_cast<double>(k2) - dn * p0;
  r.z = sd > 0 ? dev / sd : 0;
  constexpr uint64_t kExactUpTo = 5000;
  if (n <= kExactUpTo) {
    auto log_pmf = [&](uint64_t k) {
      double dk = static_cast<double>(k);
      return std::lgamma(dn + 1) - std::lgamma(dk + 1) - std::lgamma(dn - dk + 1) +
             dk * std::log(p0) + (dn - dk) * std::log1p(-p0);
    };
    // Outcomes as unlikely as the observed one, with R's relative tolerance for ties.
    double observed = log_pmf(k2) + std::log1p(1e-7);
    double p = 0;
    for (uint64_t k = 0; k <= n; ++k) {
      double lp = log_pmf(k);
      if (lp <= observed) p += std::exp(lp);
    }
    r.p_value = std::min(1.0, p);
    return r;
  }
  double zc = sd > 0 ? std::max(0.0, std::fabs(dev) - 0.5) / sd : 0;
  r.p_value = std::min(1.0, 2 * normal_cdf(-zc));
  return r;
}

}  // namespace mlprof::stats

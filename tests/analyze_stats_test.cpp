// Expected values: computed independently in Python (stdlib): the t CDF by Simpson integration of
// the t density (200k intervals), U by counting pairs, normal tail by math.erfc. The script is
// docs/analysis.md's "stats check" snippet.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "mlprof/analyze/stats.h"

using namespace mlprof::stats;

TEST(Stats, NormalAndStudentT) {
  EXPECT_NEAR(normal_cdf(1.959963985), 0.975, 1e-9);
  EXPECT_NEAR(student_t_cdf(2.0, 10), 0.9633059826, 1e-8);
  EXPECT_NEAR(student_t_cdf(-1.5, 3.7), 0.1067990846, 1e-8);
  EXPECT_NEAR(student_t_cdf(0, 5), 0.5, 1e-12);
}

TEST(Stats, WelchMatchesHandComputation) {
  std::vector<double> a{1, 2, 3, 4, 5}, b{2, 4, 6, 8, 10};
  TestResult r = welch_t_test(a, b);
  ASSERT_TRUE(r.valid);
  EXPECT_NEAR(r.statistic, -1.8973665961, 1e-9);
  EXPECT_NEAR(r.df, 5.8823529412, 1e-9);
  EXPECT_NEAR(r.p_value, 0.1075311949, 1e-7);
}

TEST(Stats, WelchConstantSamples) {
  std::vector<double> a{3, 3, 3}, b{3, 3, 3}, c{4, 4, 4};
  EXPECT_DOUBLE_EQ(welch_t_test(a, b).p_value, 1.0);
  EXPECT_DOUBLE_EQ(welch_t_test(a, c).p_value, 0.0);
  EXPECT_FALSE(welch_t_test(std::vector<double>{1}, a).valid);
}

TEST(Stats, MannWhitneyMatchesPairCounting) {
  std::vector<double> a{1.1, 2.3, 3.5, 4.0, 5.2, 6.1, 7.7, 8.4, 9.9, 10.5};
  std::vector<double> b{5.5, 6.6, 7.0, 8.8, 9.1, 10.2, 11.3, 12.4, 13.0, 14.2, 15.5};
  TestResult r = mann_whitney_u(a, b);
  ASSERT_TRUE(r.valid);
  EXPECT_DOUBLE_EQ(r.statistic, 18.0);
  EXPECT_NEAR(r.z, -2.5702525843, 1e-9);
  EXPECT_NEAR(r.p_value, 0.0101624389, 1e-9);
  // Identical samples: no evidence of a difference.
  EXPECT_NEAR(mann_whitney_u(a, a).p_value, 1.0, 1e-12);
}

TEST(Stats, TheilSenIgnoresOutlier) {
  std::vector<double> x, y;
  for (int i = 0; i < 12; ++i) {
    x.push_back(i);
    y.push_back(2.0 * i + 1);
  }
  y[5] = 1000;  // one wild point
  EXPECT_DOUBLE_EQ(theil_sen_slope(x, y), 2.0);
}

TEST(Stats, MannKendallMonotonic) {
  std::vector<double> y;
  for (int i = 0; i < 10; ++i) y.push_back(100 + 7.0 * i);
  TestResult r = mann_kendall(y);
  ASSERT_TRUE(r.valid);
  EXPECT_DOUBLE_EQ(r.statistic, 45);
  EXPECT_NEAR(r.z, 3.9354796404, 1e-9);
  EXPECT_NEAR(r.p_value, 8.303070333e-05, 1e-12);
  // Flat series: all ties, no trend.
  std::vector<double> flat(10, 5.0);
  EXPECT_DOUBLE_EQ(mann_kendall(flat).p_value, 1.0);
  EXPECT_FALSE(mann_kendall(std::vector<double>{1, 2, 3}).valid);
}

TEST(Stats, MedianAndMad) {
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(mad({1, 2, 3, 4, 100}), 1);
}

// numpy.percentile(v, q) (method "linear"): [1, 2, 3, 4] -> p25 1.75, p50 2.5, p90 3.7, p99 3.97.
TEST(Stats, OnePercentileRule) {
  std::vector<int64_t> v = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.5), 2.5);
  EXPECT_NEAR(quantile_sorted(v, 0.9), 3.7, 1e-12);
  EXPECT_NEAR(quantile_sorted(v, 0.99), 3.97, 1e-12);
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 1.0), 4);
  EXPECT_DOUBLE_EQ(quantile_sorted(std::vector<double>{}, 0.5), 0);
  EXPECT_DOUBLE_EQ(quantile_sorted(std::vector<double>{4, 5, 6, 7, 8}, 0.5),
                   median({8, 4, 6, 5, 7}));
}

// Two Poisson rates: exact conditional binomial (R's binom.test: binom.test(20, 30) gives
// p = 0.09874); above 5000 events the normal approximation. Expected values from a short Python
// computation (math.lgamma sums), not from this code.
TEST(Stats, PoissonRateTest) {
  using mlprof::stats::poisson_rate_test;
  EXPECT_NEAR(poisson_rate_test(10, 1, 20, 1).p_value, 0.09873714670538988, 1e-10);
  EXPECT_NEAR(poisson_rate_test(40, 40, 40, 40).p_value, 1.0, 1e-9);
  EXPECT_NEAR(poisson_rate_test(100, 20, 130, 20).p_value, 0.055613577781387084, 1e-10);
  EXPECT_NEAR(poisson_rate_test(12, 4, 30, 6).p_value, 0.1565065665229778, 1e-10);
  EXPECT_NEAR(poisson_rate_test(3000, 10, 3200, 10).p_value, 0.011494244344739446, 1e-10);
  EXPECT_DOUBLE_EQ(poisson_rate_test(10, 1, 20, 1).statistic, 2.0);
  EXPECT_FALSE(poisson_rate_test(0, 1, 0, 1).valid);
  EXPECT_FALSE(poisson_rate_test(3, 0, 4, 1).valid);
}

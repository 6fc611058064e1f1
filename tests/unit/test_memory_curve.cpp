// Memory-bound kernel curve: bytes per op, fit recovery on synthetic data, scaling, json, errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/kernel/memory_curve.hpp"

using namespace fleetsim;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string fit_error(const std::vector<double>& bytes, const std::vector<double>& seconds) {
  try {
    fit_memory_curve(bytes, seconds);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("memory curve: memory kernel bytes per op") {
  const double n = 1024.0 * 2048.0;
  CHECK(memory_kernel_bytes("add", 1024, 2048) == doctest::Approx(12 * n));
  CHECK(memory_kernel_bytes("MUL", 1024, 2048) == doctest::Approx(12 * n));
  CHECK(memory_kernel_bytes("pow", 1024, 2048) == doctest::Approx(12 * n));
  CHECK(memory_kernel_bytes("addu", 1024, 2048) == doctest::Approx(8 * n));
  CHECK(memory_kernel_bytes("gelu", 1024, 2048) == doctest::Approx(8 * n));
  CHECK(memory_kernel_bytes("softmax", 1024, 2048) == doctest::Approx(8 * n));
  CHECK(memory_kernel_bytes("ln", 1024, 2048) == doctest::Approx(8 * n + 8 * 2048 + 8 * 1024));
  CHECK(memory_kernel_bytes("some_new_op", 1024, 2048) == doctest::Approx(8 * n));
  CHECK(memory_kernel_bytes("add", 0, 2048) == 0);
  CHECK_THROWS_AS(memory_kernel_bytes("add", -1, 2), std::invalid_argument);
}

TEST_CASE("memory curve: fit recovers launch and bandwidth from synthetic data") {
  const double launch = 12e-6, bw = 900e9;
  std::vector<double> bytes, seconds;
  for (double s = 1e6; s < 4e9; s *= 1.7) {
    bytes.push_back(s);
    seconds.push_back(launch + s / bw);
  }
  const MemoryCurve c = fit_memory_curve(bytes, seconds);
  CHECK(c.launch_s == doctest::Approx(launch).epsilon(1e-6));
  CHECK(c.bw_bytes_per_s == doctest::Approx(bw).epsilon(1e-6));
  CHECK(c.op_multiplier == 1);
  CHECK(c.seconds(5e8) == doctest::Approx(launch + 5e8 / bw).epsilon(1e-6));
  // Effective bandwidth saturates: s / (t - 0) = bw * s / (s + launch * bw).
  CHECK(5e8 / c.seconds(5e8) < 1e10 / c.seconds(1e10));
  CHECK(c.bandwidth(5e8) == doctest::Approx(bw).epsilon(1e-6));
}

TEST_CASE("memory curve: fit is robust to an outlier and clamps a negative intercept") {
  const double bw = 300e9;
  std::vector<double> bytes, seconds;
  for (int i = 0; i < 20; ++i) {
    bytes.push_back(5e7 * (i + 1));
    seconds.push_back(2e-5 + bytes.back() / bw);
  }
  seconds[7] *= 3;  // one corrupted measurement
  const MemoryCurve c = fit_memory_curve(bytes, seconds);
  CHECK(c.bw_bytes_per_s == doctest::Approx(bw).epsilon(0.01));
  CHECK(c.launch_s == doctest::Approx(2e-5).epsilon(0.05));

  // Data implying a negative launch: the intercept is clamped to 0, bandwidth refitted.
  std::vector<double> t2;
  for (double s : bytes) t2.push_back(s / bw - 1e-5);
  const MemoryCurve c2 = fit_memory_curve(bytes, t2);
  CHECK(c2.launch_s == 0);
  CHECK(c2.bw_bytes_per_s > 0);
}

TEST_CASE("memory curve: fit with a row-length table recovers per-row bandwidth") {
  // Row length 1024 runs at 1.25x the bandwidth of the others (inverse bandwidth x0.8).
  const double launch = 8e-6, bw = 500e9;
  std::vector<double> bytes, seconds, rows;
  for (double h : {768.0, 1024.0, 2048.0, 4096.0}) {
    for (double b : {8192.0, 32768.0, 131072.0}) {
      const double s = 8 * b * h;
      bytes.push_back(s);
      rows.push_back(h);
      seconds.push_back(launch + s / bw * (h == 1024.0 ? 0.8 : 1.0));
    }
  }
  const MemoryCurve c = fit_memory_curve(bytes, seconds, rows);
  REQUIRE(c.row_knots.size() == 4);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    CHECK(c.seconds(bytes[i], rows[i]) == doctest::Approx(seconds[i]).epsilon(1e-5));
  CHECK(c.launch_s == doctest::Approx(launch).epsilon(1e-4));
  // Without a row length the curve sits at the fitted rows' average inverse bandwidth (0.95 / bw).
  CHECK(c.seconds(1e9) == doctest::Approx(launch + 1e9 * 0.95 / bw).epsilon(1e-4));
  // Between knots the row table interpolates in log(row length); outside it clamps.
  CHECK(c.seconds(1e9, 100000) == doctest::Approx(c.seconds(1e9, 4096)));
  const double mid = c.seconds(1e9, std::sqrt(1024.0 * 2048.0));
  CHECK(mid == doctest::Approx(0.5 * (c.seconds(1e9, 1024) + c.seconds(1e9, 2048))));
}

TEST_CASE("memory curve: fit with size knots follows a size-dependent bandwidth") {
  // Bandwidth ramps from 60% to 100% of peak between 10 MB and 1 GB (cache-free ramp-up).
  std::vector<double> bytes, seconds;
  for (double s = 1e7; s <= 1e9 * 1.0001; s *= std::pow(10.0, 0.25)) {
    const double f = 0.6 + 0.4 * (std::log10(s) - 7) / 2;
    bytes.push_back(s);
    seconds.push_back(5e-6 + s / (800e9 * f));
  }
  MemoryFitOptions opt;
  opt.size_knots = 3;
  const MemoryCurve c = fit_memory_curve(bytes, seconds, {}, opt);
  REQUIRE(c.size_knots_bytes.size() == 3);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    CHECK(c.seconds(bytes[i]) == doctest::Approx(seconds[i]).epsilon(0.05));
}

TEST_CASE("memory curve: scaled transfers bandwidth and launch by ratio") {
  MemoryCurve c;
  c.launch_s = 10e-6;
  c.bw_bytes_per_s = 800e9;
  c.row_knots = {1024, 4096};
  c.row_adj = {-0.1, 0.1};
  const MemoryCurve s = scaled(c, 300.0 / 900.0, 2);
  CHECK(s.bw_bytes_per_s == doctest::Approx(800e9 / 3));
  CHECK(s.launch_s == doctest::Approx(20e-6));
  CHECK(s.row_adj == c.row_adj);
  CHECK(s.seconds(1e9, 1024) - s.launch_s == doctest::Approx(3 * (c.seconds(1e9, 1024) - c.launch_s)));
  CHECK(scaled(c, 1).seconds(3e8) == doctest::Approx(c.seconds(3e8)));
  CHECK_THROWS_AS(scaled(c, 0), std::invalid_argument);
  CHECK_THROWS_AS(scaled(c, 1, -1), std::invalid_argument);
}

TEST_CASE("memory curve: json round trip") {
  MemoryCurve c;
  c.launch_s = 1.5e-5;
  c.bw_bytes_per_s = 1.37e12;
  c.op_multiplier = 1.1;
  c.size_knots_bytes = {1e7, 1e8, 1e9};
  c.size_adj = {0, 0.05, -0.02};
  c.row_knots = {768, 1024};
  c.row_adj = {0.1, -0.1};
  const nlohmann::json j = to_json(c);
  const MemoryCurve back = memory_curve_from_json(nlohmann::json::parse(j.dump()));
  CHECK(back.launch_s == c.launch_s);
  CHECK(back.bw_bytes_per_s == c.bw_bytes_per_s);
  CHECK(back.op_multiplier == c.op_multiplier);
  CHECK(back.size_knots_bytes == c.size_knots_bytes);
  CHECK(back.size_adj == c.size_adj);
  CHECK(back.row_knots == c.row_knots);
  CHECK(back.row_adj == c.row_adj);
  CHECK(back.seconds(3e8, 900) == doctest::Approx(c.seconds(3e8, 900)));

  const MemoryCurve plain = memory_curve_from_json(nlohmann::json{{"launch_s", 0}, {"bw_bytes_per_s", 1e11}});
  CHECK(plain.op_multiplier == 1);
  CHECK(plain.seconds(1e9) == doctest::Approx(0.01));
}

TEST_CASE("memory curve: json errors name the key") {
  auto err = [](const nlohmann::json& j) {
    try {
      memory_curve_from_json(j);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(contains(err(nlohmann::json{{"launch_s", 0}}), "bw_bytes_per_s"));
  CHECK(contains(err(nlohmann::json{{"launch_s", "x"}, {"bw_bytes_per_s", 1}}), "launch_s"));
  CHECK(contains(err(nlohmann::json{{"launch_s", 0}, {"bw_bytes_per_s", -1}}), "bw_bytes_per_s"));
  CHECK(contains(err(nlohmann::json{{"launch_s", 0}, {"bw_bytes_per_s", 1}, {"row_knots", {1, 2}}}), "row"));
  CHECK(contains(
      err(nlohmann::json{{"launch_s", 0}, {"bw_bytes_per_s", 1}, {"row_knots", {2, 1}}, {"row_adj", {0, 0}}}),
      "ascending"));
  CHECK(contains(err(nlohmann::json::array()), "object"));
}

TEST_CASE("memory curve: too few points is an error") {
  CHECK(contains(fit_error({}, {}), "at least 2 points"));
  CHECK(contains(fit_error({1e6}, {1e-5}), "at least 2 points"));
  CHECK(contains(fit_error({1e6, 1e6, 1e6}, {1e-5, 1e-5, 1e-5}), "distinct sizes"));
  CHECK(contains(fit_error({1e6, 2e6}, {1e-5}), "differ in length"));
  CHECK(contains(fit_error({1e6, -2e6}, {1e-5, 2e-5}), "point 1"));
  CHECK(fit_error({1e6, 2e6}, {1e-5, 2e-5}).empty());  // two points suffice for the affine form
  // The row table needs as many points as parameters.
  std::string msg;
  try {
    fit_memory_curve({1e6, 2e6, 3e6}, {1e-5, 2e-5, 3e-5}, {768, 1024, 2048});
  } catch (const std::invalid_argument& e) {
    msg = e.what();
  }
  CHECK(contains(msg, "parameters"));
  // fit_memory_curve_for_op falls back to the affine fit when the row table cannot be fitted.
  CHECK(memory_op_uses_rows("LN"));
  CHECK(memory_op_uses_rows("softmax"));
  CHECK_FALSE(memory_op_uses_rows("add"));
  const MemoryCurve fb =
      fit_memory_curve_for_op("ln", {1e6, 2e6, 3e6}, {1e-5, 2e-5, 3e-5}, {768, 1024, 2048});
  CHECK(fb.row_knots.empty());
  CHECK(fb.bw_bytes_per_s == doctest::Approx(1e11));
  const MemoryCurve rows = fit_memory_curve_for_op("softmax", {1e6, 2e6, 3e6, 4e6}, {1e-5, 2e-5, 3e-5, 4e-5},
                                                   {768, 768, 1024, 1024});
  CHECK(rows.row_knots.size() == 2);
  CHECK(fit_memory_curve_for_op("add", {1e6, 2e6, 3e6, 4e6}, {1e-5, 2e-5, 3e-5, 4e-5}, {768, 768, 1024, 1024})
            .row_knots.empty());
}

TEST_CASE("memory curve: half split order is the documented portable shuffle") {
  const std::vector<std::size_t> idx = half_split_order(10, 42);
  // Reference: the same Fisher-Yates on raw mt19937(42) outputs (also reproduced in numpy).
  std::vector<std::size_t> ref(10);
  for (std::size_t i = 0; i < 10; ++i) ref[i] = i;
  std::mt19937 gen(42);
  for (std::size_t i = 9; i >= 1; --i) std::swap(ref[i], ref[static_cast<std::size_t>(gen()) % (i + 1)]);
  CHECK(idx == ref);
  std::vector<std::size_t> sorted = idx;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < 10; ++i) CHECK(sorted[i] == i);
  CHECK(half_split_order(0).empty());
  CHECK(half_split_order(1) == std::vector<std::size_t>{0});
}

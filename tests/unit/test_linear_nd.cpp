// LinearNdInterpolator (models/job/linear_nd.hpp): Qhull's Delaunay triangulation and barycentric
// interpolation, as scipy's LinearNDInterpolator. Its agreement with scipy on real profiles is in
// test_pollux.cpp ("real data: step times equal Pollux's simulator").
#include <doctest/doctest.h>

#include <random>
#include <stdexcept>

#include "models/job/linear_nd.hpp"

using namespace fleetsim;

TEST_CASE("linear_nd: a linear function is reproduced exactly, even on cospherical (cube) points") {
  std::vector<double> pts, vals;
  auto f = [](double x, double y, double z) { return 1 + 2 * x + 3 * y + 4 * z; };
  for (int i = 0; i < 8; ++i) {
    const double x = i & 1, y = (i >> 1) & 1, z = (i >> 2) & 1;
    pts.insert(pts.end(), {x, y, z});
    vals.insert(vals.end(), {f(x, y, z), -f(x, y, z)});
  }
  const LinearNdInterpolator in(3, 2, pts, vals);
  CHECK(in.simplex_count() >= 5);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (int k = 0; k < 200; ++k) {
    const double x = u(rng), y = u(rng), z = u(rng);
    const auto v = in.at({x, y, z});
    REQUIRE(v.has_value());
    CHECK((*v)[0] == doctest::Approx(f(x, y, z)));
    CHECK((*v)[1] == doctest::Approx(-f(x, y, z)));
  }
  // Corners and faces are inside (scipy's tolerance), the rest is not.
  CHECK(in.at({1, 1, 1}).has_value());
  CHECK(in.at({0.5, 0, 0.5}).has_value());
  CHECK_FALSE(in.at({1.01, 0.5, 0.5}).has_value());
  CHECK_FALSE(in.at({-0.5, 0.5, 0.5}).has_value());
  CHECK_FALSE(in.at({0.5, 0.5}).has_value());  // wrong dimension
}

TEST_CASE("linear_nd: piecewise linear between the data points (2-D square with a peak)") {
  // Corners 0, centre 1: the centre is a vertex of every triangle, so along the diagonal from a
  // corner to the centre the value rises linearly, whatever the triangulation.
  const LinearNdInterpolator in(2, 1, {0, 0, 1, 0, 0, 1, 1, 1, 0.5, 0.5}, {0, 0, 0, 0, 1});
  CHECK(in.simplex_count() == 4);
  CHECK((*in.at({0.25, 0.25}))[0] == doctest::Approx(0.5));
  CHECK((*in.at({0.5, 0.5}))[0] == doctest::Approx(1));
  CHECK((*in.at({0.5, 0.0}))[0] == doctest::Approx(0));
  CHECK((*in.at({0.5, 0.25}))[0] == doctest::Approx(0.5));
}

TEST_CASE("linear_nd: points Qhull cannot triangulate are refused") {
  CHECK_THROWS_AS(LinearNdInterpolator(3, 1, {0, 0, 0, 1, 0, 0, 0, 1, 0}, {1, 2, 3}), std::runtime_error);
  // All in the plane z = 0.
  CHECK_THROWS_AS(LinearNdInterpolator(3, 1, {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 2, 3, 0}, {1, 2, 3, 4, 5}),
                  std::runtime_error);
  CHECK_THROWS_AS(LinearNdInterpolator(3, 1, {0, 0, 0, 1, 0, 0}, {1, 2, 3}), std::runtime_error);
}

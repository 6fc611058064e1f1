#pragma once
// Piecewise-linear interpolation of scattered points in D dimensions over their Delaunay
// triangulation, as scipy.interpolate.LinearNDInterpolator does it (the interpolator Pollux's
// simulator uses for placements it has no exact profile of). The triangulation is Qhull's, with the
// options scipy.spatial.Delaunay passes ("d Qbb Qc Qz Q12 Qt"), so the same points give the same
// simplices; a query is located by barycentric coordinates with scipy's tolerances.
#include <optional>
#include <vector>

namespace fleetsim {

class LinearNdInterpolator {
 public:
  /// points: n x dim coordinates, row-major; values: n x width, row-major. Throws std::runtime_error
  /// when Qhull cannot triangulate the points (fewer than dim + 1, or all in a hyperplane).
  LinearNdInterpolator(int dim, int width, std::vector<double> points, std::vector<double> values);

  /// The interpolated values at x (dim coordinates), or nullopt outside the convex hull of the points.
  std::optional<std::vector<double>> at(const std::vector<double>& x) const;

  std::size_t simplex_count() const { return simplices_.size(); }

 private:
  struct Simplex {
    std::vector<int> vertex;        ///< dim + 1 point indices
    std::vector<double> transform;  ///< dim x dim inverse of [p_i - p_dim], row-major
  };
  std::optional<std::vector<double>> locate(const std::vector<double>& x, double eps) const;

  int dim_;
  int width_;
  std::vector<double> points_;
  std::vector<double> values_;
  std::vector<Simplex> simplices_;
};

}  // namespace fleetsim

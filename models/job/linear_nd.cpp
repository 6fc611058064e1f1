#include "models/job/linear_nd.hpp"

#include <Eigen/Dense>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

extern "C" {
#include <libqhull_r/qhull_ra.h>
}

namespace fleetsim {
namespace {

/// Owns one reentrant Qhull run; frees its memory on every path.
class QhullRun {
 public:
  QhullRun(int dim, int n, double* points) : messages_(std::tmpfile()) {
    // Qhull reports errors on a stream: a scratch file, so that a refused point set is the caller's
    // exception and not noise on stderr.
    FILE* err = messages_ != nullptr ? messages_ : stderr;
    qh_zero(&qh_, err);
    char options[] = "qhull d Qbb Qc Qz Q12 Qt";
    exit_code_ = qh_new_qhull(&qh_, dim, n, points, False, options, nullptr, err);
  }
  ~QhullRun() {
    qh_freeqhull(&qh_, !qh_ALL);
    int curlong = 0, totlong = 0;
    qh_memfreeshort(&qh_, &curlong, &totlong);
    if (messages_ != nullptr) std::fclose(messages_);
  }
  QhullRun(const QhullRun&) = delete;
  QhullRun& operator=(const QhullRun&) = delete;
  bool ok() const { return exit_code_ == 0; }
  qhT& qh() { return qh_; }

 private:
  FILE* messages_ = nullptr;
  qhT qh_{};
  int exit_code_ = -1;
};

}  // namespace

LinearNdInterpolator::LinearNdInterpolator(int dim, int width, std::vector<double> points,
                                           std::vector<double> values)
    : dim_(dim), width_(width), points_(std::move(points)), values_(std::move(values)) {
  const auto d = static_cast<std::size_t>(dim);
  const int n = dim > 0 ? static_cast<int>(points_.size() / d) : 0;
  if (dim < 1 || width < 1 || points_.size() != d * static_cast<std::size_t>(n) ||
      values_.size() != static_cast<std::size_t>(width) * static_cast<std::size_t>(n))
    throw std::runtime_error("LinearNdInterpolator: points and values do not match");
  if (n < dim + 1)
    throw std::runtime_error("needs at least " + std::to_string(dim + 1) + " points, got " +
                             std::to_string(n));
  std::vector<double> scratch = points_;  // Qhull may scale its input (Qbb)
  QhullRun run(dim, n, scratch.data());
  if (!run.ok()) throw std::runtime_error("Qhull cannot triangulate the points (all in one hyperplane?)");
  qhT* qh = &run.qh();
  for (facetT* f = qh->facet_list; f != nullptr && f->next != nullptr; f = f->next) {
    if (f->upperdelaunay) continue;
    Simplex s;
    const int k = qh_setsize(qh, f->vertices);
    bool valid = k == dim + 1;
    for (int v = 0; valid && v < k; ++v) {
      const auto* vertex = static_cast<vertexT*>(f->vertices->e[v].p);
      const int id = qh_pointid(qh, vertex->point);
      valid = id >= 0 && id < n;
      s.vertex.push_back(id);
    }
    if (!valid) continue;
    // Barycentric transform: c = T^-1 (x - p_last); skip flat simplices (scipy marks them NaN).
    Eigen::MatrixXd t(dim, dim);
    const auto last = static_cast<std::size_t>(s.vertex[d]) * d;
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j)
        t(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(i)) =
            points_[static_cast<std::size_t>(s.vertex[i]) * d + j] - points_[last + j];
    Eigen::FullPivLU<Eigen::MatrixXd> lu(t);
    if (!lu.isInvertible()) continue;
    const Eigen::MatrixXd inv = lu.inverse();
    if (!inv.allFinite()) continue;
    s.transform.resize(d * d);
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j)
        s.transform[i * d + j] = inv(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
    simplices_.push_back(std::move(s));
  }
  if (simplices_.empty()) throw std::runtime_error("Qhull gave no simplices (degenerate points)");
}

std::optional<std::vector<double>> LinearNdInterpolator::locate(const std::vector<double>& x,
                                                                double eps) const {
  const auto d = static_cast<std::size_t>(dim_);
  const auto w = static_cast<std::size_t>(width_);
  std::vector<double> c(d + 1);
  for (const Simplex& s : simplices_) {
    const auto last = static_cast<std::size_t>(s.vertex[d]) * d;
    double sum = 0;
    bool inside = true;
    for (std::size_t i = 0; i < d && inside; ++i) {
      double ci = 0;
      for (std::size_t j = 0; j < d; ++j) ci += s.transform[i * d + j] * (x[j] - points_[last + j]);
      c[i] = ci;
      sum += ci;
      inside = ci >= -eps && ci <= 1 + eps;
    }
    c[d] = 1 - sum;
    if (!inside || c[d] < -eps || c[d] > 1 + eps) continue;
    std::vector<double> out(w, 0.0);
    for (std::size_t v = 0; v <= d; ++v)
      for (std::size_t k = 0; k < w; ++k)
        out[k] += c[v] * values_[static_cast<std::size_t>(s.vertex[v]) * w + k];
    return out;
  }
  return std::nullopt;
}

std::optional<std::vector<double>> LinearNdInterpolator::at(const std::vector<double>& x) const {
  if (x.size() != static_cast<std::size_t>(dim_)) return std::nullopt;
  for (double v : x)
    if (!std::isfinite(v)) return std::nullopt;
  if (auto v = locate(x, 100 * DBL_EPSILON)) return v;
  return locate(x, std::sqrt(DBL_EPSILON));
}

}  // namespace fleetsim

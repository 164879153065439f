// DPareto's core library (plugins/tuner/dpareto/include/dpareto): hypervolume references, cell
// decomposition, ΔPF, PoI against Monte Carlo, GP posterior and marginal likelihood, Matérn 5/2,
// Halton points, the loop.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <thread>

#include "dpareto/gp.hpp"
#include "dpareto/halton.hpp"
#include "dpareto/hvpoi.hpp"
#include "dpareto/mobo.hpp"
#include "dptune/helpers/pareto.hpp"
#include "dptune/rng.hpp"
#include "test_size.hpp"

namespace dp = dptune::dpareto;
using dptune::Point;

namespace {

// The quick set (and the sanitizer pass) runs the loops shorter: tests/support/test_size.hpp.
const bool kLight = dptune_test::light_sizes();

// Volume of the cells clipped to the box [low, ref].
double clipped_cell_volume(const std::vector<dp::Cell>& cells, const Point& low) {
  double total = 0;
  for (const auto& c : cells) {
    double v = 1;
    for (std::size_t j = 0; j < low.size(); ++j)
      v *= std::max(0.0, c.upper[j] - std::max(c.lower[j], low[j]));
    total += v;
  }
  return total;
}

std::vector<Point> random_front(dptune::RandomBitGenerator& rng, std::size_t n, std::size_t p) {
  std::vector<Point> pts;
  for (std::size_t i = 0; i < n; ++i) {
    Point q(p);
    for (auto& v : q) v = dptune::uniform01(rng);
    pts.push_back(q);
  }
  return pts;
}

}  // namespace

TEST_CASE("hypervolume reference values (2-D and 3-D)") {
  CHECK(dptune::hypervolume({{1, 3}, {2, 2}, {3, 1}}, {4, 4}) == doctest::Approx(6.0));
  CHECK(dptune::hypervolume({{1, 2, 3}, {2, 1, 3}, {3, 3, 1}, {2, 2, 2}}, {4, 4, 4}) ==
        doctest::Approx(13.0));
  // ΔPF of the last point w.r.t. the other three = 13 − HV(others).
  const std::vector<Point> three = {{1, 2, 3}, {2, 1, 3}, {3, 3, 1}};
  CHECK(dp::hypervolume_improvement({2, 2, 2}, three, {4, 4, 4}) ==
        doctest::Approx(13.0 - dptune::hypervolume(three, {4, 4, 4})));
}

TEST_CASE("2-D cells are the issue's tiling and complement the hypervolume") {
  const std::vector<Point> pts = {{3, 1}, {1, 3}, {2, 2}, {2.5, 2.5}};  // (2.5, 2.5) dominated
  const auto cells = dp::nondominated_cells(pts, {4, 4});
  REQUIRE(cells.size() == 4);
  // x_0 = −∞, x_i = sorted first objectives, x_{n+1} = r1; t_0 = r2, t_i = p_i,2.
  const double xs[] = {-INFINITY, 1, 2, 3, 4}, ts[] = {4, 3, 2, 1};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(cells[i].lower[0] == xs[i]);
    CHECK(cells[i].upper[0] == xs[i + 1]);
    CHECK(std::isinf(cells[i].lower[1]));
    CHECK(cells[i].upper[1] == ts[i]);
  }
  CHECK(clipped_cell_volume(cells, {0, 0}) + dptune::hypervolume(pts, {4, 4}) ==
        doctest::Approx(16.0));
}

TEST_CASE("N-D cells tile exactly the non-dominated region (3-D, 4-D, random fronts)") {
  const auto cells3 =
      dp::nondominated_cells({{1, 2, 3}, {2, 1, 3}, {3, 3, 1}, {2, 2, 2}}, {4, 4, 4});
  CHECK(clipped_cell_volume(cells3, {0, 0, 0}) == doctest::Approx(64.0 - 13.0));
  dptune::Xoshiro256 rng(5);
  for (std::size_t p : {2u, 3u, 4u})
    for (int rep = 0; rep < 5; ++rep) {
      const auto pts = random_front(rng, 8, p);
      const Point ref(p, 1.0), low(p, 0.0);
      const auto cells = dp::nondominated_cells(pts, ref);
      CHECK(clipped_cell_volume(cells, low) + dptune::hypervolume(pts, ref) ==
            doctest::Approx(1.0).epsilon(1e-12));
      // A point inside a cell is not dominated by any point; cells are disjoint (volumes add up
      // above), so membership is exact.
      for (const auto& c : cells) {
        Point mid(p);
        for (std::size_t j = 0; j < p; ++j)
          mid[j] = 0.5 * (std::max(c.lower[j], -1.0) + c.upper[j]);
        for (const auto& q : pts) CHECK_FALSE(dptune::dominates(q, mid));
      }
    }
}

TEST_CASE("front extraction with ties and duplicates") {
  const std::vector<Point> pts = {{1, 2}, {1, 2}, {2, 1}, {1, 3}, {2, 2}, {2, 1}, {5, 0.5}};
  const dp::Hvpoi h(pts, {4, 4});  // (5, 0.5) lies beyond the reference
  REQUIRE(h.front().size() == 2);
  CHECK(h.front()[0] == Point{1, 2});
  CHECK(h.front()[1] == Point{2, 1});
  CHECK(dptune::pareto_front(pts) == std::vector<std::size_t>{0, 2, 6});
  CHECK(dp::pareto_indices(pts) == std::vector<std::size_t>{0, 2, 6});
  // The 2-D sweep agrees with the SDK's pairwise front on grids full of ties and duplicates.
  dptune::Xoshiro256 rng(6);
  for (int rep = 0; rep < 20; ++rep) {
    std::vector<Point> grid;
    grid.reserve(40);
    for (int i = 0; i < 40; ++i)
      grid.push_back({static_cast<double>(dptune::uniform_index(rng, 6)),
                      static_cast<double>(dptune::uniform_index(rng, 6))});
    CHECK(dp::pareto_indices(grid) == dptune::pareto_front(grid));
  }
  // Duplicates do not double-count: same hypervolume as the deduplicated front.
  CHECK(dptune::hypervolume(pts, {4, 4}) ==
        doctest::Approx(dptune::hypervolume({{1, 2}, {2, 1}}, {4, 4})));
}

TEST_CASE("ΔPF equals the difference of hypervolumes (2-D sweep and N-D formula)") {
  dptune::Xoshiro256 rng(9);
  for (std::size_t p : {2u, 3u})
    for (int rep = 0; rep < 50; ++rep) {
      const auto pts = random_front(rng, 6, p);
      const Point ref(p, 1.0);
      const dp::Hvpoi h(pts, ref);
      Point v(p);
      for (auto& x : v) x = 1.2 * dptune::uniform01(rng) - 0.1;  // sometimes beyond ref or below 0
      auto with = pts;
      with.push_back(v);
      const double expected = dptune::hypervolume(with, ref) - dptune::hypervolume(pts, ref);
      CHECK(h.improvement(v.data()) == doctest::Approx(expected).epsilon(1e-12).scale(1));
      CHECK(dp::hypervolume_improvement(v, pts, ref) ==
            doctest::Approx(expected).epsilon(1e-12).scale(1));
    }
}

TEST_CASE("PoI agrees with Monte Carlo (fixed seed, 5-sigma tolerance)") {
  dptune::Xoshiro256 rng(21);
  for (std::size_t p : {2u, 3u}) {
    const auto pts = random_front(rng, 5, p);
    const Point ref(p, 1.0);
    const dp::Hvpoi h(pts, ref);
    for (int rep = 0; rep < 3; ++rep) {
      Point mu(p), sd(p);
      for (std::size_t j = 0; j < p; ++j) {
        mu[j] = dptune::uniform01(rng);
        sd[j] = 0.05 + 0.3 * dptune::uniform01(rng);
      }
      const int n = kLight ? 20000 : 200000;
      int hits = 0;
      Point y(p);
      for (int s = 0; s < n; ++s) {
        bool below = true;
        for (std::size_t j = 0; j < p; ++j) {
          y[j] = mu[j] + dptune::gaussian(rng, sd[j]);
          below = below && y[j] < ref[j];
        }
        bool dominated = false;
        for (const auto& q : pts) {
          bool weak = true;
          for (std::size_t j = 0; j < p && weak; ++j) weak = q[j] <= y[j];
          dominated = dominated || weak;
        }
        hits += below && !dominated;
      }
      const double mc = static_cast<double>(hits) / n, poi = h.poi(mu.data(), sd.data());
      const double tol = 5 * std::sqrt(std::max(poi * (1 - poi), 1e-4) / n);
      CHECK(std::abs(poi - mc) < tol);
    }
  }
}

TEST_CASE("Matérn 5/2: values, PD kernel matrix, jitter for duplicated inputs") {
  dp::Matern52 k;
  k.lengthscales = Eigen::VectorXd::Constant(3, 0.5);
  k.signal_variance = 2.0;
  Eigen::MatrixXd A(2, 3);
  A << 0, 0, 0, 0.5, 0, 0;  // r = 1
  const Eigen::MatrixXd K2 = k.cross(A, A);
  CHECK(K2(0, 0) == doctest::Approx(2.0));
  const double s5 = std::sqrt(5.0);
  CHECK(K2(0, 1) == doctest::Approx(2.0 * (1 + s5 + 5.0 / 3.0) * std::exp(-s5)));
  dptune::Xoshiro256 rng(3);
  Eigen::MatrixXd X(40, 3);
  for (Eigen::Index i = 0; i < X.rows(); ++i)
    for (Eigen::Index j = 0; j < 3; ++j) X(i, j) = dptune::uniform01(rng);
  const Eigen::MatrixXd K = k.cross(X, X);
  CHECK((K - K.transpose()).cwiseAbs().maxCoeff() < 1e-14);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(K);
  CHECK(eig.eigenvalues().minCoeff() > 0);
  Eigen::LLT<Eigen::MatrixXd> llt;
  double jitter = -1;
  CHECK(dp::cholesky_with_jitter(K, llt, jitter));
  CHECK(jitter == 0);
  // A repeated input makes K exactly singular: the fallback adds the smallest jitter that works.
  Eigen::MatrixXd Xd(3, 3);
  Xd << 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.7, 0.1, 0.5;
  const Eigen::MatrixXd Kd = k.cross(Xd, Xd);
  CHECK(dp::cholesky_with_jitter(Kd, llt, jitter));
  CHECK(jitter > 0);
  CHECK(jitter <= 1e-2 * 2.0);
}

TEST_CASE("GP posterior against the closed form on two points") {
  dp::GpOptions o;
  o.learn_noise = false;
  o.noise = 0.1;
  dp::Gp gp(1, o);
  Eigen::MatrixXd X(2, 1);
  X << 0.2, 0.6;
  Eigen::VectorXd y(2);
  y << 1.0, -0.5;
  gp.set_data(X, y);
  Eigen::VectorXd theta(2);
  theta << std::log(0.4), std::log(1.5);
  gp.set_theta(theta);
  auto k = [](double a, double b) { return 1.5 * dp::Matern52::of_r(std::abs(a - b) / 0.4); };
  const double a = k(0.2, 0.2) + 0.1, b = k(0.2, 0.6), d = k(0.6, 0.6) + 0.1, det = a * d - b * b;
  const double xs = 0.35, k1 = k(xs, 0.2), k2 = k(xs, 0.6);
  // K⁻¹ = [[d, −b], [−b, a]] / det.
  const double w1 = (d * k1 - b * k2) / det, w2 = (-b * k1 + a * k2) / det;
  const double mean = w1 * y(0) + w2 * y(1), var = 1.5 - (w1 * k1 + w2 * k2);
  double m = 0, v = 0;
  gp.predict1(Eigen::VectorXd::Constant(1, xs), m, v);
  CHECK(m == doctest::Approx(mean).epsilon(1e-12));
  CHECK(v == doctest::Approx(var).epsilon(1e-10));
  // Log marginal likelihood: −½ yᵀK⁻¹y − ½ log det K − log 2π.
  const double quad = (d * y(0) * y(0) - 2 * b * y(0) * y(1) + a * y(1) * y(1)) / det;
  CHECK(gp.log_marginal_likelihood(theta, nullptr) ==
        doctest::Approx(-0.5 * quad - 0.5 * std::log(det) - std::log(2 * std::numbers::pi)));
}

TEST_CASE("marginal-likelihood gradient against central finite differences") {
  dptune::Xoshiro256 rng(17);
  for (bool learn_noise : {false, true}) {
    dp::GpOptions o;
    o.learn_noise = learn_noise;
    o.noise = learn_noise ? 0.02 : 1e-4;
    dp::Gp gp(3, o);
    Eigen::MatrixXd X(15, 3);
    Eigen::VectorXd y(15);
    for (Eigen::Index i = 0; i < X.rows(); ++i) {
      for (Eigen::Index j = 0; j < 3; ++j) X(i, j) = dptune::uniform01(rng);
      y(i) = std::sin(4 * X(i, 0)) + X(i, 1) * X(i, 2) + dptune::gaussian(rng, 0.1);
    }
    gp.set_data(X, y);
    for (int rep = 0; rep < 3; ++rep) {
      Eigen::VectorXd theta(static_cast<Eigen::Index>(gp.n_hyper()));
      for (Eigen::Index j = 0; j < 3; ++j) theta(j) = std::log(0.2 + dptune::uniform01(rng));
      theta(3) = std::log(0.5 + dptune::uniform01(rng));
      if (learn_noise) theta(4) = std::log(0.01 + 0.1 * dptune::uniform01(rng));
      Eigen::VectorXd grad;
      gp.log_marginal_likelihood(theta, &grad);
      for (Eigen::Index j = 0; j < theta.size(); ++j) {
        const double h = 1e-5;
        Eigen::VectorXd tp = theta, tm = theta;
        tp(j) += h;
        tm(j) -= h;
        const double fd =
            (gp.log_marginal_likelihood(tp, nullptr) - gp.log_marginal_likelihood(tm, nullptr)) /
            (2 * h);
        CHECK(grad(j) == doctest::Approx(fd).epsilon(1e-5).scale(1e-3));
      }
    }
  }
}

TEST_CASE("fitting raises the marginal likelihood and recovers a noise level") {
  dptune::Xoshiro256 rng(2);
  dp::GpOptions o;  // learned noise, start 0.01
  dp::Gp gp(1, o);
  const int n = 60;
  Eigen::MatrixXd X(n, 1);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    X(i, 0) = dptune::uniform01(rng);
    y(i) = std::sin(6 * X(i, 0)) + dptune::gaussian(rng, 0.2);
  }
  gp.set_data(X, y);
  const double before = gp.log_marginal_likelihood(gp.theta(), nullptr);
  gp.fit(rng, 5);
  CHECK(gp.log_marginal_likelihood(gp.theta(), nullptr) > before);
  // True noise variance 0.04: the estimate is within a factor 2.5 with 60 points.
  CHECK(gp.noise_variance() > 0.04 / 2.5);
  CHECK(gp.noise_variance() < 0.04 * 2.5);
}

TEST_CASE("scrambled Halton points fill the cube evenly and follow the seed") {
  dptune::Xoshiro256 a(1), b(1), c(2);
  const Eigen::MatrixXd P = dp::scrambled_halton(1000, 4, a);
  CHECK(P.minCoeff() >= 0);
  CHECK(P.maxCoeff() < 1);
  CHECK(P == dp::scrambled_halton(1000, 4, b));
  CHECK(P != dp::scrambled_halton(1000, 4, c));
  // Low discrepancy: every tenth of every axis holds 100 ± 3 points (i.i.d. uniform: ± ~10).
  for (Eigen::Index j = 0; j < 4; ++j) {
    int counts[10] = {};
    for (Eigen::Index i = 0; i < P.rows(); ++i) ++counts[static_cast<int>(P(i, j) * 10)];
    for (int k = 0; k < 10; ++k) CHECK(std::abs(counts[k] - 100) <= 3);
  }
}

namespace {

Eigen::VectorXd zdt1(const Eigen::VectorXd& x) {
  const double g = 1 + 9 * x.tail(x.size() - 1).sum() / static_cast<double>(x.size() - 1);
  Eigen::VectorXd y(2);
  y << x(0), g * (1 - std::sqrt(x(0) / g));
  return y;
}

dp::MoboOptions zdt_options() {
  dp::MoboOptions o;
  dp::GpOptions a, b;
  a.learn_noise = false;
  a.noise = 1e-6;
  o.gps = {a, b};
  o.starts = 2;
  o.reference = {1.0, 1.0};
  o.candidates = 1000;
  return o;
}

}  // namespace

TEST_CASE("the loop approaches the ZDT1 front (hypervolume 2/3 w.r.t. (1, 1))") {
  const std::size_t dims = 3, initial = 10, iterations = kLight ? 12 : 40;
  dp::Mobo mobo(dims, zdt_options());
  dptune::Xoshiro256 rng(42);
  std::vector<Point> ys, random_ys;
  for (std::size_t i = 0; i < initial; ++i) {
    Eigen::VectorXd x(dims);
    for (auto& v : x) v = dptune::uniform01(rng);
    const auto y = zdt1(x);
    mobo.add(x, y);
    ys.push_back({y(0), y(1)});
  }
  random_ys = ys;
  for (std::size_t it = 0; it < iterations; ++it) {
    const auto pr = mobo.propose(1, rng);
    REQUIRE(pr.size() == 1);
    CHECK(pr[0].x.minCoeff() >= 0);
    CHECK(pr[0].x.maxCoeff() <= 1);
    const auto y = zdt1(pr[0].x);
    mobo.add(pr[0].x, y);
    ys.push_back({y(0), y(1)});
    Eigen::VectorXd xr(dims);
    for (auto& v : xr) v = dptune::uniform01(rng);
    const auto yr = zdt1(xr);
    random_ys.push_back({yr(0), yr(1)});
  }
  const double hv = dptune::hypervolume(ys, {1, 1}),
               hv_random = dptune::hypervolume(random_ys, {1, 1});
  MESSAGE("ZDT1 hypervolume: DPareto ", hv, ", random search ", hv_random, " (true 2/3)");
  CHECK(hv <= 2.0 / 3.0 + 1e-12);
  CHECK(hv > (kLight ? 0.5 : 0.62));
  CHECK(hv > hv_random);
}

TEST_CASE("a batch proposes distinct points, three objectives use the exact cells") {
  dptune::Xoshiro256 rng(8);
  for (auto strategy : {dp::BatchStrategy::KrigingBeliever, dp::BatchStrategy::ConstantLiar}) {
    auto o = zdt_options();
    o.batch = strategy;
    o.reference_mode = dp::ReferenceMode::Adaptive;
    dp::Mobo mobo(2, o);
    for (int i = 0; i < 8; ++i) {
      Eigen::VectorXd x(2);
      for (auto& v : x) v = dptune::uniform01(rng);
      mobo.add(x, zdt1(x));
    }
    const auto batch = mobo.propose(3, rng);
    REQUIRE(batch.size() == 3);
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < i; ++j) CHECK((batch[i].x - batch[j].x).norm() > 1e-9);
    CHECK(mobo.last_reference().size() == 2);
  }
  dp::MoboOptions o3 = zdt_options();
  o3.gps.push_back(o3.gps[1]);
  o3.reference = {2, 2, 2};
  o3.candidates = 300;
  dp::Mobo mobo3(2, o3);
  for (int i = 0; i < 8; ++i) {
    Eigen::VectorXd x(2);
    for (auto& v : x) v = dptune::uniform01(rng);
    Eigen::VectorXd y(3);
    y << x(0), 1 - x(0) * x(1), x(1) + 0.1 * x(0);
    mobo3.add(x, y);
  }
  const auto pr = mobo3.propose(1, rng);
  CHECK(pr[0].acquisition > 0);
}

TEST_CASE("triangular inverse and LAUUM against dense inverses (block sizes 1 to 100)") {
  dptune::Xoshiro256 rng(31);
  for (Eigen::Index n : {1, 5, 32, 33, 37, 100}) {
    Eigen::MatrixXd A(n, n);
    for (auto& v : A.reshaped()) v = dptune::gaussian(rng, 1.0);
    const Eigen::MatrixXd K =
        A * A.transpose() + static_cast<double>(n) * Eigen::MatrixXd::Identity(n, n);
    const Eigen::MatrixXd L = K.llt().matrixL();
    // The strictly upper triangle holds sentinels that neither routine may read into the result
    // or overwrite.
    Eigen::MatrixXd M = L;
    M.triangularView<Eigen::StrictlyUpper>().setConstant(12345.0);
    Eigen::MatrixXd work;
    dp::invert_lower_triangular(M, work);
    const Eigen::MatrixXd Linv = L.inverse();
    CHECK((M.triangularView<Eigen::Lower>().toDenseMatrix() -
           Linv.triangularView<Eigen::Lower>().toDenseMatrix())
              .cwiseAbs()
              .maxCoeff() < 1e-12);
    dp::lower_gram_in_place(M, work);
    const Eigen::MatrixXd Kinv = K.inverse();
    const double scale = Kinv.cwiseAbs().maxCoeff();
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = 0; i < n; ++i) {
        if (i >= j)
          CHECK(std::abs(M(i, j) - Kinv(i, j)) < 1e-12 * scale);
        else
          CHECK(M(i, j) == 12345.0);
      }
  }
}

TEST_CASE("Matérn 5/2 cross-covariance of any row count equals the closed form") {
  dptune::Xoshiro256 rng(4);
  dp::Matern52 k;
  k.lengthscales = Eigen::Vector3d(0.3, 0.7, 1.9);
  k.signal_variance = 1.7;
  for (Eigen::Index m : {1, 31, 32, 45, 70}) {  // below, at and across the 32-row blocks
    Eigen::MatrixXd A(m, 3), B(7, 3);
    for (auto& v : A.reshaped()) v = dptune::uniform01(rng);
    for (auto& v : B.reshaped()) v = dptune::uniform01(rng);
    const Eigen::MatrixXd K = k.cross(A, B);
    for (Eigen::Index i = 0; i < m; ++i)
      for (Eigen::Index j = 0; j < 7; ++j) {
        const double r =
            ((A.row(i) - B.row(j)).array() / k.lengthscales.transpose().array()).matrix().norm();
        CHECK(K(i, j) == doctest::Approx(1.7 * dp::Matern52::of_r(r)).epsilon(1e-13));
      }
  }
}

TEST_CASE("appending or dropping points updates the factorisation exactly as refactorising") {
  dptune::Xoshiro256 rng(12);
  for (bool learn_noise : {false, true}) {
    dp::GpOptions o;
    o.learn_noise = learn_noise;
    o.noise = learn_noise ? 0.01 : 1e-6;
    const Eigen::Index n = 40, d = 3;
    Eigen::MatrixXd X(n, d);
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      for (Eigen::Index j = 0; j < d; ++j) X(i, j) = dptune::uniform01(rng);
      y(i) = std::cos(3 * X(i, 0)) + X(i, 1) - X(i, 2) * X(i, 2);
    }
    Eigen::VectorXd theta(learn_noise ? d + 2 : d + 1);
    theta.head(4) << std::log(0.4), std::log(0.6), std::log(0.9), std::log(0.8);
    if (learn_noise) theta(d + 1) = std::log(0.01);
    Eigen::MatrixXd Xs(25, d);
    for (auto& v : Xs.reshaped()) v = dptune::uniform01(rng);
    auto fresh = [&](Eigen::Index rows, Eigen::VectorXd& mean, Eigen::VectorXd& var) {
      dp::Gp g(static_cast<std::size_t>(d), o);
      g.set_data(X.topRows(rows), y.head(rows));
      g.set_theta(theta);
      g.predict(Xs, mean, &var);
    };
    dp::Gp gp(static_cast<std::size_t>(d), o);
    gp.set_data(X.topRows(30), y.head(30));
    gp.set_theta(theta);
    Eigen::VectorXd m_inc, v_inc, m_ref, v_ref;
    for (Eigen::Index rows : {31, 34, 40, 33, 20}) {  // one point, three, six, then drops
      Eigen::VectorXd yy = y.head(rows);
      gp.set_data(X.topRows(rows), yy);
      gp.predict(Xs, m_inc, &v_inc);
      fresh(rows, m_ref, v_ref);
      CHECK((m_inc - m_ref).cwiseAbs().maxCoeff() < 1e-8);
      CHECK((v_inc - v_ref).cwiseAbs().maxCoeff() < 1e-8);
    }
  }
}

TEST_CASE("the buffered acquisition equals ΔPF · PoI from plain predictions (sweeps and probes)") {
  dptune::Xoshiro256 rng(77);
  dp::Mobo mobo(2, zdt_options());
  for (int i = 0; i < 12; ++i) {
    Eigen::VectorXd x(2);
    for (auto& v : x) v = dptune::uniform01(rng);
    mobo.add(x, zdt1(x));
  }
  mobo.propose(1, rng);  // loads and fits the GPs
  std::vector<Point> means;
  for (const auto& x : mobo.inputs()) {
    double m0 = 0, m1 = 0, v = 0;
    mobo.gp(0).predict1(x, m0, v);
    mobo.gp(1).predict1(x, m1, v);
    means.push_back({m0, m1});
  }
  const dp::Hvpoi h(means, {1.0, 1.0});
  for (Eigen::Index m : {300, 7, 150, 11}) {  // alternate the sweep and probe buffers
    Eigen::MatrixXd C(m, 2);
    for (auto& v : C.reshaped()) v = dptune::uniform01(rng);
    const Eigen::VectorXd a = mobo.acquisition(C, h);
    Eigen::VectorXd m0, v0, m1, v1;
    mobo.gp(0).predict(C, m0, &v0);
    mobo.gp(1).predict(C, m1, &v1);
    int positive = 0;
    for (Eigen::Index i = 0; i < m; ++i) {
      const double mu[2] = {m0(i), m1(i)}, sd[2] = {std::sqrt(v0(i)), std::sqrt(v1(i))};
      // 1e-9, not 1e-10: with -march=native (DPTUNE_NATIVE) the batched and the single-point
      // predictions contract to FMAs differently, and PoI's tail amplifies the last bits.
      CHECK(a(i) == doctest::Approx(h(mu, sd)).epsilon(1e-9).scale(1e-14));
      positive += a(i) > 0;
    }
    if (m >= 150) CHECK(positive > 0);  // the check above is not only about zeros
  }
}

TEST_CASE("fits through a parallel_for on threads propose exactly what sequential fits do") {
  auto run = [](bool threads) {
    auto o = zdt_options();
    if (threads)
      o.parallel_for = [](std::size_t n, const std::function<void(std::size_t)>& body) {
        std::vector<std::thread> pool;
        for (std::size_t i = 0; i < n; ++i) pool.emplace_back(body, i);
        for (auto& t : pool) t.join();
      };
    dp::Mobo mobo(3, o);
    dptune::Xoshiro256 rng(5);
    for (int i = 0; i < 8; ++i) {
      Eigen::VectorXd x(3);
      for (auto& v : x) v = dptune::uniform01(rng);
      mobo.add(x, zdt1(x));
    }
    std::vector<Eigen::VectorXd> xs;
    for (int it = 0; it < (kLight ? 2 : 4); ++it) {
      const auto pr = mobo.propose(1, rng);
      mobo.add(pr[0].x, zdt1(pr[0].x));
      xs.push_back(pr[0].x);
    }
    return xs;
  };
  const auto a = run(false), b = run(true);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == b[i]);
}

TEST_CASE(
    "ΔPF in mapped units equals the hypervolume difference of the mapped points; PoI is "
    "unchanged") {
  using Map = dp::ObjectiveMap;
  const std::vector<Map> maps = {Map{Map::Kind::Exp, 2.0}, Map{Map::Kind::Logistic, 1.0}};
  CHECK(maps[0](0.5) == doctest::Approx(std::exp(1.0)).epsilon(1e-15));
  CHECK(maps[1](0.0) == 0.5);
  CHECK(maps[1](std::log(3.0)) == doctest::Approx(0.75).epsilon(1e-15));
  dptune::Xoshiro256 rng(31);
  for (int rep = 0; rep < 40; ++rep) {
    std::vector<Point> pts;
    pts.reserve(7);
    for (int i = 0; i < 7; ++i)
      pts.push_back({4 * dptune::uniform01(rng) - 3, 6 * dptune::uniform01(rng) - 4});
    const Point ref = {1.1, 2.5};
    const dp::Hvpoi plain(pts, ref), mapped(pts, ref, maps);
    auto to_raw = [&](const Point& q) { return Point{maps[0](q[0]), maps[1](q[1])}; };
    std::vector<Point> raw;
    raw.reserve(pts.size());
    for (const auto& q : pts) raw.push_back(to_raw(q));
    const Point raw_ref = to_raw(ref);
    for (int k = 0; k < 10; ++k) {
      const Point v = {4.5 * dptune::uniform01(rng) - 3.2, 7 * dptune::uniform01(rng) - 4.3};
      auto with = raw;
      with.push_back(to_raw(v));
      const double expected =
          dptune::hypervolume(with, raw_ref) - dptune::hypervolume(raw, raw_ref);
      CHECK(mapped.improvement(v.data()) == doctest::Approx(expected).epsilon(1e-11).scale(1));
      // Zero exactly where the plain ΔPF is zero (the maps are increasing).
      CHECK((mapped.improvement(v.data()) > 0) == (plain.improvement(v.data()) > 0));
      const double sd[2] = {0.3, 0.7};
      CHECK(mapped.poi(v.data(), sd) == plain.poi(v.data(), sd));
    }
  }
}

TEST_CASE("a known objective replaces its GP: exact means, floored variance, no fit") {
  // ZDT1's first objective is x₀: known exactly.  The acquisition must equal ΔPF · PoI with
  // μ₀ = x₀ and s₀ = √var_floor, the privacy GP is never fitted, and the loop still approaches
  // the true front.
  auto o = zdt_options();
  o.known.resize(2);
  int calls = 0;
  o.known[0] = [&calls](const Eigen::MatrixXd& X, Eigen::VectorXd& out) {
    ++calls;
    out = X.col(0);
  };
  const std::size_t dims = 3;
  dp::Mobo mobo(dims, o);
  dptune::Xoshiro256 rng(42);
  std::vector<Point> ys;
  for (int i = 0; i < 10; ++i) {
    Eigen::VectorXd x(dims);
    for (auto& v : x) v = dptune::uniform01(rng);
    const auto y = zdt1(x);
    mobo.add(x, y);
    ys.push_back({y(0), y(1)});
  }
  const int iterations = kLight ? 10 : 30;
  for (int it = 0; it < iterations; ++it) {
    const auto pr = mobo.propose(1, rng);
    if (it == 0) {
      // After the first fit: the acquisition against the front of the exact/GP means.
      std::vector<Point> front_means;
      for (const auto& x : mobo.inputs()) {
        double m1 = 0, v = 0;
        mobo.gp(1).predict1(x, m1, v);
        front_means.push_back({x(0), m1});
      }
      const dp::Hvpoi h(front_means, {1.0, 1.0});
      Eigen::MatrixXd C(200, static_cast<Eigen::Index>(dims));
      for (auto& v : C.reshaped()) v = dptune::uniform01(rng);
      const Eigen::VectorXd a = mobo.acquisition(C, h);
      Eigen::VectorXd m1, v1;
      mobo.gp(1).predict(C, m1, &v1);
      int positive = 0;
      for (Eigen::Index i = 0; i < C.rows(); ++i) {
        const double mu[2] = {C(i, 0), m1(i)}, sd[2] = {std::sqrt(o.var_floor), std::sqrt(v1(i))};
        // 1e-9, not 1e-10: with -march=native (DPTUNE_NATIVE) the batched and the single-point
        // predictions contract to FMAs differently, and PoI's tail amplifies the last bits.
        CHECK(a(i) == doctest::Approx(h(mu, sd)).epsilon(1e-9).scale(1e-14));
        positive += a(i) > 0;
      }
      CHECK(positive > 0);
    }
    const auto y = zdt1(pr[0].x);
    mobo.add(pr[0].x, y);
    ys.push_back({y(0), y(1)});
  }
  CHECK(calls > 0);
  CHECK(mobo.gp(0).evaluations() == 0);
  CHECK(mobo.gp(1).evaluations() > 0);
  const double hv = dptune::hypervolume(ys, {1, 1});
  MESSAGE("ZDT1 hypervolume with x0 known: ", hv, " (true 2/3)");
  CHECK(hv <= 2.0 / 3.0 + 1e-12);
  CHECK(hv > (kLight ? 0.5 : 0.63));
}

TEST_CASE("a bounded sweep (top k) is exact on the k largest values and skips only the rest") {
  dptune::Xoshiro256 rng(78);
  dp::Mobo mobo(3, zdt_options());
  for (int i = 0; i < 14; ++i) {
    Eigen::VectorXd x(3);
    for (auto& v : x) v = dptune::uniform01(rng);
    mobo.add(x, zdt1(x));
  }
  mobo.propose(1, rng);  // loads and fits the GPs
  // Against an early front (few points) many candidates improve it: the bound has work to skip.
  std::vector<Point> means;
  for (std::size_t i = 0; i < 5; ++i) {
    double m0 = 0, m1 = 0, v = 0;
    mobo.gp(0).predict1(mobo.inputs()[i], m0, v);
    mobo.gp(1).predict1(mobo.inputs()[i], m1, v);
    means.push_back({m0, m1});
  }
  const dp::Hvpoi h(means, {1.1, 11.0});
  for (std::size_t top : {1u, 10u, 64u, 500u}) {
    Eigen::MatrixXd C(2000, 3);
    for (auto& v : C.reshaped()) v = dptune::uniform01(rng);
    const Eigen::VectorXd full = mobo.acquisition(C, h);
    const Eigen::VectorXd bounded = mobo.acquisition(C, h, true, top);
    std::vector<Eigen::Index> order(static_cast<std::size_t>(C.rows()));
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<Eigen::Index>(i);
    std::sort(order.begin(), order.end(),
              [&](Eigen::Index i, Eigen::Index j) { return full(i) > full(j); });
    int positive = 0, skipped = 0;
    for (Eigen::Index i = 0; i < C.rows(); ++i) {
      positive += full(i) > 0;
      skipped += full(i) > 0 && bounded(i) == 0;
      // Computed (up to the rounding of a product over fewer rows) or skipped.
      CHECK((bounded(i) == 0 || bounded(i) == doctest::Approx(full(i)).epsilon(1e-10)));
    }
    for (std::size_t q = 0; q < std::min<std::size_t>(top, order.size()); ++q)
      CHECK(bounded(order[q]) == doctest::Approx(full(order[q])).epsilon(1e-10));
    MESSAGE("top ", top, ": ", positive, " candidates with α > 0, variances skipped for ", skipped);
    REQUIRE(positive > 300);
    if (top <= 64) CHECK(skipped > 0);  // the bound does prune
  }
}

TEST_CASE("analytic gradients (GP mean and variance, ΔPF, PoI, α) against central differences") {
  dptune::Xoshiro256 rng(91);
  auto o = zdt_options();
  o.optimism = 0.7;  // exercise the μ − κ s path as well
  dp::Mobo mobo(3, o);
  for (int i = 0; i < 14; ++i) {
    Eigen::VectorXd x(3);
    for (auto& v : x) v = dptune::uniform01(rng);
    mobo.add(x, zdt1(x));
  }
  mobo.propose(1, rng);
  // Steps: 1e-4 for the GP (the variance s² − ‖L⁻¹k*‖² cancels, so a smaller step drowns in
  // rounding; central differences are then accurate to ~1e-8), 1e-6 for the closed forms.
  const double h = 1e-6, hg = 1e-4;
  // GP mean and variance.
  for (int rep = 0; rep < 20; ++rep) {
    Eigen::VectorXd x(3);
    for (auto& v : x) v = 0.05 + 0.9 * dptune::uniform01(rng);
    double m = 0, var = 0;
    Eigen::VectorXd dm, dv;
    mobo.gp(1).predict_grad(x, m, var, dm, dv, 1e-12);
    double m1 = 0, v1 = 0;
    mobo.gp(1).predict1(x, m1, v1, 1e-12);
    CHECK(m == doctest::Approx(m1).epsilon(1e-10));
    CHECK(var == doctest::Approx(v1).epsilon(1e-8));
    for (Eigen::Index j = 0; j < 3; ++j) {
      Eigen::VectorXd up = x, down = x;
      up(j) += hg;
      down(j) -= hg;
      double mu_up = 0, mu_down = 0, v_up = 0, v_down = 0;
      mobo.gp(1).predict1(up, mu_up, v_up, 1e-12);
      mobo.gp(1).predict1(down, mu_down, v_down, 1e-12);
      CHECK(dm(j) == doctest::Approx((mu_up - mu_down) / (2 * hg)).epsilon(1e-6).scale(1e-4));
      CHECK(dv(j) == doctest::Approx((v_up - v_down) / (2 * hg)).epsilon(1e-4).scale(1e-3));
    }
  }
  // ΔPF (plain and mapped) and PoI.
  using Map = dp::ObjectiveMap;
  const std::vector<Point> front = {{0.1, 0.8}, {0.3, 0.5}, {0.6, 0.2}, {0.9, 0.1}};
  for (const bool mapped : {false, true}) {
    const dp::Hvpoi hv = mapped
                             ? dp::Hvpoi(front, {1.0, 1.0},
                                         {Map{Map::Kind::Exp, 1.5}, Map{Map::Kind::Logistic, 1.0}})
                             : dp::Hvpoi(front, {1.0, 1.0});
    int checked = 0;
    for (int rep = 0; rep < 200; ++rep) {
      const double mu[2] = {dptune::uniform01(rng), dptune::uniform01(rng)};
      double g[2];
      const double d = hv.improvement_grad(mu, g);
      CHECK(d == doctest::Approx(hv.improvement(mu)).epsilon(1e-12).scale(1e-14));
      for (int j = 0; j < 2; ++j) {
        double up[2] = {mu[0], mu[1]}, down[2] = {mu[0], mu[1]};
        up[j] += h;
        down[j] -= h;
        const double fd = (hv.improvement(up) - hv.improvement(down)) / (2 * h);
        const double fd2 = (hv.improvement(up) - d) / h, fd3 = (d - hv.improvement(down)) / h;
        if (std::abs(fd2 - fd3) > 1e-6) continue;  // a kink (cell boundary) within h
        CHECK(g[j] == doctest::Approx(fd).epsilon(1e-6).scale(1e-8));
        ++checked;
      }
      const double sd[2] = {0.05 + 0.3 * dptune::uniform01(rng),
                            0.05 + 0.3 * dptune::uniform01(rng)};
      double dmu[2], dsd[2];
      const double poi = hv.poi_grad(mu, sd, dmu, dsd);
      CHECK(poi == doctest::Approx(hv.poi(mu, sd)).epsilon(1e-12));
      for (int j = 0; j < 2; ++j) {
        double up[2] = {mu[0], mu[1]}, down[2] = {mu[0], mu[1]};
        up[j] += h;
        down[j] -= h;
        CHECK(
            dmu[j] ==
            doctest::Approx((hv.poi(up, sd) - hv.poi(down, sd)) / (2 * h)).epsilon(1e-7).scale(1));
        double sup[2] = {sd[0], sd[1]}, sdown[2] = {sd[0], sd[1]};
        sup[j] += h;
        sdown[j] -= h;
        CHECK(dsd[j] == doctest::Approx((hv.poi(mu, sup) - hv.poi(mu, sdown)) / (2 * h))
                            .epsilon(1e-7)
                            .scale(1));
      }
    }
    CHECK(checked > 300);  // nearly all points are away from kinks
  }
  // The whole α against central differences of Mobo::acquisition, where α > 0.
  std::vector<Point> means;
  for (const auto& x : mobo.inputs()) {
    double m0 = 0, m1 = 0, v = 0;
    mobo.gp(0).predict1(x, m0, v);
    mobo.gp(1).predict1(x, m1, v);
    means.push_back({m0, m1});
  }
  const dp::Hvpoi hv(std::vector<Point>(means.begin(), means.begin() + 6), {1.1, 11.0});
  int positive = 0;
  for (int rep = 0; rep < 300 && positive < 40; ++rep) {
    Eigen::VectorXd x(3);
    for (auto& v : x) v = 0.02 + 0.96 * dptune::uniform01(rng);
    Eigen::VectorXd g;
    const double a = mobo.acquisition_grad(x, hv, g);
    CHECK(a == doctest::Approx(mobo.acquisition(x.transpose(), hv)(0)).epsilon(1e-9).scale(1e-14));
    if (!(a > 1e-8)) continue;
    ++positive;
    for (Eigen::Index j = 0; j < 3; ++j) {
      Eigen::MatrixXd P(3, 3);
      P.row(0) = x.transpose();
      P.row(1) = x.transpose();
      P.row(2) = x.transpose();
      P(1, j) += h;
      P(2, j) -= h;
      const Eigen::VectorXd v = mobo.acquisition(P, hv);
      if (std::abs((v(1) - a) - (a - v(2))) > 1e-3 * std::abs(v(1) - v(2)) + 1e-12) continue;
      CHECK(g(j) == doctest::Approx((v(1) - v(2)) / (2 * h)).epsilon(1e-4).scale(1e-7));
    }
  }
  CHECK(positive >= 20);
}

TEST_CASE("a screened known objective prices only the screen's best rows and still converges") {
  // known_screen = 40 of 1000 candidates: the sweep prices at most 40 rows (plus the front's
  // inputs, the refinement's probes and the final checks, all of one or a few rows per call), the
  // privacy GP is fitted for the screen, and the loop still approaches the ZDT1 front.
  auto o = zdt_options();
  o.known.resize(2);
  o.known_screen = 40;
  Eigen::Index widest_call = 0;
  o.known[0] = [&widest_call](const Eigen::MatrixXd& X, Eigen::VectorXd& out) {
    widest_call = std::max(widest_call, X.rows());
    out = X.col(0);
  };
  const std::size_t dims = 3;
  dp::Mobo mobo(dims, o);
  dptune::Xoshiro256 rng(42);
  std::vector<Point> ys;
  for (int i = 0; i < 10; ++i) {
    Eigen::VectorXd x(dims);
    for (auto& v : x) v = dptune::uniform01(rng);
    const auto y = zdt1(x);
    mobo.add(x, y);
    ys.push_back({y(0), y(1)});
  }
  const int iterations = kLight ? 10 : 30;
  for (int it = 0; it < iterations; ++it) {
    const auto pr = mobo.propose(1, rng);
    const auto y = zdt1(pr[0].x);
    mobo.add(pr[0].x, y);
    ys.push_back({y(0), y(1)});
  }
  // The widest call is the front's inputs (10 + iterations − 1 rows) or the screen (≤ 40).
  CHECK(widest_call <= std::max<Eigen::Index>(40, 10 + iterations));
  CHECK(widest_call < 1000);
  CHECK(mobo.gp(0).evaluations() > 0);
  const double hv = dptune::hypervolume(ys, {1, 1});
  MESSAGE("ZDT1 hypervolume with x0 known, screened: ", hv, " (true 2/3)");
  CHECK(hv <= 2.0 / 3.0 + 1e-12);
  CHECK(hv > (kLight ? 0.5 : 0.63));
}

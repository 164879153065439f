// The float layer products of the 784-256-10 MLP (lots of 256) by Eigen, as the training library
// computes them, and by OpenBLAS's sgemm (loaded at run time, one thread), timed on this thread's
// CPU and checked for the property DP-SGD's sensitivity rests on: a row's product must not depend
// on the other rows of its lot (its position in the matrix), since the clipped gradient of a
// record is computed from its row of the forward product (the proof of dp_sum_sensitivity).
//   build/bin/bench_blas [seconds per case]
// OpenBLAS is not a dependency of dptune: without libopenblas.so.0 the OpenBLAS rows are skipped.
#include <dlfcn.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <vector>

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Fortran sgemm: column-major C = alpha op(A) op(B) + beta C.
using Sgemm = void (*)(const char*, const char*, const int*, const int*, const int*, const float*,
                       const float*, const int*, const float*, const int*, const float*, float*,
                       const int*);

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// GFLOP/s of `body` (flops per call), best of three runs of about `seconds` each.
double gflops(double flops, double seconds, const std::function<void()>& body) {
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    long calls = 0;
    const double start = thread_cpu_seconds();
    double now = start;
    while (now - start < seconds) {
      body();
      ++calls;
      now = thread_cpu_seconds();
    }
    best = std::max(best, flops * static_cast<double>(calls) / (now - start) * 1e-9);
  }
  return best;
}

/// Row-major A (m x k) times row-major B (k x n) into row-major C (m x n) by column-major sgemm:
/// C^T = B^T A^T, so the column-major call multiplies B by A with the roles of m and n swapped.
void sgemm_row_major(Sgemm sgemm, const Matrix& a, const Matrix& b, Matrix& c) {
  const int m = static_cast<int>(a.rows()), k = static_cast<int>(a.cols());
  const int n = static_cast<int>(b.cols());
  const float one = 1, zero = 0;
  sgemm("N", "N", &n, &m, &k, &one, b.data(), &n, a.data(), &k, &zero, c.data(), &n);
}

/// The number of rows whose product differs in any bit between the lot as drawn and the lot
/// with its rows rotated by `shift` (each row then sits at another position of the matrix).
template <class Product>
long rows_depending_on_position(const Matrix& x, const Matrix& w, int shift, Product product) {
  Matrix rotated(x.rows(), x.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r) rotated.row((r + shift) % x.rows()) = x.row(r);
  Matrix c(x.rows(), w.cols()), c_rotated(x.rows(), w.cols());
  product(x, w, c);
  product(rotated, w, c_rotated);
  long differing = 0;
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const auto moved = c_rotated.row((r + shift) % x.rows());
    if (std::memcmp(c.row(r).data(), moved.data(), sizeof(float) * c.cols()) != 0) ++differing;
  }
  return differing;
}

/// One step's two large products of the 784-256-10 MLP on a lot of 256: the first layer's
/// forward product (x w) and its weight gradient (the inputs' transpose times the deltas).
struct Lot {
  Matrix x, w, xt, delta;
};

/// Prints `name`'s speed on both products and how many rows of its forward product change with
/// their position in the lot (two rotations, 512 rows compared).
template <class Product>
void measure(const char* name, const Lot& lot, double seconds, Product product) {
  const double flops = 2.0 * 256 * 784 * 256;
  Matrix forward(256, 256), gradient(784, 256);
  std::printf("  %-8s forward 256x784 * 784x256:  %6.1f GFLOP/s\n", name,
              gflops(flops, seconds, [&] { product(lot.x, lot.w, forward); }));
  std::printf("  %-8s gradient 784x256 * 256x256: %6.1f GFLOP/s\n", name,
              gflops(flops, seconds, [&] { product(lot.xt, lot.delta, gradient); }));
  std::printf("  %-8s rows of the forward product that change with their position: %ld of 512\n",
              name,
              rows_depending_on_position(lot.x, lot.w, 37, product) +
                  rows_depending_on_position(lot.x, lot.w, 1, product));
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 0.5;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0, 1);
  auto random_matrix = [&](int rows, int cols) {
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
    return m;
  };
  Lot lot{random_matrix(256, 784), random_matrix(784, 256), Matrix(), random_matrix(256, 256)};
  lot.xt = lot.x.transpose();
  auto eigen = [](const Matrix& a, const Matrix& b, Matrix& c) { c.noalias() = a * b; };
  std::printf("784-256-10 float layer products, one thread, best of 3 x %.2f s CPU\n", seconds);
  measure("Eigen", lot, seconds, eigen);

  void* library = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::printf("  OpenBLAS not found (libopenblas.so.0): apt-get install libopenblas0-pthread\n");
    return 0;
  }
  const auto sgemm = reinterpret_cast<Sgemm>(dlsym(library, "sgemm_"));
  const auto set_threads =
      reinterpret_cast<void (*)(int)>(dlsym(library, "openblas_set_num_threads"));
  if (sgemm == nullptr) {
    std::printf("  OpenBLAS has no sgemm_\n");
    return 0;
  }
  if (set_threads != nullptr) set_threads(1);
  auto blas = [&](const Matrix& a, const Matrix& b, Matrix& c) { sgemm_row_major(sgemm, a, b, c); };
  Matrix by_eigen(256, 256), by_blas(256, 256);
  eigen(lot.x, lot.w, by_eigen);
  blas(lot.x, lot.w, by_blas);
  std::printf("  OpenBLAS and Eigen agree to %.2e (largest relative difference)\n",
              static_cast<double>((by_blas - by_eigen).cwiseAbs().maxCoeff() /
                                  by_eigen.cwiseAbs().maxCoeff()));
  measure("OpenBLAS", lot, seconds, blas);
  return 0;
}

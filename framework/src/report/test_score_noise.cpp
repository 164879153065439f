// The test score's noise and what the report states about the score (test_score_noise.hpp); the
// scoring itself is test_score.cpp's.
#include "dptune/host/test_score_noise.hpp"

#include <cmath>
#include <string>

#include "dptune/helpers/grid_noise.hpp"
#include "dptune/host/format.hpp"

namespace dptune::host {

double TestScoreNoise::grid() const { return dptune::laplace_grid(sensitivity, multiplier(), 1); }

double TestScoreNoise::scale() const {
  const double g = grid();
  const dptune::GridNoiseParameter p = dptune::grid_laplace_scale(sensitivity, multiplier(), g, 1);
  return static_cast<double>(p.numerator) / static_cast<double>(p.denominator) * g;
}

std::string TestScoreNoise::describe() const {
  return "Laplace noise of scale " + significant(scale(), 5) + " = sensitivity " +
         significant(sensitivity, 5) + " / epsilon " + significant(epsilon, 5) + " (" +
         sensitivity_derivation + "), exact discrete Laplace on a power-of-two grid of step 2^" +
         std::to_string(static_cast<int>(std::log2(grid()))) +
         " (Canonne, Kamath & Steinke 2020; docs/noise.md)";
}

std::string TestScore::statement(const std::string& utility) const {
  const std::string what = "test score (" + utility + " of the released model on " + source + ")";
  if (!value) return what + ": none (no model is released to score)";
  return what + ": " + significant(*value, 5) +
         (noise ? " (noisy: Laplace noise of scale " + significant(noise->scale(), 5) + " added)"
                : " (no noise: the test set is assumed public)");
}

std::string TestScore::method(const std::string& utility) const {
  if (is_public)
    return "assumed public: the test set " + public_file +
           " (declared public by output.test_score.public), on which the released model's " +
           utility + " is reported without noise (post-processing of the release: no privacy cost)";
  return "test score: the released model's " + utility + " on " + source + " plus " +
         noise->describe() + "; its epsilon " + significant(noise->epsilon, 5) +
         " is composed into the guarantee (sequentially: the test split is disjoint from the "
         "training and validation splits, but composition needs no argument about "
         "where a record sits)" +
         (split_selected_on ? "; the tuner selected on this split too (utility.split: test), so "
                              "the score is not independent of the selection"
                            : "");
}

}  // namespace dptune::host

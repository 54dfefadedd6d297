// The exact hypergeometric pmf h(draws, white, black) from lgamma, for
// chi-square tests of samplers of small urns (independent of core's
// log_factorial.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace extshuffle::testing {

inline std::vector<double> hypergeometric_pmf(std::uint64_t draws, std::uint64_t white, std::uint64_t black) {
  std::vector<double> pmf(std::min(draws, white) + 1, 0.0);
  const auto log_choose = [](std::uint64_t a, std::uint64_t b) {
    return std::lgamma(a + 1.0) - std::lgamma(b + 1.0) - std::lgamma(a - b + 1.0);
  };
  for (std::uint64_t k = 0; k < pmf.size(); ++k) {
    if (draws - k > black) continue;
    pmf[k] = std::exp(log_choose(white, k) + log_choose(black, draws - k) - log_choose(white + black, draws));
  }
  return pmf;
}

}  // namespace extshuffle::testing

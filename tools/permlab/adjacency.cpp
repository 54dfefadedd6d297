#include "adjacency.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "labstats/statistics.hpp"

namespace permlab {

AdjacencyResult adjacency_of_counts(std::uint64_t n, std::uint64_t samples, std::uint64_t successions,
                                    std::uint64_t reversals, double alpha) {
  AdjacencyResult r;
  r.n = n;
  r.samples = samples;
  r.alpha = alpha;
  r.successions = successions;
  r.reversals = reversals;
  const double dn = static_cast<double>(n), s = static_cast<double>(samples);
  r.expected = s * (dn - 1) / dn;
  r.sd = std::sqrt(s * (dn * dn - dn - 1)) / dn;
  r.z_successions = (static_cast<double>(successions) - r.expected) / r.sd;
  r.z_reversals = (static_cast<double>(reversals) - r.expected) / r.sd;
  const double z = std::max(std::fabs(r.z_successions), std::fabs(r.z_reversals));
  r.p_value = std::min(1.0, 2 * extshuffle::labstats::normal_two_sided_p_value(z));
  r.pass = r.p_value >= alpha;
  return r;
}

AdjacencyResult adjacency_test(const GeneratorOptions& options, std::uint64_t n, std::uint64_t samples, int threads,
                               double alpha) {
  if (n < 2) throw std::invalid_argument("adjacency test needs n >= 2");
  if (samples < 100) throw std::invalid_argument("adjacency test needs at least 100 samples");
  const int workers = worker_count(threads, samples);
  std::vector<std::uint64_t> up(workers, 0), down(workers, 0);
  for_each_sample(options, n, samples, threads,
                  [&](int worker, std::uint64_t, std::uint64_t, std::span<const std::uint32_t> order) {
                    std::uint64_t u = 0, d = 0;
                    for (std::size_t i = 0; i + 1 < order.size(); ++i) {
                      u += order[i + 1] == order[i] + 1 ? 1 : 0;
                      d += order[i + 1] + 1 == order[i] ? 1 : 0;
                    }
                    up[worker] += u;
                    down[worker] += d;
                  });
  std::uint64_t successions = 0, reversals = 0;
  for (int w = 0; w < workers; ++w) {
    successions += up[w];
    reversals += down[w];
  }
  return adjacency_of_counts(n, samples, successions, reversals, alpha);
}

}  // namespace permlab

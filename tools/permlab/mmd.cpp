#include "mmd.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "labstats/statistics.hpp"

namespace permlab {

std::uint64_t count_inversions(std::span<const std::uint32_t> values, std::vector<std::uint32_t>& scratch) {
  const std::size_t n = values.size();
  scratch.resize(2 * n);
  std::uint32_t* from = scratch.data();
  std::uint32_t* to = scratch.data() + n;
  std::copy(values.begin(), values.end(), from);
  std::uint64_t inversions = 0;
  // Bottom-up merge sort: when the right run's head is taken before the left
  // run is exhausted, it is inverted with every remaining element on the left.
  for (std::size_t width = 1; width < n; width *= 2) {
    for (std::size_t left = 0; left < n; left += 2 * width) {
      const std::size_t mid = std::min(left + width, n), right = std::min(left + 2 * width, n);
      std::size_t i = left, j = mid, k = left;
      // Branch-free: on random orders the comparison is a coin flip, and a
      // mispredicted branch per element made this 4x slower at n = 1000.
      while (i < mid && j < right) {
        const std::uint32_t a = from[i], b = from[j];
        const std::uint64_t take_right = b < a ? 1 : 0;
        const std::uint64_t mask = 0 - take_right;
        to[k++] = a ^ ((a ^ b) & static_cast<std::uint32_t>(mask));
        inversions += (mid - i) & mask;
        j += take_right;
        i += 1 - take_right;
      }
      while (i < mid) to[k++] = from[i++];
      while (j < right) to[k++] = from[j++];
    }
    std::swap(from, to);
  }
  return inversions;
}

std::uint64_t discordant_pairs(std::span<const std::uint32_t> s, std::span<const std::uint32_t> t,
                               std::vector<std::uint32_t>& scratch) {
  if (s.size() != t.size()) throw std::invalid_argument("discordant_pairs: sizes differ");
  // tau(s[i]) = t[i]: positions i < j are discordant iff tau inverts s[i], s[j].
  std::vector<std::uint32_t> tau(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) tau[s[i]] = t[i];
  return count_inversions(tau, scratch);
}

double mallows_kernel(std::uint64_t discordant, std::uint64_t n, double lambda) {
  if (n < 2) return 1.0;
  const double pairs = 0.5 * static_cast<double>(n) * static_cast<double>(n - 1);
  return std::exp(-lambda * static_cast<double>(discordant) / pairs);
}

double mallows_mean(std::uint64_t n, double lambda) {
  if (n < 2) return 1.0;
  const double pairs = 0.5 * static_cast<double>(n) * static_cast<double>(n - 1);
  // Each factor (1 - e^{-lambda j / C}) / (j (1 - e^{-lambda / C})) in logs;
  // expm1 keeps the small differences exact at n = 10^3 (lambda / C ~ 1e-5).
  const double log_denominator = std::log(-std::expm1(-lambda / pairs));
  double log_mean = 0;
  for (std::uint64_t j = 1; j <= n; ++j) {
    const double dj = static_cast<double>(j);
    log_mean += std::log(-std::expm1(-lambda * dj / pairs)) - std::log(dj) - log_denominator;
  }
  return std::exp(log_mean);
}

double mallows_variance(std::uint64_t n, double lambda) {
  const double mean = mallows_mean(n, lambda);
  return mallows_mean(n, 2 * lambda) - mean * mean;
}

double normal_two_sided_quantile(double alpha) {
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("alpha must lie in (0, 1)");
  double low = 0, high = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (low + high);
    (std::erfc(mid / std::sqrt(2.0)) > alpha ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

MmdResult mmd_from_sums(std::uint64_t n, std::uint64_t samples, double pair_kernel_sum, double identity_kernel_sum,
                        double lambda, double alpha) {
  if (samples < 2 || samples % 2 != 0) throw std::invalid_argument("mmd needs an even number of samples >= 2");
  MmdResult r;
  r.n = n;
  r.samples = samples;
  r.lambda = lambda;
  r.alpha = alpha;
  const double m = static_cast<double>(samples);
  r.kernel_mean = mallows_mean(n, lambda);
  r.kernel_variance = std::max(0.0, mallows_variance(n, lambda));
  const double z_alpha = normal_two_sided_quantile(alpha);
  // 1. The paired statistic (m/2 independent terms) and its thresholds.
  r.statistic = pair_kernel_sum / (m / 2) - r.kernel_mean;
  const double sd = std::sqrt(2 * r.kernel_variance / m);
  r.hoeffding_threshold = std::sqrt(std::log(2 / alpha) / m);
  r.clt_threshold = sd * z_alpha;
  r.z = sd > 0 ? r.statistic / sd : 0;
  r.p_value = extshuffle::labstats::normal_two_sided_p_value(r.z);
  r.pass_hoeffding = std::fabs(r.statistic) < r.hoeffding_threshold;
  r.pass_clt = std::fabs(r.statistic) < r.clt_threshold;
  // 2. The first version's one-sample statistic (m terms).
  r.identity_statistic = identity_kernel_sum / m - r.kernel_mean;
  r.identity_clt_threshold = std::sqrt(r.kernel_variance / m) * z_alpha;
  r.pass_identity_clt = std::fabs(r.identity_statistic) < r.identity_clt_threshold;
  return r;
}

MmdResult mmd_test(const GeneratorOptions& options, std::uint64_t n, std::uint64_t samples, int threads, double alpha,
                   double lambda) {
  samples -= samples % 2;
  if (samples < 2) throw std::invalid_argument("mmd needs at least 2 samples");
  const std::uint64_t blocks = block_count(samples);
  const int workers = worker_count(threads, samples);
  struct WorkerState {
    std::vector<std::uint32_t> previous;
    std::vector<std::uint32_t> scratch;
  };
  std::vector<WorkerState> state(workers);
  // Per-block sums, added in block order at the end: the result does not
  // depend on the thread count, not even in the last bit.
  std::vector<double> pair_sums(blocks, 0.0), identity_sums(blocks, 0.0);
  for_each_sample(options, n, samples, threads,
                  [&](int worker, std::uint64_t block, std::uint64_t sample, std::span<const std::uint32_t> order) {
                    WorkerState& w = state[worker];
                    identity_sums[block] += mallows_kernel(count_inversions(order, w.scratch), n, lambda);
                    if (sample % 2 == 0) {
                      w.previous.assign(order.begin(), order.end());  // blocks hold whole pairs
                    } else {
                      pair_sums[block] += mallows_kernel(discordant_pairs(w.previous, order, w.scratch), n, lambda);
                    }
                  });
  double pair_sum = 0, identity_sum = 0;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    pair_sum += pair_sums[b];
    identity_sum += identity_sums[b];
  }
  return mmd_from_sums(n, samples, pair_sum, identity_sum, lambda, alpha);
}

}  // namespace permlab

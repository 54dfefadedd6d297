#include "chi_square.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "labstats/permutations.hpp"
#include "labstats/statistics.hpp"

namespace permlab {

double chi_square_critical_value(std::uint64_t dof, double alpha) {
  // The p-value falls monotonically in x; bracket, then bisect.
  double low = 0, high = static_cast<double>(dof) + 10.0;
  while (extshuffle::labstats::chi_square_p_value(high, dof) > alpha) high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double mid = 0.5 * (low + high);
    (extshuffle::labstats::chi_square_p_value(mid, dof) > alpha ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

ChiSquareResult chi_square_of_counts(std::span<const std::uint64_t> counts, double alpha) {
  ChiSquareResult r;
  for (const std::uint64_t c : counts) {
    r.samples += c;
    r.orders_seen += c > 0 ? 1 : 0;
  }
  r.alpha = alpha;
  r.dof = counts.size() - 1;
  r.statistic = extshuffle::labstats::chi_square_statistic(
      counts, std::vector<double>(counts.size(), 1.0 / static_cast<double>(counts.size())));
  r.p_value = extshuffle::labstats::chi_square_p_value(r.statistic, r.dof);
  r.critical_value = chi_square_critical_value(r.dof, alpha);
  r.pass = r.p_value >= alpha;
  return r;
}

ChiSquareResult chi_square_test(const GeneratorOptions& options, std::uint64_t n, std::uint64_t samples, int threads,
                                double alpha, std::uint64_t pattern_records, std::uint64_t stride) {
  const std::uint64_t k = pattern_records == 0 ? n : pattern_records;
  if (k < 2 || k > kMaxChiSquareRecords) {
    throw std::invalid_argument("chi2 counts the orders of 2..6 records (n <= 6, or --pattern-records 2..6), got " +
                                std::to_string(k));
  }
  if (stride < 1 || (k - 1) * stride >= n) {
    throw std::invalid_argument("chi2 pattern records 0, " + std::to_string(stride) + ", ..., " +
                                std::to_string((k - 1) * stride) + " do not all exist among n = " + std::to_string(n));
  }
  const std::uint64_t orders = extshuffle::labstats::factorial(k);
  if (samples < 5 * orders) {
    throw std::invalid_argument("chi2 over " + std::to_string(orders) + " orders needs at least " +
                                std::to_string(5 * orders) + " samples (5 per order)");
  }
  const int workers = worker_count(threads, samples);
  std::vector<std::vector<std::uint64_t>> counts(workers, std::vector<std::uint64_t>(orders, 0));
  for_each_sample(options, n, samples, threads,
                  [&counts, k, stride](int worker, std::uint64_t, std::uint64_t, std::span<const std::uint32_t> order) {
                    // The pattern records in output order, renumbered 0..k-1.
                    std::uint64_t pattern[kMaxChiSquareRecords];
                    std::size_t seen = 0;
                    for (std::size_t i = 0; i < order.size() && seen < k; ++i) {
                      const std::uint64_t r = order[i];
                      if (r % stride == 0 && r / stride < k) pattern[seen++] = r / stride;
                    }
                    ++counts[worker][extshuffle::labstats::permutation_rank(std::span(pattern, seen))];
                  });
  for (int w = 1; w < workers; ++w) {
    for (std::uint64_t c = 0; c < orders; ++c) counts[0][c] += counts[w][c];
  }
  ChiSquareResult r = chi_square_of_counts(counts[0], alpha);
  r.n = n;
  r.pattern_records = k;
  r.stride = stride;
  return r;
}

}  // namespace permlab

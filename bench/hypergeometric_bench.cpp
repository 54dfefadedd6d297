// Cost of the communication-matrix sampling (docs/conventions.md, The canonical plan, step 1):
//  - one hypergeometric draw per regime (inversion, HRUA, and the public
//    function that picks between them) over a range of means, which is how
//    kHypergeometricInversionMaxMean was chosen (the crossover);
//  - the matrix rows of a whole node for candidate (L, F), drawn as the
//    driver draws them (RecursiveMatrix::rows over consecutive groups of 16
//    chunks), per row and per input record. The row cost per record must stay
//    below ~5% of a 2 GB/s streaming pass, i.e. < 0.2 ns per 8-byte record;
//  - the rows of one group of 16 chunks of a 2^51-record node (2^31 chunks)
//    from a fresh matrix, starting at chunk 0, 2^10, 2^20 and 2^30: the cost
//    of a range must grow with its length and the tree depth, not with where
//    it starts (what each MPI rank or thread pays for its own rows).
// Prints one line per measurement:
//   BENCH philox ns_per_block=...
//   BENCH hypergeometric regime=<inversion|hrua|auto> draws=.. white=.. black=.. mean=..
//         ns_per_draw=.. draws_per_s=.. blocks_per_draw=..
//   BENCH matrix_row leaf_records=L fanout=F records_per_cell=.. rows=.. ns_per_row=..
//         ns_per_record=.. draws_per_row=..
//   BENCH row_range first_chunk=.. chunks=16 node_chunks=.. splits=.. us=..
// Single-threaded; times are this thread's CPU time, best of 3 (rows: of 2).
// Total runtime ~25 s (--quick: ~3 s).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <span>
#include <tuple>
#include <vector>

#include "extshuffle/core/hypergeometric.hpp"
#include "extshuffle/core/recursive_matrix.hpp"

using namespace extshuffle;
using core::Purpose;
using core::Stream;
using core::StreamAddress;

namespace {

volatile std::uint64_t g_sink = 0;  // keeps results observable

// CPU time of this thread: on a shared machine wall time counts the other
// tenants' slices too (seen here: wall up to 2.5x CPU time).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

template <class F>
double best_cpu_seconds(int repeats, F&& f) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const double t0 = thread_cpu_seconds();
    f();
    best = std::min(best, thread_cpu_seconds() - t0);
  }
  return best;
}

enum class Regime { kInversion, kHrua, kAuto };

const char* regime_name(Regime r) {
  return r == Regime::kInversion ? "inversion" : r == Regime::kHrua ? "hrua" : "auto";
}

void bench_philox(int repeats) {
  constexpr std::uint64_t kBlocks = 1 << 22;
  const double s = best_cpu_seconds(repeats, [] {
    Stream stream(1, StreamAddress{core::NodeId{0, 0}, Purpose::kLab, 0});
    std::uint64_t acc = 0;
    for (std::uint64_t i = 0; i < kBlocks; ++i) acc += stream.next_u64() ^ stream.next_u64();
    g_sink = g_sink + acc;
  });
  std::printf("BENCH philox ns_per_block=%.2f\n", s * 1e9 / kBlocks);
}

// Draws for an urn already reduced (draws <= total/2, white <= black) when a
// regime is forced; `auto` calls the public function.
void bench_draws(Regime regime, std::uint64_t draws, std::uint64_t white, std::uint64_t black, int repeats,
                 std::uint64_t count) {
  std::uint32_t blocks = 0;
  const double s = best_cpu_seconds(repeats, [&] {
    Stream stream(2, StreamAddress{core::NodeId{0, 0}, Purpose::kLab, draws});
    std::uint64_t acc = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
      switch (regime) {
        case Regime::kInversion: acc += core::detail::hypergeometric_inversion(draws, white, black, stream); break;
        case Regime::kHrua: acc += core::detail::hypergeometric_hrua(draws, white, black, stream); break;
        case Regime::kAuto: acc += core::hypergeometric(draws, white, black, stream); break;
      }
    }
    blocks = stream.blocks_used();
    g_sink = g_sink + acc;
  });
  const double mean = static_cast<double>(draws) * static_cast<double>(white) /
                      (static_cast<double>(white) + static_cast<double>(black));
  std::printf("BENCH hypergeometric regime=%s draws=%llu white=%llu black=%llu mean=%.4g ns_per_draw=%.1f "
              "draws_per_s=%.4g blocks_per_draw=%.3f\n",
              regime_name(regime), static_cast<unsigned long long>(draws), static_cast<unsigned long long>(white),
              static_cast<unsigned long long>(black), mean, s * 1e9 / count, count / s,
              static_cast<double>(blocks) / count);
  std::fflush(stdout);
}

// Rows of a node of 4 F chunks (F buckets of 4 L records), drawn in groups
// of 16 chunks until `budget_s` has passed or the node is done; best of
// `repeats`.
void bench_matrix_row(std::uint64_t leaf_records, std::uint64_t fanout, double budget_s, int repeats) {
  const core::PlanConstants c{leaf_records, fanout};
  const std::uint64_t n = 4 * leaf_records * fanout;
  constexpr std::uint64_t kGroup = 16;
  double best_ns_per_row = 1e300;
  std::uint64_t rows_measured = 0;
  for (int r = 0; r < repeats; ++r) {
    core::RecursiveMatrix matrix(3 + r, core::NodeId{0, 0}, n, c);
    std::vector<std::uint64_t> rows_out(kGroup * matrix.bucket_count());
    std::uint64_t rows = 0;
    const double t0 = thread_cpu_seconds();
    double elapsed = 0;
    while (rows < matrix.row_count() && elapsed < budget_s) {
      const std::uint64_t end = std::min(matrix.row_count(), rows + kGroup);
      matrix.rows(rows, end, std::span<std::uint64_t>(rows_out.data(), (end - rows) * matrix.bucket_count()));
      rows = end;
      elapsed = thread_cpu_seconds() - t0;
    }
    g_sink = g_sink + rows_out[0];
    best_ns_per_row = std::min(best_ns_per_row, elapsed * 1e9 / rows);
    rows_measured = rows;
  }
  std::printf("BENCH matrix_row leaf_records=%llu fanout=%llu records_per_cell=%.4g rows=%llu ns_per_row=%.0f "
              "ns_per_record=%.4f draws_per_record=%.4g\n",
              static_cast<unsigned long long>(leaf_records), static_cast<unsigned long long>(fanout),
              static_cast<double>(leaf_records) / fanout, static_cast<unsigned long long>(rows_measured),
              best_ns_per_row, best_ns_per_row / leaf_records, static_cast<double>(fanout) / leaf_records);
  std::fflush(stdout);
}

// The rows of chunks [first, first + 16) of a node of 2^31 + 5 chunks under
// the shipped constants, from a fresh matrix (no cached path); best of
// `repeats`.
void bench_row_range(std::uint64_t first, int repeats) {
  const core::PlanConstants c = core::kPlanV2;
  const std::uint64_t node_chunks = (std::uint64_t{1} << 31) + 5;
  const std::uint64_t n = node_chunks * c.leaf_records;
  constexpr std::uint64_t kChunks = 16;
  double best_s = 1e300;
  std::uint64_t splits = 0;
  for (int r = 0; r < repeats; ++r) {
    core::RecursiveMatrix matrix(7 + r, core::NodeId{0, 0}, n, c);
    std::vector<std::uint64_t> rows(kChunks * matrix.bucket_count());
    const double t0 = thread_cpu_seconds();
    matrix.rows(first, first + kChunks, rows);
    best_s = std::min(best_s, thread_cpu_seconds() - t0);
    splits = matrix.splits_drawn();
    g_sink = g_sink + rows[0];
  }
  std::printf("BENCH row_range first_chunk=%llu chunks=%llu node_chunks=%llu splits=%llu us=%.0f\n",
              static_cast<unsigned long long>(first), static_cast<unsigned long long>(kChunks),
              static_cast<unsigned long long>(node_chunks), static_cast<unsigned long long>(splits), best_s * 1e6);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int repeats = quick ? 1 : 3;
  const std::uint64_t count = quick ? (1 << 16) : (1 << 19);
  bench_philox(repeats);

  // 1. Regimes over the mean, on matrix-like urns: white = 2^30 of 2^40 + 2^30
  //    balls, draws = mean * 2^10 (both regimes forced, then the dispatch).
  const std::uint64_t white = std::uint64_t{1} << 30, black = std::uint64_t{1} << 40;
  for (double mean : {0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 16.0, 24.0, 32.0, 64.0}) {
    const auto draws = static_cast<std::uint64_t>(mean * 1025);
    for (Regime regime : {Regime::kInversion, Regime::kHrua, Regime::kAuto}) {
      bench_draws(regime, draws, white, black, repeats, count);
    }
  }
  // 2. HRUA for large means, up to a 2^62 urn.
  for (const auto& [d, w, b] : {std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>{1000, 4000, 6000},
                                {1u << 16, 1u << 24, 1u << 30},
                                {std::uint64_t{1} << 39, (std::uint64_t{1} << 40) - 999, (std::uint64_t{1} << 40) + 12345},
                                {std::uint64_t{1} << 61, std::uint64_t{1} << 61, std::uint64_t{3} << 61}}) {
    bench_draws(Regime::kAuto, d, w, b, repeats, count);
  }

  // 3. Matrix rows for candidate plan constants.
  for (int leaf_log : {14, 16, 18, 20}) {
    for (int fanout_log : {6, 8, 10, 12}) {
      bench_matrix_row(std::uint64_t{1} << leaf_log, std::uint64_t{1} << fanout_log, quick ? 0.02 : 0.15,
                       quick ? 1 : 2);
    }
  }
  // 4. One chunk group's rows, wherever it starts in a huge node.
  for (const std::uint64_t first : {std::uint64_t{0}, std::uint64_t{1} << 10, std::uint64_t{1} << 20,
                                    std::uint64_t{1} << 30}) {
    bench_row_range(first, quick ? 1 : 3);
  }
  return g_sink == 42 ? 1 : 0;
}

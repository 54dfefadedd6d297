// The two ways `-i LO-HI -n K` finds the first K of P(seed, N)
// (src/modes/generated_run.cpp), to choose between them:
//  - prefix: permutation_prefix() traces K positions back through the plan;
//    its cost is measured per draw of its own estimate
//    (permutation_prefix_draws), over K and N;
//  - all: the N indices written to a scratch file as 8-byte records and
//    shuffled by the fixed-size executor with output_records = K, as
//    run_generated() does; its cost per index.
// kIndexRecordsPerDraw in generated_run.cpp is the ratio of the two.
//   permutation_prefix_bench [DIRECTORY=$TMPDIR or /tmp]
// prints
//   BENCH prefix n=.. k=.. draws=.. seconds=.. ns_per_draw=..
//   BENCH all n=.. k=.. seconds=.. ns_per_index=..
// One thread, best of 2 wall-clock runs.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_timer.hpp"
#include "modes/permutation_prefix.hpp"
#include "extshuffle/ioperm/fixed_size_shuffle.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/output_file.hpp"

using namespace extshuffle;

int main(int argc, char** argv) {
  const char* env = std::getenv("TMPDIR");
  const std::string directory = argc > 1 ? argv[1] : (env && *env ? env : "/tmp");
  io::quiet_stxxl();
  for (const std::uint64_t n : {std::uint64_t{1} << 24, std::uint64_t{1} << 28, std::uint64_t{1} << 40}) {
    for (const std::uint64_t k : {std::uint64_t{10}, std::uint64_t{10000}, std::uint64_t{1} << 20}) {
      const double draws = modes::permutation_prefix_draws(n, k, core::kPlanV2);
      if (draws > 3e8) continue;  // minutes
      const double seconds = bench::best_seconds(2, [&] { modes::permutation_prefix(7, n, k, core::kPlanV2); });
      std::printf("BENCH prefix n=%llu k=%llu draws=%.0f seconds=%.4f ns_per_draw=%.1f\n",
                  static_cast<unsigned long long>(n), static_cast<unsigned long long>(k), draws, seconds,
                  1e9 * seconds / draws);
      std::fflush(stdout);
    }
  }
  for (const std::uint64_t n : {std::uint64_t{1} << 24, std::uint64_t{1} << 27}) {
    const std::uint64_t k = 10;
    const double seconds = bench::best_seconds(2, [&] {
      auto scratch = io::BlockFile::create_scratch(directory);
      const std::uint64_t piece = std::uint64_t{1} << 20;
      const io::AlignedBuffer buffer = io::allocate_aligned(8 * piece);
      auto* indices = reinterpret_cast<std::uint64_t*>(buffer.get());
      for (std::uint64_t first = 0; first < n; first += piece) {
        for (std::uint64_t i = 0; i < piece; ++i) indices[i] = first + i;
        scratch->write_now(indices, first * 8, piece * 8);
      }
      ioperm::WalkOptions options{
          .run = {.seed = 7, .constants = core::kPlanV2, .memory_bytes = std::uint64_t{2} << 30, .threads = 1},
          .record_size = 8};
      options.output_records = k;
      ioperm::shuffle_fixed_size(*scratch, 0, n, *scratch, n * 8, options, [](const std::byte*, std::size_t) {});
    });
    std::printf("BENCH all n=%llu k=%llu seconds=%.3f ns_per_index=%.2f\n", static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(k), seconds, 1e9 * seconds / static_cast<double>(n));
    std::fflush(stdout);
  }
  return 0;
}

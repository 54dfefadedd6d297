// Permutation generators under test: each turns (seed, sample index) into one
// permutation of n records, reproducibly. The statistical tests (chi_square,
// mmd, position_matrix, adjacency) only ever see these orders.
//
// Convention everywhere in permlab: order[i] = the record (0..n-1) that ends
// at output position i, exactly what shuffling numbered records produces.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "extshuffle/core/stream.hpp"

namespace permlab {

struct GeneratorOptions {
  std::string kind = "bijective";  // bijective, plan, lcg, butterfly, cli
  std::uint64_t seed = 1;          // base seed of the experiment
  int rounds = 24;                 // bijective: VariablePhilox rounds, 1..32
  // bijective: domain width 2^bits; 0 = the project's (domain_bits_for(n)),
  // run through device::shuffle_records. Any other width (2..32, n <= 64)
  // runs through the inverse (variable_philox_inverse.hpp), e.g. 3 for the
  // paper's n = 5 experiment.
  std::uint32_t domain_bits = 0;
  // plan and cli: plan constants; 0 = the shipped value (core::kPlanV2).
  std::uint64_t leaf_records = 0;
  std::uint64_t fanout = 0;
  // butterfly: "padded" or "omitted" (Waechter et al. 3.2), applications of
  // the network, circular shift after each application (Waechter 5).
  std::string variant = "omitted";
  int iterations = 1;
  std::uint64_t shift_offset = 0;
  bool best_shift = false;  // resolve_options() replaces it by the offset minimising B
  // cli: the extshuffle binary, record size and memory budget (-S) to run it with.
  std::string binary;
  std::size_t record_size_bytes = 8;
  std::string memory;  // passed as -S when not empty
};

// Throws std::invalid_argument with a one-line message if the options do not
// describe a generator for n records (unknown kind, rounds outside 1..32,
// n too large for the generator, missing binary, ...).
void check_options(const GeneratorOptions& options, std::uint64_t n);

// Fills in what needs a computation once per experiment rather than once per
// thread: the best shift offset of the butterfly (exact matrix, butterfly.hpp).
GeneratorOptions resolve_options(GeneratorOptions options, std::uint64_t n);

// The key=value fields that name the generator in a LAB line, e.g.
// "generator=bijective rounds=24 domain_bits=4 seed=1".
std::string describe(const GeneratorOptions& options, std::uint64_t n);

// The stream of sample `sample` of an experiment: every random decision a lab
// generator makes for that sample is drawn from it, so samples are
// independent of each other and of the thread that computes them.
inline extshuffle::core::Stream sample_stream(std::uint64_t seed, std::uint64_t sample) {
  return extshuffle::core::Stream(
      seed, extshuffle::core::StreamAddress{extshuffle::core::NodeId{0, 0}, extshuffle::core::Purpose::kLab, sample});
}

// The seed handed to the whole plan (in RAM or through the CLI) for sample
// `sample`: the first 64 bits of the sample's stream, so neighbouring base
// seeds do not share samples.
inline std::uint64_t sample_seed(std::uint64_t seed, std::uint64_t sample) {
  return sample_stream(seed, sample).next_u64();
}

// One generator instance; not thread-safe (it owns scratch buffers or a
// scratch directory): make one per thread.
class Generator {
 public:
  virtual ~Generator() = default;
  // Writes the permutation of `sample` into order (order.size() == n).
  virtual void generate(std::uint64_t sample, std::span<std::uint32_t> order) = 0;
};

// Throws like check_options().
std::unique_ptr<Generator> make_generator(const GeneratorOptions& options, std::uint64_t n);

// Runs samples [0, samples) on `threads` threads (0 = all cores) and calls
// visit(worker, block, sample, order) for each: samples come in blocks of
// kSamplesPerBlock consecutive samples, a block runs on one worker in sample
// order, so per-block partial results summed in block order do not depend on
// the thread count. Memory: one generator and one order per worker.
inline constexpr std::uint64_t kSamplesPerBlock = 1024;
using SampleVisitor =
    std::function<void(int worker, std::uint64_t block, std::uint64_t sample, std::span<const std::uint32_t> order)>;
void for_each_sample(const GeneratorOptions& options, std::uint64_t n, std::uint64_t samples, int threads,
                     const SampleVisitor& visit);

inline std::uint64_t block_count(std::uint64_t samples) {
  return (samples + kSamplesPerBlock - 1) / kSamplesPerBlock;
}
int worker_count(int threads, std::uint64_t samples);

}  // namespace permlab

// The prefetched gathers and the work split of the CPU shuffle give the bytes
// of their plain definitions, at every prefetch distance, batch size, record
// size and thread count (docs/benchmarks.md, "Prefetched gathers").
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "device/cpu/record_gather.hpp"
#include "device/cpu/shuffle_records_cpu.hpp"
#include "extshuffle/device/permutation_indices.hpp"
#include "extshuffle/device/shuffle_records.hpp"
#include "support/permutations.hpp"

namespace extshuffle::device::record_gather_test {
namespace {

std::vector<std::byte> random_bytes(std::size_t bytes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> out(bytes);
  for (auto& b : out) b = static_cast<std::byte>(rng());
  return out;
}

// Indices into `records` records: a permutation when `repeats` is false,
// otherwise independent draws (a gather need not be a permutation).
std::vector<std::uint32_t> random_indices(std::uint64_t count, std::uint64_t records, bool repeats,
                                          std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> out(count);
  if (repeats) {
    for (auto& i : out) i = static_cast<std::uint32_t>(rng() % records);
    return out;
  }
  for (std::uint64_t k = 0; k < count; ++k) out[k] = static_cast<std::uint32_t>(k);
  for (std::uint64_t k = count; k > 1; --k) std::swap(out[k - 1], out[rng() % k]);
  return out;
}

std::vector<std::byte> plain_gather(const std::vector<std::byte>& records, const std::vector<std::uint32_t>& indices,
                                    std::size_t r) {
  std::vector<std::byte> out(indices.size() * r);
  for (std::size_t k = 0; k < indices.size(); ++k) std::memcpy(out.data() + k * r, records.data() + indices[k] * r, r);
  return out;
}

// Counts around the prefetch distance (32) and its edges, and empty ones.
const std::uint64_t kCounts[] = {0, 1, 2, 31, 32, 33, 63, 64, 65, 1000};
const std::size_t kRecordSizes[] = {1, 2, 3, 4, 8, 12, 16, 24, 32, 64, 100, 256, 257, 4096};

TEST(RecordGather, ByPermutationEqualsThePlainLoop) {
  for (std::size_t r : kRecordSizes) {
    for (std::uint64_t count : kCounts) {
      for (bool repeats : {false, true}) {
        const std::uint64_t records = std::max<std::uint64_t>(count, 1);
        const auto input = random_bytes(records * r, r * 1000 + count);
        const auto indices = random_indices(count, records, repeats, count + r);
        std::vector<std::byte> out(count * r + 1, std::byte{0x77});
        gather_by_permutation(input.data(), indices.data(), count, r, out.data());
        EXPECT_EQ(std::byte{0x77}, out.back()) << "wrote past the end: " << r << " x " << count;
        out.pop_back();
        EXPECT_EQ(plain_gather(input, indices, r), out) << r << " x " << count << (repeats ? " repeats" : "");
      }
    }
  }
}

TEST(RecordGather, EveryPrefetchDistanceGivesTheSameBytes) {
  for (std::size_t r : {8ul, 12ul, 32ul}) {
    for (std::uint64_t count : kCounts) {
      const auto input = random_bytes(std::max<std::uint64_t>(count, 1) * r, count);
      const auto indices = random_indices(count, std::max<std::uint64_t>(count, 1), false, r);
      const auto expected = plain_gather(input, indices, r);
      for (std::uint32_t distance : {0u, 1u, 7u, 32u, 33u, 5000u}) {
        std::vector<std::byte> out(count * r);
        cpu::gather_indexed(input.data(), indices.data(), count, r, out.data(), distance);
        EXPECT_EQ(expected, out) << r << " x " << count << " at distance " << distance;
      }
    }
  }
}

// The definition of the shuffle (docs/conventions.md, The bijective shuffle):
// output j takes input f(i_j), i_0 < i_1 < ... the indices with f(i) < n.
std::vector<std::byte> defined_shuffle(const std::vector<std::byte>& input, const ShuffleJob& job, std::size_t r) {
  std::vector<std::byte> out(job.records * r);
  std::uint64_t j = 0;
  for (std::uint64_t i = 0; i < job.bijection.domain_size(); ++i) {
    const std::uint64_t value = job.bijection(i);
    if (value < job.records) std::memcpy(out.data() + r * j++, input.data() + value * r, r);
  }
  return out;
}

// Jobs over `inputs`, each with an output of its own.
struct Batch {
  std::vector<std::vector<std::byte>> outputs;
  std::vector<ShuffleJob> jobs;
  Batch(const std::vector<std::vector<std::byte>>& inputs, const std::vector<std::uint64_t>& sizes, std::size_t r) {
    for (std::uint64_t k = 0; k < sizes.size(); ++k) outputs.emplace_back(sizes[k] * r);
    for (std::uint64_t k = 0; k < sizes.size(); ++k) {
      jobs.push_back(
          {inputs[k].data(), outputs[k].data(), sizes[k],
           core::shuffle_bijection(7, core::StreamAddress{core::NodeId{1, k}, core::Purpose::kLab, k}, sizes[k])});
    }
  }
};

// Jobs whose domain has no index to drop (cut into tiles for free), jobs
// with indices to drop (whole, or cut after a count pass when there are
// fewer jobs than threads), tiny and empty ones, alone and mixed.
TEST(RecordGather, ShuffleEqualsItsDefinitionForEveryWorkSplit) {
  constexpr std::uint64_t kTile = std::uint64_t{1} << 16;
  const std::vector<std::vector<std::uint64_t>> batches = {
      {1ull << 18},
      {(1ull << 18) + 5},
      {1ull << 18, (1ull << 18) + 5},
      {(1ull << 18) + 5, (1ull << 18) + 9},
      {kTile - 1, kTile, kTile + 1, 0, 1, 255, 256, 257, 3 * kTile},
  };
  // Under AddressSanitizer (scripts/sanitize.sh) one record size of each
  // kind of copy and two tunings: the same pieces and counts, a third of the
  // volume (the whole test took 52 s there).
#ifdef __SANITIZE_ADDRESS__
  const std::vector<std::size_t> record_sizes = {8, 24};
  const std::vector<cpu::GatherTuning> tunings = {cpu::GatherTuning{}, cpu::GatherTuning{1, 5}};
#else
  const std::vector<std::size_t> record_sizes = {8, 24, 32};
  const std::vector<cpu::GatherTuning> tunings = {cpu::GatherTuning{}, cpu::GatherTuning{0, cpu::kPhiloxBatch},
                                                  cpu::GatherTuning{1, 5}, cpu::GatherTuning{300, 7}};
#endif
  for (std::size_t r : record_sizes) {
    for (const auto& sizes : batches) {
      std::vector<std::vector<std::byte>> inputs, defined;
      for (std::size_t k = 0; k < sizes.size(); ++k) inputs.push_back(random_bytes(sizes[k] * r, 40 + k));
      const Batch expected(inputs, sizes, r);
      for (std::size_t k = 0; k < sizes.size(); ++k) defined.push_back(defined_shuffle(inputs[k], expected.jobs[k], r));
      for (int threads : {1, 3}) {
        for (const cpu::GatherTuning& tuning : tunings) {
          Batch batch(inputs, sizes, r);
          cpu::shuffle_records_cpu(batch.jobs, r, threads, tuning);
          for (std::size_t k = 0; k < sizes.size(); ++k) {
            ASSERT_EQ(defined[k], batch.outputs[k])
                << "job " << k << " of " << sizes.size() << ", " << sizes[k] << " x " << r << ", threads " << threads
                << ", prefetch " << tuning.prefetch_records << ", batch " << tuning.batch_records;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace extshuffle::device::record_gather_test

// The generators: every one yields permutations, reproducibly and
// independently of the thread count; the CLI generator runs the real binary
// and must equal the in-RAM plan for the same seed and constants (in RAM and
// through the streaming walk).
#include "generators.hpp"
#include "support/command.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace permlab::tests::generators_test {
namespace {

bool is_permutation(std::vector<std::uint32_t> v) {
  std::sort(v.begin(), v.end());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != i) return false;
  }
  return true;
}

std::vector<GeneratorOptions> all_generators() {
  std::vector<GeneratorOptions> all(6);
  all[0].kind = "bijective";
  all[1].kind = "bijective";
  all[1].domain_bits = 9;
  all[2].kind = "plan";
  all[2].leaf_records = 4;
  all[2].fanout = 2;
  all[3].kind = "lcg";
  all[4].kind = "butterfly";
  all[4].variant = "padded";
  all[4].iterations = 2;
  all[4].shift_offset = 3;
  all[5].kind = "butterfly";
  all[5].best_shift = true;
  all[5].iterations = 3;
  return all;
}

TEST(Generators, EveryGeneratorYieldsReproduciblePermutations) {
  for (const GeneratorOptions& options : all_generators()) {
    for (std::uint64_t n : {1, 2, 5, 37}) {
      const GeneratorOptions o = resolve_options(options, n);
      auto a = make_generator(o, n), b = make_generator(o, n);
      std::vector<std::uint32_t> x(n), y(n);
      for (std::uint64_t s = 0; s < 20; ++s) {
        a->generate(s, x);
        b->generate(s, y);
        ASSERT_TRUE(is_permutation(x)) << describe(o, n);
        ASSERT_EQ(x, y) << describe(o, n);
      }
    }
  }
}

TEST(Generators, SamplesDoNotDependOnTheThreadCount) {
  GeneratorOptions o;
  o.kind = "plan";
  o.leaf_records = 4;
  o.fanout = 2;
  const std::uint64_t n = 30, samples = 3 * kSamplesPerBlock + 17;
  auto collect = [&](int threads) {
    std::vector<std::uint32_t> all(samples * n);
    for_each_sample(o, n, samples, threads, [&](int, std::uint64_t, std::uint64_t s, std::span<const std::uint32_t> order) {
      std::copy(order.begin(), order.end(), all.begin() + s * n);
    });
    return all;
  };
  EXPECT_EQ(collect(1), collect(3));
}

// The black box equals the reference: P(seed, N) is the same permutation
// whether computed in RAM by the library or by the binary, in RAM (-S 1M) or
// streaming through scratch space (64-byte records, -S 8K: 100 records of
// 64 bytes and their workspace exceed the budget).
TEST(Generators, CliEqualsThePlanInRam) {
  for (const auto& [record_size, memory] : {std::pair<std::size_t, std::string>{8, "1M"}, {64, "8K"}}) {
    GeneratorOptions cli;
    cli.kind = "cli";
    cli.binary = extshuffle::testing::extshuffle_binary();
    cli.leaf_records = 16;
    cli.fanout = 4;
    cli.record_size_bytes = record_size;
    cli.memory = memory;
    GeneratorOptions plan = cli;
    plan.kind = "plan";
    const std::uint64_t n = 100;
    auto a = make_generator(cli, n), b = make_generator(plan, n);
    std::vector<std::uint32_t> x(n), y(n);
    for (std::uint64_t s = 0; s < 3; ++s) {
      a->generate(s, x);
      b->generate(s, y);
      EXPECT_EQ(x, y) << "record size " << record_size << " memory " << memory << " sample " << s;
    }
  }
}

TEST(Generators, RejectsBadOptionsWithOneLineMessages) {
  GeneratorOptions o;
  o.rounds = 33;
  EXPECT_THROW(check_options(o, 5), std::invalid_argument);
  o = {};
  o.kind = "shuffle";
  EXPECT_THROW(check_options(o, 5), std::invalid_argument);
  o = {};
  o.kind = "cli";
  EXPECT_THROW(check_options(o, 5), std::invalid_argument);  // no --binary
  o.binary = "/nonexistent/extshuffle";
  EXPECT_THROW(check_options(o, 5), std::invalid_argument);
  o = {};
  o.domain_bits = 2;
  EXPECT_THROW(check_options(o, 5), std::invalid_argument);  // 2^2 < 5
}

}  // namespace
}  // namespace permlab::tests::generators_test

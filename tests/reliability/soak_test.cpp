// Soak: 20 shuffles of different sizes, record sizes and modes (in RAM,
// through disk, standard input to standard output) run at once with one
// shared scratch directory. Each process must create its own scratch file
// (no collision, no cross-talk), every output must be a permutation of its
// own input record for record, and the shared directory must be empty after.
#include <gtest/gtest.h>

#include <memory>

#include "reliability_support.hpp"

namespace extshuffle::testing::soak_test {
namespace {

struct SoakRun {
  std::uint64_t records;
  std::size_t record_size;
  std::string memory;
  bool pipe;  // standard input to standard output
};

// Every output record is the input record its index names, and every index
// appears once: the output is a permutation of the input's records.
::testing::AssertionResult is_permutation_of_input(const std::string& output, const std::string& input,
                                                   std::size_t record_size) {
  if (output.size() != input.size()) {
    return ::testing::AssertionFailure() << "size " << output.size() << " instead of " << input.size();
  }
  const std::size_t n = input.size() / record_size;
  std::vector<bool> seen(n, false);
  for (std::size_t k = 0; k < n; ++k) {
    std::uint64_t index = 0;
    std::memcpy(&index, output.data() + k * record_size, 8);
    if (index >= n || seen[index]) return ::testing::AssertionFailure() << "record " << k << " repeats or is foreign";
    seen[index] = true;
    if (output.compare(k * record_size, record_size, input, index * record_size, record_size) != 0) {
      return ::testing::AssertionFailure() << "record " << k << " (input record " << index << ") was altered";
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(Soak, TwentyConcurrentRunsShareOneScratchDirectory) {
  Workspace w;
  std::vector<SoakRun> runs;
  const std::size_t record_sizes[] = {8, 16, 24, 100, 8, 4096, 8, 40, 8, 12};
  for (int k = 0; k < 20; ++k) {
    const std::size_t size = record_sizes[k % 10];
    // 0.1 to ~20 MiB each, about 170 MiB in all; -S 12M sends the larger ones
    // through scratch space (and 4 KiB records through gathering by index).
    const std::uint64_t bytes = (std::uint64_t{100} << 10) + (std::uint64_t(k) * k * 53 << 10);
    runs.push_back({bytes / size, size, k % 4 == 3 ? "1G" : "12M", k % 5 == 4});
  }
  std::vector<std::string> inputs;
  std::vector<std::unique_ptr<Child>> children;
  std::vector<std::filesystem::path> captures;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const SoakRun& r = runs[k];
    const auto data = numbered_records(r.records, r.record_size);
    inputs.emplace_back(reinterpret_cast<const char*>(data.data()), data.size());
    const auto in = w.in_dir / ("in" + std::to_string(k) + ".bin");
    const auto out = w.out_dir / ("out" + std::to_string(k) + ".bin");
    write_file(in, inputs.back());
    captures.push_back(w.capture_dir / std::to_string(k));
    std::filesystem::create_directory(captures.back());
    std::vector<std::string> args{"--record-size", std::to_string(r.record_size), "--seed", std::to_string(1000 + k),
                                  "-S", r.memory, "-j", "2", "-T", w.tmp_dir.string()};
    if (r.pipe) {
      args.push_back("-");
      children.push_back(std::make_unique<Child>(args, Environment{}, captures.back(), in.string(), out.string()));
    } else {
      args.push_back(in.string());
      args.push_back(out.string());
      children.push_back(std::make_unique<Child>(args, Environment{}, captures.back()));
    }
  }
  for (std::size_t k = 0; k < runs.size(); ++k) {
    SCOPED_TRACE("run " + std::to_string(k) + ": " + std::to_string(runs[k].records) + " records of " +
                 std::to_string(runs[k].record_size) + " bytes, -S " + runs[k].memory +
                 (runs[k].pipe ? ", stdin to stdout" : ""));
    EXPECT_EQ(children[k]->wait(std::chrono::seconds(300)), 0) << children[k]->err();
    EXPECT_EQ(children[k]->err(), "");
    const std::string output = read_file(w.out_dir / ("out" + std::to_string(k) + ".bin"));
    EXPECT_TRUE(is_permutation_of_input(output, inputs[k], runs[k].record_size));
  }
  EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{}) << "scratch left in the shared directory";
  std::vector<std::string> expected_outputs;
  for (std::size_t k = 0; k < runs.size(); ++k) expected_outputs.push_back("out" + std::to_string(k) + ".bin");
  std::sort(expected_outputs.begin(), expected_outputs.end());
  EXPECT_EQ(entries(w.out_dir), expected_outputs) << "temporary output left";
}

}  // namespace
}  // namespace extshuffle::testing::soak_test

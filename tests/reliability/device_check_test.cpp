// --device cuda without a usable GPU fails before any input is read
// (docs/cli.md, --device): exit 1 and one line, checked where the Job is
// made. It failed only once the counting pass had read the whole input (a
// text input), or not at all (-r, --dry-run). Skipped where a GPU is usable.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "extshuffle/device/shuffle_records.hpp"
#include "reliability_support.hpp"

namespace extshuffle::testing::device_check_test {
namespace {

const std::string kDeviceLine = "CUDA device requested: ";

// The reproduction: an input that is never read because it cannot be
// opened for reading without a writer: a FIFO. Opening it would block, so a
// prompt exit proves it was never opened.
TEST(DeviceCheck, CudaWithoutAGpuFailsBeforeOpeningTheInput) {
  if (device::cuda_available()) GTEST_SKIP() << "a GPU is usable here";
  Workspace w;
  const std::string fifo = (w.in_dir / "in.txt").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  TempDir capture;
  Child child({"--device", "cuda", fifo, "-o", w.output()}, {}, capture.path());
  const int exit_code = child.wait(std::chrono::seconds(30));
  ASSERT_NE(exit_code, -1) << "the run waited for its input: it opened the FIFO";
  EXPECT_EQ(exit_code, 1) << child.err();
  EXPECT_TRUE(is_one_line_error(child.err(), kDeviceLine)) << child.err();
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{});
}

// A variant: regular files whose first read the fault shim records
// (pause-read with a threshold of 0 writes its marker on the first read of
// the input, then goes on: its release file exists already): text (counted first), fixed-size records, shuf's -r mode and
// --dry-run, none of which checked the device before reading.
TEST(DeviceCheck, CudaWithoutAGpuReadsNoByteOfTheInputInAnyMode) {
  if (device::cuda_available()) GTEST_SKIP() << "a GPU is usable here";
  Workspace w;
  const std::string text = (w.in_dir / "in.txt").string();
  std::string lines;
  for (int i = 0; i < 100000; ++i) lines += std::to_string(i) + "\n";
  write_file(text, lines);
  write_file(w.input(), numbered_u64(1000));
  const std::vector<std::vector<std::string>> runs = {
      {text, "-o", w.output()},
      {"--record-size", "8", w.input(), "-o", w.output()},
      {"-r", "-n", "3", text},
      {"--dry-run", text},
      {"-n", "2", text},
  };
  for (std::vector<std::string> args : runs) {
    args.insert(args.begin(), {"--device", "cuda"});
    SCOPED_TRACE(args[2]);
    std::filesystem::remove(w.marker());
    write_file(w.release(), "");
    const auto r = run_binary(args, fault_environment("pause-read", w.in_dir.string() + "/", 0, w));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(is_one_line_error(r.err, kDeviceLine)) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(std::filesystem::exists(w.marker())) << "the input was read before the device was checked";
    EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{});
  }
}

}  // namespace
}  // namespace extshuffle::testing::device_check_test

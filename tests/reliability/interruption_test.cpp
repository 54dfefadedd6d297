// Signals at chosen points of a run: the fault shim pauses the run inside
// one read or write (reading the input, writing scratch, reading scratch,
// writing the output), the test sees the shim's marker, signals the process
// and then releases the pause. SIGINT, SIGTERM and SIGHUP must end the run
// with the signal's status, leaving the previous destination intact and no
// scratch or temporary file; a rerun must then give exactly the bytes of a
// run never interrupted. SIGKILL cannot be handled: scratch is unlinked at
// open so it still leaves no scratch file, and the one thing it may leave is
// the hidden temporary output beside the destination (documented in
// docs/reliability.md). SIGPIPE (a reader that stops early) ends quietly.
#include <gtest/gtest.h>

#include <iostream>

#include "reliability_support.hpp"

namespace extshuffle::testing::interruption_test {
namespace {

// 16 MiB of 8-byte records with -S 16M: two passes through scratch space.
constexpr std::uint64_t kRecords = std::uint64_t{2} << 20;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
const std::string kOld = "the previous output, which must survive\n";

struct PausePoint {
  std::string name;
  std::string fault;  // pause-read or pause-write
  enum { kInput, kScratch, kDestination } target;
  std::uint64_t after_bytes;
};

const std::vector<PausePoint> kPoints = {
    {"reading the input", "pause-read", PausePoint::kInput, 6 * kMiB},
    {"writing scratch", "pause-write", PausePoint::kScratch, 5 * kMiB},
    {"reading scratch", "pause-read", PausePoint::kScratch, 5 * kMiB},
    {"writing the output", "pause-write", PausePoint::kDestination, 5 * kMiB},
};

std::string prefix_of(const PausePoint& p, const Workspace& w) {
  switch (p.target) {
    case PausePoint::kInput: return w.input();
    case PausePoint::kScratch: return w.tmp_dir.string() + "/";
    case PausePoint::kDestination: return w.out_dir.string() + "/";
  }
  return "";
}

std::vector<std::string> shuffle_arguments(const Workspace& w, const std::string& output) {
  return {"--record-size", "8", "--seed", "42", "-S", "16M", "-T", w.tmp_dir.string(), w.input(), output};
}

class Interruption : public ::testing::Test {
 protected:
  void SetUp() override {
    input_ = numbered_u64(kRecords);
    write_file(w_.input(), input_);
    // The reference: a run never interrupted, kept outside the watched directories.
    const auto r = run_binary(shuffle_arguments(w_, (w_.capture_dir / "reference.bin").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    reference_ = read_file(w_.capture_dir / "reference.bin");
    ASSERT_TRUE(is_permutation_of_iota(u64_indices(reference_)));
  }

  // Starts a run paused at `point`, sends `signal_number` once the pause is
  // reached, releases it, and returns the exit status.
  Outcome interrupt_at(const PausePoint& point, int signal_number) {
    std::filesystem::remove(w_.marker());
    std::filesystem::remove(w_.release());
    Child child(shuffle_arguments(w_, w_.output()),
                fault_environment(point.fault, prefix_of(point, w_), point.after_bytes, w_), w_.capture_dir);
    Outcome o;
    if (!wait_for_file(w_.marker())) {
      ADD_FAILURE() << "the run never reached the pause point (" << point.name << ")";
      return o;
    }
    EXPECT_TRUE(child.running()) << "the run ended at the pause point: " << child.err();
    child.send(signal_number);
    // The signal ends the run while its call is paused: the pause is released
    // only after the exit. A run that ignored the signal would go on when the
    // shim's pause gives up (120 s), complete, and be caught by the checks.
    o.exit_code = child.wait(std::chrono::seconds(600));
    write_file(w_.release(), "");
    o.out = child.out();
    o.err = child.err();
    return o;
  }

  void expect_rerun_matches_reference() {
    const auto r = run_binary(shuffle_arguments(w_, w_.output()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_SAME_BYTES(read_file(w_.output()), reference_) << "a rerun after the interruption differs";
    EXPECT_EQ(entries(w_.tmp_dir), std::vector<std::string>{});
  }

  Workspace w_;
  std::string input_, reference_;
};

TEST_F(Interruption, HandledSignalsLeaveTheDestinationAndNoScratch) {
  const std::vector<std::pair<int, const char*>> signals = {{SIGINT, "SIGINT"}, {SIGTERM, "SIGTERM"}};
  for (const PausePoint& point : kPoints) {
    for (const auto& [signal_number, signal_name] : signals) {
      SCOPED_TRACE(std::string(signal_name) + " while " + point.name);
      write_file(w_.output(), kOld);
      const Outcome o = interrupt_at(point, signal_number);
      EXPECT_EQ(o.exit_code, 128 + signal_number) << o.err;
      EXPECT_EQ(o.err, "") << "an interrupted run says nothing";
      EXPECT_SAME_BYTES(read_file(w_.output()), kOld) << "the destination changed";
      EXPECT_EQ(entries(w_.out_dir), std::vector<std::string>{"out.bin"}) << "temporary output left";
      EXPECT_EQ(entries(w_.tmp_dir), std::vector<std::string>{}) << "scratch left";
      EXPECT_SAME_BYTES(read_file(w_.input()), input_);
    }
  }
  // One rerun after all eight: whatever one of them left (every one was
  // checked to leave the input, the destination and both directories as
  // they were) would still be there for it to trip on. A rerun after each
  // point was three more runs of 16 MiB through disk.
  SCOPED_TRACE("rerun after the interruptions at every point");
  expect_rerun_matches_reference();
}

TEST_F(Interruption, HangupLeavesNoDestinationWhenThereWasNone) {
  const Outcome o = interrupt_at(kPoints[1], SIGHUP);
  EXPECT_EQ(o.exit_code, 128 + SIGHUP) << o.err;
  EXPECT_EQ(entries(w_.out_dir), std::vector<std::string>{});
  EXPECT_EQ(entries(w_.tmp_dir), std::vector<std::string>{});
  expect_rerun_matches_reference();
}

// SIGKILL runs no handler, so nothing may depend on one: scratch is unlinked
// as soon as it is opened, and the output is an unnamed file (O_TMPFILE)
// until commit, so neither --tmpdir nor the destination's directory may hold
// anything new afterwards, and the destination keeps its old contents.
TEST_F(Interruption, KillLeavesNothing) {
  for (const PausePoint& point : {kPoints[1], kPoints[3]}) {
    SCOPED_TRACE("SIGKILL while " + point.name);
    write_file(w_.output(), kOld);
    const Outcome o = interrupt_at(point, SIGKILL);
    EXPECT_EQ(o.exit_code, 128 + SIGKILL);
    EXPECT_SAME_BYTES(read_file(w_.output()), kOld) << "the destination changed";
    EXPECT_EQ(entries(w_.tmp_dir), std::vector<std::string>{}) << "scratch survived SIGKILL";
    std::vector<std::string> left;
    for (const std::string& name : entries(w_.out_dir)) {
      if (name != "out.bin") left.push_back(name);
    }
    EXPECT_EQ(left, std::vector<std::string>{}) << "a file was left beside the destination";
    ::testing::Test::RecordProperty("after_sigkill_" + std::to_string(point.target),
                                    left.empty() ? "nothing" : left[0]);
    expect_rerun_matches_reference();
    for (const std::string& name : left) std::filesystem::remove(w_.out_dir / name);
  }
}

// A reader that stops early (| head -c 100): the run ends quietly, as other
// filters do: no message, status 141 (killed by SIGPIPE) or 0, no scratch.
TEST(BrokenPipe, EndsQuietlyAndLeavesNoScratch) {
  Workspace w;
  write_file(w.input(), numbered_u64(kRecords));
  const std::string base = kBinary + " --record-size 8 --seed 1 -T " + w.tmp_dir.string();
  const std::string err = (w.capture_dir / "err").string();
  for (const std::string& run : {base + " -S 16M " + w.input(), base + " -S 1G " + w.input(),
                                 base + " -S 16M - < " + w.input(), kBinary + " -i 1-3000000 --seed 1 -S 16M"}) {
    SCOPED_TRACE(run);
    const auto r = run_command(run + " 2> " + err + " | head -c 100 | wc -c; echo status=${PIPESTATUS[0]}");
    EXPECT_NE(r.out.find("100\n"), std::string::npos) << r.out;
    const bool quiet_status = r.out.find("status=141") != std::string::npos ||
                              r.out.find("status=0\n") != std::string::npos;
    EXPECT_TRUE(quiet_status) << r.out;
    EXPECT_SAME_BYTES(read_file(err), "") << "a closed pipe is not an error";
    EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
  }
}

}  // namespace
}  // namespace extshuffle::testing::interruption_test

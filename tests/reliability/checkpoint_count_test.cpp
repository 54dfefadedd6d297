// --checkpoint DIR's counting pass against failures of the real binary
// (docs/cli.md "Resuming a run"): a rerun takes a text input's count from
// the journal, a dataset of files counted again only from the file that
// failed, one large file counted on from its last progress point; strace
// counts the bytes read from each input, and each rerun writes the
// uninterrupted run's bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstddef>
#include <filesystem>
#include <sstream>
#include <string>

#include "checkpoint_run.hpp"
#include "reliability_support.hpp"
#include "support/command.hpp"
#include "support/text_records.hpp"

namespace extshuffle::testing::checkpoint_count_test {
namespace {

using namespace checkpoint_run;

// The bytes the traced process read from `path` (strace -y names each
// descriptor's file): every read, pread64, readv and preadv's result.
std::uint64_t bytes_read_from(const std::string& log, const std::string& path) {
  std::uint64_t bytes = 0;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const bool read = line.find("read(") != std::string::npos || line.find("readv(") != std::string::npos;
    const std::size_t equals = line.rfind(" = ");
    if (!read || line.find("<" + path + ">") == std::string::npos || equals == std::string::npos) continue;
    const long long n = std::atoll(line.c_str() + equals + 3);
    if (n > 0) bytes += static_cast<std::uint64_t>(n);
  }
  return bytes;
}

// A resumed run of text takes its records' count from the journal: killed
// (kill -9) once its plan is durable, as it writes its first bytes into
// DIR's scratch file, the run again reads the input once (pass 1), not
// twice (the counting pass, then pass 1), as strace counts the bytes read
// from it; and it writes the uninterrupted run's bytes.
TEST(CheckpointKill, ResumedTextIsNotCountedAgain) {
  if (!have("strace")) GTEST_SKIP() << "strace is not installed";
  TempDir root;
  const Case c{"JSONL, counted once", "{in}/docs.jsonl {out}/out.jsonl --seed 15 -S 1M", {"out.jsonl"}};
  CheckpointRun run(c, root.path());
  // About 11 MiB: far more than the blocks the input's identity samples (640 KiB).
  const fs::path input = run.in() / "docs.jsonl";
  write_file(input, heavy_jsonl(16000, 9));
  const std::uint64_t input_bytes = fs::file_size(input);
  run.reference();
  Workspace w;
  run.fresh();
  Child child(run.arguments(true, "-q"),
              fault_environment("pause-write", (run.checkpoint_directory() / "scratch-0").string(), 0, w),
              w.capture_dir);
  const bool held = wait_for_file_while(w.marker(), child);
  ASSERT_TRUE(held) << "the run never wrote into DIR's scratch file: " << child.err();
  child.send(SIGKILL);
  EXPECT_EQ(child.wait(), 137);
  // --dry-run expects no counting pass either.
  const CommandResult planned = run_command(run.command(true, "--dry-run"));
  EXPECT_EQ(planned.exit_code, 0) << planned.err;
  EXPECT_NE(planned.out.find("count of the records taken from --checkpoint's journal"), std::string::npos)
      << planned.out.substr(0, 2000);
  const fs::path log = root.path() / "reads.log";
  const CommandResult resumed = run_command(strace_command() + " -f -qq -y -e trace=read,pread64,readv,preadv -o " +
                                            quoted(log.string()) + " " + run.command(true, "-q"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  run.check_outputs("resumed after its plan");
  const std::uint64_t read = bytes_read_from(read_file(log), fs::canonical(input).string());
  // Pass 1 reads it once; the identity's sampled blocks and the format's
  // probe are the rest. Counting it again would be a second whole read.
  EXPECT_GE(read, input_bytes);
  EXPECT_LT(read, input_bytes + input_bytes / 4)
      << "the resumed run read " << read << " bytes of its " << input_bytes << "-byte input";
}

// A dataset of files whose counting pass fails in its last file (a read
// error, as a failing disk gives): the counts of the files before it were
// journaled as each was counted, so the rerun counts only the last file
// again (strace counts the bytes read from each), and writes the
// uninterrupted run's bytes.
TEST(CheckpointKill, ADatasetOfFilesFailedWhileCountingCountsAgainOnlyFromThatFile) {
  if (!have("strace")) GTEST_SKIP() << "strace is not installed";
  TempDir root;
  const Case c{"JSONL files, counted once each", "{in}/docs {out}/out.jsonl --seed 16 -S 1M", {"out.jsonl"}};
  CheckpointRun run(c, root.path());
  fs::create_directories(run.in() / "docs");
  std::vector<fs::path> files;
  for (int k = 0; k < 4; ++k) {
    files.push_back(run.in() / "docs" / ("part-" + std::to_string(k) + ".jsonl"));
    write_file(files.back(), heavy_jsonl(6000, 20 + k));
  }
  run.reference();
  Workspace w;
  run.fresh();
  // Reads of the last file fail past its first MiB: its count, after the
  // identity's sampled blocks and the format's probe (less than that).
  const std::string last = fs::canonical(files.back()).string();
  Child failing(run.arguments(true, "-q"), fault_environment("eio", last, std::uint64_t{1} << 20, w), w.capture_dir);
  EXPECT_EQ(failing.wait(), 1) << failing.err();
  ASSERT_TRUE(fs::exists(w.marker())) << "the read error never fired: " << failing.err();
  const fs::path log = root.path() / "reads.log";
  const CommandResult resumed = run_command(strace_command() + " -f -qq -y -e trace=read,pread64,readv,preadv -o " +
                                            quoted(log.string()) + " " + run.command(true, "-q"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  run.check_outputs("resumed after a failed count");
  const std::string reads = read_file(log);
  for (std::size_t k = 0; k < files.size(); ++k) {
    const std::uint64_t size = fs::file_size(files[k]);
    const std::uint64_t read = bytes_read_from(reads, fs::canonical(files[k]).string());
    // Pass 1 reads each file once; counted again, a file is read twice.
    if (k + 1 < files.size()) {
      EXPECT_LT(read, size + size / 4) << files[k] << " was counted again: " << read << " of " << size << " bytes";
    } else {
      EXPECT_GE(read, 2 * size) << files[k] << ", the file the count failed in, was not counted again";
    }
  }
}

// A CSV of `records` rows under a header, heavy-tailed, each row's second
// field quoted and holding a comma, a newline and escaped quotes: counted
// record by record.
std::string quoted_csv(std::uint64_t records) {
  std::string text = "id,text\n";
  for (std::uint64_t i = 0; i < records; ++i) {
    const std::size_t width = i % 97 == 0 ? 4000 : i % 13 == 0 ? 300 : 40;
    std::string field(width, static_cast<char>('a' + i % 26));
    field[width / 3] = ',';
    field[width / 2] = '\n';
    text += std::to_string(i) + ",\"" + field + "\"\"x\"\"\"\n";
  }
  return text;
}

// One large text file whose counting pass fails part way (a read error past
// its 7th MiB): the count's progress was journaled every 2 MiB (1/64 of
// the file, a piece at least), so the rerun counts on from there rather
// than from its first byte (strace counts the bytes read from it, and its
// --stats say so), says so with -v, and writes the uninterrupted run's
// bytes: JSONL (its terminators counted in bulk), and CSV with quoted
// fields (counted record by record, which until 2026-12-03 counted again
// from the start).
TEST(CheckpointKill, OneFileFailedWhileCountingCountsOnFromItsProgress) {
  if (!have("strace")) GTEST_SKIP() << "strace is not installed";
  for (const bool csv : {false, true}) {
    TempDir root;
    const std::string name = csv ? "rows.csv" : "docs.jsonl";
    const Case c{csv ? "CSV, counted on" : "JSONL, counted on",
                 "{in}/" + name + " {out}/out" + name.substr(name.find('.')) + " --seed 17 -S 1M",
                 {"out" + name.substr(name.find('.'))}};
    CheckpointRun run(c, root.path());
    const fs::path input = run.in() / name;
    write_file(input, csv ? quoted_csv(110000) : heavy_jsonl(16000, 11));
    const std::uint64_t size = fs::file_size(input);
    ASSERT_GT(size, std::uint64_t{9} << 20) << c.name;
    run.reference();
    Workspace w;
    run.fresh();
    const std::string path = fs::canonical(input).string();
    Child failing(run.arguments(true, "-q"), fault_environment("eio", path, std::uint64_t{7} << 20, w), w.capture_dir);
    EXPECT_EQ(failing.wait(), 1) << failing.err();
    ASSERT_TRUE(fs::exists(w.marker())) << c.name << ": the read error never fired: " << failing.err();
    const fs::path log = root.path() / "reads.log";
    const CommandResult resumed = run_command(strace_command() + " -f -qq -y -e trace=read,pread64,readv,preadv -o " +
                                              quoted(log.string()) + " " + run.command(true, "-v --stats"));
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("counted input 1 on from byte "), std::string::npos)
        << c.name << ": " << resumed.err.substr(0, 2000);
    run.check_outputs("resumed after a failed count");
    // Counted again from the start, the file is read twice (the count, then
    // pass 1); on from its progress, at least the first 4 MiB once only.
    const std::uint64_t read = bytes_read_from(read_file(log), path);
    EXPECT_LT(read, 2 * size - (std::uint64_t{4} << 20))
        << c.name << ": the rerun read " << read << " bytes of its " << size << "-byte input: counted again";
    // Its --stats say so too (they counted the whole file as read).
    const auto stats_read = [](const std::string& err) {
      return std::stoull(err.substr(err.find(" bytes_read=") + 12));
    };
    const CommandResult whole = run_command(run.command(false, "--stats"));
    EXPECT_LT(stats_read(resumed.err) + (std::uint64_t{4} << 20), stats_read(whole.err)) << c.name;
  }
}

}  // namespace
}  // namespace extshuffle::testing::checkpoint_count_test

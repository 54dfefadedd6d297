// --checkpoint DIR against kills and failures of the real binary (docs/cli.md
// "Resuming a run", docs/reliability.md "Killed and resumed"): each run is
// killed, or has a system call fail, at a moment drawn at random among the
// events of the run (the K-th write, fdatasync, pwrite or rename of a
// thread, as strace counts and injects them; or kill -9 sent while the
// fault shim holds a write to DIR past a drawn byte count), across both
// passes; then the same command runs again. Each time the resumed run's
// files are byte for byte those of an uninterrupted run without
// --checkpoint, DIR holds no file after it and no temporary is left beside
// the outputs. Cases: fixed-size records and heavy-tailed JSONL at two and
// three levels of the plan (--leaf-records/--fanout), a sharded and split
// tar dataset with a manifest. A few moments a case in CI;
// $EXTSHUFFLE_CHECKPOINT_MOMENTS moments a case and kind for the sweep
// (scripts/checkpoint_sweep.sh), which prints one line a moment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "reliability_support.hpp"
#include "support/command.hpp"
#include "support/tar_archives.hpp"
#include "support/text_records.hpp"

namespace extshuffle::testing::checkpoint_kill_test {
namespace {

namespace fs = std::filesystem;

bool have(const std::string& tool) { return run_command("command -v " + tool).exit_code == 0; }

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// The moments a case takes of each kind: $EXTSHUFFLE_CHECKPOINT_MOMENTS, else `ci`.
int moments(int ci) {
  const char* value = std::getenv("EXTSHUFFLE_CHECKPOINT_MOMENTS");
  return value != nullptr && *value != '\0' ? std::atoi(value) : ci;
}

// A command of the test: its arguments after the binary, the outputs it
// writes (names in the output directory), the input files it reads.
struct Case {
  std::string name;
  std::string arguments;  // with {in}, {out}, {ck} for the directories
  std::vector<std::string> outputs;
  int ci_moments = 3;
};

class CheckpointRun {
 public:
  CheckpointRun(const Case& c, const fs::path& root)
      : c_(c), in_(made(root) / "in"), out_(made(root) / "out"), ck_(made(root) / "ck") {
    fs::create_directories(in_);
  }
  const fs::path& in() const { return in_; }
  const fs::path& checkpoint_directory() const { return ck_; }
  const fs::path& output_directory() const { return out_; }

  // The command's arguments (`checkpoint`: with --checkpoint DIR), then `extra`.
  std::vector<std::string> arguments(bool checkpoint, const std::string& extra) const {
    std::string a = c_.arguments + (checkpoint ? " --checkpoint {ck}" : "") + " " + extra;
    for (const auto& [key, value] : std::map<std::string, std::string>{{"{in}", in_}, {"{out}", out_}, {"{ck}", ck_}}) {
      for (std::size_t at; (at = a.find(key)) != std::string::npos;) a.replace(at, key.size(), value);
    }
    std::vector<std::string> words;
    std::istringstream in(a);
    for (std::string word; in >> word;) words.push_back(word);
    return words;
  }
  std::string command(bool checkpoint, const std::string& extra) const {
    std::string line = quoted(kBinary);
    for (const std::string& word : arguments(checkpoint, extra)) line += " " + quoted(word);
    return line;
  }

  // The uninterrupted run without --checkpoint: the reference files.
  void reference() {
    fresh();
    const CommandResult r = run_command(command(false, "-q"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& name : c_.outputs) expected_[name] = read_file(out_ / name);
  }

  // Per syscall, the most calls one thread makes in a checkpointed run.
  std::map<std::string, int> count_events() {
    fresh();
    const fs::path log = out_.parent_path() / "strace.log";
    const CommandResult r = run_command(strace_command() + " -f -qq -e trace=write,fdatasync,pwrite64,renameat -o " +
                                        quoted(log.string()) + " " + command(true, "-q"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::pair<std::string, std::string>, int> per_thread;
    std::istringstream lines(read_file(log));
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::string tid, call;
      words >> tid >> call;
      call = call.substr(0, call.find('('));
      if (!call.empty() && call != "<..." && call != "+++") ++per_thread[{call, tid}];
    }
    std::map<std::string, int> most;
    for (const auto& [key, count] : per_thread) most[key.first] = std::max(most[key.first], count);
    return most;
  }

  // The checkpointed command run after `prefix` (strace's injection), then
  // resumed. Returns a line for the sweep's table.
  std::string kill_and_resume(const std::string& kind, const std::string& prefix) {
    fresh();
    const CommandResult killed = run_command(prefix + " " + command(true, "-q"));
    return resume(kind, killed.exit_code, killed.err);
  }

  // The run again after one that ended with `exit_code` and `err`: the
  // outcome checked. Returns a line for the sweep's table.
  std::string resume(const std::string& kind, int exit_code, const std::string& err) {
    std::string line = c_.name + " | " + kind + " | exit " + std::to_string(exit_code);
    EXPECT_TRUE(exit_code == 0 || exit_code == 1 || exit_code == 137) << kind << ": " << err;
    // A run the moment did not stop (its calls fewer than K, or a failure
    // it may go past) must have written the right files itself.
    if (exit_code == 0) {
      check_outputs(kind);
      return line + " | ran through";
    }
    // (A failure injected into every thread's K-th write may take the
    // message's own write: then there is none.)
    if (exit_code == 1 && !err.empty()) {
      EXPECT_TRUE(is_one_line_error(err, "")) << kind << ": " << err;
    }
    const CommandResult resumed = run_command(command(true, "-v"));
    EXPECT_EQ(resumed.exit_code, 0) << kind << ": " << resumed.err;
    const std::string mark = "resumed from --checkpoint";
    const std::size_t at = resumed.err.find(mark);
    std::string how = at == std::string::npos ? "started over" : resumed.err.substr(at + mark.size() + 1);
    line += " | " + how.substr(0, how.find('\n'));
    check_outputs(kind);
    return line;
  }

  void check_outputs(const std::string& kind) {
    for (const auto& [name, bytes] : expected_) {
      const std::string got = read_file(out_ / name);
      const auto differ = std::mismatch(got.begin(), got.end(), bytes.begin(), bytes.end());
      EXPECT_TRUE(got == bytes) << c_.name << ", " << kind << ": '" << name << "' has " << got.size()
                                << " bytes, the uninterrupted run's " << bytes.size() << "; first difference at byte "
                                << (differ.first - got.begin());
    }
    std::vector<std::string> left;
    if (fs::exists(ck_)) left = entries(ck_);
    EXPECT_TRUE(left.empty()) << c_.name << ", " << kind << ": DIR holds " << left.size() << " files after success";
    for (const std::string& name : entries(out_)) {
      EXPECT_TRUE(expected_.count(name)) << c_.name << ", " << kind << ": '" << name << "' left beside the outputs";
    }
  }

  void fresh() {
    fs::remove_all(out_);
    fs::remove_all(ck_);
    fs::create_directories(out_);
  }

 private:
  // `root`, made, canonical: the shim compares paths with /proc/self/fd's links.
  static fs::path made(const fs::path& root) {
    fs::create_directories(root);
    return fs::canonical(root);
  }
  Case c_;
  fs::path in_, out_, ck_;
  std::map<std::string, std::string> expected_;
};

// Kills and failures at drawn moments: the K-th call of one thread, K
// uniform in what an uninterrupted checkpointed run makes; kill -9 sent
// while the shim holds the first write to DIR past a drawn byte count.
void sweep(CheckpointRun& run, const Case& c, std::uint64_t seed) {
  run.reference();
  const std::map<std::string, int> most = run.count_events();
  std::mt19937_64 draw(seed);
  const std::vector<std::pair<std::string, std::string>> kinds{
      {"write", "signal=KILL"}, {"fdatasync", "signal=KILL"}, {"renameat", "signal=KILL"},  {"fdatasync", "error=EIO"},
      {"write", "error=EIO"},   {"write", "error=ENOSPC"},    {"pwrite64", "error=ENOSPC"}, {"renameat", "error=EIO"}};
  std::vector<std::string> table;
  // CI: `ci_moments` moments, each of the next kind in turn from one the
  // seed picks; the sweep: every kind at each of its moments.
  const bool sweeping = std::getenv("EXTSHUFFLE_CHECKPOINT_MOMENTS") != nullptr;
  std::size_t next_kind = draw() % kinds.size();
  for (int m = 0; m < moments(c.ci_moments); ++m) {
    for (std::size_t i = 0; i < (sweeping ? kinds.size() : 1); ++i) {
      const auto& [call, effect] = kinds[sweeping ? i : next_kind++ % kinds.size()];
      const int calls = most.count(call) ? most.at(call) : 0;
      if (calls == 0) continue;
      const int k = 1 + static_cast<int>(draw() % static_cast<std::uint64_t>(calls));
      const std::string inject = call + ":" + effect + ":when=" + std::to_string(k);
      table.push_back(run.kill_and_resume(
          inject, strace_command() + " -f -qq -o /dev/null -e trace=" + call + " -e inject=" + inject));
    }
  }
  for (const std::string& line : table) std::printf("checkpoint moment | %s\n", line.c_str());
}

TEST(CheckpointKill, FixedRecordsTwoAndThreeLevels) {
  if (!have("strace")) GTEST_SKIP() << "strace is not installed";
  TempDir root;
  for (const auto& [levels, records] : {std::pair{2, 20000}, std::pair{3, 60000}}) {
    const Case c{"fixed, " + std::to_string(levels) + " levels",
                 "{in}/records.bin {out}/out.bin --record-size 8 --seed 11 -S 64K --leaf-records 1024 --fanout 32",
                 {"out.bin"}};
    CheckpointRun run(c, root.path() / std::to_string(levels));
    write_file(run.in() / "records.bin", numbered_u64(records));
    sweep(run, c, 100 + levels);
  }
}

TEST(CheckpointKill, HeavyTailedJsonlTwoAndThreeLevels) {
  if (!have("strace")) GTEST_SKIP() << "strace is not installed";
  TempDir root;
  for (const auto& [levels, knobs] :
       {std::pair{2, "--leaf-records 1024 --fanout 16"}, std::pair{3, "--leaf-records 256 --fanout 8"}}) {
    const Case c{"JSONL, " + std::to_string(levels) + " levels",
                 std::string("{in}/docs.jsonl {out}/out.jsonl --seed 12 -S 1M ") + knobs,
                 {"out.jsonl"}};
    CheckpointRun run(c, root.path() / std::to_string(levels));
    write_file(run.in() / "docs.jsonl", heavy_jsonl(5000, 7));
    sweep(run, c, 200 + levels);
  }
}

// Two tar shards in a directory, shuffled by sample into splits cut into
// shards, with a manifest: every piece and the manifest as the
// uninterrupted run writes them.
TEST(CheckpointKill, ShardedSplitTarDatasetWithManifest) {
  if (!have("strace")) GTEST_SKIP() << "strace is not installed";
  if (!have("/usr/bin/python3")) GTEST_SKIP() << "python3 is not installed (it writes the tar input)";
  TempDir root;
  const Case c{"tar dataset",
               "{in} -o {out}/{split}-{shard}.tar --format tar --split train=0.8,test=rest --shards 2 "
               "--manifest {out}/manifest.json --seed 13 -S 2M --leaf-records 256 --fanout 8",
               {"train-00000.tar", "train-00001.tar", "test-00000.tar", "test-00001.tar", "manifest.json"}};
  CheckpointRun run(c, root.path());
  const std::string script = kTwoTarShardsPython;
  write_file(root / "make.py", script);
  const CommandResult made =
      run_command("/usr/bin/python3 " + quoted((root / "make.py").string()) + " " + quoted(run.in().string()));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  sweep(run, c, 300);
}

// kill -9 from outside, sent once the fault shim holds the first write
// into DIR past a drawn byte count (fixed-size records, three levels).
TEST(CheckpointKill, KillNineWhileAWriteIsHeld) {
  TempDir root;
  const Case c{"fixed, kill -9",
               "{in}/records.bin {out}/out.bin --record-size 8 --seed 14 -S 64K --leaf-records 1024 --fanout 32",
               {"out.bin"}};
  CheckpointRun run(c, root.path());
  write_file(run.in() / "records.bin", numbered_u64(60000));
  run.reference();
  std::mt19937_64 draw(400);
  Workspace w;
  for (int m = 0; m < moments(2); ++m) {
    // Pass 1 writes the records' bytes into DIR, pass 2 into the output.
    const bool pass_two = m % 2 == 1;
    const std::uint64_t after = draw() % (60000 * 8);
    std::filesystem::remove(w.marker());
    run.fresh();
    const fs::path where = pass_two ? run.output_directory() : run.checkpoint_directory();
    Child child(run.arguments(true, "-q"), fault_environment("pause-write", where.string(), after, w), w.capture_dir);
    // The shim's pause is the event: the run is killed while a write is held.
    const bool held = wait_for_file_while(w.marker(), child);
    if (held) child.send(SIGKILL);
    const int exit_code = child.wait();
    const std::string kind =
        "kill -9 after " + std::to_string(after) + " bytes into " + (pass_two ? "the output" : "DIR");
    std::printf("checkpoint moment | %s\n", run.resume(kind, exit_code, child.err()).c_str());
  }
}

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

// One large text file whose counting pass fails part way (a read error past
// its 7th MiB): the count's progress was journaled every 2 MiB (1/64 of
// the file, a piece at least), so the rerun counts on from there rather
// than from its first byte (strace counts the bytes read from it, and its
// --stats say so), says so with -v, and writes the uninterrupted run's bytes.
TEST(CheckpointKill, OneFileFailedWhileCountingCountsOnFromItsProgress) {
  if (!have("strace")) GTEST_SKIP() << "strace is not installed";
  TempDir root;
  const Case c{"JSONL, counted on", "{in}/docs.jsonl {out}/out.jsonl --seed 17 -S 1M", {"out.jsonl"}};
  CheckpointRun run(c, root.path());
  const fs::path input = run.in() / "docs.jsonl";
  write_file(input, heavy_jsonl(16000, 11));
  const std::uint64_t size = fs::file_size(input);
  ASSERT_GT(size, std::uint64_t{9} << 20);
  run.reference();
  Workspace w;
  run.fresh();
  const std::string path = fs::canonical(input).string();
  Child failing(run.arguments(true, "-q"), fault_environment("eio", path, std::uint64_t{7} << 20, w), w.capture_dir);
  EXPECT_EQ(failing.wait(), 1) << failing.err();
  ASSERT_TRUE(fs::exists(w.marker())) << "the read error never fired: " << failing.err();
  const fs::path log = root.path() / "reads.log";
  const CommandResult resumed = run_command(strace_command() + " -f -qq -y -e trace=read,pread64,readv,preadv -o " +
                                            quoted(log.string()) + " " + run.command(true, "-v --stats"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("counted input 1 on from byte "), std::string::npos) << resumed.err.substr(0, 2000);
  run.check_outputs("resumed after a failed count");
  // Counted again from the start, the file is read twice (the count, then
  // pass 1); on from its progress, at least the first 4 MiB once only.
  const std::uint64_t read = bytes_read_from(read_file(log), path);
  EXPECT_LT(read, 2 * size - (std::uint64_t{4} << 20))
      << "the rerun read " << read << " bytes of its " << size << "-byte input: counted again from the start";
  // Its --stats say so too (they counted the whole file as read).
  const auto stats_read = [](const std::string& err) { return std::stoull(err.substr(err.find(" bytes_read=") + 12)); };
  const CommandResult whole = run_command(run.command(false, "--stats"));
  EXPECT_LT(stats_read(resumed.err) + (std::uint64_t{4} << 20), stats_read(whole.err)) << resumed.err.substr(0, 2000);
}

}  // namespace
}  // namespace extshuffle::testing::checkpoint_kill_test

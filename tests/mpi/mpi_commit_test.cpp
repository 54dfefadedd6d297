// extshuffle-mpi publishes through extshuffle's one commit (docs/cli.md
// "The commit", docs/reliability.md): its inputs are checked against every
// name the run writes or removes (case 1: --clean; case 8: a name like the
// partial output's), its partial outputs are created 0600 and get their
// final mode at the commit (case 7), an unlocked partial an earlier job
// left under the pattern is removed (case 4), a signal on rank 0 inside
// the publish lets it complete (case 3), two jobs into one destination
// commit one after the other under the commit's lock, each its whole
// dataset (case 5), a destination directory swapped for a symbolic link
// mid-run redirects nothing (case 6), --stats prints extshuffle's RESULT
// fields before its own, rank 0 alone says each warning, once, and a
// publish that fails or is signalled leaves one whole dataset.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/result_fields.hpp"
#include "extshuffle-mpi/rank_fields.hpp"
#include "mpi_support.hpp"
#include "support/process_state.hpp"

namespace extshuffle::testing::mpi_commit_test {
namespace {

namespace fs = std::filesystem;

std::string lines(int first, int count) {
  std::string text;
  for (int i = first; i < first + count; ++i) text += std::to_string(i) + "\n";
  return text;
}

class MpiCommit : public ::testing::Test {
 protected:
  void SetUp() override { write_file(dir_ / "in.txt", lines(1, 1000)); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // extshuffle-mpi on `ranks` ranks, rank 0's command prefixed by `rank0`
  // (strace), each rank in the test's directory.
  CommandResult mpi(int ranks, const std::string& arguments, const std::string& rank0 = "") {
    return run_command(mpi_command(ranks, arguments, rank0));
  }
  // The command line mpi() runs, `rank` (0 unless told) prefixed by `prefix`.
  std::string mpi_command(int ranks, const std::string& arguments, const std::string& prefix, int rank = 0) const {
    const std::string bin = extshuffle_mpi_binary() + " " + arguments;
    const std::string each = prefix.empty() ? "exec " + bin
                                            : "if [ \\$OMPI_COMM_WORLD_RANK = " + std::to_string(rank) +
                                                  " ]; then exec " + prefix + " " + bin + "; else exec " + bin + "; fi";
    return "cd " + dir_.path().string() + " && " + on_ranks(ranks, "sh -c \"" + each + "\"");
  }
  std::string listing() { return run_command("ls -A " + dir_.path().string()).out; }
  TempDir dir_;
};

// The keys of a RESULT line, in order.
std::vector<std::string> result_keys(const std::string& err) {
  std::vector<std::string> keys;
  const std::size_t at = err.find("RESULT ");
  if (at == std::string::npos) return keys;
  std::istringstream line(err.substr(at + 7, err.find('\n', at) - at - 7));
  for (std::string field; line >> field;) keys.push_back(field.substr(0, field.find('=')));
  return keys;
}

TEST_F(MpiCommit, CleanNeverRemovesAnInput) {
  fs::create_directories(dir_ / "out");
  write_file(dir_ / "out" / "p-00009.txt", lines(1, 1000));
  const auto r = mpi(2, "-n 10 out/p-00009.txt -o out/p-{shard}.txt --shards 2 --clean");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_SAME_BYTES(read_file(dir_ / "out" / "p-00009.txt"), lines(1, 1000));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "p-00000.txt"));
  // Variant: without --clean too (the name is the pattern's).
  const auto kept = mpi(2, "out/p-00009.txt -o out/p-{shard}.txt --shard-size 1K");
  EXPECT_EQ(kept.exit_code, 2) << kept.err;
  EXPECT_SAME_BYTES(read_file(dir_ / "out" / "p-00009.txt"), lines(1, 1000));
  // Variant: {shard} in a directory with --shard-size is refused, one line.
  fs::create_directories(dir_ / "s-00001");
  write_file(dir_ / "s-00001" / "p.txt", lines(1, 1000));
  const auto directory = mpi(2, "s-00001/p.txt -o s-{shard}/p.txt --shard-size 1K --clean");
  EXPECT_EQ(directory.exit_code, 2) << directory.err;
  EXPECT_NE(directory.err.find("{shard} and {shards} cannot name a directory"), std::string::npos) << directory.err;
  EXPECT_EQ(std::count(directory.err.begin(), directory.err.end(), '\n'), 1) << directory.err;
  EXPECT_SAME_BYTES(read_file(dir_ / "s-00001" / "p.txt"), lines(1, 1000));
}

TEST_F(MpiCommit, AnInputNamedLikeAPartialOutputIsRefused) {
  write_file(dir_ / ".o.txt.extshuffle-mpi-partial", lines(1, 100));
  const auto r = mpi(2, ".o.txt.extshuffle-mpi-partial -o o.txt");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_SAME_BYTES(read_file(dir_ / ".o.txt.extshuffle-mpi-partial"), lines(1, 100));
  EXPECT_FALSE(fs::exists(dir_ / "o.txt"));
  // Variant: a piece's partial name under a pattern.
  write_file(dir_ / ".p-00005.txt.extshuffle-mpi-partial", lines(1, 100));
  const auto piece = mpi(2, ".p-00005.txt.extshuffle-mpi-partial -o p-{shard}.txt --shards 2");
  EXPECT_EQ(piece.exit_code, 2) << piece.err;
  EXPECT_SAME_BYTES(read_file(dir_ / ".p-00005.txt.extshuffle-mpi-partial"), lines(1, 100));
  // Variant: the name partial outputs have now, a temporary's.
  write_file(dir_ / ".o.txt.extshuffle-00000000deadbeef", lines(1, 100));
  const auto temporary = mpi(2, ".o.txt.extshuffle-00000000deadbeef -o o.txt");
  EXPECT_EQ(temporary.exit_code, 2) << temporary.err;
  EXPECT_SAME_BYTES(read_file(dir_ / ".o.txt.extshuffle-00000000deadbeef"), lines(1, 100));
  EXPECT_FALSE(fs::exists(dir_ / "o.txt"));
}

TEST_F(MpiCommit, PartialOutputsAreCreatedOwnerOnly) {
  const auto r = run_command(
      "cd " + dir_.path().string() + " && umask 022 && " +
      on_ranks(1, "strace -f -qq -o trace -e trace=openat " + extshuffle_mpi_binary() + " in.txt -o o.txt --seed 3") +
      " && grep -c \"o[.]txt[.]extshuffle-[0-9a-f]\\{16\\}., O_RDWR.O_CREAT.*0600\" trace");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  struct stat st {};
  ASSERT_EQ(::stat(path("o.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);  // the final mode, at the commit
  // Variant: a replaced file's mode carries over.
  ASSERT_EQ(::chmod(path("o.txt").c_str(), 0640), 0);
  ASSERT_EQ(mpi(2, "in.txt -o o.txt --seed 4").exit_code, 0);
  ASSERT_EQ(::stat(path("o.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST_F(MpiCommit, LeftPartialsUnderThePatternAreRemoved) {
  write_file(dir_ / ".p-00007.txt.extshuffle-mpi-partial", "a killed job's\n");
  write_file(dir_ / ".p-00001.txt.extshuffle-0123456789abcdef", "a killed job's, named as now\n");
  write_file(dir_ / ".q.txt.extshuffle-mpi-partial", "another destination's\n");
  const auto dry = mpi(2, "in.txt -o p-{shard}.txt --shards 2 --dry-run");
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("leftovers: 2 file(s)"), std::string::npos) << dry.out;
  const auto r = mpi(2, "in.txt -o p-{shard}.txt --shards 2 --seed 1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(listing(), ".q.txt.extshuffle-mpi-partial\nin.txt\np-00000.txt\np-00001.txt\n");
}

TEST_F(MpiCommit, ASignalOnRankZeroInsideThePublishLetsItComplete) {
  if (run_command("command -v strace").exit_code != 0) GTEST_SKIP() << "strace is not installed";
  ASSERT_EQ(mpi(2, "in.txt -o p-{shard}.txt --shards 3 --manifest m.json --seed 1").exit_code, 0);
  fs::create_directories(dir_ / "new");
  ASSERT_EQ(mpi(2, "in.txt -o new/p-{shard}.txt --shards 3 --seed 2").exit_code, 0);
  for (const std::string signal : {"TERM", "INT"}) {
    const auto r = mpi(2, "in.txt -o p-{shard}.txt --shards 3 --manifest m.json --seed 2",
                       "strace -f -qq -o /dev/null -e trace=renameat -e inject=renameat:signal=" + signal + ":when=2");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("signal SIG" + signal + " came while the output was being published"), std::string::npos)
        << r.err;
    for (const std::string piece : {"p-00000.txt", "p-00001.txt", "p-00002.txt"}) {
      EXPECT_SAME_BYTES(read_file(dir_ / piece), read_file(dir_ / "new" / piece)) << signal << " " << piece;
    }
    EXPECT_NE(read_file(dir_ / "m.json").find("\"seed\": 2"), std::string::npos);
    ASSERT_EQ(mpi(2, "in.txt -o p-{shard}.txt --shards 3 --manifest m.json --seed 1").exit_code, 0);
  }
  // With -q too: the warning is about the files on disk.
  const auto quiet = mpi(2, "-q in.txt -o p-{shard}.txt --shards 3 --manifest m.json --seed 2",
                         "strace -f -qq -o /dev/null -e trace=renameat -e inject=renameat:signal=TERM:when=2");
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err,
            "extshuffle-mpi: warning: signal SIGTERM came while the output was being published: the "
            "commit completed, every file is in place\n");
  EXPECT_NE(read_file(dir_ / "m.json").find("\"seed\": 2"), std::string::npos);
}

// Case 5: two jobs into one destination at once each write partial
// outputs of their own and publish one after the other under the commit's
// lock, as extshuffle's runs do: the destination holds one job's whole
// dataset, never a mix. Both reach the commit while the test holds the
// pattern's lock, so they contend for it; rank 0's renames are slowed
// (strace: the first job's each by 0.3 s, the second job's first by
// 0.1 s), so that publishes not ordered by the lock would interleave.
TEST_F(MpiCommit, TwoJobsIntoOneDestinationLeaveOneWholeDataset) {
  if (run_command("command -v strace && command -v python3").exit_code != 0)
    GTEST_SKIP() << "strace or python3 missing";
  // The test's hold of the commit's lock (docs/cli.md "The commit"): a
  // write lock on the pattern's lock file, said by the file "held", let go
  // once the file "release" is there.
  write_file(dir_ / "hold.py",
             "import fcntl, os, sys, time\n"
             "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
             "fcntl.lockf(fd, fcntl.LOCK_EX)\n"
             "open('held', 'w').close()\n"
             "while not os.path.exists('release'): time.sleep(0.01)\n");
  for (const std::string seed : {"1", "2"}) {
    fs::create_directories(dir_ / ("ref" + seed));
    const auto r = run_command("cd " + dir_.path().string() + " && " + extshuffle_binary() + " in.txt -o ref" + seed +
                               "/p-{shard}.txt --shards 3 --seed " + seed);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  fs::create_directories(dir_ / "out");
  // Unordered, the second job's renames would land just after the first's
  // first: its first piece, then the first job's other pieces and manifest.
  const std::string trace = "strace -f -qq -o /dev/null -e trace=renameat -e inject=renameat:";
  const auto job = [&](const std::string& seed) {
    return mpi_command(2, "in.txt -o out/p-{shard}.txt --shards 3 --manifest out/m.json --seed " + seed,
                       trace + (seed == "1" ? "delay_exit=300000" : "delay_enter=100000:when=1"));
  };
  const fs::path out = fs::canonical(dir_ / "out");
  for (int round = 0; round < 2; ++round) {
    // The test's hold of the lock ends once both jobs' rank 0 wait for it
    // (events: the holder's file, and the waits seen in /proc), never after
    // a time.
    fs::remove(dir_ / "held");
    fs::remove(dir_ / "release");
    std::atomic<bool> done{false};
    CommandResult both;
    std::thread jobs([&] {
      both = run_command("cd " + dir_.path().string() +
                         " && (python3 hold.py \"out/.p-{shard}.txt.extshuffle-lock\" &) &&"
                         " until [ -e held ]; do sleep 0.01; done && { (" +
                         job("1") + ") & a=$!; (" + job("2") + ") & b=$!; wait $a; ra=$?; wait $b; echo $ra $?; }");
      done = true;
    });
    const bool contended = wait_for_event([&] { return processes_waiting_for_lock(out) >= 2; }, [&] { return !done; },
                                          std::chrono::milliseconds(20));
    write_file(dir_ / "release", "");
    jobs.join();
    EXPECT_TRUE(contended) << "the two jobs never waited for the lock together";
    ASSERT_EQ(both.exit_code, 0) << both.err;
    EXPECT_EQ(both.out, "0 0\n") << both.err;
    const std::string seed = read_file(dir_ / "out" / "m.json").find("\"seed\": 1,") != std::string::npos ? "1" : "2";
    for (const std::string piece : {"p-00000.txt", "p-00001.txt", "p-00002.txt"}) {
      EXPECT_TRUE(read_file(dir_ / "out" / piece) == read_file(dir_ / ("ref" + seed) / piece))
          << piece << " is not seed " << seed << "'s, as the manifest says";
    }
    EXPECT_EQ(run_command("ls -A " + (dir_ / "out").string()).out, "m.json\np-00000.txt\np-00001.txt\np-00002.txt\n");
    write_file(dir_ / "check.py",
               "import json, os\n"
               "m = json.load(open('out/m.json'))\n"
               "assert sorted(o['path'] for o in m['outputs']) == ['out/p-%05d.txt' % k for k in range(3)]\n"
               "for o in m['outputs']: assert os.path.getsize(o['path']) == o['bytes'], o\n"
               "rows = sorted(int(l) for o in m['outputs'] for l in open(o['path']))\n"
               "assert rows == list(range(1, 1001))\n");
    const auto check = run_command("cd " + dir_.path().string() + " && python3 check.py");
    EXPECT_EQ(check.exit_code, 0) << check.err;
  }
}

// Case 6: a destination directory swapped for a symbolic link while the
// ranks write redirects nothing: rank 1 waits inside its first write into
// the destination's directory (the fault shim's pause-write) while the test
// moves the directory and puts a link to another in its place; every piece,
// the manifest and --clean's removal land in the directory that was
// planned.
TEST_F(MpiCommit, ADirectorySwappedMidRunRedirectsNothing) {
  const fs::path base = fs::canonical(dir_.path());
  fs::create_directories(base / "out");
  fs::create_directories(base / "elsewhere");
  fs::create_directories(base / "ref");
  write_file(base / "out" / "p-00007.txt", "stale\n");
  ASSERT_EQ(run_command("cd " + base.string() + " && " + extshuffle_binary() +
                        " in.txt -o ref/p-{shard}.txt --shards 2 --seed 6")
                .exit_code,
            0);
  const std::string pause = "env LD_PRELOAD=" + from_environment("EXTSHUFFLE_FAULT_SHIM", EXTSHUFFLE_FAULT_SHIM) +
                            " EXTSHUFFLE_FAULT=pause-write EXTSHUFFLE_FAULT_PATH=" + (base / "out").string() +
                            "/ EXTSHUFFLE_FAULT_MARKER=" + (base / "marker").string() +
                            " EXTSHUFFLE_FAULT_RELEASE=" + (base / "release").string();
  const std::string job =
      mpi_command(2, "in.txt -o out/p-{shard}.txt --shards 2 --clean --manifest out/m.json --seed 6", pause, 1);
  const auto r = run_command("cd " + base.string() + " && (" + job + ") & cd " + base.string() +
                             " && for i in $(seq 600); do [ -e marker ] && break; sleep 0.1; done && "
                             "mv out moved && ln -s elsewhere out && touch release && wait $!");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(base / "marker")) << "rank 1 never paused";
  for (const std::string piece : {"p-00000.txt", "p-00001.txt"}) {
    EXPECT_SAME_BYTES(read_file(base / "moved" / piece), read_file(base / "ref" / piece)) << piece;
  }
  EXPECT_TRUE(fs::exists(base / "moved" / "m.json"));
  EXPECT_FALSE(fs::exists(base / "moved" / "p-00007.txt"));  // --clean, in the directory it listed
  EXPECT_TRUE(fs::is_empty(base / "elsewhere")) << run_command("ls -A " + (base / "elsewhere").string()).out;
}

TEST_F(MpiCommit, BothToolsPrintTheSameResultFields) {
  const auto single = run_command("cd " + dir_.path().string() + " && " + extshuffle_binary() +
                                  " in.txt -o one.txt --stats");
  ASSERT_EQ(single.exit_code, 0) << single.err;
  const auto ranks = mpi(2, "in.txt -o two.txt --stats");
  ASSERT_EQ(ranks.exit_code, 0) << ranks.err;
  const std::vector<std::string> one = result_keys(single.err), two = result_keys(ranks.err);
  ASSERT_GE(one.size(), 12u) << single.err;
  ASSERT_GT(two.size(), one.size()) << ranks.err;
  EXPECT_EQ(std::vector<std::string>(two.begin(), two.begin() + static_cast<long>(one.size())), one);
  EXPECT_EQ(two[one.size()], "routed");
}

// The keys of every line of `err` that starts with `start`, one list a line.
std::vector<std::vector<std::string>> line_keys(const std::string& err, const std::string& start) {
  std::vector<std::vector<std::string>> lines;
  std::istringstream text(err);
  for (std::string line; std::getline(text, line);) {
    if (!line.starts_with(start + " ")) continue;
    std::istringstream fields(line.substr(start.size() + 1));
    lines.emplace_back();
    for (std::string field; fields >> field;) lines.back().push_back(field.substr(0, field.find('=')));
  }
  return lines;
}

// --stats' lines are read from the lists of fields (tools/cli/result_fields.hpp,
// tools/extshuffle-mpi/rank_fields.hpp): the RESULT line extshuffle's
// fields, the seed, then the job's own; each rank's RANK line the ranks'.
TEST_F(MpiCommit, StatsLinesHoldTheListedFields) {
  const auto r = mpi(3, "in.txt -o three.txt --stats --seed 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> result, rank;
  for (const auto& field : cli::kResultFields) result.push_back(field.name);
  for (const std::string own : {"seed", "routed", "ranks", "bytes_sent", "count_bytes_sent"}) result.push_back(own);
  for (const auto& field : cli::kRankFields) rank.push_back(field.name);
  EXPECT_EQ(line_keys(r.err, "RESULT"), std::vector<std::vector<std::string>>{result}) << r.err;
  EXPECT_EQ(line_keys(r.err, "RANK"), std::vector<std::vector<std::string>>(3, rank)) << r.err;
}

// What a job warns of (records a --split leaves out, a piece of an older
// run, a signal during the publish) goes back to rank 0's main in the
// job's result, which says each once, in extshuffle's words and order,
// however many ranks ran: the library prints nothing.
TEST_F(MpiCommit, EachWarningIsSaidOnceByRankZero) {
  if (run_command("command -v strace").exit_code != 0) GTEST_SKIP() << "strace is not installed";
  fs::create_directories(dir_ / "out");
  write_file(dir_ / "out" / "a-00007.txt", "an older run's piece\n");
  const std::string arguments = "in.txt -o out/{split}-{shard}.txt --split a=0.3,b=0.2 --shards 2 --seed 2";
  const auto single = run_command("cd " + dir_.path().string() + " && " + extshuffle_binary() + " " + arguments);
  ASSERT_EQ(single.exit_code, 0) << single.err;
  std::string expected;
  std::istringstream lines(single.err);
  for (std::string line; std::getline(lines, line);) {
    ASSERT_TRUE(line.starts_with("extshuffle: warning: ")) << single.err;
    expected += "extshuffle-mpi" + line.substr(std::string("extshuffle").size()) + "\n";
  }
  ASSERT_NE(expected.find("--split: 500 of the 1000 records"), std::string::npos)
      << "the records left out: " << single.err;
  ASSERT_NE(expected.find("a-00007.txt"), std::string::npos) << "the older piece: " << single.err;
  expected +=
      "extshuffle-mpi: warning: signal SIGTERM came while the output was being published: the commit "
      "completed, every file is in place\n";
  const auto r =
      mpi(3, arguments, "strace -f -qq -o /dev/null -e trace=renameat -e inject=renameat:signal=TERM:when=2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, expected);
}

// The publish is all or nothing under extshuffle-mpi too (rank 0 commits
// through extshuffle's one commit; every case of it, swept call by call:
// publish_sweep_test.cpp): rank 0's links (the replaced files' second
// names, the manifest's hidden name) and renames counted, then a failing
// rename at the first, the middle and the last, a failing link at the
// first and the last, and each signal that would end the run at one rename
// (strace's injection: the event). Each leaves the old dataset, or the new
// one, whole.
TEST_F(MpiCommit, APublishThatFailsOrIsSignalledIsAllOrNothing) {
  if (run_command("command -v strace").exit_code != 0) GTEST_SKIP() << "strace is not installed";
  const std::string job = "in.txt -o {split}-{shard}.txt --split train=0.9,val=rest --shards 3 --manifest m.json";
  const std::vector<std::string> files = {"m.json",        "train-00000.txt", "train-00001.txt", "train-00002.txt",
                                          "val-00000.txt", "val-00001.txt",   "val-00002.txt"};
  const auto dataset = [&] {
    std::vector<std::string> bytes;
    for (const std::string& name : files) bytes.push_back(read_file(dir_ / name));
    return bytes;
  };
  ASSERT_EQ(mpi(2, job + " --seed 1").exit_code, 0);
  const auto old = dataset();
  const std::string names = listing();
  const auto restore = [&] {
    for (std::size_t k = 0; k < files.size(); ++k) write_file(dir_ / files[k], old[k]);
  };
  // The new dataset, its links and renames counted (rank 0's, in one traced
  // run: the output is the seed's whatever runs it).
  ASSERT_EQ(mpi(2, job + " --seed 2", "strace -f -qq -o trace -e trace=linkat,renameat").exit_code, 0);
  const auto fresh = dataset();
  const auto count = [&](const std::string& syscall) {
    const int calls =
        std::atoi(run_command("cd " + dir_.path().string() + " && grep -c \" " + syscall + "(\" trace").out.c_str());
    EXPECT_GT(calls, 0) << syscall;
    return calls;
  };
  const int links = count("linkat"), renames = count("renameat");
  fs::remove(dir_ / "trace");
  EXPECT_EQ(renames, 7);
  const auto inject = [&](const std::string& syscall, const std::string& what, int at) {
    restore();
    return mpi(2, job + " --seed 2",
               "strace -f -qq -o /dev/null -e trace=" + syscall + " -e inject=" + syscall + ":" + what +
                   ":when=" + std::to_string(at));
  };
  for (const int at : {1, links}) {
    SCOPED_TRACE("linkat " + std::to_string(at));
    const auto r = inject("linkat", "error=ENOSPC", at);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
    EXPECT_TRUE(dataset() == old);
    EXPECT_EQ(listing(), names);
  }
  for (const int at : {1, (renames + 1) / 2, renames}) {  // none done, some, all but the manifest's
    SCOPED_TRACE("renameat " + std::to_string(at));
    const auto r = inject("renameat", "error=EIO", at);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("Input/output error ("), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("every destination holds what it held before the run)"), std::string::npos) << r.err;
    EXPECT_TRUE(dataset() == old);
    EXPECT_EQ(listing(), names);
  }
  int at = 0;
  for (const std::string signal : {"USR1", "USR2", "QUIT", "ALRM", "XCPU", "XFSZ", "PIPE", "VTALRM", "PROF"}) {
    SCOPED_TRACE("SIG" + signal);
    const auto r = inject("renameat", "signal=" + signal, at++ % renames + 1);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (signal != "PIPE") {  // ignored by the tool: a closed pipe is a write's EPIPE
      EXPECT_NE(r.err.find("signal SIG" + signal + " came while the output was being published"), std::string::npos)
          << r.err;
    }
    EXPECT_TRUE(dataset() == fresh);
    EXPECT_EQ(listing(), names);
  }
}

}  // namespace
}  // namespace extshuffle::testing::mpi_commit_test

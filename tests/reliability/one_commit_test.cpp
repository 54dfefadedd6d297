// The one commit (docs/cli.md "The commit", docs/reliability.md): nothing a
// run reads is removed or replaced (pieces, the manifest, --clean's stale
// pieces, leftovers and standard output checked against the inputs by
// device and inode, and every name a pattern can give, --shard-size's
// included, before any work); the commit works by directory descriptors,
// under a lock, deaf to signals while it publishes; leftovers of a killed
// commit are found and removed; shuf's modes commit as any run. Each case
// runs its reproduction and a variant. Signals inside the publish are
// sent at the chosen rename by the fault shim (signal-rename), before it by
// strace's syscall fault injection at the commit's first fsync.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "reliability_support.hpp"
#include "support/command.hpp"
#include "support/process_state.hpp"
#include "support/tools.hpp"

namespace extshuffle::testing::one_commit_test {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = extshuffle_binary();

std::string lines(int first, int count) {
  std::string text;
  for (int i = first; i < first + count; ++i) text += std::to_string(i) + "\n";
  return text;
}

bool has_strace() { return run_command("command -v strace").exit_code == 0; }

class OneCommit : public ::testing::Test {
 protected:
  void SetUp() override { write_file(dir_ / "in.txt", lines(1, 1000)); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  CommandResult run(const std::string& arguments) { return run_command("cd " + dir_.path().string() + " && " + kBinary + " " + arguments); }
  // The names in the directory, hidden ones included, sorted.
  std::string listing() { return run_command("ls -A " + dir_.path().string()).out; }
  // Runs `script` with Python in the directory (the command line is quoted
  // by run_command: the script goes through a file). The test skips without
  // it (SKIP_WITHOUT("python3")).
  CommandResult python(const std::string& script) {
    write_file(dir_ / "check.py", script);
    const auto r = run_command("cd " + dir_.path().string() + " && /usr/bin/python3 check.py");
    fs::remove(dir_ / "check.py");
    return r;
  }
  // The binary with `arguments`, `signal_number` sent to the thread making
  // the rename after `renames_before` others in the directory (the fault
  // shim's signal-rename); fails the test unless the shim says it was sent.
  CommandResult signalled(int signal_number, int renames_before, const std::string& arguments) {
    const std::string marker = (marker_dir_ / "marker").string();
    fs::remove(marker);
    const auto r = run_command("cd " + dir_.path().string() + " && " +
                               signal_at_rename(dir_.path().string(), signal_number, renames_before, marker) + kBinary +
                               " " + arguments);
    EXPECT_TRUE(fs::exists(marker)) << "the signal was never sent";
    return r;
  }
  std::string checksums(const std::string& names) { return run_command("cd " + dir_.path().string() + " && md5sum " + names).out; }
  TempDir dir_, marker_dir_;
};

// Case 1: --clean never removes an input named like a stale piece.
TEST_F(OneCommit, CleanRefusesAnInputNamedLikeAPiece) {
  fs::create_directories(dir_ / "out");
  write_file(dir_ / "out" / "p-00009.txt", lines(1, 1000));
  const auto r = run("-n 10 out/p-00009.txt -o \"out/p-{shard}.txt\" --shards 2 --clean");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the input 'out/p-00009.txt'"), std::string::npos) << r.err;
  EXPECT_SAME_BYTES(read_file(dir_ / "out" / "p-00009.txt"), lines(1, 1000));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "p-00000.txt"));
  // Variant: the input is a hard link to a stale piece, under another name.
  fs::create_hard_link(dir_ / "out" / "p-00009.txt", dir_ / "data.txt");
  const auto linked = run("data.txt -o \"out/p-{shard}.txt\" --shards 2 --clean");
  EXPECT_EQ(linked.exit_code, 2) << linked.err;
  EXPECT_SAME_BYTES(read_file(dir_ / "data.txt"), lines(1, 1000));
}

// Case 2: --shard-size's piece count is known only at the end: every name
// of the pattern is refused to the manifest and to the inputs.
TEST_F(OneCommit, ShardSizeNamesAreCheckedBeforeAnyWork) {
  const auto r = run("in.txt -o \"p-{shard}.txt\" --shard-size 1K --manifest p-00003.txt --verify");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--manifest 'p-00003.txt'"), std::string::npos) << r.err;
  EXPECT_EQ(listing(), "in.txt\n");
  // Variant: the manifest under another spelling of the directory.
  fs::create_directories(dir_ / "d");
  const auto spelled = run("in.txt -o \"d/p-{shard}.txt\" --shard-size 1K --manifest ./d/../d/p-00042.txt");
  EXPECT_EQ(spelled.exit_code, 2) << spelled.err;
  // Variant: an input that a piece would replace.
  write_file(dir_ / "p-00003.txt", lines(5, 100));
  const auto input = run("p-00003.txt -o \"p-{shard}.txt\" --shard-size 100");
  EXPECT_EQ(input.exit_code, 2) << input.err;
  EXPECT_SAME_BYTES(read_file(dir_ / "p-00003.txt"), lines(5, 100));
  EXPECT_FALSE(fs::exists(dir_ / "p-00000.txt"));
}

// Case 2, directories: with --shard-size, {shard} (or {shards}) in a
// directory would make the directories to check unbounded (only shard 0's
// was checked and swept): refused before any work, one line. An input in
// shard 3's directory, which a piece would have replaced, stays.
TEST_F(OneCommit, ShardInADirectoryWithShardSizeIsRefused) {
  for (const std::string d : {"s-00000", "s-00003"}) fs::create_directories(dir_ / d);
  write_file(dir_ / "s-00003" / "part.txt", lines(1, 1000));
  for (const std::string pattern : {"s-{shard}/part.txt", "s-{shards}/part-{shard}.txt", "s-{shard}/p-{shard}.txt"}) {
    const auto r = run("s-00003/part.txt -o \"" + pattern + "\" --shard-size 1K --clean");
    EXPECT_EQ(r.exit_code, 2) << pattern << ": " << r.err;
    EXPECT_EQ(r.err, "extshuffle: -o '" + pattern +
                         "': with --shard-size the shard count is known only at the end: "
                         "{shard} and {shards} cannot name a directory (put them in the file's name)\n");
    EXPECT_SAME_BYTES(read_file(dir_ / "s-00003" / "part.txt"), lines(1, 1000));
    EXPECT_TRUE(fs::is_empty(dir_ / "s-00000"));
  }
  // Variant: with --shards K the names are known up front: it works.
  fs::create_directories(dir_ / "s-00001");
  const auto known = run("in.txt -o \"s-{shard}/q.txt\" --shards 2 --seed 1");
  EXPECT_EQ(known.exit_code, 0) << known.err;
  EXPECT_FALSE(fs::is_empty(dir_ / "s-00000"));
}

// Case 3: a signal inside the publish: the publish completes, exit 0, a
// warning; a signal before it: every old file as it was, exit 128 + n.
TEST_F(OneCommit, SignalsInsideThePublishLeaveOneWholeDataset) {
  if (!has_strace()) GTEST_SKIP() << "strace is not installed";
  SKIP_WITHOUT("python3");
  const std::string job = "in.txt -o \"p-{shard}.txt\" --shards 4 --manifest m.json --seed ";
  ASSERT_EQ(run(job + "1").exit_code, 0);
  const std::string names = "p-00000.txt p-00001.txt p-00002.txt p-00003.txt m.json";
  const std::string old = checksums(names);
  fs::create_directories(dir_ / "new");
  ASSERT_EQ(run("in.txt -o \"new/p-{shard}.txt\" --shards 4 --seed 2").exit_code, 0);
  const std::string fresh = run_command("cd " + path("new") + " && md5sum p-0000*").out;
  for (const auto& [signal, signal_number] :
       std::vector<std::pair<std::string, int>>{{"INT", SIGINT}, {"TERM", SIGTERM}, {"HUP", SIGHUP}}) {
    for (const int at : {1, 3, 5}) {
      ASSERT_EQ(run(job + "1").exit_code, 0);
      const auto r = signalled(signal_number, at - 1, job + "2");
      EXPECT_EQ(r.exit_code, 0) << signal << " at rename " << at << ": " << r.err;
      EXPECT_NE(r.err.find("signal SIG" + signal + " came while the output was being published"), std::string::npos)
          << r.err;
      EXPECT_EQ(run_command("cd " + dir_.path().string() + " && md5sum p-0000*").out, fresh) << signal << " " << at;
      const auto seed = python("import json; print(json.load(open('m.json'))['seed'])");
      EXPECT_EQ(seed.out, "2\n") << "the manifest is not the new run's";
      EXPECT_EQ(listing(), "in.txt\nm.json\nnew\np-00000.txt\np-00001.txt\np-00002.txt\np-00003.txt\n");
    }
  }
  // With -q too: the warning is about the files on disk.
  ASSERT_EQ(run(job + "1").exit_code, 0);
  const auto quiet = signalled(SIGTERM, 1, "-q " + job + "2");
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err,
            "extshuffle: warning: signal SIGTERM came while the output was being published: the commit "
            "completed, every file is in place\n");
  EXPECT_EQ(run_command("cd " + dir_.path().string() + " && md5sum p-0000*").out, fresh);
  // Before the publish (the first fsync of the commit): nothing changes.
  ASSERT_EQ(run(job + "1").exit_code, 0);
  const auto early = run_command("cd " + dir_.path().string() + " && " + strace_command() +
                                 " -f -qq -o /dev/null -e trace=fsync -e inject=fsync:signal=TERM:when=1 " + kBinary +
                                 " " + job + "2");
  EXPECT_EQ(early.exit_code, 143) << early.err;
  EXPECT_EQ(checksums(names), old);
  EXPECT_EQ(listing(), "in.txt\nm.json\nnew\np-00000.txt\np-00001.txt\np-00002.txt\np-00003.txt\n");
}

// Case 4: kill -9 inside the commit leaves the hidden temporaries not yet
// renamed (every one is named before the first rename) and the commit's
// lock files; the next run into the destination lists the temporaries
// (--dry-run) and removes them, takes the lock files and removes them, and
// nothing else.
TEST_F(OneCommit, LeftoversOfAKilledCommitAreRemovedByTheNextRun) {
  if (!has_strace()) GTEST_SKIP() << "strace is not installed";
  const std::string job = "in.txt -o \"p-{shard}.txt\" --shards 4 --manifest m.json --seed 2";
  const auto killed = run_command("cd " + dir_.path().string() + " && " + strace_command() +
                                  " -f -qq -o /dev/null -e trace=renameat -e inject=renameat:signal=KILL:when=2 " +
                                  kBinary + " " + job);
  EXPECT_EQ(killed.exit_code, 137) << killed.err;
  const std::string after_kill = listing();
  ASSERT_NE(after_kill.find(".p-00001.txt.extshuffle-"), std::string::npos) << after_kill;
  write_file(dir_ / ".other.txt.extshuffle-0123456789abcdef", "not ours\n");
  const auto dry = run(job + " --dry-run");
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("leftovers: 4 file(s)"), std::string::npos) << dry.out;
  for (const std::string name : {".p-00001.txt.extshuffle-", ".p-00003.txt.extshuffle-", ".m.json.extshuffle-"}) {
    EXPECT_NE(dry.out.find(name), std::string::npos) << dry.out;
  }
  const auto r = run(job);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(listing(), ".other.txt.extshuffle-0123456789abcdef\nin.txt\nm.json\np-00000.txt\np-00001.txt\np-00002.txt\n"
                       "p-00003.txt\n");
  // Variant: an input that bears a leftover's name is refused, never removed.
  write_file(dir_ / ".o.txt.extshuffle-00000000deadbeef", lines(1, 10));
  const auto input = run(".o.txt.extshuffle-00000000deadbeef -o o.txt");
  EXPECT_EQ(input.exit_code, 2) << input.err;
  EXPECT_SAME_BYTES(read_file(dir_ / ".o.txt.extshuffle-00000000deadbeef"), lines(1, 10));
}

// Case 4, another user: a file of another user that merely bears a
// leftover's name (a sticky /tmp) is not the run's kind of file: a root run
// removed it. Its own leftovers go; so does one owned by the owner of the
// file it stands for (a root run gives its temporaries that owner).
TEST_F(OneCommit, AnotherUsersFileNamedLikeALeftoverStays) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  const fs::path sticky = dir_ / "sticky";
  fs::create_directories(sticky);
  ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);
  const std::string theirs = ".out.txt.extshuffle-0123456789abcdef", ours = ".out.txt.extshuffle-00000000deadbeef";
  write_file(sticky / theirs, "not the run's\n");
  ASSERT_EQ(::chown((sticky / theirs).c_str(), 65534, 65534), 0);
  write_file(sticky / ours, "half a file\n");
  const auto dry = run("in.txt -o sticky/out.txt --dry-run");
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("leftovers: 1 file(s)"), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find(theirs), std::string::npos) << dry.out;
  const auto r = run("in.txt -o sticky/out.txt");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(sticky / theirs), "not the run's\n");
  EXPECT_FALSE(fs::exists(sticky / ours));
  // The destination is that user's: the run replaces it, and its leftovers are the run's kind.
  ASSERT_EQ(::chown((sticky / "out.txt").c_str(), 65534, 65534), 0);
  EXPECT_EQ(run("in.txt -o sticky/out.txt").exit_code, 0);
  EXPECT_FALSE(fs::exists(sticky / theirs));
}

// Case 5: the commit takes the destinations' lock (a write lock on
// ".NAME.extshuffle-lock" beside them; the wait itself, said after a second:
// commit_lock_test.cpp) and waits for it; two runs at once leave one whole
// dataset. The run is seen waiting for the lock (in /proc,
// support/process_state.hpp) while another process holds it, with nothing
// published, before the holder lets go: events, no head start on the clock.
TEST_F(OneCommit, TheCommitWaitsForTheDestinationsLock) {
  const fs::path dir = fs::canonical(dir_.path());
  TempDir holder_capture, run_capture;
  SKIP_WITHOUT("python3");  // the holder of the lock (fcntl's, as the run takes it)
  write_file(dir / "hold.py",
             "import fcntl, os, time\n"
             "fd = os.open('.out.txt.extshuffle-lock', os.O_RDWR | os.O_CREAT, 0o600)\n"
             "fcntl.lockf(fd, fcntl.LOCK_EX)\n"
             "open('held', 'w').close()\n"
             "while not os.path.exists('release'): time.sleep(0.01)\n");
  Child holder({"-c", "cd " + dir.string() + " && exec python3 hold.py"}, {}, holder_capture.path(), "/dev/null", "",
               "/bin/bash");
  ASSERT_TRUE(wait_for_file(dir / "held")) << "python3 never took the lock";
  Child run({(dir / "in.txt").string(), "-o", (dir / "out.txt").string()}, {}, run_capture.path());
  const bool waited = wait_for_event([&] { return waits_for_lock(run.pid(), dir); }, [&] { return run.running(); });
  const bool published_while_held = fs::exists(dir / "out.txt");
  write_file(dir / "release", "");
  EXPECT_EQ(run.wait(), 0) << run.err();
  EXPECT_EQ(holder.wait(), 0);
  EXPECT_TRUE(waited) << "the run never waited for the lock";
  EXPECT_FALSE(published_while_held) << "the run published while another held the lock";
  EXPECT_EQ(read_file(dir / "out.txt").size(), lines(1, 1000).size());
  fs::remove(dir / "held");
  fs::remove(dir / "release");
  // Two runs into one pattern at once, with other seeds and shard counts:
  // the manifest names exactly the pieces there, holding every record once
  // (read back by Python).
  const auto both = run_command("cd " + dir_.path().string() + " && for s in 1 2 3 4; do " + kBinary +
                                " in.txt -o \"q-{shard}.txt\" --shards $((s + 1)) --clean --manifest q.json --seed $s -q & "
                                "done; wait");
  EXPECT_EQ(both.exit_code, 0) << both.err;
  const auto check = python("import json, glob, os\n"
                                 "m = json.load(open('q.json'))\n"
                                 "names = sorted(o['path'] for o in m['outputs'])\n"
                                 "assert names == sorted(glob.glob('q-*.txt')), (names, glob.glob('q-*.txt'))\n"
                                 "for o in m['outputs']: assert os.path.getsize(o['path']) == o['bytes']\n"
                                 "rows = sorted(int(l) for n in names for l in open(n))\n"
                                 "assert rows == list(range(1, 1001))\n");
  EXPECT_EQ(check.exit_code, 0) << check.err;
}

// Case 6: a destination directory swapped for a symbolic link mid-run
// redirects nothing: every piece lands in the directory the plan opened.
// The swap comes once the run holds the directory open (seen in /proc) and
// while it still reads its standard input, a pipe the test closes after.
TEST_F(OneCommit, ADirectorySwappedMidRunRedirectsNothing) {
  const fs::path dir = fs::canonical(dir_.path());
  fs::create_directories(dir / "out");
  fs::create_directories(dir / "elsewhere");
  write_file(dir / "out" / "p-00007.txt", "stale\n");
  ASSERT_EQ(::mkfifo((dir / "in.fifo").c_str(), 0600), 0);
  TempDir capture;
  Child run({"-o", (dir / "out" / "p-{shard}.txt").string(), "--shards", "2", "--clean"}, {}, capture.path(),
            (dir / "in.fifo").string());
  const int input = ::open((dir / "in.fifo").c_str(), O_RDWR);  // never blocks; the run sees EOF at its close
  ASSERT_GE(input, 0);
  const std::string records = lines(1, 1000);
  ASSERT_EQ(::write(input, records.data(), records.size()), static_cast<ssize_t>(records.size()));
  const bool opened = wait_for_event([&] { return holds_open(run.pid(), dir / "out"); }, [&] { return run.running(); });
  fs::rename(dir / "out", dir / "moved");
  fs::create_directory_symlink("elsewhere", dir / "out");
  ::close(input);
  EXPECT_EQ(run.wait(), 0) << run.err();
  EXPECT_TRUE(opened) << "the run never opened its destination's directory";
  EXPECT_TRUE(fs::exists(dir_ / "moved" / "p-00000.txt"));
  EXPECT_TRUE(fs::exists(dir_ / "moved" / "p-00001.txt"));
  EXPECT_FALSE(fs::exists(dir_ / "moved" / "p-00007.txt"));  // --clean, in the directory it listed
  EXPECT_TRUE(fs::is_empty(dir_ / "elsewhere"));
}

// Case 10: -o /dev/stdout and /dev/fd/N write into the open file, as shuf.
TEST_F(OneCommit, NamedDescriptorsAreWrittenIntoNeverReplaced) {
  write_file(dir_ / "f.txt", "old\n");
  const auto r = run_command("cd " + dir_.path().string() + " && a=$(stat -c %i f.txt) && " + kBinary +
                             " in.txt --seed 5 -o /dev/stdout > f.txt && b=$(stat -c %i f.txt) && test $a = $b");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir_ / "f.txt").size(), lines(1, 1000).size());
  const auto fd = run_command("cd " + dir_.path().string() + " && : > g.txt && a=$(stat -c %i g.txt) && " + kBinary +
                              " in.txt --seed 5 -o /dev/fd/7 7>>g.txt && b=$(stat -c %i g.txt) && test $a = $b && ls -A");
  EXPECT_EQ(fd.exit_code, 0) << fd.err;
  EXPECT_EQ(fd.out, "f.txt\ng.txt\nin.txt\n");
  EXPECT_SAME_BYTES(read_file(dir_ / "g.txt"), read_file(dir_ / "f.txt"));  // the same run, into the same kind of file
}

// Case 11: standard output appended to an input is refused before any write.
TEST_F(OneCommit, StandardOutputOntoAnInputIsRefused) {
  const auto r = run_command("cd " + dir_.path().string() + " && " + kBinary + " in.txt >> in.txt");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("input file is output file"), std::string::npos) << r.err;
  EXPECT_SAME_BYTES(read_file(dir_ / "in.txt"), lines(1, 1000));
  const auto named = run_command("cd " + dir_.path().string() + " && ln in.txt twin.txt && " + kBinary +
                                 " twin.txt -o /dev/stdout >> in.txt");
  EXPECT_EQ(named.exit_code, 2) << named.err;
  EXPECT_SAME_BYTES(read_file(dir_ / "in.txt"), lines(1, 1000));
  EXPECT_EQ(run("in.txt -o in.txt").exit_code, 0);  // the documented in-place form stays
}

// Case 13: shuf's modes commit through the Job: the manifest has their file.
TEST_F(OneCommit, ModesCommitWithTheManifest) {
  SKIP_WITHOUT("python3");
  const auto manifest = [&](const std::string& arguments, const std::string& expect) {
    const auto r = run(arguments + " --manifest m.json -o out.txt --seed 4");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto check = python("import json, os\n"
                                   "m = json.load(open('m.json'))\n"
                                   "o = m['outputs']\n"
                                   "assert len(o) == 1 and o[0]['path'] == 'out.txt', o\n"
                                   "assert o[0]['bytes'] == os.path.getsize('out.txt'), o\n"
                                   "assert o[0]['records'] == m['records_written'] == len(open('out.txt').readlines())\n"
                                   "print(m['records_written'])\n");
    EXPECT_EQ(check.exit_code, 0) << arguments << ": " << check.err;
    EXPECT_EQ(check.out, expect) << arguments;
  };
  manifest("-r -n 2 in.txt", "2\n");
  manifest("-n 0 in.txt", "0\n");
  manifest("-r -n 1500 in.txt", "1500\n");  // more draws than records
  // -r's manifest lists its input and format as a shuffle's does.
  write_file(dir_ / "in.csv", "id,v\n" + lines(1, 30));
  for (const std::string& input : {std::string("in.txt"), std::string("in.csv")}) {
    ASSERT_EQ(run("-r -n 5 --manifest m.json " + input + " -o out.txt --seed 2").exit_code, 0);
    const auto listed = python(
        "import json, os\n"
        "m = json.load(open('m.json'))\n"
        "i = m['inputs']\n"
        "assert len(i) == 1 and i[0]['path'] == '" +
        input +
        "', i\n"
        "assert i[0]['bytes'] == os.path.getsize('" +
        input +
        "'), i\n"
        "print(m['format'], i[0]['records'], m['records'], m['records_written'])\n");
    EXPECT_EQ(listed.exit_code, 0) << input << ": " << listed.err;
    EXPECT_EQ(listed.out, input == "in.txt" ? "lines 1000 1000 5\n" : "csv 30 30 5\n") << input;
  }
  // -e and -i take no manifest (a documented refusal), before any work.
  EXPECT_EQ(run("-i 1-50 -n 7 --manifest m2.json -o out2.txt").exit_code, 2);
  EXPECT_FALSE(fs::exists(dir_ / "out2.txt"));
}

}  // namespace
}  // namespace extshuffle::testing::one_commit_test

// The Job's commit (src/driver/job_commit.cpp and the one commit of both
// tools, dataset/output_commit.hpp) on its own, in directories of real
// files (docs/conventions.md, The Job and its commit; docs/cli.md "The
// commit"): every output of every dataset and the manifest in place, the
// manifest renamed last; nothing published when a prepare step fails; the
// leftovers of a killed run swept, never an input nor a file a running job
// holds; a second commit into the same directory waiting for the first's
// lock, and saying so, and never for a directory it does not write; a
// signal while publishing reported late, the publish complete; a rename
// that fails undone with those before it, other participants' too; every
// name made through the directory's descriptor, so a directory swapped for a
// symbolic link after the plan redirects nothing.
#include "driver/job_commit.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "extshuffle/dataset/output_commit.hpp"
#include "extshuffle/io/commit_lock.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/cleanup_registry.hpp"
#include "extshuffle/io/destination_directory.hpp"
#include "extshuffle/io/output_file.hpp"
#include "support/command.hpp"
#include "support/process_state.hpp"

namespace extshuffle::driver::job_commit_test {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::write_file;

// Every test's directory lies under one root removed only when the process
// ends: the directory descriptors a run opens are kept for the life of the
// process and known by device and inode (io/destination_directory.hpp), and
// a directory removed by one test could give its inode number to the next
// test's, which would then be taken for the removed one.
const fs::path& scratch_root() {
  static const testing::TempDir root;
  return root.path();
}

std::set<std::string> listing(const fs::path& directory) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) names.insert(entry.path().filename().string());
  return names;
}

// A bound on waits for an event that only a hang would miss.
constexpr int kHangMs = 300 * 1000;

// Waits up to `timeout_ms` for one byte on `fd`; whether it came.
bool wait_for_byte(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  char byte;
  return ::poll(&p, 1, timeout_ms) == 1 && ::read(fd, &byte, 1) == 1;
}

class JobCommitTest : public ::testing::Test {
 protected:
  JobCommitTest() {
    std::string pattern = (scratch_root() / "case-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
    write_file(path("a.txt"), "a1\na2\n");
    write_file(path("b.txt"), "b1\nb2\n");
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A finished output of one file holding `text` (`records` lines), as a
  // dataset's run hands it to the commit.
  static std::unique_ptr<dataset::ShardedOutput> finished_output(const std::string& destination,
                                                                 const std::string& text, std::uint64_t records) {
    dataset::OutputSpec spec;
    spec.pattern = destination;
    auto output = std::make_unique<dataset::ShardedOutput>(spec);
    output->start(dataset::OutputRecordForm{}, records);
    output->write(reinterpret_cast<const std::byte*>(text.data()), text.size());
    output->finish();
    return output;
  }

  // Adds a finished output of `text` to `commit` and its run to `result`.
  static void add_output(JobCommit& commit, JobResult& result, const std::string& destination, const std::string& text,
                         std::uint64_t records) {
    auto output = finished_output(destination, text, records);
    RunResult run;
    run.records_written = records;
    run.outputs = output->files();
    result.datasets.push_back(run);
    commit.add(std::move(output));
  }

  fs::path dir_;
};

TEST_F(JobCommitTest, EveryOutputIsInPlaceAndTheManifestIsRenamedLast) {
  JobOptions options;
  options.run.manifest_path = path("m.json");
  const Job job = make_job(options, {{{path("a.txt")}, path("xs.txt")}, {{path("b.txt")}, path("ys.txt")}});
  write_file(path("ys.txt"), "an older run's\n");
  JobCommit commit(job.options, check_job_files(job));
  JobResult result;
  add_output(commit, result, path("xs.txt"), "a2\na1\n", 2);
  add_output(commit, result, path("ys.txt"), "b2\nb1\n", 2);
  const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, dir_.c_str(), IN_MOVED_TO), 0);
  commit.commit(result);
  // The names renamed into place, in the order of their renames.
  std::vector<std::string> renamed;
  alignas(inotify_event) char events[8192];
  for (ssize_t got; (got = ::read(watch, events, sizeof events)) > 0;) {
    for (char* at = events; at < events + got;) {
      const auto* event = reinterpret_cast<const inotify_event*>(at);
      if (event->len > 0) renamed.emplace_back(event->name);
      at += sizeof(inotify_event) + event->len;
    }
  }
  ::close(watch);
  EXPECT_EQ(renamed, (std::vector<std::string>{"xs.txt", "ys.txt", "m.json"}));
  EXPECT_SAME_BYTES(read_file(path("xs.txt")), "a2\na1\n");
  EXPECT_SAME_BYTES(read_file(path("ys.txt")), "b2\nb1\n");
  EXPECT_EQ(listing(dir_), (std::set<std::string>{"a.txt", "b.txt", "m.json", "xs.txt", "ys.txt"}));
  const auto manifest = nlohmann::json::parse(read_file(path("m.json")));
  ASSERT_EQ(manifest.at("outputs").size(), 2u);
  EXPECT_EQ(manifest["outputs"][0]["path"], path("xs.txt"));
  EXPECT_EQ(manifest["outputs"][1]["path"], path("ys.txt"));
  EXPECT_EQ(manifest["outputs"][1]["bytes"], 6);
}

// Raises the limit on a file's size back when it goes.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    ::signal(SIGXFSZ, previous_);
  }

 private:
  rlimit saved_{};
  sighandler_t previous_;
};

TEST_F(JobCommitTest, AManifestThatCannotBeWrittenPublishesNothingAndLeavesEveryOldFileAsItWas) {
  JobOptions options;
  options.run.manifest_path = path("m.json");
  const Job job = make_job(options, {{{path("a.txt")}, path("xs.txt")}, {{path("b.txt")}, path("ys.txt")}});
  write_file(path("xs.txt"), "old xs\n");
  write_file(path("ys.txt"), "old ys\n");
  write_file(path("m.json"), "{}");
  const std::set<std::string> before = listing(dir_);
  {
    JobCommit commit(job.options, check_job_files(job));
    JobResult result;
    add_output(commit, result, path("xs.txt"), "a2\na1\n", 2);
    add_output(commit, result, path("ys.txt"), "b2\nb1\n", 2);
    // The outputs are written; the manifest, the last thing prepared, is
    // written only now, and fails: no output may be published before it.
    const FileSizeLimit limit(8);
    EXPECT_THROW(commit.commit(result), IoError);
  }
  EXPECT_SAME_BYTES(read_file(path("xs.txt")), "old xs\n");
  EXPECT_SAME_BYTES(read_file(path("ys.txt")), "old ys\n");
  EXPECT_SAME_BYTES(read_file(path("m.json")), "{}");
  EXPECT_EQ(listing(dir_), before);  // no temporary left behind
}

TEST_F(JobCommitTest, LeftoversOfAKilledRunAreSweptButNeverAnInputNorOneARunningJobHolds) {
  const int directory = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(directory, 0);
  const std::string killed = io::temporary_name(directory, "out.txt");
  const std::string input_link = io::temporary_name(directory, "out.txt");
  const std::string held = io::temporary_name(directory, "out.txt");
  const std::string other = io::temporary_name(directory, "other.txt");
  ::close(directory);
  write_file(path(killed), "half a file\n");
  write_file(path(held), "a running job's\n");
  const int held_fd = ::open(path(held).c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(held_fd, 0);
  ASSERT_EQ(::flock(held_fd, LOCK_EX), 0);
  write_file(path(other), "another destination's\n");

  const Job job = make_job({}, {{{path("a.txt")}, path("out.txt")}});
  const JobFiles plan = check_job_files(job);
  std::vector<std::string> expected = {path(killed), path(held)};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(plan.leftovers, expected);
  // The input under a leftover's name, come after the plan (which refuses
  // one it sees): the commit's sweep must still leave it.
  ASSERT_EQ(::link(path("a.txt").c_str(), path(input_link).c_str()), 0);
  JobCommit commit(job.options, plan);
  JobResult result;
  add_output(commit, result, path("out.txt"), "a2\na1\n", 2);
  commit.commit(result);
  ::close(held_fd);

  EXPECT_EQ(listing(dir_), (std::set<std::string>{"a.txt", "b.txt", "out.txt", input_link, held, other}));
  EXPECT_SAME_BYTES(read_file(path(input_link)), "a1\na2\n");
  EXPECT_SAME_BYTES(read_file(path("a.txt")), "a1\na2\n");
  EXPECT_SAME_BYTES(read_file(path(held)), "a running job's\n");
  EXPECT_SAME_BYTES(read_file(path("out.txt")), "a2\na1\n");
}

TEST_F(JobCommitTest, TheDirectorySwappedForASymbolicLinkAfterThePlanRedirectsNothing) {
  fs::create_directory(path("out"));
  fs::create_directory(path("elsewhere"));
  write_file(path("out/xs.txt"), "old\n");
  JobOptions options;
  options.run.manifest_path = path("out/m.json");
  const Job job = make_job(options, {{{path("a.txt")}, path("out/xs.txt")}});
  JobCommit commit(job.options, check_job_files(job));
  JobResult result;
  add_output(commit, result, path("out/xs.txt"), "a2\na1\n", 2);
  // The directory the plan opened moves away; a link to another takes its name.
  fs::rename(path("out"), path("moved"));
  fs::create_directory_symlink(path("elsewhere"), path("out"));
  const int elsewhere = ::open(path("elsewhere").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(elsewhere, 0);
  const std::string bait = io::temporary_name(elsewhere, "xs.txt");  // a leftover's name, in the wrong place
  ::close(elsewhere);
  write_file(path("elsewhere/" + bait), "not the run's\n");
  commit.commit(result);
  EXPECT_EQ(listing(path("elsewhere")), std::set<std::string>{bait});
  EXPECT_EQ(listing(path("moved")), (std::set<std::string>{"m.json", "xs.txt"}));
  EXPECT_SAME_BYTES(read_file(path("moved/xs.txt")), "a2\na1\n");
  EXPECT_EQ(nlohmann::json::parse(read_file(path("moved/m.json")))["outputs"][0]["bytes"], 6);
}

// A participant of the test's own (dataset/output_commit.hpp): files it
// staged under names of its own, renamed into place through the directory's
// descriptor; what its prepare and published steps do besides is the test's.
class StagedFiles final : public dataset::CommitParticipant {
 public:
  StagedFiles(std::string pattern, std::vector<io::PendingRename> renames)
      : pattern_(std::move(pattern)), renames_(std::move(renames)) {}
  std::function<void()> on_prepare, on_published;
  bool was_published = false;
  const std::string& pattern() const override { return pattern_; }
  std::vector<std::string> find_stale() const override { return {}; }
  std::vector<OutputFileInfo> manifest_files() const override { return {}; }
  void prepare() override {
    if (on_prepare) on_prepare();
  }
  std::vector<io::PendingRename> pending_renames() const override { return renames_; }
  void published() override {
    was_published = true;
    if (on_published) on_published();
  }

 private:
  std::string pattern_;
  std::vector<io::PendingRename> renames_;
};

// The one commit with participants of the test's own.
class OutputCommitTest : public JobCommitTest {
 protected:
  dataset::CommitScope scope(const std::string& name, io::WaitNotice waiting = {}) const {
    return {{{path(name), {}, {dir_.string() + "/"}}}, {}, false, std::move(waiting)};
  }
  void stage(const std::string& name, const std::string& text) const { write_file(path(name), text); }
  io::PendingRename rename(const std::string& from, const std::string& to) const {
    return {io::directory_descriptor(dir_.string(), path(to)), dir_.string() + "/", from, to, path(to)};
  }
  static dataset::CommitReport commit(dataset::CommitScope scope, const std::vector<StagedFiles*>& participants) {
    dataset::OutputCommit commit(std::move(scope), std::nullopt);
    for (StagedFiles* participant : participants) commit.add(*participant);
    return commit.commit({});
  }
};

TEST_F(OutputCommitTest, APrepareThatThrowsPublishesNothing) {
  write_file(path("out.txt"), "old\n");
  StagedFiles failing(path("out.txt"), {});
  failing.on_prepare = [&] { throw IoError("cannot write output", path("out.txt"), ENOSPC); };
  EXPECT_THROW(commit(scope("out.txt"), {&failing}), IoError);
  EXPECT_FALSE(failing.was_published);
  EXPECT_SAME_BYTES(read_file(path("out.txt")), "old\n");
  // The lock went with the failure: the next commit goes through.
  stage("staged", "new\n");
  StagedFiles staged(path("out.txt"), {rename("staged", "out.txt")});
  const dataset::CommitReport done = commit(scope("out.txt"), {&staged});
  EXPECT_TRUE(done.warnings.empty());
  EXPECT_TRUE(staged.was_published);
  EXPECT_EQ(read_file(path("out.txt")), "new\n");
  EXPECT_EQ(listing(dir_), (std::set<std::string>{"a.txt", "b.txt", "out.txt"}));  // no lock file, no backup
}

TEST_F(OutputCommitTest, ASignalWhilePublishingIsReportedLateAndThePublishCompletes) {
  // Every signal whose default action ends the process, one commit each.
  for (const int signal : io::terminating_signals()) {
    SCOPED_TRACE(signal);
    stage("staged-1", "one\n");
    stage("staged-2", "two\n");
    // Raised once the first participant is published, before the second
    // is: it would end the process, were it not held.
    StagedFiles first(path("one.txt"), {rename("staged-1", "one.txt")});
    StagedFiles second(path("two.txt"), {rename("staged-2", "two.txt")});
    first.on_published = [signal] { ::raise(signal); };
    const dataset::CommitReport done = commit(scope("one.txt"), {&first, &second});
    // One this process ignores (inherited from its parent) stays ignored.
    struct sigaction current {};
    ::sigaction(signal, nullptr, &current);
    const std::vector<std::string> expected = current.sa_handler == SIG_IGN
                                                  ? std::vector<std::string>{}
                                                  : std::vector<std::string>{dataset::late_signal_warning(signal)};
    EXPECT_EQ(done.warnings, expected);
    EXPECT_TRUE(second.was_published);
    EXPECT_EQ(read_file(path("one.txt")), "one\n");
    EXPECT_EQ(read_file(path("two.txt")), "two\n");
    EXPECT_EQ(listing(dir_), (std::set<std::string>{"a.txt", "b.txt", "one.txt", "two.txt"}));
    sigset_t blocked;
    ::pthread_sigmask(SIG_BLOCK, nullptr, &blocked);
    EXPECT_FALSE(sigismember(&blocked, signal));  // the hold ended with the commit
  }
  EXPECT_NE(dataset::late_signal_warning(SIGTERM).find("signal SIGTERM came"), std::string::npos);
  EXPECT_NE(dataset::late_signal_warning(SIGRTMIN + 2).find("signal " + std::to_string(SIGRTMIN + 2) + " came"),
            std::string::npos);
}

// A rename that fails after others undoes them, the first participant's as
// well: the replaced file's backup renamed back, a new file removed; the
// message says what is in place.
TEST_F(OutputCommitTest, ARenameThatFailsUndoesThoseDone) {
  write_file(path("one.txt"), "old one\n");
  stage("staged-1", "new one\n");
  stage("staged-2", "new two\n");
  const std::set<std::string> before = listing(dir_);
  StagedFiles first(path("one.txt"), {rename("staged-1", "one.txt")});
  StagedFiles second(path("two.txt"), {rename("staged-2", "two.txt"), rename("missing", "three.txt")});
  try {
    commit(scope("one.txt"), {&first, &second});
    ADD_FAILURE() << "the commit did not fail";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot rename output into place '" + path("three.txt") +
                                         "': No such file or directory (the 2 files renamed before it were put back: "
                                         "every destination holds what it held before the run)");
  }
  EXPECT_FALSE(first.was_published);
  EXPECT_FALSE(second.was_published);
  EXPECT_EQ(read_file(path("one.txt")), "old one\n");
  EXPECT_FALSE(fs::exists(path("two.txt")));
  // Renamed, then undone: the new files are back at their hidden names,
  // where the run's failure removes them (or a resumed run finds them).
  EXPECT_EQ(listing(dir_), before);
  EXPECT_EQ(read_file(path("staged-1")), "new one\n");
  EXPECT_EQ(read_file(path("staged-2")), "new two\n");
}

// The lock is this commit's destinations': a directory an earlier commit of
// the process wrote into, whose lock another run holds now, delays nothing.
TEST_F(OutputCommitTest, TheLockIsThisCommitsDestinationsOnly) {
  fs::create_directory(path("earlier"));
  stage("earlier/staged", "earlier\n");
  const std::string earlier = path("earlier/out.txt");
  const int earlier_directory = io::directory_descriptor(path("earlier"), earlier);
  StagedFiles earlier_files(earlier, {{earlier_directory, path("earlier") + "/", "staged", "out.txt", earlier}});
  commit({{{earlier, {}, {path("earlier") + "/"}}}, {}, false, {}}, {&earlier_files});
  ASSERT_EQ(read_file(earlier), "earlier\n");
  // Another run takes the earlier directory's lock and holds it.
  int held[2], go[2];
  ASSERT_EQ(::pipe(held), 0);
  ASSERT_EQ(::pipe(go), 0);
  const pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    const io::CommitLock lock({{path("earlier") + "/", earlier}}, {});
    (void)::write(held[1], "H", 1);
    wait_for_byte(go[0], kHangMs);
    ::_exit(0);
  }
  ASSERT_TRUE(wait_for_byte(held[0], kHangMs)) << "the other run never took its lock";
  // This commit into the case's directory: told of a wait only if it waits
  // for a lock, which then is the other run's (let go at once, so that the
  // test ends).
  std::atomic<bool> waited{false};
  stage("staged", "now\n");
  StagedFiles now(path("out.txt"), {rename("staged", "out.txt")});
  commit(scope("out.txt",
               [&](const std::string&) {
                 waited = true;
                 (void)::write(go[1], "G", 1);
               }),
         {&now});
  EXPECT_FALSE(waited) << "the commit waited for the lock of a directory it does not write";
  EXPECT_EQ(read_file(path("out.txt")), "now\n");
  ASSERT_EQ(::write(go[1], "G", 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(holder, &status, 0), holder);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (const int fd : {held[0], held[1], go[0], go[1]}) ::close(fd);
}

TEST_F(OutputCommitTest, ASecondCommitIntoTheSameFilesWaitsForTheFirstAndSaysSo) {
  write_file(path("out.txt"), "old\n");
  int held[2], go[2];
  ASSERT_EQ(::pipe(held), 0);
  ASSERT_EQ(::pipe(go), 0);
  // The first commit runs in a child, which takes the lock and waits in
  // its prepare for the test's word.
  const pid_t first = ::fork();
  ASSERT_GE(first, 0);
  if (first == 0) {
    int code = 1;
    try {
      StagedFiles files(path("out.txt"), {rename("staged-first", "out.txt")});
      files.on_prepare = [&] {
        (void)::write(held[1], "H", 1);
        wait_for_byte(go[0], kHangMs);
        stage("staged-first", "first\n");
      };
      commit(scope("out.txt"), {&files});
      code = 0;
    } catch (...) {
    }
    ::_exit(code);
  }
  ASSERT_TRUE(wait_for_byte(held[0], kHangMs)) << "the first commit never reached its prepare";
  std::atomic<bool> entered{false};
  std::atomic<bool> entered_when_told{true};
  std::string seen, told;
  int told_pipe[2];
  ASSERT_EQ(::pipe(told_pipe), 0);
  std::thread second([&] {
    StagedFiles files(path("out.txt"), {rename("staged-second", "out.txt")});
    files.on_prepare = [&] {
      seen = read_file(path("out.txt"));
      entered = true;
      stage("staged-second", "second\n");
    };
    commit(scope("out.txt",
                 [&](const std::string& message) {
                   told = message;
                   entered_when_told = entered.load();
                   (void)::write(told_pipe[1], "T", 1);
                 }),
           {&files});
  });
  // The second commit says it waits (after a second): the event that it is blocked.
  ASSERT_TRUE(wait_for_byte(told_pipe[0], kHangMs)) << "the second commit never said it waits";
  ASSERT_EQ(::write(go[1], "G", 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(first, &status, 0), first);  // its exit lets go of its lock, whatever happened
  second.join();
  EXPECT_FALSE(entered_when_told) << "the second commit prepared while the first held the lock";
  EXPECT_EQ(told, "waiting for another run's commit into '" + path("out.txt") + "' to end (it holds the commit lock '" +
                      dir_.string() + "/.out.txt.extshuffle-lock')");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(seen, "first\n");  // it began once the first had published
  EXPECT_EQ(read_file(path("out.txt")), "second\n");
  EXPECT_EQ(listing(dir_), (std::set<std::string>{"a.txt", "b.txt", "out.txt"}));
  for (const int fd : {held[0], held[1], go[0], go[1], told_pipe[0], told_pipe[1]}) ::close(fd);
}

}  // namespace
}  // namespace extshuffle::driver::job_commit_test

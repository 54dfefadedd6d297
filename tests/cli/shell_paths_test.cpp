// The paths a shell user hands extshuffle, as shuf and sort take them:
// inputs that can be read only once (process substitution, /dev/stdin on a
// pipe or a socket, a FIFO, a character device), outputs through symbolic
// links, the mode of a replaced file, and budgets the machine cannot give.
// Deterministic: the false-failure rate is 0. EXTSHUFFLE_BINARY is set by CMake.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/command.hpp"
#include "support/npy_files.hpp"
#include "support/tools.hpp"

namespace extshuffle::testing::shell_paths_test {
namespace {

const std::string kBinary = extshuffle_binary();

std::string numbered_lines(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += "line " + std::to_string(i) + " " + std::string(i % 37, 'x') + "\n";
  return text;
}

// The same lines from a regular file, with the same seed: what every other
// way of handing them over must give.
struct Lines {
  TempDir dir;
  std::string in = (dir / "in.txt").string();
  std::string expected;
  Lines() {
    write_file(in, numbered_lines(3000));
    const CommandResult r = run_command(kBinary + " " + in + " --seed 5");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    expected = r.out;
  }
};

TEST(ShellPaths, InputsReadOnceAreSpooled) {
  SKIP_WITHOUT("gzip");
  Lines l;
  const std::string b = kBinary, in = l.in, d = l.dir.path().string();
  const std::pair<const char*, std::string> cases[] = {
      {"process substitution", b + " <(cat " + in + ") --seed 5"},
      {"/dev/stdin on a pipe", "cat " + in + " | " + b + " /dev/stdin --seed 5"},
      {"/dev/fd/3 on a pipe", b + " /dev/fd/3 --seed 5 3< <(cat " + in + ")"},
      {"a FIFO", "mkfifo " + d + "/f && (cat " + in + " > " + d + "/f &) && " + b + " " + d + "/f --seed 5"},
      {"a FIFO named .gz", "mkfifo " + d + "/f.gz && (gzip -c " + in + " > " + d + "/f.gz &) && " + b + " " + d +
                               "/f.gz --seed 5"},
      {"/dev/stdin redirected from a file (read in place)", b + " /dev/stdin --seed 5 < " + in},
  };
  for (const auto& [what, command] : cases) {
    const CommandResult r = run_command(command);
    EXPECT_EQ(r.exit_code, 0) << what << ": " << r.err;
    EXPECT_EQ(r.err, "") << what;
    EXPECT_TRUE(r.out == l.expected) << what << ": output differs from the regular file's";
  }
  // A character device: /dev/null is an empty input.
  const CommandResult empty = run_command(b + " /dev/null --seed 5");
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_EQ(empty.out, "");
}

// Every format through process substitution and a FIFO gives what the same
// bytes give from a regular file: fixed-size records, .npy (found by its
// magic after the spool), CSV with its header and a quoted newline, JSONL,
// and compressed FIFOs named .zst and .gz.
TEST(ShellPaths, EveryFormatFromAPipeEqualsTheFile) {
  SKIP_WITHOUT("gzip", "zstd");
  TempDir dir;
  const std::string d = dir.path().string(), b = kBinary;
  std::string records;
  for (std::uint64_t i = 0; i < 5000; ++i) records.append(reinterpret_cast<const char*>(&i), sizeof i);
  write_file(dir / "r.bin", records);
  write_file(dir / "r.npy", npy_file(1, "{'descr': '<u8', 'fortran_order': False, 'shape': (5000,), }", records));
  std::string csv = "id,text\n", jsonl;
  for (int i = 0; i < 2000; ++i) {
    csv += std::to_string(i) + (i % 7 == 0 ? ",\"two\nlines\"\n" : ",plain\n");
    jsonl += "{\"id\": " + std::to_string(i) + "}\n";
  }
  write_file(dir / "r.csv", csv);
  write_file(dir / "r.jsonl", jsonl);
  const struct {
    const char* what;
    std::string from_file, from_pipe;
  } cases[] = {
      {"fixed records", b + " " + d + "/r.bin --record-size 8", b + " <(cat " + d + "/r.bin) --record-size 8"},
      {".npy", b + " " + d + "/r.npy", b + " <(cat " + d + "/r.npy)"},
      {"csv", b + " " + d + "/r.csv", b + " <(cat " + d + "/r.csv) --format csv"},
      {"jsonl", b + " " + d + "/r.jsonl", b + " <(cat " + d + "/r.jsonl) --format jsonl"},
      {"a FIFO named .zst", b + " " + d + "/r.bin --record-size 8",
       "mkfifo " + d + "/f.zst && (zstd -qc " + d + "/r.bin > " + d + "/f.zst &) && " + b + " " + d +
           "/f.zst --record-size 8"},
      {"a FIFO named .csv.gz", b + " " + d + "/r.csv",
       "mkfifo " + d + "/g.csv.gz && (gzip -c " + d + "/r.csv > " + d + "/g.csv.gz &) && " + b + " " + d + "/g.csv.gz"},
  };
  for (const auto& c : cases) {
    const CommandResult file = run_command(c.from_file + " --seed 9");
    const CommandResult pipe = run_command(c.from_pipe + " --seed 9");
    ASSERT_EQ(file.exit_code, 0) << c.what << ": " << file.err;
    EXPECT_EQ(pipe.exit_code, 0) << c.what << ": " << pipe.err;
    EXPECT_FALSE(file.out.empty()) << c.what;
    EXPECT_TRUE(pipe.out == file.out) << c.what << ": the pipe's output differs from the file's";
  }
}

// A UNIX socket as standard input, named /dev/stdin (which cannot be opened
// on a socket: the descriptor is read instead).
TEST(ShellPaths, SocketAsStandardInput) {
  Lines l;
  int ends[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0);
  const std::string out = (l.dir / "out.txt").string();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::dup2(ends[1], 0);
    ::close(ends[0]);
    ::close(ends[1]);
    ::execl(kBinary.c_str(), kBinary.c_str(), "/dev/stdin", "-o", out.c_str(), "--seed", "5", nullptr);
    std::_Exit(127);
  }
  ::close(ends[1]);
  const std::string data = read_file(l.in);
  ASSERT_EQ(::write(ends[0], data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ::close(ends[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(read_file(out) == l.expected);
}

TEST(ShellPaths, OutputThroughSymbolicLinksWritesTheTarget) {
  Lines l;
  namespace fs = std::filesystem;
  const fs::path d = l.dir.path();
  fs::create_directory(d / "sub");
  write_file(d / "target.txt", "old\n");
  write_file(d / "sub" / "t.txt", "old\n");
  fs::create_symlink("target.txt", d / "link.txt");        // relative, same directory
  fs::create_symlink(d / "link.txt", d / "link2.txt");     // a chain: link2 -> link -> target
  fs::create_symlink("sub/t.txt", d / "rel.txt");          // relative, into another directory
  fs::create_symlink("new.txt", d / "dangling.txt");       // its target does not exist yet
  const std::pair<const char*, fs::path> cases[] = {
      {"link.txt", d / "target.txt"}, {"link2.txt", d / "target.txt"},
      {"rel.txt", d / "sub" / "t.txt"}, {"dangling.txt", d / "new.txt"}};
  for (const auto& [link, target] : cases) {
    const CommandResult r = run_command(kBinary + " " + l.in + " -o " + (d / link).string() + " --seed 5");
    EXPECT_EQ(r.exit_code, 0) << link << ": " << r.err;
    EXPECT_TRUE(fs::is_symlink(d / link)) << link << " is no longer a link";
    EXPECT_TRUE(read_file(target) == l.expected) << link << ": its target does not hold the output";
  }
  // No temporary left anywhere.
  for (const auto& entry : fs::recursive_directory_iterator(d)) {
    EXPECT_EQ(entry.path().filename().string().find(".extshuffle-"), std::string::npos) << entry.path();
  }
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(ShellPaths, ReplacedFilesKeepTheirModeNewFilesFollowTheUmask) {
  Lines l;
  for (const mode_t mode : {mode_t{0600}, mode_t{0640}, mode_t{0755}}) {
    const std::string out = (l.dir / ("out" + std::to_string(mode) + ".txt")).string();
    write_file(out, "old\n");
    ASSERT_EQ(::chmod(out.c_str(), mode), 0);
    const CommandResult r = run_command("umask 022; " + kBinary + " " + l.in + " -o " + out + " --seed 5");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(mode_of(out), mode) << "replaced file with mode " << std::oct << mode;
    EXPECT_TRUE(read_file(out) == l.expected);
  }
  for (const auto& [umask, mode] : {std::pair<const char*, mode_t>{"077", 0600}, {"022", 0644}, {"002", 0664}}) {
    const std::string out = (l.dir / ("new" + std::string(umask) + ".txt")).string();
    const CommandResult r =
        run_command(std::string("umask ") + umask + "; " + kBinary + " " + l.in + " -o " + out + " --seed 5");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(mode_of(out), mode) << "new file under umask " << umask;
  }
  if (::geteuid() == 0) {  // root: the owner and group carry over too
    const std::string out = (l.dir / "owned.txt").string();
    write_file(out, "old\n");
    ASSERT_EQ(::chown(out.c_str(), 1234, 5678), 0);
    const CommandResult r = run_command(kBinary + " " + l.in + " -o " + out + " --seed 5");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    struct stat st {};
    ASSERT_EQ(::stat(out.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 1234u);
    EXPECT_EQ(st.st_gid, 5678u);
  }
}

TEST(ShellPaths, BudgetsAboveTheMachineAreRefused) {
  Lines l;
  const std::string out = (l.dir / "out.txt").string();
  const CommandResult r = run_command(kBinary + " " + l.in + " -o " + out + " -S 1000T");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("extshuffle: invalid --memory '1000T': more than the "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("this machine can give"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  const CommandResult all = run_command(kBinary + " " + l.in + " -S 10% --seed 5");
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_TRUE(all.out == l.expected);
}

}  // namespace
}  // namespace extshuffle::testing::shell_paths_test

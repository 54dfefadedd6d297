// Keeps the README runnable: every command in its "Worked examples" section
// is run as written, from the repository root, in order (later commands use
// earlier outputs), and must exit 0. Two substitutions only: `build/extshuffle`
// becomes the binary under test, and `/tmp/` a private directory, so parallel
// test runs do not share files. EXTSHUFFLE_BINARY and EXTSHUFFLE_SOURCE_DIR
// are set by CMake.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "support/command.hpp"
#include "support/tools.hpp"

namespace extshuffle::testing::readme_examples_test {
namespace {

const std::string kBinary = extshuffle_binary();
const std::filesystem::path kSourceDir = extshuffle_source_dir();

// The commands of the section that starts with `heading`: each line of each
// fenced code block that is not blank and not a comment, lines ending in a
// backslash joined with the next.
std::vector<std::string> section_commands(const std::string& readme, const std::string& heading) {
  std::vector<std::string> commands;
  const std::size_t start = readme.find("\n" + heading + "\n");
  if (start == std::string::npos) return commands;
  const std::size_t end = readme.find("\n## ", start + heading.size() + 1);
  std::istringstream section(readme.substr(start, end == std::string::npos ? std::string::npos : end - start));
  std::string line, pending;
  bool in_code = false;
  while (std::getline(section, line)) {
    if (line.starts_with("```")) {
      in_code = !in_code;
      continue;
    }
    if (!in_code) continue;
    const std::size_t first = line.find_first_not_of(" \t");
    if (pending.empty() && (first == std::string::npos || line[first] == '#')) continue;
    if (line.ends_with("\\")) {
      pending += line.substr(0, line.size() - 1);
      continue;
    }
    commands.push_back(pending + line);
    pending.clear();
  }
  return commands;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::vector<std::string> entries(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(ReadmeExamples, SectionIsFoundAndCoversEveryFormat) {
  const auto commands = section_commands(read_file(kSourceDir / "README.md"), "## Worked examples");
  ASSERT_GE(commands.size(), 20u) << "the extraction lost the section or its code blocks";
  std::string all;
  for (const auto& command : commands) all += command + "\n";
  // One example per format and per shuf-like mode, as promised in the section.
  for (const char* feature : {"--record-size", ".jsonl", ".csv", ".npy -o", " -n ", " -e ", " -i ", "| head",
                              " -z ", "-print0", ".gz", ".zst", "--dry-run", "--shards", "--split",
                              "--manifest", ".tar"}) {
    EXPECT_NE(all.find(feature), std::string::npos) << "no example uses " << feature;
  }
}

// Each command runs in one bash script, in order, with pipefail; its status
// is reported on a separate descriptor. A pipeline into `head` may end with
// 141: the reader closed the pipe early, which is how such pipelines end.
TEST(ReadmeExamples, EveryCommandRunsAndSucceeds) {
  SKIP_WITHOUT("python3-numpy", "zstd", "tar", "gzip");
  const auto commands = section_commands(read_file(kSourceDir / "README.md"), "## Worked examples");
  ASSERT_FALSE(commands.empty());
  TempDir dir;
  const std::string work = (dir / "tmp").string();
  std::filesystem::create_directory(work);
  std::string script = "set -o pipefail\ncd '" + kSourceDir.string() + "'\n";
  for (std::size_t i = 0; i < commands.size(); ++i) {
    // /tmp/ first: the binary's own path may lie under /tmp.
    std::string command = replace_all(commands[i], "/tmp/", work + "/");
    command = replace_all(command, "build/extshuffle", kBinary);
    script += command + "\necho \"status " + std::to_string(i) + " $?\" >&3\n";
  }
  write_file(dir / "examples.sh", script);
  const auto data_before = entries(kSourceDir / "data");
  const std::string statuses = (dir / "statuses").string();
  const auto r = run_command("bash " + (dir / "examples.sh").string() + " 3> " + statuses);
  const std::string reported = read_file(statuses);
  std::size_t ran = 0;
  std::istringstream lines(reported);
  std::string word;
  std::size_t index = 0;
  int status = 0;
  while (lines >> word >> index >> status) {
    ++ran;
    ASSERT_LT(index, commands.size());
    const bool into_head = commands[index].find("| head") != std::string::npos;
    EXPECT_TRUE(status == 0 || (into_head && status == 141))
        << "README example exits " << status << ":\n  " << commands[index] << "\nstderr:\n" << r.err;
  }
  EXPECT_EQ(ran, commands.size()) << "the script stopped early; stderr:\n" << r.err;
  // The examples write only under /tmp: the repository's data stays as it is.
  EXPECT_EQ(entries(kSourceDir / "data"), data_before);
  EXPECT_FALSE(std::filesystem::exists(kSourceDir / "stxxl.log"));
}

}  // namespace
}  // namespace extshuffle::testing::readme_examples_test

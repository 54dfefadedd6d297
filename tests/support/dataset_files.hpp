// Helpers of the dataset CLI tests: input files of mixed compression, made
// with the real gzip and zstd tools, and Python (Debian's /usr/bin/python3,
// with numpy, csv, json and xxhash) run on the outputs.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/command.hpp"

namespace extshuffle::testing {

// The k-th input's name: plain, .gz and .zst in turn.
inline std::string mixed_name(const std::string& stem, std::size_t k, const std::string& extension) {
  static const char* const kSuffixes[] = {"", ".gz", ".zst"};
  return stem + std::to_string(k) + extension + kSuffixes[k % 3];
}

// Writes `bytes` to `path`, compressed by the gzip or zstd tool when the name says so.
inline void write_compressed(const std::filesystem::path& path, const std::string& bytes) {
  const std::string name = path.string();
  const bool gz = name.ends_with(".gz"), zst = name.ends_with(".zst");
  if (!gz && !zst) return write_file(path, bytes);
  const std::string plain = name + ".plain";
  write_file(plain, bytes);
  const auto r = run_command(std::string(gz ? "gzip -c " : "zstd -q -c ") + plain + " > " + name + " && rm " + plain);
  if (r.exit_code != 0) throw std::runtime_error("cannot compress " + name + ": " + r.err);
}

// Runs `script` with /usr/bin/python3 and `arguments` (the script goes to a
// file: run_command quotes its command with single quotes).
inline CommandResult run_python(const TempDir& dir, const std::string& script, const std::string& arguments) {
  write_file(dir / "check.py", script);
  return run_command("/usr/bin/python3 " + (dir / "check.py").string() + " " + arguments);
}

// The names in `directory`, sorted.
inline std::vector<std::string> names_in(const std::filesystem::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += " " + word;
  return text;
}

}  // namespace extshuffle::testing

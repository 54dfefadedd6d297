// The tools a black-box test runs beside the program under test (Python and
// numpy as independent readers, the zstd tool, GNU tar, strace...), which a
// machine that runs the relocatable bundle need not have (a bare Debian has
// none of python3, numpy or zstd): a test that needs one skips, saying which
// is missing, instead of failing.
//   SKIP_WITHOUT("python3-numpy", "zstd");
// Names: "python3" (Debian's /usr/bin/python3), "python3-numpy" (it, with
// numpy), anything else a program looked up on PATH.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "support/command.hpp"

namespace extshuffle::testing {

// Why `tool` cannot run here, or "" when it can. Asked once per process.
inline std::string missing_tool(std::string_view tool) {
  static std::mutex mutex;
  static std::map<std::string, std::string, std::less<>> known;
  std::lock_guard lock(mutex);
  if (const auto found = known.find(tool); found != known.end()) return found->second;
  std::string check, reason;
  if (tool == "python3") {
    check = "test -x /usr/bin/python3";
    reason = "/usr/bin/python3 is not installed";
  } else if (tool == "python3-numpy") {
    check = "/usr/bin/python3 -c \"import numpy\"";
    reason = "/usr/bin/python3 with numpy is not installed (Debian: python3-numpy)";
  } else {
    check = "command -v " + std::string(tool);
    reason = "the " + std::string(tool) + " tool is not installed";
  }
  const std::string answer = run_command(check).exit_code == 0 ? "" : reason;
  known.emplace(std::string(tool), answer);
  return answer;
}

// Why any of `tools` cannot run here ("; "-separated), or "" when all can.
inline std::string missing_tools(std::initializer_list<std::string_view> tools) {
  std::string reasons;
  for (const std::string_view tool : tools) {
    const std::string reason = missing_tool(tool);
    if (!reason.empty()) reasons += (reasons.empty() ? "" : "; ") + reason;
  }
  return reasons;
}

}  // namespace extshuffle::testing

// In a test's body (or its fixture's SetUp): skips the test when a tool is missing.
#define SKIP_WITHOUT(...)                                                                          \
  do {                                                                                             \
    if (const std::string why = ::extshuffle::testing::missing_tools({__VA_ARGS__}); !why.empty()) \
      GTEST_SKIP() << why;                                                                         \
  } while (false)

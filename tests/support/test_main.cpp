// The main of every room's test executable (tests/CMakeLists.txt): one
// executable holds the tests of all of a room's files, and a test's labels,
// its place in the bundle and its requirements are those of its file. So,
// beside GoogleTest's own flags:
//   --list_test_sources[=PATH]   prints "<file stem>\t<test name>" for every
//                                test and runs none, to PATH when given
//                                (written whole, then renamed into place):
//                                the build lists each room's tests so, and
//                                ctest's tests and their labels are made from
//                                that list (tests/discover_tests.cmake);
//   EXTSHUFFLE_TEST_FILES=a,b    runs only the tests of the files whose stems
//                                are listed, within --gtest_filter (or
//                                GTEST_FILTER): the bundle's runner
//                                (scripts/bundle/run_tests.sh) runs a room one
//                                file at a time.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string file_stem(const char* path) { return std::filesystem::path(path).stem().string(); }

std::string full_name(const ::testing::TestInfo& test) {
  return std::string(test.test_suite_name()) + "." + test.name();
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// GoogleTest's pattern syntax: '*' any run of characters, '?' one.
bool glob_matches(const char* pattern, const char* name) {
  if (*pattern == '\0') return *name == '\0';
  if (*pattern == '*') return glob_matches(pattern + 1, name) || (*name != '\0' && glob_matches(pattern, name + 1));
  return *name != '\0' && (*pattern == '?' || *pattern == *name) && glob_matches(pattern + 1, name + 1);
}

bool any_matches(const std::vector<std::string>& patterns, const std::string& name) {
  for (const std::string& pattern : patterns) {
    if (glob_matches(pattern.c_str(), name.c_str())) return true;
  }
  return false;
}

// Whether GoogleTest's filter (POSITIVE[-NEGATIVE], ':'-separated) selects `name`.
bool filter_selects(const std::string& filter, const std::string& name) {
  const std::size_t dash = filter.find('-');
  const std::string positive = filter.substr(0, dash);
  const std::vector<std::string> included = split(positive.empty() ? "*" : positive, ':');
  const std::vector<std::string> excluded =
      dash == std::string::npos ? std::vector<std::string>{} : split(filter.substr(dash + 1), ':');
  return any_matches(included, name) && !any_matches(excluded, name);
}

void list_test_sources(std::ostream& out) {
  const ::testing::UnitTest& tests = *::testing::UnitTest::GetInstance();
  for (int s = 0; s < tests.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *tests.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const ::testing::TestInfo& test = *suite.GetTestInfo(t);
      out << file_stem(test.file()) << '\t' << full_name(test) << '\n';
    }
  }
}

// The listing written to `path` whole or not at all: 0, or 1 with the reason on stderr.
int write_test_sources(const std::string& path) {
  const std::string partial = path + ".partial";
  std::ofstream out(partial, std::ios::trunc);
  list_test_sources(out);
  out.close();
  std::error_code error;
  if (out) std::filesystem::rename(partial, path, error);
  if (!out || error) {
    std::cerr << "--list_test_sources: cannot write " << path << (error ? ": " + error.message() : "") << '\n';
    return 1;
  }
  return 0;
}

// Narrows the filter to the tests of `files` it selects, named one by one.
void keep_only_files(const std::string& files) {
  const std::vector<std::string> stems = split(files, ',');
  const std::set<std::string> wanted(stems.begin(), stems.end());
  const std::string filter = GTEST_FLAG_GET(filter);
  const ::testing::UnitTest& tests = *::testing::UnitTest::GetInstance();
  std::string names;
  for (int s = 0; s < tests.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *tests.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const ::testing::TestInfo& test = *suite.GetTestInfo(t);
      if (wanted.count(file_stem(test.file())) == 0 || !filter_selects(filter, full_name(test))) continue;
      names += (names.empty() ? "" : ":") + full_name(test);
    }
  }
  // A filter that names no test: none runs, as with a filter matching none.
  GTEST_FLAG_SET(filter, names.empty() ? "-*" : names);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int k = 1; k < argc; ++k) {
    const std::string argument = argv[k];
    if (argument == "--list_test_sources") {
      list_test_sources(std::cout);
      return std::cout.flush() ? 0 : 1;
    }
    if (argument.rfind("--list_test_sources=", 0) == 0) {
      return write_test_sources(argument.substr(argument.find('=') + 1));
    }
  }
  if (argc > 1) {
    std::cerr << argv[0] << ": unknown argument " << argv[1] << " (GoogleTest's flags, or --list_test_sources)\n";
    return 2;
  }
  if (const char* files = std::getenv("EXTSHUFFLE_TEST_FILES"); files != nullptr && *files != '\0') {
    keep_only_files(files);
  }
  return RUN_ALL_TESTS();
}

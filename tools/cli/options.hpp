// The parser of the command line (CLI11, its options from the table in
// option_table.hpp), filling the command line as typed (command_line.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"

namespace extshuffle::cli {

// Fills `options` from the command line. Returns the exit code when the
// process should end here: 0 after --help or --version (printed on stdout),
// 2 after a parse error (printed as one line on stderr, after `program`);
// nothing otherwise.
std::optional<int> parse_options(int argc, char** argv, Options& options, const char* program = "extshuffle");

// The same parse of `words` (a command line after the program's name), for
// a caller that prints nothing itself (Python's shuffle()): throws
// UsageError with parse_options' one-line message; returns the text that
// --help or --version asks for (nothing else filled), else nothing.
std::optional<std::string> parse_words(const std::vector<std::string>& words, Options& options,
                                       const char* program = "extshuffle");

// Every option's names as the parser knows them: its long name without
// "--" ("memory") and its short names without "-" ("S"), so that a message
// can be worded for a caller that names the options otherwise.
struct OptionNames {
  std::string long_name;
  std::vector<std::string> short_names;
};
std::vector<OptionNames> option_names();

// The --version text: the program's and the permutation's version.
std::string version_text(const char* program = "extshuffle");

}  // namespace extshuffle::cli

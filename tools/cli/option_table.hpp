// The one table of the command line's options (docs/conventions.md, "A new
// option"): each row says an option's names, its --help text, how the
// parser takes it, where make_job() lands it in the Job, and whether
// Python's shuffle() takes it as a keyword. The CLI11 parser of both tools
// (options.cpp), make_job (make_job.cpp) and Python's keywords
// (python/src/shuffle_bindings.cpp, extshuffle/_shuffle.py) all read it, so
// that an option is written once, here, with its test.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "extshuffle/job.hpp"
#include "command_line.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace extshuffle::cli {

// What the parser leaves for after the parse: options CLI11 cannot check or
// take as they are (options.cpp's check_parsed).
struct PendingOptions {
  CLI::Option* files = nullptr;
  CLI::Option* header = nullptr;
  std::string header_text;
  std::vector<std::string> head_counts;
};

// How Python's shuffle() takes an option: as the keyword of its long name
// with "_" for "-" (memory=), or not at all.
enum class Keyword {
  kNone,   // not a keyword: shuffle()'s own arguments (inputs, output, seed, progress) or the tool's display
  kFlag,   // True gives the bare option, False or None none
  kSize,   // a number is bytes (its digits then "b"); text as the command line spells a size
  kValue,  // the value as the option's word
};

struct OptionRow {
  const char* names;           // as CLI11 spells them: "-S,--memory"; "files" for the operands
  const char* help;            // its --help text
  const char* type_name = "";  // --help's name for its value ("SIZE"); empty: a flag, or CLI11's own
  // Where the parser puts it as typed (one of the two; neither: `add` does).
  std::string Options::*text = nullptr;
  bool Options::*flag = nullptr;
  const char* choices = nullptr;  // the words it takes, comma-separated ("auto,cpu,cuda"); null: any
  // Adds an option CLI11 takes otherwise than as text or a flag (numbers,
  // lists, --header, -n); null: the text or the flag above.
  CLI::Option* (*add)(CLI::App&, Options&, PendingOptions&, const OptionRow&) = nullptr;
  // Where make_job() lands it in the Job, given the parsed command line;
  // throws UsageError for a bad value. Null: make_job's own steps, which
  // weigh it with others (the files, the seed, the plan's constants).
  void (*land)(const Options&, JobOptions&) = nullptr;
  Keyword keyword = Keyword::kNone;
  // Shown by extshuffle-mpi's --help; false: extshuffle's alone (it still
  // parses there, so that the distributed run's refusal names it).
  bool distributed = true;
};

// Every option, in --help's order.
std::span<const OptionRow> option_table();

// A row's long name without "--" ("memory"); empty for the operands.
std::string long_name(const OptionRow& row);

}  // namespace extshuffle::cli

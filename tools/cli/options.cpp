#include "options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "long_option_prefixes.hpp"
#include "option_table.hpp"
#include "parse_error_message.hpp"

#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/variable_philox.hpp"
#include "extshuffle/errors.hpp"

namespace extshuffle::cli {
namespace {

bool all_digits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "--header N": --header is a flag, so that "--header data.csv" leaves the
// file an operand (CLI11 2.1 would give an optional value any word that
// follows). N is then the operand right after the bare flag, which
// parse_order() shows; digits there are the count, not a file.
void take_header_count(const CLI::App& app, const CLI::Option* header, const CLI::Option* files,
                       Options& options) {
  if (!options.header || *options.header != "true") return;  // absent or --header=N
  const auto order = app.parse_order();
  std::size_t operands_before = 0, last_header = order.size();
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (order[k] == header) last_header = k;
  }
  for (std::size_t k = 0; k < last_header; ++k) operands_before += order[k] == files ? 1 : 0;
  options.header = "1";
  if (last_header + 1 >= order.size() || order[last_header + 1] != files) return;
  const auto next = options.operands.begin() + static_cast<std::ptrdiff_t>(operands_before);
  if (!all_digits(*next)) return;
  options.header = *next;
  options.operands.erase(next);
}

// Whether the digits `text` name a number below 2^64.
bool fits_u64(const std::string& text) {
  const std::size_t first = std::min(text.find_first_not_of('0'), text.size());
  const std::string digits = text.substr(first);
  return digits.size() < 20 || (digits.size() == 20 && digits <= "18446744073709551615");
}

// The first option given an empty value ("--seed ''", "-S ''"): a value
// left empty by a script's unset variable must not silently mean the
// default. Its name as the user would write it.
std::optional<std::string> empty_value(const CLI::App& app, const CLI::Option* files) {
  for (const CLI::Option* option : app.get_options()) {
    if (option == files || option->get_type_size() == 0 || option->count() == 0) continue;
    for (const std::string& value : option->results()) {
      if (value.empty()) return option->get_name();
    }
  }
  return std::nullopt;
}

// The first "--NAME=" typed with nothing after the "=" (words as
// expand_long_option_prefixes returns them: reversed, names expanded), when
// NAME is one of `app`'s long options. CLI11 would take the next word as its
// value ("--memory= in.txt" reads in.txt as the budget), so that the error,
// if any, names the wrong word. Its name as the user would write it.
std::optional<std::string> empty_attached_value(const CLI::App& app, const std::vector<std::string>& words) {
  for (auto word = words.rbegin(); word != words.rend() && *word != "--"; ++word) {
    if (word->size() < 4 || word->compare(0, 2, "--") != 0 || word->find('=') != word->size() - 1) continue;
    const std::string name = word->substr(0, word->size() - 1);
    if (app.get_option_no_throw(name) != nullptr) return name;
  }
  return std::nullopt;
}

}  // namespace

std::string version_text(const char* program) {
  return std::string(program) + " " + std::string(EXTSHUFFLE_VERSION) + "\npermutation version " +
         std::to_string(core::kPermutationVersion) + " (VariablePhilox " + std::to_string(core::kVariablePhiloxRounds) +
         " rounds, L = " + std::to_string(core::kPlanV2.leaf_records) + ", F = " +
         std::to_string(core::kPlanV2.max_fanout) + ")";
}

namespace {

void describe_program(CLI::App& app) {
  app.get_formatter()->label("files", "[INPUT [OUTPUT]] | INPUT... -o OUTPUT");
  app.footer("INPUT '-' or absent: standard input. OUTPUT absent: standard output.\n"
             "Operands: without -o, INPUT [OUTPUT], as shuf. With one -o, every operand is an input, and several\n"
             "inputs are one dataset: their records concatenated in the order given, shuffled as one (CSV/TSV\n"
             "headers must be identical and are kept once; .npy arrays must share dtype and row shape). A\n"
             "directory stands for the regular files in it, in byte-wise name order; its subdirectories and\n"
             "hidden files (.name) are left out. With several -o, one per INPUT: aligned inputs, shuffled by\n"
             "one permutation.\n"
             "With --shards, --shard-size or --split, OUTPUT is a name pattern: {shard} (zero-padded to 5\n"
             "digits), {shards} (their count) and {split} (the split's name).\n"
             "Names ending in .gz or .zst are decompressed when read and compressed when written.\n"
             "The output depends only on the records, the format options and the seed.");
}

// The words of a row's choices ("auto,cpu,cuda").
std::vector<std::string> choices_of(const OptionRow& row) {
  std::vector<std::string> words;
  std::string word;
  for (const char* c = row.choices;; ++c) {
    if (*c == ',' || *c == '\0') {
      words.push_back(word);
      word.clear();
      if (*c == '\0') return words;
    } else {
      word += *c;
    }
  }
}

// One row of the options' table given to CLI11.
CLI::Option* add_row(CLI::App& app, Options& o, PendingOptions& pending, const OptionRow& row) {
  if (row.add != nullptr) return row.add(app, o, pending, row);
  if (row.flag != nullptr) return app.add_flag(row.names, o.*row.flag, row.help);
  CLI::Option* option = app.add_option(row.names, o.*row.text, row.help);
  if (row.choices != nullptr) option->check(CLI::IsMember(choices_of(row)));
  return option->type_name(row.type_name);
}

// extshuffle-mpi takes the same command line, but refuses what has no
// distributed counterpart (src/mpi/inputs/distributed_input.cpp): its help leaves
// those out (they still parse, so that the refusal names them) and says
// what it is.
void describe_mpi_program(CLI::App& app) {
  app.description("Shuffle the records of a file or a dataset of files on the ranks of an MPI job (mpirun -np P "
                  "extshuffle-mpi IN OUT ...), byte for byte as extshuffle does, for every P.");
  for (const OptionRow& row : option_table()) {
    if (!row.distributed) app.get_option("--" + long_name(row))->group("");
  }
  app.get_formatter()->label("files", "INPUT OUTPUT | INPUT... -o OUTPUT...");
  app.footer(
      "INPUTs (files, directories, .gz/.zst files) and OUTPUT are on a file system every rank can reach\n"
      "(no standard streams, pipes or devices); give one -o per INPUT to shuffle aligned files by one\n"
      "permutation. Compressed pieces (.gz/.zst) are each rank's frames one after another: the same\n"
      "records, other bytes. -e, -i, -r, --skip-empty and --checkpoint are extshuffle's. The output\n"
      "depends only on the records, the format options and the seed.");
}

}  // namespace

namespace {

// The parser of the command line, its options bound to `o` and `pending`.
void describe_options(CLI::App& app, Options& o, PendingOptions& pending, const char* program) {
  describe_program(app);
  for (const OptionRow& row : option_table()) add_row(app, o, pending, row);
  app.set_version_flag("--version", version_text(program));
  if (std::string(program) == "extshuffle-mpi") describe_mpi_program(app);
}

// What CLI11 cannot check: empty values, -n's counts, --header's N.
void check_parsed(const CLI::App& app, const PendingOptions& pending, Options& o) {
  if (const auto empty = empty_value(app, pending.files)) {
    throw UsageError("invalid " + *empty + " '': expected a value, not an empty one");
  }
  for (const std::string& text : pending.head_counts) {
    if (!all_digits(text)) throw UsageError("invalid --head-count '" + text + "': expected a whole number");
    // Beyond 2^64 - 1 means all of them, as shuf takes any count.
    o.head_count = std::min<std::uint64_t>(o.head_count, fits_u64(text) ? std::stoull(text) : UINT64_MAX);
  }
  if (pending.header->count() > 0) o.header = pending.header_text;
  take_header_count(app, pending.header, pending.files, o);
}

}  // namespace

std::optional<std::string> parse_words(const std::vector<std::string>& words, Options& options, const char* program) {
  CLI::App app{
      "Shuffle the records of a file, uniformly and reproducibly from a seed, "
      "even when it is far larger than memory.",
      program};
  PendingOptions pending;
  describe_options(app, options, pending, program);
  std::vector<std::string> expanded = expand_long_option_prefixes(app, words);
  if (const auto empty = empty_attached_value(app, expanded)) {
    throw UsageError("invalid " + *empty + " '': expected a value, not an empty one");
  }
  try {
    app.parse(std::move(expanded));
  } catch (const CLI::CallForHelp&) {
    return app.help();
  } catch (const CLI::CallForVersion& e) {
    return std::string(e.what()) + "\n";
  } catch (const CLI::ParseError& e) {
    throw UsageError(parse_error_message(e));
  }
  check_parsed(app, pending, options);
  return std::nullopt;
}

std::optional<int> parse_options(int argc, char** argv, Options& options, const char* program) {
  try {
    const std::optional<std::string> text =
        parse_words(std::vector<std::string>(argv + 1, argv + argc), options, program);
    if (!text) return std::nullopt;
    std::fputs(text->c_str(), stdout);
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  }
}

std::vector<OptionNames> option_names() {
  CLI::App app;
  Options options;
  PendingOptions pending;
  describe_options(app, options, pending, "extshuffle");
  std::vector<OptionNames> names;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_lnames().empty()) continue;
    names.push_back({option->get_lnames().front(), option->get_snames()});
  }
  return names;
}

}  // namespace extshuffle::cli

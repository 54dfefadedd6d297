#include "options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "long_option_prefixes.hpp"
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

}  // namespace

std::string version_text(const char* program) {
  return std::string(program) + " " + std::string(EXTSHUFFLE_VERSION) + "\npermutation version " +
         std::to_string(core::kPermutationVersion) + " (VariablePhilox " + std::to_string(core::kVariablePhiloxRounds) +
         " rounds, L = " + std::to_string(core::kPlanV2.leaf_records) + ", F = " +
         std::to_string(core::kPlanV2.max_fanout) + ")";
}

namespace {

// What the option groups leave for after the parse: options CLI11 cannot
// check or take as they are.
struct PendingOptions {
  CLI::Option* files = nullptr;
  CLI::Option* header = nullptr;
  std::string header_text;
  std::vector<std::string> head_counts;
};

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

// The files, the budget, the threads and the device.
void add_run_options(CLI::App& app, Options& o, PendingOptions& pending) {
  pending.files = app.add_option("files", o.operands, "INPUT and OUTPUT, or with -o: the inputs")->type_name("FILE");
  // One word per -o, so that "-o out.txt in.txt" (shuf's order) leaves in.txt an operand.
  app.add_option("-o,--output", o.outputs,
                 "write to FILE (may name an input; a pattern with --shards/--split); every operand is then an "
                 "input; give one -o per INPUT to shuffle aligned files by one permutation")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app.add_option("--seed", o.seed, "seed, any unsigned 64-bit number, decimal or 0x hex (default: random, shown with -v)")
      ->type_name("N");
  app.add_option("--record-size", o.record_size, "bytes per fixed-size record (e.g. 8, 4K)")->type_name("SIZE");
  app.add_option("-S,--memory", o.memory,
                 "memory budget, sort's syntax: K, M, G, T or % (default: half of what the machine can give, its RAM "
                 "or its cgroup limit; more than that is refused)")
      ->type_name("SIZE");
  app.add_option("-T,--tmpdir", o.tmpdir, "scratch directory (default: $TMPDIR, else /tmp)")->type_name("DIR");
  app.add_option("--checkpoint", o.checkpoint,
                 "keep scratch and a journal in DIR (yours alone); the same command run again resumes where a "
                 "killed run stopped; DIR's files go when the run succeeds")
      ->type_name("DIR");
  app.add_option("-j,--threads", o.threads, "worker threads (default: all cores)")->check(CLI::NonNegativeNumber);
  app.add_option("--device", o.device, "where in-memory shuffles run: auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->type_name("DEVICE");
  app.add_option("--leaf-records", o.leaf_records, "testing knob: leaf size L of the plan; CHANGES THE PERMUTATION");
  app.add_option("--fanout", o.fanout, "testing knob: fanout F of the plan; CHANGES THE PERMUTATION");
}

// How records are delimited.
void add_format_options(CLI::App& app, Options& o, PendingOptions& pending) {
  app.add_option("--format", o.format,
                 "how records are delimited: auto (.npy by its magic, --record-size, else text by extension, "
                 "else lines), binary, lines, csv (RFC 4180 quoting, header kept), tsv (header kept), jsonl, "
                 "tfrecord (CRC-checked frames), tar (WebDataset samples)")
      ->check(CLI::IsMember({"auto", "binary", "lines", "csv", "tsv", "jsonl", "tfrecord", "tar"}))
      ->type_name("FORMAT");
  app.add_flag("-z,--zero-terminated", o.zero_terminated, "lines end with NUL, not newline (as shuf -z)");
  app.add_flag("--ignore-zeros", o.ignore_zeros,
               "tar: read through zero blocks (archives concatenated with cat), as GNU tar's --ignore-zeros");
  pending.header = app.add_flag("--header", pending.header_text,
                                 "keep the first N lines on top (--header=N; default 1 for CSV and TSV, else 0)");
  app.add_flag("--skip-empty", o.skip_empty, "blank lines are not records: drop them");
}

// shuf's modes and habits: -e, -i, -n, -r, --random-source; and --verify.
void add_shuf_options(CLI::App& app, Options& o, PendingOptions& pending) {
  app.add_flag("-e,--echo", o.echo, "shuffle the arguments, one per output line (as shuf -e)");
  app.add_option("-i,--input-range", o.input_range, "shuffle the integers LO..HI, one per line (as shuf -i LO-HI)")
      ->type_name("LO-HI");
  // Taken as text, checked after parsing: CLI11 would wrap "-3" around to 2^64 - 3.
  app.add_option("-n,--head-count", pending.head_counts,
                 "output only the first K records of the full permutation (the same as its first K); "
                 "given several times, the smallest K counts (as in shuf); beyond 2^64 - 1: all")
      ->type_name("K")
      ->allow_extra_args(false);
  // shuf's habits: draws with replacement, and the seed from a file.
  app.add_flag("-r,--repeat", o.repeat,
               "output records drawn with replacement: K with -n K, an endless stream without (as shuf -r)");
  app.add_option("--random-source", o.random_source,
                 "take the seed from FILE: its first 8 bytes, little-endian (the same FILE, the same output)")
      ->type_name("FILE");
  app.add_flag("--verify", o.verify,
               "check that the output holds exactly the input's records (a digest of each side) before "
               "committing it");
}

void add_dataset_options(CLI::App& app, Options& o) {
  // --- datasets: shards, splits, a manifest ---
  app.add_option("--shards", o.shards,
                 "write K files, consecutive pieces of the permutation of near-equal record counts (per split), "
                 "named by -o's {shard} and {shards}")
      ->type_name("K");
  app.add_option("--shard-size", o.shard_size,
                 "write shards of at most SIZE bytes of records each (before compression; sort's size syntax: "
                 "b, K (default), M, G, T), cut between records")
      ->type_name("SIZE");
  app.add_option("--split", o.split,
                 "NAME=SIZE,... : cut the permutation into consecutive splits (SIZE a fraction such as 0.98 or a "
                 "record count, or rest: what the others leave; split k ends at floor(N x the fractions up to k) + "
                 "the counts up to k), named by -o's {split}")
      ->type_name("NAME=SIZE,...");
  app.add_flag("--clean", o.clean,
               "remove files that match -o's pattern but that this run does not write (pieces of an older run), "
               "once the new ones are in place; without it they are named in a warning");
  app.add_option("--manifest", o.manifest,
                 "write FILE (JSON) once the outputs are in place: inputs, seed, permutation version, options and "
                 "each output file's records, bytes and xxh64")
      ->type_name("FILE");
  // --- end of datasets ---
  app.add_flag("--index", o.index,
               "also write each output file's record index beside it (.NAME.extshuffle-index), committed with it");
  app.add_flag("--index-only", o.index_only,
               "write each INPUT's record index (beside it, or at -o for one file) and nothing else: no shuffle");
}

// What the run reports, and how much it says.
void add_report_options(CLI::App& app, Options& o) {
  app.add_flag("--dry-run", o.dry_run, "print the plan and the schedule, do nothing");
  app.add_flag("--stats", o.stats, "print one machine-readable RESULT line on stderr");
  app.add_flag("--progress", o.progress, "show progress on stderr even when it is not a terminal");
  app.add_flag("-v,--verbose", o.verbose, "log what happens on stderr");
  app.add_flag("-q,--quiet", o.quiet, "log errors only");
}

// extshuffle-mpi takes the same command line, but refuses what has no
// distributed counterpart (src/mpi/inputs/distributed_input.cpp): its help leaves
// those out (they still parse, so that the refusal names them) and says
// what it is.
void describe_mpi_program(CLI::App& app) {
  app.description("Shuffle the records of a file or a dataset of files on the ranks of an MPI job (mpirun -np P "
                  "extshuffle-mpi IN OUT ...), byte for byte as extshuffle does, for every P.");
  for (const char* name :
       {"--echo", "--input-range", "--repeat", "--skip-empty", "--index", "--index-only", "--checkpoint"}) {
    app.get_option(name)->group("");
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
  add_run_options(app, o, pending);
  add_format_options(app, o, pending);
  add_shuf_options(app, o, pending);
  add_dataset_options(app, o);
  add_report_options(app, o);
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
  try {
    app.parse(expand_long_option_prefixes(app, words));
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

// extshuffle: the command-line shell. Parses options (CLI11), validates them
// into a Config, sets up logging (spdlog, stderr only), calls run() and maps
// exceptions to exit codes: 0 success, 1 runtime failure, 2 usage error.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <algorithm>
#include <iostream>
#include <map>
#include <random>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/variable_philox.hpp"
#include "extshuffle/device/device_error.hpp"
#include "extshuffle/driver/errors.hpp"
#include "extshuffle/driver/external_executor.hpp"
#include "extshuffle/driver/run.hpp"
#include "extshuffle/driver/size_argument.hpp"
#include "extshuffle/io/output_file.hpp"

namespace {

using extshuffle::driver::Config;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

void print_error(const std::string& message) { std::fprintf(stderr, "extshuffle: %s\n", message.c_str()); }

std::string version_text() {
  return "extshuffle " + std::string(EXTSHUFFLE_VERSION) + "\npermutation version " +
         std::to_string(extshuffle::core::kPermutationVersion) + " (VariablePhilox " +
         std::to_string(extshuffle::core::kVariablePhiloxRounds) + " rounds, L = " +
         std::to_string(extshuffle::core::kPlanV1.leaf_records) + ", F = " +
         std::to_string(extshuffle::core::kPlanV1.max_fanout) + ")";
}

int run_cli(int argc, char** argv) {
  CLI::App app{"Shuffle the records of a file, uniformly and reproducibly from a seed, "
               "even when it is far larger than memory.",
               "extshuffle"};
  app.get_formatter()->label("files", "[INPUT [OUTPUT]]");
  app.footer("INPUT '-' or absent: standard input. OUTPUT absent: standard output.\n"
             "The output depends only on the records, the format options and the seed.");
  Config config;
  std::vector<std::string> positional;
  std::vector<std::string> output_options;
  std::string seed_text, record_size_text, memory_text, device_text = "cpu";
  std::uint64_t leaf_records = 0, fanout = 0;
  bool verbose = false, quiet = false;
  app.add_option("files", positional, "INPUT and OUTPUT, or with several -o: the inputs");
  app.add_option("-o,--output", output_options,
                 "write to FILE (may name the input); give one -o per INPUT to shuffle aligned files by one "
                 "permutation");
  app.add_option("--seed", seed_text, "seed, any unsigned 64-bit number (default: random, shown with -v)");
  app.add_option("--record-size", record_size_text, "bytes per fixed-size record (e.g. 8, 4K)");
  app.add_option("-S,--memory", memory_text,
                 "memory budget, sort's syntax: K, M, G, T or % (default: half of RAM or the cgroup limit)");
  app.add_option("-T,--tmpdir", config.tmpdir, "scratch directory (default: $TMPDIR, else /tmp)");
  app.add_option("-j,--threads", config.threads, "worker threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--device", device_text, "where in-memory shuffles run: auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--leaf-records", leaf_records,
                 "testing knob: leaf size L of the plan; CHANGES THE PERMUTATION");
  app.add_option("--fanout", fanout, "testing knob: fanout F of the plan; CHANGES THE PERMUTATION");
  std::string format_text = "auto";
  app.add_option("--format", format_text,
                 "how records are delimited: auto (.npy by its magic, --record-size, else text by extension, "
                 "else lines), binary, lines, csv (RFC 4180 quoting, header kept), tsv (header kept), jsonl")
      ->check(CLI::IsMember({"auto", "binary", "lines", "csv", "tsv", "jsonl"}));
  app.add_flag("-z,--zero-terminated", config.zero_terminated, "lines end with NUL, not newline (as shuf -z)");
  std::string header_text;
  auto* header_option = app.add_option("--header", header_text,
               "keep the first N lines on top (--header=N; default 1 for CSV and TSV, else 0)")
      ->expected(0, 1);
  app.add_flag("--skip-empty", config.skip_empty, "blank lines are not records: drop them");
  std::string range_text;
  app.add_flag("-e,--echo", config.echo, "shuffle the arguments, one per output line (as shuf -e)");
  app.add_option("-i,--input-range", range_text, "shuffle the integers LO..HI, one per line (as shuf -i LO-HI)");
  app.add_option("-n,--head-count", config.head_count,
                 "output only the first K records of the full permutation (the same as its first K)");
  app.add_flag("--verify", config.verify,
               "check that the output holds exactly the input's records (a digest of each side) before "
               "committing it");
  app.add_flag("--dry-run", config.dry_run, "print the plan and the schedule, do nothing");
  app.add_flag("--stats", config.stats, "print one machine-readable RESULT line on stderr");
  app.add_flag("--progress", config.progress, "show progress on stderr even when it is not a terminal");
  app.add_flag("-v,--verbose", verbose, "log what happens on stderr");
  app.add_flag("-q,--quiet", quiet, "log errors only");
  app.set_version_flag("--version", version_text());
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error(e.what());
    return kExitUsage;
  }

  auto logger = spdlog::stderr_color_mt("extshuffle");
  logger->set_pattern("extshuffle: %v");
  logger->set_level(quiet ? spdlog::level::err : verbose ? spdlog::level::debug : spdlog::level::warn);
  spdlog::set_default_logger(logger);
  // STXXL prints its warnings on std::cerr; our own messages go through
  // stdio and spdlog, so std::cerr carries nothing but STXXL: mute it unless -v.
  if (!verbose) std::cerr.rdbuf(nullptr);

  const std::map<std::string, extshuffle::driver::Format> formats{{"auto", extshuffle::driver::Format::kAuto},
                                                      {"binary", extshuffle::driver::Format::kBinary},
                                                      {"lines", extshuffle::driver::Format::kLines},
                                                      {"csv", extshuffle::driver::Format::kCsv},
                                                      {"tsv", extshuffle::driver::Format::kTsv},
                                                      {"jsonl", extshuffle::driver::Format::kJsonl}};
  config.format = formats.at(format_text);
  if (header_option->count() > 0) {
    std::size_t used = 0;
    try {
      if (!header_text.empty() && header_text[0] != '-') config.header_lines = std::stoll(header_text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (header_text.empty()) {
      config.header_lines = 1;
    } else if (used != header_text.size()) {
      // "--header data.csv": CLI11 took the file for the optional N. It is a
      // file operand, at its place among the others.
      const bool is_operand = header_text.find_first_not_of("0123456789") != std::string::npos &&
                              (header_text == "-" || header_text[0] != '-');
      if (!is_operand || std::find(argv, argv + argc, std::string("--header")) == argv + argc) {
        throw extshuffle::UsageError("invalid --header '" + header_text + "': expected --header or --header=N");
      }
      const auto flag_at = std::find(argv, argv + argc, std::string("--header")) - argv;
      std::size_t before = 0;
      for (int i = 1; i < flag_at && before < positional.size(); ++i) {
        if (positional[before] == argv[i]) ++before;
      }
      positional.insert(positional.begin() + static_cast<std::ptrdiff_t>(before), header_text);
      config.header_lines = 1;
    }
  }
  // Files: [INPUT [OUTPUT]], INPUT -o OUTPUT, or INPUT1 INPUT2... with one -o each.
  // With -e the operands are the items; with -i there is no input.
  std::vector<std::string> inputs, outputs;
  if (config.echo && !range_text.empty()) throw extshuffle::UsageError("-e and -i cannot be combined");
  if (config.echo || !range_text.empty()) {
    if (output_options.size() > 1) throw extshuffle::UsageError("-e and -i write one output");
    if (config.echo) {
      config.echo_items = positional;
    } else {
      if (!positional.empty()) throw extshuffle::UsageError("extra operand '" + positional[0] + "' with -i");
      const auto dash = range_text.find('-');
      std::size_t used_low = 0, used_high = 0;
      try {
        if (dash == std::string::npos || dash == 0 || range_text[dash + 1] == '-') throw std::invalid_argument("");
        config.range_low = std::stoull(range_text.substr(0, dash), &used_low);
        config.range_high = std::stoull(range_text.substr(dash + 1), &used_high);
      } catch (const std::exception&) {
        used_low = 0;
      }
      if (used_low != dash || used_high != range_text.size() - dash - 1 || config.range_high == UINT64_MAX ||
          config.range_high + 1 < config.range_low) {
        throw extshuffle::UsageError("invalid input range '" + range_text + "': expected LO-HI with LO <= HI + 1");
      }
      config.integer_range = true;
    }
    positional.clear();
    inputs.push_back("-");
    outputs.push_back(output_options.empty() ? "-" : output_options[0]);
  } else if (output_options.size() > 1) {
    if (positional.size() != output_options.size()) {
      throw extshuffle::UsageError("give one INPUT per -o (" + std::to_string(output_options.size()) + " -o, " +
                                   std::to_string(positional.size()) + " inputs)");
    }
    inputs = positional;
    outputs = output_options;
  } else {
    if (positional.size() > 2 || (positional.size() == 2 && !output_options.empty())) {
      throw extshuffle::UsageError(positional.size() > 2 ? "too many files: give one -o per INPUT to shuffle several"
                                                         : "OUTPUT given twice (positional and -o)");
    }
    inputs.push_back(positional.empty() ? "-" : positional[0]);
    outputs.push_back(positional.size() == 2 ? positional[1] : output_options.empty() ? "-" : output_options[0]);
  }

  if (seed_text.empty()) {
    std::random_device entropy;
    config.seed = (std::uint64_t{entropy()} << 32) | entropy();
    spdlog::info("seed {} (repeat the run with --seed {})", config.seed, config.seed);
  } else {
    std::size_t used = 0;
    try {
      if (seed_text.empty() || seed_text[0] == '-') throw std::invalid_argument("negative");
      config.seed = std::stoull(seed_text, &used, 0);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != seed_text.size()) {
      throw extshuffle::UsageError("invalid --seed '" + seed_text + "': expected an unsigned 64-bit number");
    }
  }
  if (!record_size_text.empty()) {
    config.record_size = extshuffle::driver::parse_byte_count(record_size_text, "--record-size");
  }
  if ((config.echo || config.integer_range) && config.record_size == 0) config.record_size = 8;  // indices
  config.memory_bytes = memory_text.empty()
                            ? extshuffle::driver::default_memory_bytes()
                            : extshuffle::driver::parse_memory_size(
                                  memory_text, extshuffle::driver::physical_memory_bytes());
  if (leaf_records != 0 || fanout != 0) {
    if (fanout == 1) throw extshuffle::UsageError("invalid --fanout '1': must be at least 2");
    spdlog::warn("--leaf-records/--fanout change the permutation: output differs from permutation version {}",
                 extshuffle::core::kPermutationVersion);
    if (leaf_records != 0) config.constants.leaf_records = leaf_records;
    if (fanout != 0) config.constants.max_fanout = fanout;
  }
  // Budgets for .npy rows and text records are checked once the input is read.
  const std::uint64_t minimum_memory =
      extshuffle::driver::minimum_memory_bytes(config.constants, std::max<std::size_t>(config.record_size, 1));
  if (config.record_size != 0 && config.memory_bytes < minimum_memory) {
    throw extshuffle::UsageError("--memory must be at least " + std::to_string((minimum_memory + 1023) >> 10) +
                                 "K for records of " + std::to_string(config.record_size) + " bytes");
  }
  if (device_text == "cuda" ||
      (device_text == "auto" && extshuffle::device::cuda_available())) {
    config.device = extshuffle::device::Device::kCuda;
  }

  config.progress = !quiet && (config.progress || ::isatty(2));
  // Aligned inputs (features and labels): the permutation depends on the seed
  // and the record count only, so equal counts give aligned outputs. Counts
  // are checked before any output is written.
  if (inputs.size() > 1) {
    std::uint64_t records = 0;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (inputs[k] == "-") throw extshuffle::UsageError("standard input cannot be one of several inputs");
      config.input_path = inputs[k];
      const std::uint64_t n = extshuffle::driver::input_records(config);
      if (k > 0 && n != records) {
        throw extshuffle::InputError("inputs differ in record count: '" + inputs[0] + "' has " +
                                     std::to_string(records) + ", '" + inputs[k] + "' has " + std::to_string(n));
      }
      records = n;
    }
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    config.input_path = inputs[k];
    config.output_path = outputs[k];
    const auto stats = extshuffle::driver::run(config);
    if (config.stats) std::fprintf(stderr, "%s\n", extshuffle::driver::format_result_line(stats).c_str());
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  // A closed pipe shows up as EPIPE from write(), handled as BrokenPipe.
  ::signal(SIGPIPE, SIG_IGN);
  try {
    return run_cli(argc, argv);
  } catch (const extshuffle::io::BrokenPipe&) {
    // Like other filters: end quietly, as if killed by SIGPIPE (scratch and
    // temporary files are already gone: their owners' destructors ran).
    ::signal(SIGPIPE, SIG_DFL);
    ::raise(SIGPIPE);
    return 141;
  } catch (const extshuffle::UsageError& e) {
    print_error(e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    print_error(e.what());
    return kExitFailure;
  }
}

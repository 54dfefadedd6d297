#include "make_job.hpp"

#include <cctype>
#include <optional>
#include <random>
#include <spdlog/spdlog.h>

#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/device/shuffle_records.hpp"
#include "extshuffle/driver/run_job.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/memory_limit.hpp"
#include "extshuffle/io/random_source.hpp"
#include "option_table.hpp"
#include "size_argument.hpp"

namespace extshuffle::cli {
namespace {

// --seed: decimal, or hexadecimal after 0x; leading zeros are decimal
// ("010" is ten, not octal eight).
std::optional<std::uint64_t> parse_seed(const std::string& text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    const std::string digits = text.substr(2);
    if (!std::isxdigit(static_cast<unsigned char>(digits[0]))) return std::nullopt;
    return parse_unsigned(digits, 16);
  }
  return parse_unsigned(text, 10);
}

std::uint64_t seed_of(const std::string& text) {
  if (text.empty()) {
    std::random_device entropy;
    const std::uint64_t seed = (std::uint64_t{entropy()} << 32) | entropy();
    spdlog::info("seed {} (repeat the run with --seed {})", seed, seed);
    return seed;
  }
  const auto seed = parse_seed(text);
  if (!seed) throw UsageError("invalid --seed '" + text + "': expected an unsigned 64-bit number");
  return *seed;
}

// -i LO-HI, decimal and inclusive; LO = HI + 1 is the empty range.
void set_range(JobOptions& options, const std::string& text) {
  const auto dash = text.find('-');
  std::optional<std::uint64_t> low, high;
  if (dash != std::string::npos) {
    low = parse_unsigned(text.substr(0, dash));
    high = parse_unsigned(text.substr(dash + 1));
  }
  // HI may be 2^64 - 1 (shuf -i 1-$UINTMAX_MAX); LO = HI + 1 is the empty range.
  if (!low || !high || (*low > *high && *low - *high != 1)) {
    throw UsageError("invalid input range '" + text + "': expected LO-HI with LO <= HI + 1");
  }
  options.mode.integer_range = true;
  options.mode.range_low = *low;
  options.mode.range_high = *high;
}

// Files: without -o, [INPUT [OUTPUT]] as shuf; with one -o (before or after
// them), every operand is an input of one dataset; with several -o, one
// aligned INPUT per -o. With -e the operands are the items; with -i there
// is no input.
void set_files(const Options& o, Job& job) {
  JobOptions& options = job.options;
  if (o.echo && !o.input_range.empty()) throw UsageError("-e and -i cannot be combined");
  if (o.echo || !o.input_range.empty()) {
    if (o.outputs.size() > 1) throw UsageError("-e and -i write one output");
    if (o.echo) {
      options.mode.echo_items = o.operands;
    } else {
      if (!o.operands.empty()) throw UsageError("extra operand '" + o.operands[0] + "' with -i");
      set_range(options, o.input_range);
    }
    job.datasets = {{{"-"}, o.outputs.empty() ? "-" : o.outputs[0]}};
  } else if (o.index_only && o.outputs.empty()) {
    // Every operand an input, each indexed beside it.
    job.datasets = {{o.operands.empty() ? std::vector<std::string>{"-"} : o.operands, "-"}};
  } else if (o.outputs.size() > 1) {
    if (o.operands.size() != o.outputs.size()) {
      throw UsageError("-o: give one INPUT per -o (" + std::to_string(o.outputs.size()) + " -o, " +
                       std::to_string(o.operands.size()) + " inputs)");
    }
    for (std::size_t k = 0; k < o.operands.size(); ++k) {
      if (o.operands[k] == "-") throw UsageError("standard input cannot be one of several aligned inputs");
      job.datasets.push_back({{o.operands[k]}, o.outputs[k]});
    }
  } else if (o.outputs.size() == 1) {
    job.datasets = {{o.operands.empty() ? std::vector<std::string>{"-"} : o.operands, o.outputs[0]}};
  } else {
    if (o.operands.size() > 2) {
      throw UsageError("too many operands: to read several inputs as one dataset, name the output with -o "
                       "(extshuffle INPUT... -o OUTPUT)");
    }
    job.datasets = {{{o.operands.empty() ? "-" : o.operands[0]}, o.operands.size() == 2 ? o.operands[1] : "-"}};
  }
}

// --- datasets: --shards, --shard-size, --split, --manifest, weighed together ---
void check_dataset_options(const Options& o, const Job& job) {
  const JobOptions& options = job.options;
  if (options.output.shard_count > 0 && options.output.shard_bytes > 0)
    throw UsageError("--shards and --shard-size cannot be combined");
  const bool files = dataset::writes_several_files(options.output.shard_count, options.output.shard_bytes,
                                                   options.output.splits.size());
  if (o.clean && !files) throw UsageError("--clean removes old pieces of -o's pattern: it needs --shards, --shard-size or --split");
  if ((files || !o.manifest.empty()) && (options.mode.echo || options.mode.integer_range)) {
    throw UsageError("--shards, --shard-size, --split and --manifest are for input files, not -e or -i");
  }
  if (options.output.shard_bytes > 0 && job.datasets.size() > 1) {
    throw UsageError("--shard-size cuts by bytes, which differ between aligned inputs: use --shards to keep "
                     "their shards aligned");
  }
  // A manifest over an output or an input is the Job's plan to refuse
  // (driver/job_files.hpp): it compares files, not names.
}
// --- end of datasets ---

// shuf's habits: --repeat (one input, a stream of draws: nothing to verify
// or plan) and --random-source, which gives the seed.
void set_shuf_habits(const Options& o, Job& job) {
  JobOptions& options = job.options;
  options.input.repeat = o.repeat;
  if (o.repeat && (job.datasets.size() > 1 || job.datasets.front().inputs.size() > 1)) {
    throw UsageError("--repeat draws from one input");
  }
  if (o.repeat && o.verify) throw UsageError("--verify checks a permutation: --repeat draws with replacement");
  if (o.repeat && o.dry_run) throw UsageError("--dry-run describes a shuffle: --repeat draws with replacement");
  if (o.random_source.empty()) return;
  if (!o.seed.empty()) throw UsageError("--random-source and --seed both give the seed: use one");
  options.run.seed = io::seed_from_random_source(o.random_source);
}

// The plan's constants (--leaf-records, --fanout): testing knobs that change the permutation.
void set_constants(const Options& o, JobOptions& options) {
  if (o.leaf_records == 0 && o.fanout == 0) return;
  if (o.fanout == 1) throw UsageError("invalid --fanout '1': must be at least 2");
  spdlog::warn("--leaf-records/--fanout change the permutation: output differs from permutation version {}",
               core::kPermutationVersion);
  if (o.leaf_records != 0) options.run.constants.leaf_records = o.leaf_records;
  if (o.fanout != 0) options.run.constants.max_fanout = o.fanout;
}

}  // namespace

// Each option lands where its row of the table says (option_table.hpp);
// what follows weighs options together: the files, the seed, the plan's
// constants, the datasets' and shuf's combinations.
Job make_job(const Options& o) {
  Job job;
  JobOptions& options = job.options;
  set_files(o, job);
  // --checkpoint without --seed: the seed drawn by the run it resumes.
  const auto checkpointed = o.seed.empty() && o.random_source.empty() && !o.checkpoint.empty()
                                ? driver::checkpointed_seed(o.checkpoint)
                                : std::nullopt;
  if (o.random_source.empty()) options.run.seed = checkpointed ? *checkpointed : seed_of(o.seed);
  for (const OptionRow& row : option_table()) {
    if (row.land != nullptr) row.land(o, options);
  }
  if ((o.echo || options.mode.integer_range) && options.input.record_size == 0)
    options.input.record_size = 8;  // indices
  set_constants(o, options);
  check_dataset_options(o, job);
  set_shuf_habits(o, job);
  Job made = extshuffle::make_job(std::move(job.options), std::move(job.datasets));
  // --device cuda without a usable GPU fails now, before any input is read
  // or counted (the first shuffle found it only after the counting pass).
  device::require_usable(made.options.run.device);
  return made;
}

std::string drawn_seed_line(const Options& o, const JobOptions& options) {
  const bool writes_dataset = dataset::writes_several_files(options.output.shard_count, options.output.shard_bytes,
                                                            options.output.splits.size()) ||
                              !options.run.manifest_path.empty();
  if (!o.seed.empty() || !o.random_source.empty() || !writes_dataset || options.run.dry_run) return {};
  const std::string seed = std::to_string(options.run.seed);
  return "seed " + seed + " drawn for this dataset (repeat the run with --seed " + seed + ")";
}

}  // namespace extshuffle::cli

// The rows of the options' table (option_table.hpp), in --help's order.
#include "option_table.hpp"

#include <CLI/CLI.hpp>
#include <array>

#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/device/shuffle_records.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/io/memory_limit.hpp"
#include "size_argument.hpp"

namespace extshuffle::cli {
namespace {

std::int64_t header_lines(const std::string& text) {
  const auto lines = parse_unsigned(text);
  if (!lines || *lines > INT64_MAX)
    throw UsageError("invalid --header '" + text + "': expected --header or --header=N");
  return static_cast<std::int64_t>(*lines);
}

std::uint64_t shard_count(const std::string& text) {
  const auto shards = parse_unsigned(text);
  if (!shards || *shards == 0) throw UsageError("invalid --shards '" + text + "': expected a positive number");
  return *shards;
}

// The rows that go with the run: files, seed, budget, scratch, threads, device, the plan.
constexpr OptionRow kRun[] = {
    {.names = "files",
     .help = "INPUT and OUTPUT, or with -o: the inputs",
     .add =
         [](CLI::App& app, Options& o, PendingOptions& pending, const OptionRow& row) {
           return pending.files = app.add_option(row.names, o.operands, row.help)->type_name("FILE");
         }},
    // One word per -o, so that "-o out.txt in.txt" (shuf's order) leaves in.txt an operand.
    {.names = "-o,--output",
     .help = "write to FILE (may name an input; a pattern with --shards/--split); every operand is then an "
             "input; give one -o per INPUT to shuffle aligned files by one permutation",
     .add =
         [](CLI::App& app, Options& o, PendingOptions&, const OptionRow& row) {
           return app.add_option(row.names, o.outputs, row.help)->type_name("FILE")->allow_extra_args(false);
         }},
    {.names = "--seed",
     .help = "seed, any unsigned 64-bit number, decimal or 0x hex (default: random, shown with -v)",
     .type_name = "N",
     .text = &Options::seed},
    {.names = "--record-size",
     .help = "bytes per fixed-size record (e.g. 8, 4K)",
     .type_name = "SIZE",
     .text = &Options::record_size,
     .land =
         [](const Options& o, JobOptions& job) {
           if (!o.record_size.empty()) job.input.record_size = parse_byte_count(o.record_size, "--record-size");
         },
     .keyword = Keyword::kSize},
    {.names = "-S,--memory",
     .help = "memory budget, sort's syntax: K, M, G, T or % (default: half of what the machine can give, its RAM "
             "or its cgroup limit; more than that is refused)",
     .type_name = "SIZE",
     .text = &Options::memory,
     .land =
         [](const Options& o, JobOptions& job) {
           job.run.memory_bytes =
               o.memory.empty() ? default_memory_bytes() : parse_memory_size(o.memory, io::usable_memory_bytes());
         },
     .keyword = Keyword::kSize},
    {.names = "-T,--tmpdir",
     .help = "scratch directory (default: $TMPDIR, else /tmp)",
     .type_name = "DIR",
     .text = &Options::tmpdir,
     .land = [](const Options& o, JobOptions& job) { job.run.tmpdir = o.tmpdir; },
     .keyword = Keyword::kValue},
    {.names = "--checkpoint",
     .help = "keep scratch and a journal in DIR (yours alone); the same command run again resumes where a "
             "killed run stopped; DIR's files go when the run succeeds",
     .type_name = "DIR",
     .text = &Options::checkpoint,
     .land = [](const Options& o, JobOptions& job) { job.run.checkpoint_dir = o.checkpoint; },
     .keyword = Keyword::kValue,
     .distributed = false},
    {.names = "-j,--threads",
     .help = "worker threads (default: all cores)",
     .add =
         [](CLI::App& app, Options& o, PendingOptions&, const OptionRow& row) {
           return app.add_option(row.names, o.threads, row.help)->check(CLI::NonNegativeNumber);
         },
     // 0 = all cores: OpenMP's count, which honours OMP_NUM_THREADS and the CPU affinity mask.
     .land = [](const Options& o, JobOptions& job) { job.run.threads = device::resolve_threads(o.threads); },
     .keyword = Keyword::kValue},
    {.names = "--device",
     .help = "where in-memory shuffles run: auto, cpu or cuda",
     .type_name = "DEVICE",
     .text = &Options::device,
     .choices = "auto,cpu,cuda",
     .land =
         [](const Options& o, JobOptions& job) {
           if (o.device == "cuda" || (o.device == "auto" && device::cuda_available()))
             job.run.device = device::Device::kCuda;
         },
     .keyword = Keyword::kValue},
    // The plan's constants land in make_job's step, which warns once for both.
    {.names = "--leaf-records",
     .help = "testing knob: leaf size L of the plan; CHANGES THE PERMUTATION",
     .add = [](CLI::App& app, Options& o, PendingOptions&,
               const OptionRow& row) { return app.add_option(row.names, o.leaf_records, row.help); },
     .keyword = Keyword::kValue},
    {.names = "--fanout",
     .help = "testing knob: fanout F of the plan; CHANGES THE PERMUTATION",
     .add = [](CLI::App& app, Options& o, PendingOptions&,
               const OptionRow& row) { return app.add_option(row.names, o.fanout, row.help); },
     .keyword = Keyword::kValue},
};

// How records are delimited.
constexpr OptionRow kFormat[] = {
    {.names = "--format",
     .help = "how records are delimited: auto (.npy by its magic, --record-size, else text by extension, "
             "else lines), binary, lines, csv (RFC 4180 quoting, header kept), tsv (header kept), jsonl, "
             "tfrecord (CRC-checked frames), tar (WebDataset samples)",
     .type_name = "FORMAT",
     .text = &Options::format,
     .choices = formats::kFormatWords,
     // The parser took only kFormatWords' words.
     .land = [](const Options& o, JobOptions& job) { job.input.format = *formats::format_named(o.format); },
     .keyword = Keyword::kValue},
    {.names = "-z,--zero-terminated",
     .help = "lines end with NUL, not newline (as shuf -z)",
     .flag = &Options::zero_terminated,
     .land = [](const Options& o, JobOptions& job) { job.input.zero_terminated = o.zero_terminated; },
     .keyword = Keyword::kFlag},
    {.names = "--ignore-zeros",
     .help = "tar: read through zero blocks (archives concatenated with cat), as GNU tar's --ignore-zeros",
     .flag = &Options::ignore_zeros,
     .land = [](const Options& o, JobOptions& job) { job.input.ignore_zeros = o.ignore_zeros; },
     .keyword = Keyword::kFlag},
    // A flag, so that "--header data.csv" leaves the file an operand; its N
    // is found after the parse (options.cpp's take_header_count).
    {.names = "--header",
     .help = "keep the first N lines on top (--header=N; default 1 for CSV and TSV, else 0)",
     .add =
         [](CLI::App& app, Options&, PendingOptions& pending, const OptionRow& row) {
           return pending.header = app.add_flag(row.names, pending.header_text, row.help);
         },
     .land =
         [](const Options& o, JobOptions& job) {
           if (o.header) job.input.header_lines = header_lines(*o.header);
         },
     .keyword = Keyword::kValue},
    {.names = "--skip-empty",
     .help = "blank lines are not records: drop them",
     .flag = &Options::skip_empty,
     .land = [](const Options& o, JobOptions& job) { job.input.skip_empty = o.skip_empty; },
     .keyword = Keyword::kFlag,
     .distributed = false},
};

// shuf's modes and habits: -e, -i, -n, -r, --random-source; and --verify.
constexpr OptionRow kShuf[] = {
    {.names = "-e,--echo",
     .help = "shuffle the arguments, one per output line (as shuf -e)",
     .flag = &Options::echo,
     .land = [](const Options& o, JobOptions& job) { job.mode.echo = o.echo; },
     .distributed = false},
    // The range lands with the files (make_job's set_files).
    {.names = "-i,--input-range",
     .help = "shuffle the integers LO..HI, one per line (as shuf -i LO-HI)",
     .type_name = "LO-HI",
     .text = &Options::input_range,
     .keyword = Keyword::kValue,
     .distributed = false},
    // Taken as text, checked after parsing: CLI11 would wrap "-3" around to 2^64 - 3.
    {.names = "-n,--head-count",
     .help = "output only the first K records of the full permutation (the same as its first K); "
             "given several times, the smallest K counts (as in shuf); beyond 2^64 - 1: all",
     .add =
         [](CLI::App& app, Options&, PendingOptions& pending, const OptionRow& row) {
           return app.add_option(row.names, pending.head_counts, row.help)->type_name("K")->allow_extra_args(false);
         },
     .land = [](const Options& o, JobOptions& job) { job.output.head_count = o.head_count; },
     .keyword = Keyword::kValue},
    // Lands with shuf's habits (make_job's set_shuf_habits), which check it against the files.
    {.names = "-r,--repeat",
     .help = "output records drawn with replacement: K with -n K, an endless stream without (as shuf -r)",
     .flag = &Options::repeat,
     .keyword = Keyword::kFlag,
     .distributed = false},
    {.names = "--random-source",
     .help = "take the seed from FILE: its first 8 bytes, little-endian (the same FILE, the same output)",
     .type_name = "FILE",
     .text = &Options::random_source,
     .keyword = Keyword::kValue},
    {.names = "--verify",
     .help = "check that the output holds exactly the input's records (a digest of each side) before "
             "committing it",
     .flag = &Options::verify,
     .land = [](const Options& o, JobOptions& job) { job.input.verify = o.verify; },
     .keyword = Keyword::kFlag},
};

// Datasets: shards, splits, a manifest (make_job checks them against each other); record indexes.
constexpr OptionRow kDataset[] = {
    {.names = "--shards",
     .help = "write K files, consecutive pieces of the permutation of near-equal record counts (per split), "
             "named by -o's {shard} and {shards}",
     .type_name = "K",
     .text = &Options::shards,
     .land =
         [](const Options& o, JobOptions& job) {
           if (!o.shards.empty()) job.output.shard_count = shard_count(o.shards);
         },
     .keyword = Keyword::kValue},
    {.names = "--shard-size",
     .help = "write shards of at most SIZE bytes of records each (before compression; sort's size syntax: "
             "b, K (default), M, G, T), cut between records",
     .type_name = "SIZE",
     .text = &Options::shard_size,
     .land =
         [](const Options& o, JobOptions& job) {
           if (!o.shard_size.empty()) job.output.shard_bytes = parse_size(o.shard_size, "--shard-size");
         },
     .keyword = Keyword::kSize},
    {.names = "--split",
     .help = "NAME=SIZE,... : cut the permutation into consecutive splits (SIZE a fraction such as 0.98 or a "
             "record count, or rest: what the others leave; split k ends at floor(N x the fractions up to k) + "
             "the counts up to k), named by -o's {split}",
     .type_name = "NAME=SIZE,...",
     .text = &Options::split,
     .land =
         [](const Options& o, JobOptions& job) {
           if (!o.split.empty()) job.output.splits = dataset::parse_split_spec(o.split);
         },
     .keyword = Keyword::kValue},
    {.names = "--clean",
     .help = "remove files that match -o's pattern but that this run does not write (pieces of an older run), "
             "once the new ones are in place; without it they are named in a warning",
     .flag = &Options::clean,
     .land = [](const Options& o, JobOptions& job) { job.output.clean = o.clean; },
     .keyword = Keyword::kFlag},
    {.names = "--manifest",
     .help = "write FILE (JSON) once the outputs are in place: inputs, seed, permutation version, options and "
             "each output file's records, bytes and xxh64",
     .type_name = "FILE",
     .text = &Options::manifest,
     .land =
         [](const Options& o, JobOptions& job) {
           if (o.manifest == "-") throw UsageError("--manifest needs a file name, not standard output");
           job.run.manifest_path = o.manifest;
         },
     .keyword = Keyword::kValue},
    {.names = "--index",
     .help = "also write each output file's record index beside it (.NAME.extshuffle-index), committed with it",
     .flag = &Options::index,
     .land = [](const Options& o, JobOptions& job) { job.index = o.index; },
     .keyword = Keyword::kFlag,
     .distributed = false},
    {.names = "--index-only",
     .help = "write each INPUT's record index (beside it, or at -o for one file) and nothing else: no shuffle",
     .flag = &Options::index_only,
     .land = [](const Options& o, JobOptions& job) { job.index_only = o.index_only; },
     .keyword = Keyword::kFlag,
     .distributed = false},
};

// What the run reports, and how much it says (the front ends' own: they land in no Job).
constexpr OptionRow kReport[] = {
    {.names = "--dry-run",
     .help = "print the plan and the schedule, do nothing",
     .flag = &Options::dry_run,
     .land = [](const Options& o, JobOptions& job) { job.run.dry_run = o.dry_run; },
     .keyword = Keyword::kFlag},
    {.names = "--stats", .help = "print one machine-readable RESULT line on stderr", .flag = &Options::stats},
    {.names = "--progress",
     .help = "show progress on stderr even when it is not a terminal",
     .flag = &Options::progress},
    {.names = "-v,--verbose", .help = "log what happens on stderr", .flag = &Options::verbose},
    {.names = "-q,--quiet", .help = "log errors only", .flag = &Options::quiet},
};

template <std::size_t... N>
auto joined(const OptionRow (&... parts)[N]) {
  std::array<OptionRow, (N + ...)> rows{};
  std::size_t at = 0;
  ((std::copy(std::begin(parts), std::end(parts), rows.begin() + static_cast<std::ptrdiff_t>(at)), at += N), ...);
  return rows;
}

}  // namespace

std::span<const OptionRow> option_table() {
  static const auto kRows = joined(kRun, kFormat, kShuf, kDataset, kReport);
  return kRows;
}

std::string long_name(const OptionRow& row) {
  const std::string names = row.names;
  const auto dashes = names.find("--");
  return dashes == std::string::npos ? std::string() : names.substr(dashes + 2);
}

}  // namespace extshuffle::cli

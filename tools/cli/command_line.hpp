// The command line as typed, filled by CLI11: strings where make_job()
// parses the syntax itself (sizes, seeds, ranges), so that every bad value
// gets one message of ours.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace extshuffle::cli {

struct Options {
  std::vector<std::string> operands;  // [INPUT [OUTPUT]], the inputs with -o, or -e's items
  std::vector<std::string> outputs;   // one per -o
  std::string seed, record_size, memory, tmpdir, input_range;
  std::string checkpoint;  // --checkpoint DIR
  std::string device = "cpu", format = "auto";
  std::optional<std::string> header;           // --header: its N as typed ("1" when bare); absent: the format's default
  int threads = 0;                             // 0: all cores
  std::uint64_t leaf_records = 0, fanout = 0;  // 0: the shipped constants
  std::uint64_t head_count = UINT64_MAX;
  bool ignore_zeros = false;
  bool zero_terminated = false, skip_empty = false, echo = false, verify = false, dry_run = false;
  bool stats = false, progress = false, verbose = false, quiet = false;
  // --- datasets: shards, splits, a manifest (as typed; make_job checks them) ---
  std::string shards, shard_size, split, manifest;
  bool clean = false;  // --clean: remove the pattern's pieces this run does not write
  // --- end of datasets ---
  bool index = false, index_only = false;  // record indexes: --index, --index-only (docs/cli.md "Record indexes")
  // shuf's habits: -r/--repeat, --random-source=FILE (the seed from a file).
  bool repeat = false;
  std::string random_source;
};

}  // namespace extshuffle::cli

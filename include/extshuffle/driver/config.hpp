// What one extshuffle run does, validated by the CLI before run() sees it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::driver {

// How the input is cut into records. kAuto: a .npy array by its magic,
// --record-size for fixed-size records, else text by the file's extension
// (.csv, .tsv, .jsonl, .ndjson, also under .gz/.zst), else lines.
enum class Format { kAuto, kBinary, kLines, kCsv, kTsv, kJsonl };

struct Config {
  std::string input_path = "-";   // "-" = standard input
  std::string output_path = "-";  // "-" = standard output
  std::uint64_t seed = 0;
  std::size_t record_size = 0;     // bytes per fixed-size record
  std::uint64_t memory_bytes = 0;  // hard cap on peak RSS, less a small fixed allowance
  std::string tmpdir;              // scratch directory
  int threads = 0;                 // 0 = all cores
  Format format = Format::kAuto;
  bool zero_terminated = false;  // -z: lines end with NUL
  std::int64_t header_lines = -1;  // --header[=N] kept on top; -1: 1 for CSV/TSV, else 0
  bool skip_empty = false;         // --skip-empty: blank lines are not records
  core::PlanConstants constants = core::kPlanV1;
  device::Device device = device::Device::kCpu;
  std::uint64_t head_count = UINT64_MAX;  // -n: output only the first K records of the permutation
  // shuf's generated inputs, printed one per line instead of reading a file:
  // -e: the arguments themselves; -i LO-HI: the integers LO..HI.
  bool echo = false;
  std::vector<std::string> echo_items;
  bool integer_range = false;
  std::uint64_t range_low = 0, range_high = 0;
  bool verify = false;  // --verify: fail unless the output is a permutation of the input
  bool dry_run = false;
  bool stats = false;
  bool progress = false;
};

}  // namespace extshuffle::driver

// How a run's output is cut into files (docs/cli.md "Datasets"): splits
// (--split train=0.98,val=0.01,test=0.01), each a prefix-consecutive range
// of the one permutation, and shards (--shards K, --shard-size SIZE), each a
// consecutive piece of its split, named by a pattern holding {split},
// {shard} and {shards}. Pure arithmetic, no IO.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extshuffle/dataset/split_part.hpp"

namespace extshuffle::dataset {

// One part of --split (split_part.hpp, an option of the Job).
using extshuffle::SplitPart;

// Parses --split's argument: NAME=SIZE pairs separated by commas, in order.
// SIZE is a whole number of records (digits only) or a decimal fraction
// between 0 and 1 with a point ("0.98", ".5", "1.0"; at most 18 decimals).
// Names are letters, digits, '_', '-' and '.', distinct. The fractions
// together may not exceed 1. SIZE "rest", at most once, sizes a split with
// the records the others leave. Throws UsageError naming what is wrong.
std::vector<SplitPart> parse_split_spec(const std::string& text);

// Where each split ends in a permutation of `records` records: split k ends
// at floor(records x (f_1 + ... + f_k)) + (c_1 + ... + c_k), the f the
// fractions and the c the counts among the first k splits, computed
// exactly; split k starts where split k - 1 ends (the first at 0). So a
// split's range depends only on the splits before it and itself. Records
// past the last end are not output. A "rest" split counts as zero in that
// rule, then takes what is left: the splits after it keep their sizes and
// move by as many records. Throws UsageError when the counts ask for more
// records than there are.
std::vector<std::uint64_t> split_ends(const std::vector<SplitPart>& splits, std::uint64_t records);

// Records of shard `shard` of `shards` near-equal shards of `records`
// records: the first records mod shards shards get one more.
std::uint64_t shard_records(std::uint64_t records, std::uint64_t shards, std::uint64_t shard);

// Checks an output pattern for `shard_count` shards (--shards; 0: not
// given), shards of `shard_bytes` (--shard-size; 0: not given) and `splits`
// splits: a file name, not standard output; {shard} where there may be
// several shards, {split} where several splits; neither {shard} nor
// {shards} in a directory with --shard-size; no placeholder but {split}, {shard} and {shards}
// ({num_shards} would stay in the file names). Throws UsageError.
void check_output_pattern(const std::string& pattern, std::uint64_t shard_count, std::uint64_t shard_bytes,
                          std::size_t splits);

// The name of one output file: `pattern` with every {split} replaced by
// `split`, {shard} by `shard` and {shards} by `shards`, both zero-padded to
// max(5, digits of `shards`) digits (train-00003-of-00064.jsonl).
std::string output_file_name(const std::string& pattern, const std::string& split, std::uint64_t shard,
                             std::uint64_t shards);

// Whether a run writes several files through a pattern rather than one
// file: --shards K (`shard_count` > 0), --shard-size (`shard_bytes` > 0) or
// --split (`splits` > 0). Both tools, every mode.
inline bool writes_several_files(std::uint64_t shard_count, std::uint64_t shard_bytes, std::size_t splits) {
  return shard_count > 0 || shard_bytes > 0 || splits > 0;
}

// Rules of a Job both tools apply alike, in the same words:
// --verify checks whole permutations: UsageError when the files take fewer
// than the input's `records` (-n, or a --split that leaves records out).
void check_verify_takes_all(bool verify, std::uint64_t head_count, std::uint64_t records, std::uint64_t taken);
// Aligned datasets hold as many records each: InputError naming both
// inputs and their counts.
void check_aligned_count(const std::string& first, std::uint64_t first_records, const std::string& other,
                         std::uint64_t other_records);

// The warning for the records that splits adding up to less than the
// whole leave out.
std::string left_out_warning(std::uint64_t left_out, std::uint64_t written);

}  // namespace extshuffle::dataset

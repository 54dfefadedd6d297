// Several inputs as one dataset (docs/conventions.md, Record formats): the records of every
// input, in the order given, shuffled as one permutation of their total N,
// exactly as if the inputs had been concatenated (a last record without its
// terminator gets one, so it never runs into the next file's first). The
// inputs must agree on their format: the same text format and identical
// header lines (kept once), or .npy arrays of one dtype and trailing shape
// (the output's shape sums their rows), or fixed-size records.
#pragma once

#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "extshuffle/dataset/file_infos.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/dataset/dataset_options.hpp"
#include "extshuffle/dataset/input_layout.hpp"

namespace extshuffle::io {
class InputSet;
}

namespace extshuffle::dataset {

struct DatasetInput {
  // The dataset's layout: the first input's, with `records` the total, the
  // header the one every input shares (a .npy header saying the total rows)
  // and, with --verify, the digest of every record read.
  InputLayout layout;
  io::ByteExtents data;  // every input's records, one after the other
  io::ByteExtents mapped;   // the same records in memory, when the one input was mapped (text: while counted)
  std::uint64_t bytes = 0;  // of every input, headers included (decompressed)
  std::uint64_t counted_bytes = 0;  // of the text inputs read to count their records (counts not known)
  std::vector<InputFileInfo> files;
  // Tar archives: each input's sample index, which `data`'s frame prefixes point into.
  std::vector<std::shared_ptr<const formats::TarIndex>> tar_indexes;
  // Tar archives: what they hold that is not read (tar_dataset_checks.hpp).
  std::vector<std::string> tar_warnings;
};

// The counting pass's result for each input of a dataset (read_input_layout):
// `known`, the counts of the first inputs (all of them, some or none), is
// taken rather than counting text again (--checkpoint's resume: the caller
// vouches for it); `found` gets each input's count as the run took it
// (known or counted; fixed-size records and tar archives: an empty one);
// `on_found`, when set, is called with `found` after each input but the
// last that was read to count it (--checkpoint journals them, so that a run killed while counting a
// dataset of many files counts again only from the file it was in).
// `partial`, when set, is how far an earlier pass got through the input
// after the known ones, where the count goes on from; `on_progress`, when
// set, is told how far the count of input `k` has got (TextCountResume),
// so that a run killed inside one large file counts again only from there.
struct TextCounts {
  std::vector<TextCount> known;
  std::vector<TextCount> found;
  std::function<void(const std::vector<TextCount>&)> on_found;
  std::optional<TextCountProgress> partial;
  std::function<void(std::size_t k, const TextCountProgress&)> on_progress;
  bool counted_on = false;  // `partial` was taken
};

// Lays out every input of `inputs` (read_input_layout) and puts them
// together. Throws InputError naming both files when two inputs differ in
// format, header, dtype or trailing shape; and what read_input_layout throws
// (and, with --verify, tar_dataset_warnings).
// With `mapping`, one input that may fit in RAM is mapped there (text:
// counted where it lies; read_input_layout), its records then also at
// `mapped` (in memory; text: the terminator its last record lacked added).
// With `counts`, text counts are taken from and given to it (TextCounts).
DatasetInput read_dataset(const DatasetOptions& options, io::InputSet& inputs, InputMapping* mapping = nullptr,
                          TextCounts* counts = nullptr);

}  // namespace extshuffle::dataset

// The record index of one input file (dataset/record_index.hpp), written by
// the counting pass itself: read_input_layout() with the index writer as
// its record sink, so that the index holds exactly the records the CLI
// counts (the same framing, header, --skip-empty, tar samples), found in the
// one sequential pass at the counting pass's speed (docs/benchmarks.md,
// "Record indexes").
#pragma once

#include <atomic>
#include <cstdint>

#include "extshuffle/dataset/dataset_options.hpp"
#include "extshuffle/dataset/record_index.hpp"
#include "extshuffle/dataset/record_index_writer.hpp"

namespace extshuffle::io {
class InputSource;
}

namespace extshuffle::dataset {

// Writes the index of `source` (a file read in place: check_indexable())
// read with `options` to `out`; `facts`: the file's, taken before the pass
// (indexed_file_facts()). With `progress_bytes`, the bytes of the input
// passed are added to it as the pass goes (a few MiB at a time). Returns the
// header written. Throws what read_input_layout throws. Memory: the
// writer's (record_index_writer.hpp) and the counting pass's pieces.
IndexHeader write_input_index(const DatasetOptions& options, io::InputSource& source, const IndexedFile& facts,
                              const IndexBytes& out, std::atomic<std::uint64_t>* progress_bytes = nullptr);

}  // namespace extshuffle::dataset

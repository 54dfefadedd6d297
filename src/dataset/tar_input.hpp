// WebDataset tar archives in the text layout (formats/tar.hpp): the
// counting pass indexes an archive's samples, and the dataset's bytes are
// the samples' frames, each an 8-byte length held in memory in front of the
// sample's bytes where they lie in the input (no copy). The archive's
// trailer is no record; only zeros may follow it (formats/tar.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "extshuffle/dataset/dataset_options.hpp"
#include "extshuffle/formats/tar.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/dataset/input_layout.hpp"
#include "extshuffle/dataset/tar_frames.hpp"

namespace extshuffle::io {
class InputSource;
}

namespace extshuffle::dataset {

// Indexes the archive `source` and lays out its samples (records: the
// samples; longest record: the longest frame): from its headers alone,
// mapped, where it can be; with options.verify (which digests every
// sample's frame and refuses a key that repeats non-consecutively), or
// where it cannot be mapped, by one sequential read of all of it. Throws UsageError for --header or --skip-empty,
// InputError for what formats::TarScanner refuses, IoError. With `sink`,
// each sample's regular members are handed to it (RecordSink::member).
InputLayout tar_layout(const DatasetOptions& options, io::InputSource& source, const std::string& name,
                       RecordSink* sink = nullptr);

}  // namespace extshuffle::dataset

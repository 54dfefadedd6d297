// The files of a dataset's run as the manifest records them (dataset/manifest.hpp)
// and a run's result gives them back (run_result.hpp): each input read, each
// output file written. Filled in by the dataset room.
#pragma once

#include <cstdint>
#include <string>

namespace extshuffle {

// One input file of a dataset, as the manifest records it.
struct InputFileInfo {
  std::string path;
  std::uint64_t bytes = 0;    // as stored (compressed for a compressed file; read, for a stream)
  std::uint64_t records = 0;  // its records (header lines not counted)
};

// One output file, as the manifest records it.
struct OutputFileInfo {
  std::string path;   // its final name
  std::string split;  // its split's name; empty without --split
  std::uint64_t shard = 0, shards = 1;
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;  // as stored (compressed for a compressed file)
  std::string xxh64;        // of the bytes as stored, seed 0, 16 hex digits
};

}  // namespace extshuffle

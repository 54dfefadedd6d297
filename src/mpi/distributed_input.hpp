// The input of a distributed run as every rank holds it (the library's side
// of mpi::DistributedInput): the file, where its records lie, and which
// top-level chunks, at which bytes, each rank scatters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "extshuffle/ioperm/node_facts.hpp"
#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/io/input_source.hpp"
#include "extshuffle/mpi/distributed_run.hpp"

namespace extshuffle::mpi {

struct DistributedInput::State {
  std::unique_ptr<io::InputSource> source;
  bool text = false;
  std::size_t record_size = 0;     // fixed-size records (and .npy rows)
  std::uint64_t data_offset = 0;   // where the records start: after a .npy header or the header lines
  std::uint64_t records = 0;       // N
  std::string header;              // written on top of the output (by rank 0)
  std::string format_name;         // as the manifest says it (dataset::format_name)
  formats::RecordSyntax syntax;    // text
  bool add_terminator = false;     // text: the last record gets the terminator it lacks
  std::uint64_t longest_record_bytes = 0;  // text: the longest record, with its terminator (the same on every rank)
  // Ranks + 1 entries: rank r scatters chunks [chunk_begin[r], chunk_begin[r + 1]),
  // text records from byte data_begin[r] (fixed-size ones by arithmetic).
  std::vector<std::uint64_t> chunk_begin;
  std::vector<std::uint64_t> data_begin;
  double seconds_counting = 0;

  // The records' bytes (the terminator a text input lacks included).
  std::uint64_t data_bytes() const;
  io::ByteExtents all_data() const;
  // The bytes of rank `rank`'s chunks, from its first chunk's first record.
  io::ByteExtents chunk_data(int rank, const core::PlanConstants& constants) const;
  // What the driver knows of the root (ioperm/node_facts.hpp): the same on every rank.
  ioperm::NodeFacts root_facts() const {
    return ioperm::NodeFacts{records, data_bytes(), false, text ? longest_record_bytes : record_size, 0};
  }
};

}  // namespace extshuffle::mpi

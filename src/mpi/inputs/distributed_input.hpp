// The input of a distributed run as every rank holds it (the library's side
// of mpi::DistributedInput): one plain file, which every rank reads in place
// and whose text records the ranks count together (text_split.hpp), or a
// dataset of files laid out by their holders (dataset_files.hpp), each rank's
// share of its records gathered where it can read them (staged_input.hpp);
// and which top-level chunks, at which bytes, each rank scatters.
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
#include "extshuffle/ioperm/text_shuffle.hpp"
#include "extshuffle/mpi/distributed_run.hpp"
#include "dataset_files.hpp"
#include "input_reads.hpp"
#include "staged_input.hpp"

namespace extshuffle::mpi {

struct DistributedInput::State {
  int rank = 0;   // this rank
  int ranks = 1;  // of the job
  std::unique_ptr<io::InputSource> source;  // one plain file; null for a dataset of files
  std::unique_ptr<DatasetFiles> files;       // a dataset of files; null for one plain file
  std::unique_ptr<StagedInput> held;         // a dataset: the records this rank holds
  // One text file's root of many chunks on several ranks: this rank's
  // chunks' bytes, those outside its reads from their readers (chunk_readers.hpp).
  std::unique_ptr<StagedInput> read_chunks;
  std::uint64_t input_bytes = 0;             // every input's bytes (decompressed), headers included
  bool framed = false;                       // records found by syntax.framing, not of record_size
  std::size_t record_size = 0;     // fixed-size records (and .npy rows)
  std::uint64_t data_offset = 0;   // where the records start: after a .npy header or the header lines
  std::uint64_t records = 0;       // N
  std::string header;              // written on top of the output (by rank 0)
  std::string format_name;         // as the manifest says it (dataset::format_name)
  formats::RecordSyntax syntax;    // framed records: how they are delimited
  bool add_terminator = false;     // text: the last record gets the terminator it lacks
  std::uint64_t longest_record_bytes = 0;  // text: the longest record, with its terminator (the same on every rank)
  // Ranks + 1 entries: rank r scatters chunks [chunk_begin[r], chunk_begin[r + 1]),
  // text records from byte data_begin[r] (fixed-size ones by arithmetic).
  std::vector<std::uint64_t> chunk_begin;
  std::vector<std::uint64_t> data_begin;
  // Ranks + 1 entries: rank r holds the data records [held_begin[r],
  // held_begin[r + 1]) where it can read them (distribution.hpp,
  // held_record_split).
  std::vector<std::uint64_t> held_begin;
  // Text: the byte where each rank's held records start (ranks + 1
  // entries): in the one plain file (text_split.hpp), or in a dataset's
  // data (record_byte_offsets).
  std::vector<std::uint64_t> held_byte_begin;
  // This rank's counting pass: its range of the one plain text file, or
  // its held files read whole (DatasetFiles::layout_bytes_read).
  std::uint64_t layout_bytes_read = 0;
  double seconds_counting = 0;
  // The bytes of input files this rank read in place that another rank
  // holds (one plain file: rank 0), for --verify (input_reads.hpp).
  InputReads reads;

  // The records' bytes (the terminator a text input lacks included).
  std::uint64_t data_bytes() const;
  // The bytes of rank `rank`'s chunks, from its first chunk's first record
  // (a dataset: this rank's alone).
  io::ByteExtents chunk_data(int rank, const core::PlanConstants& constants) const;
  // The bytes of the input this rank reads for the scatter (its chunks'
  // bytes less those from other readers, plus those it reads for others).
  std::uint64_t chunk_bytes_read(const io::ByteExtents& chunks) const;
  // The bytes of chunks this rank read for other ranks and sent them, and
  // those of its own chunks it received from their readers.
  std::uint64_t chunk_bytes_sent() const;
  std::uint64_t chunk_bytes_received() const;
  // This rank's held records' bytes, in order, the missing final text
  // terminator added when it holds the last record.
  io::ByteExtents held_data() const;
  // A root that is one leaf on one rank, run as extshuffle runs it: all the
  // records in one range of one file (text: the terminator it lacks, if
  // whole_text says so).
  io::BlockFile& whole_file() const;
  std::uint64_t whole_offset() const;
  ioperm::TextInput whole_text() const;
  // The run's scratch file on this rank, free from scratch_offset() on.
  io::BlockFile& scratch() const;
  std::uint64_t scratch_offset() const;
  // The scratch bytes this rank wrote before the run: the compressed files
  // it holds, decompressed, and what its staging wrote to its scratch file
  // (bytes received from other ranks' reads, copies of an archive's frames
  // or of a root run alone).
  std::uint64_t staged_scratch_bytes() const;
  // Every input file as the manifest lists it (path, bytes stored, records).
  std::vector<InputFileInfo> file_infos() const;
  // InputSource::check_unchanged for the inputs this rank reads in place.
  void check_unchanged() const;
  // What the walk knows of the root (ioperm/node_facts.hpp): the same on every rank.
  ioperm::NodeFacts root_facts() const {
    return ioperm::NodeFacts{records, data_bytes(), false, framed ? longest_record_bytes : record_size, 0};
  }
};

}  // namespace extshuffle::mpi

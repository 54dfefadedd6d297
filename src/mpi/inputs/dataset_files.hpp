// The files of one dataset across the ranks (docs/mpi.md, "Datasets"): each
// file is laid out (opened, its format detected, its records counted) by the
// one rank that holds it, the files shared among the ranks by size, so that
// the counting passes run in parallel across files. A compressed file is
// decompressed whole by its holder into that rank's own scratch space (-T):
// a .gz or .zst stream cannot be entered in the middle, and no rank can read
// another's scratch. A plain file stays where it is, on the file system
// every rank sees. Every rank then learns every file's layout, and the
// files are checked to agree as extshuffle checks them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/dataset/input_layout.hpp"
#include "extshuffle/io/input_source.hpp"
#include "extshuffle/job.hpp"
#include "extshuffle/mpi/communicator.hpp"

namespace extshuffle::mpi {

struct DatasetFile {
  std::string path;
  bool compressed = false;         // decompressed by its holder into the holder's scratch
  std::uint64_t stored_bytes = 0;  // its size on disk, which the assignment balances
  int holder = 0;                  // the rank that lays it out (and, compressed, alone can read it)
  dataset::InputLayout layout;     // format, data offset, record size, records, header, syntax, text count
  std::uint64_t bytes = 0;         // decompressed
  std::uint64_t first_record = 0;  // the global index of its first data record
  std::uint64_t data_begin = 0;    // where its records' bytes start in the dataset's data
  // A tar archive: its records are its samples' frames (dataset/tar_frames.hpp),
  // laid out by its holder alone, which sends them to the ranks that hold them.
  std::uint64_t tar_frame_bytes = 0;               // every frame's bytes
  std::vector<std::uint64_t> tar_frame_begin;      // the holder's: where each frame starts
  std::uint64_t tar_hard_links = 0;                // skipped (another rank's file: as its holder said)
  std::string tar_first_key, tar_last_key;

  bool tar() const { return layout.syntax.framing == formats::Framing::kTarSample; }

  // Its records' bytes as the file holds them, and with the terminator its
  // last record lacks (text) added: what it gives the dataset's data.
  std::uint64_t file_data_bytes() const;
  std::uint64_t data_bytes() const { return file_data_bytes() + (adds_terminator() ? 1 : 0); }
  bool adds_terminator() const;
};

struct DatasetFiles {
  std::vector<DatasetFile> files;
  // This rank's held files, opened (compressed ones decompressed); null for
  // the files other ranks hold. Index by file.
  std::vector<std::unique_ptr<io::InputSource>> held;
  std::uint64_t records = 0;      // every file's data records
  std::uint64_t data_bytes = 0;   // and their bytes, terminators added
  std::uint64_t input_bytes = 0;  // every file's (decompressed) bytes, headers included
  std::uint64_t longest_record_bytes = 0;  // framed: over every file
  std::string header;             // the dataset's: the first file's (.npy: with every file's rows)
  std::vector<std::string> warnings;  // tar archives: members skipped, samples cut (the same on every rank)
  // This rank's: the bytes it read to lay out its held files (each read
  // whole: counted, indexed; a compressed one's stored bytes besides).
  std::uint64_t layout_bytes_read = 0;
};

// Which rank holds each file of `stored_bytes`: largest first, each to the
// least loaded rank so far (the lowest on a tie), so that every rank gets
// the same answer and the bytes each rank reads stay within one file of an
// even share.
std::vector<int> assign_files_by_size(const std::vector<std::uint64_t>& stored_bytes, int ranks);

// Lays out the dataset of `paths` (already expanded, at least one) across
// the ranks: each rank its held files (read_input_layout), then every file's
// layout on every rank, checked to agree (dataset/format_agreement.hpp).
// Scratch in `scratch_directory`, this rank's own. Throws RankFailure on
// every rank. Collective.
DatasetFiles lay_out_dataset(const JobOptions& options, const std::vector<std::string>& paths,
                             const std::string& scratch_directory, Communicator& comm);

}  // namespace extshuffle::mpi

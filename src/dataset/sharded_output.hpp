// The output of a run as files (docs/conventions.md, Record formats, docs/cli.md "Datasets"): one
// file, or splits and shards, each a consecutive piece of the one
// permutation and each a complete file of its format on its own (a CSV
// header in each, each .npy with the shape of its rows, each compressed file
// a whole stream). The walk's output (bytes of whole records, in output
// order) is cut at record boundaries as it arrives, while the last level
// runs: no second pass. Every file is written under a temporary name and
// fsynced; the Job's commit (output_commit.hpp, whose participant it is)
// renames them into place only once all are complete, so a failed run
// leaves none of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "extshuffle/dataset/dataset_options.hpp"
#include "extshuffle/dataset/output_commit.hpp"
#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/dataset/file_infos.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/file_digest.hpp"
#include "extshuffle/io/publication.hpp"
#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/formats/tar.hpp"
#include "extshuffle/dataset/record_cutter.hpp"
#include "extshuffle/dataset/record_index.hpp"
#include "piece_index.hpp"

namespace extshuffle::io {
class CompressingWriter;
class OutputFile;
}  // namespace extshuffle::io

namespace extshuffle::dataset {

// What the command line asks of the output files.
struct OutputSpec {
  std::string pattern = "-";  // the output, or its name pattern with {split}, {shard}, {shards}
  OutputOptions options;      // how it is cut into files: --split, --shards, --shard-size
  int threads = 1;            // compression workers
  bool read_back = false;     // --verify: each file's bytes are read back and digested before commit
  bool index = false;         // --index: each file's record index beside it, committed with it (piece_index.hpp)
  // --checkpoint: every file's temporary has a hidden name from the start,
  // so that a resumed run continues them (io::OutputFile's resumable form);
  // compressed files and files written in place are refused (UsageError).
  bool resumable = false;
};

// How the output's records look.
struct OutputRecordForm {
  std::size_t record_size = 0;  // fixed-size records (.npy rows included); 0: text records of `syntax`
  formats::RecordSyntax syntax;
  std::string header;  // on top of every file: text header lines, or the dataset's .npy header
  bool npy = false;    // `header` is a .npy header: each file's gets its own row count
  std::string trailer;  // at the end of every file: a tar archive's two zero blocks
  IndexReading index_reading;  // --index: how the files' indexes say their records are read
};

class ShardedOutput final : public CommitParticipant {
 public:
  // Checks the spec (UsageError: a pattern without {shard} or {split} where
  // several files need them, standard output for several files) and opens
  // the first file, so that a bad destination fails before any work.
  explicit ShardedOutput(OutputSpec spec);
  ~ShardedOutput() override;
  ShardedOutput(const ShardedOutput&) = delete;
  ShardedOutput& operator=(const ShardedOutput&) = delete;

  // Once the records are counted: `records` records (-n already applied)
  // of `form` will come. Returns how many the files take: all of them, or
  // the end of the last split (the walk need not produce the rest).
  // Throws UsageError when --split counts ask for more than there are.
  std::uint64_t start(const OutputRecordForm& form, std::uint64_t records);
  // Before start(): every regular file of the output is written unbuffered
  // where its file system allows (io::OutputFile::prefer_unbuffered()).
  void prefer_unbuffered();
  // The sink: bytes of whole records, in output order.
  void write(const std::byte* data, std::size_t bytes);
  // After the last record: finishes every file (those left empty too) and,
  // with read_back, checks their bytes. Throws Error when the files did not
  // get the records planned.
  void finish();
  // A stream of bytes instead of records cut into files (shuf's -r, -e,
  // -i, -n 0): one file, not sharded, no header; write_stream() the bytes
  // (compressed here as the name says), finish_stream() with the records
  // they hold. Then committed as any output.
  void start_stream();
  void write_stream(const void* data, std::size_t bytes);
  void finish_stream(std::uint64_t records);
  // --checkpoint (docs/cli.md "Resuming a run"), between two records, after
  // start(): the files so far, every write complete, as the bytes a
  // resumed run hands to resume(); and the descriptors to sync before those
  // bytes are journaled. Throws IoError.
  std::string checkpoint();
  std::vector<int> descriptors() const;
  // After start(), before any write: the files as checkpoint() left them,
  // continued. Throws Error when a temporary is not the file it names.
  void resume(std::string_view state);
  // The commit's steps (output_commit.hpp), after finish(): the pattern's
  // files this run does not write; the files for the manifest; every file
  // synced, given its mode and a hidden name (prepare(); every destination
  // untouched); the renames, each piece followed by its index (--index), so
  // that an index is never in place without its piece; published().
  const std::string& pattern() const override { return spec_.pattern; }
  std::vector<std::string> find_stale() const override;
  std::vector<OutputFileInfo> manifest_files() const override { return infos_; }
  void prepare() override;
  std::vector<io::PendingRename> pending_renames() const override;
  void published() override;
  const OutputSpec& spec() const { return spec_; }
  // Records past the last split's end, not written (after start()).
  std::uint64_t records_left_out() const { return records_left_out_; }
  // The files, in order, with their final names (after finish()).
  const std::vector<OutputFileInfo>& files() const { return infos_; }

 private:
  struct Split {
    std::string name;
    std::uint64_t records = 0;
    std::uint64_t shards = 0;  // 0: known at the end (text cut by --shard-size)
    std::uint64_t shard_records = 0;  // fixed-size records cut by --shard-size: per shard
  };
  bool several_files() const {
    return writes_several_files(spec_.options.shard_count, spec_.options.shard_bytes, spec_.options.splits.size());
  }
  std::string file_name(std::size_t split, std::uint64_t shard, std::uint64_t shards) const;
  std::uint64_t planned_records(std::size_t split, std::uint64_t shard) const;  // UINT64_MAX: cut by bytes
  void open_file(const std::string& name);
  void begin_part();
  void end_part();
  void open_part_writer();
  void check_read_back(const OutputFileInfo& info) const;

  OutputSpec spec_;
  OutputRecordForm form_;
  std::unique_ptr<RecordCutter> cutter_;
  std::vector<Split> splits_;
  std::uint64_t expected_records_ = 0, written_records_ = 0, records_left_out_ = 0;
  // The file being written: part (split_, shard_), and what it holds so far.
  std::size_t split_ = 0;
  std::uint64_t shard_ = 0;
  bool in_part_ = false;
  std::uint64_t part_planned_ = 0, part_records_ = 0, part_bytes_ = 0, split_written_ = 0;
  std::unique_ptr<io::OutputFile> file_;
  std::unique_ptr<io::CompressingWriter> writer_;
  formats::TarFrameStripper tar_frames_;  // tar samples: the frames' prefixes are not written
  std::unique_ptr<PieceIndex> piece_index_;  // --index: the file's index, written beside it
  io::AlignedBuffer index_buffers_;
  std::vector<std::unique_ptr<io::OutputFile>> finished_indexes_;  // --index: each finished file's
  void write_records(const std::byte* data, std::size_t bytes);
  io::StreamDigest digest_;  // the current file's xxh64, as its bytes go to it
  io::AlignedBuffer spare_buffers_;
  bool unbuffered_ = false;  // prefer_unbuffered()
  // Finished files, waiting for the commit.
  std::vector<std::unique_ptr<io::OutputFile>> finished_;
  std::vector<OutputFileInfo> infos_;
  std::vector<std::size_t> split_of_;  // each finished file's split
};

}  // namespace extshuffle::dataset

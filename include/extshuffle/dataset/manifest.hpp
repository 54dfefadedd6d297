// The manifest of a run (--manifest FILE.json, docs/cli.md "Datasets"): what
// was read (each input's name, size and records), how (the seed, the
// permutation version, the options that define the output) and what was
// written (each output file's name, split, shard, records, bytes and xxh64
// digest), so that a dataset can be checked and its shuffle repeated.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/dataset/dataset_options.hpp"
#include "extshuffle/dataset/file_infos.hpp"
#include "extshuffle/io/publication.hpp"
#include "extshuffle/ioperm/run_options.hpp"

namespace extshuffle::io {
class OutputFile;
}

namespace extshuffle::dataset {

// What the manifest is told of a Job's options: the slices that define the
// output, whole, recorded as given; it goes to run.manifest_path.
struct ManifestOptions {
  ioperm::RunOptions run;  // the seed and the plan's constants; the manifest's path
  DatasetOptions input;    // how the inputs were read
  OutputOptions output;    // -n, and how the output was cut into files
};

// What the manifest records of one dataset's run.
struct ManifestEntry {
  std::vector<InputFileInfo> inputs;      // in order
  std::string format;                     // as read (format_name())
  std::uint64_t records = 0;              // the dataset's records
  std::uint64_t records_written = 0;      // to the output files (-n, or where the last split ends)
  std::vector<OutputFileInfo> outputs;    // in order
  std::vector<std::string> stale_pieces;  // files of the output pattern this run did not write
};

class ManifestWriter {
 public:
  // Opens the manifest's temporary file beside options.path, so
  // that a bad path fails before any work. Throws IoError.
  explicit ManifestWriter(const ManifestOptions& options);
  ~ManifestWriter();
  ManifestWriter(const ManifestWriter&) = delete;
  ManifestWriter& operator=(const ManifestWriter&) = delete;

  // A dataset's run, in order (several for aligned inputs).
  void add(const ManifestEntry& run);
  // The manifest's text (JSON, UTF-8; a name that is not valid UTF-8 has
  // U+FFFD for its bad bytes).
  std::string text() const;
  // The manifest in the commit's steps (dataset/output_commit.hpp), so
  // that a run commits its outputs and manifest as one: prepare() writes
  // the text under a hidden name beside the manifest and syncs it (every
  // destination still untouched; --verify read every output back before,
  // io/file_digest.hpp); pending_rename() is the rename that publishes it,
  // last of the commit's, and published() follows it. Throws IoError.
  void prepare();
  std::optional<io::PendingRename> pending_rename() const;
  void published();

 private:
  ManifestOptions options_;
  std::vector<ManifestEntry> runs_;
  std::string text_;  // after prepare()
  std::unique_ptr<io::OutputFile> file_;
};

}  // namespace extshuffle::dataset

// Several inputs read as one dataset (docs/cli.md "Datasets"): the files a
// command line names, a directory standing for its files, each opened in
// place or spooled, all spools in one scratch file shared with the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/input_source.hpp"

namespace extshuffle::io {

// The files `operands` name, in order: a directory (or a symbolic link to
// one) stands for the regular files directly in it (symbolic links to
// regular files included), in byte-wise order of their names; its
// subdirectories, its other special files and its hidden files (names
// starting with '.') are left out. Anything else is kept as given (a
// missing file fails when opened). Throws IoError for a directory that
// cannot be listed and InputError for one that holds no such file.
// Cost: one readdir and one stat per entry.
std::vector<std::string> expand_input_paths(const std::vector<std::string>& operands);

// Raises this process's soft limit on open descriptors to its hard limit,
// so that a dataset of thousands of files (each input and each finished
// output shard holds a descriptor) does not fail with EMFILE. Best effort.
void raise_open_file_limit();

class InputSet {
 public:
  // Opens `paths` (already expanded; "-", standard input, at most once) in
  // order with one scratch file in `scratch_directory` (at least one path): each is read in
  // place or spooled (io/input_source.hpp), its spool after the previous
  // one; `memory_bytes`: the run's budget (InputSource). Throws like
  // InputSource, and UsageError for "-" named twice.
  InputSet(const std::vector<std::string>& paths, const std::string& scratch_directory, std::uint64_t memory_bytes = 0);
  // The same with the scratch file `scratch` (--checkpoint DIR's, kept
  // under a name: io/checkpoint_directory.hpp), which the set then owns.
  InputSet(const std::vector<std::string>& paths, std::unique_ptr<BlockFile> scratch, std::uint64_t memory_bytes = 0);

  std::size_t size() const { return sources_.size(); }
  InputSource& operator[](std::size_t k) { return *sources_[k]; }
  const InputSource& operator[](std::size_t k) const { return *sources_[k]; }
  // The scratch file; bytes below scratch_offset() hold the spools.
  BlockFile& scratch() { return *scratch_; }
  std::uint64_t scratch_offset() const { return scratch_offset_; }
  // Bytes of every spool: what the run wrote to scratch before shuffling.
  std::uint64_t spooled_bytes() const;
  // InputSource::check_unchanged for every input.
  void check_unchanged() const;

 private:
  BlockFile* scratch_ = nullptr;  // the first source's, or own_scratch_
  std::unique_ptr<BlockFile> own_scratch_;
  std::vector<std::unique_ptr<InputSource>> sources_;
  std::uint64_t scratch_offset_ = 0;
};

}  // namespace extshuffle::io

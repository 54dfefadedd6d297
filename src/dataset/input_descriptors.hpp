// The descriptors of a dataset's input files while records are read by
// number (dataset/indexed_records.hpp): each opened at its first read and
// checked against its index (the same size and modification time: a file
// replaced or rewritten since is refused, not read), at most kOpenFiles at
// once, the least recently used closed first, so that a dataset of many
// thousand shards stays within the descriptor limit. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "extshuffle/dataset/record_index.hpp"

namespace extshuffle::dataset {

// An open input file; closed when the last user lets go of it.
class InputDescriptor {
 public:
  explicit InputDescriptor(int fd) : fd_(fd) {}
  ~InputDescriptor();
  InputDescriptor(const InputDescriptor&) = delete;
  InputDescriptor& operator=(const InputDescriptor&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

class InputDescriptors {
 public:
  // Open at once at most: a few hundred, far below the usual limit of 1024.
  static constexpr std::size_t kOpenFiles = 256;

  // `paths[k]` and what its index recorded of it, `files[k]`.
  InputDescriptors(std::vector<std::string> paths, std::vector<IndexedFile> files);

  // Input k, opened and checked if it is not open. Throws IoError (cannot
  // be opened) and InputError (its size or modification time is not the
  // index's: it changed since the index was made).
  std::shared_ptr<InputDescriptor> get(std::uint32_t input);

 private:
  std::vector<std::string> paths_;
  std::vector<IndexedFile> files_;
  std::mutex mutex_;
  std::list<std::uint32_t> recent_;  // most recently used first
  std::unordered_map<std::uint32_t, std::pair<std::shared_ptr<InputDescriptor>, std::list<std::uint32_t>::iterator>>
      open_;
};

// The message for an input that is not what its index says.
std::string changed_since_index(const std::string& path, const std::string& why);

}  // namespace extshuffle::dataset

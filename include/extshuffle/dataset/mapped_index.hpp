// A record index file (dataset/record_index.hpp) mapped read-only and
// checked, for reading records by number (dataset/indexed_records.hpp).
// Mapped, never loaded: its pages come from the page cache as records are
// looked up, so memory does not grow with the records, and processes that
// map the same index (a data loader's workers) share its pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "extshuffle/dataset/record_index.hpp"

namespace extshuffle::dataset {

class MappedIndex {
 public:
  // Maps the index file `path` and checks everything that can be checked
  // without reading its arrays through: the preamble, the footer, the
  // header, and that the arrays its format needs are there, of their dtype
  // and shape, inside the file. Throws InputError ("index 'path': ...": not
  // an index, truncated, another version, arrays missing or out of place)
  // and IoError (cannot be opened). Cost: one open, one mmap, the header
  // parsed. A file truncated while mapped raises SIGBUS on access: indexes
  // are replaced by rename, never rewritten in place.
  explicit MappedIndex(const std::string& path);
  ~MappedIndex();
  MappedIndex(const MappedIndex&) = delete;
  MappedIndex& operator=(const MappedIndex&) = delete;

  const IndexHeader& header() const { return header_; }
  const std::string& path() const { return path_; }

  // The arrays (record_index.hpp), as the format gives them; empty when absent.
  std::span<const std::uint64_t> offsets() const { return offsets_; }
  std::span<const std::uint64_t> spans() const { return spans_; }    // 2 values a record
  std::span<const std::uint64_t> ranges() const { return ranges_; }  // 2 values a range
  std::span<const std::uint64_t> range_first() const { return range_first_; }
  std::span<const std::uint64_t> members() const { return members_; }  // 3 values a member
  std::span<const std::uint64_t> member_first() const { return member_first_; }
  std::string_view names() const { return names_; }

 private:
  std::span<const std::uint64_t> words(const std::string& name, std::uint64_t rows, std::uint64_t columns) const;
  void check_arrays();

  std::string path_;
  const std::byte* base_ = nullptr;
  std::uint64_t file_bytes_ = 0;
  std::uint64_t header_offset_ = 0;
  IndexHeader header_;
  std::span<const std::uint64_t> offsets_, spans_, ranges_, range_first_, members_, member_first_;
  std::string_view names_;
};

}  // namespace extshuffle::dataset

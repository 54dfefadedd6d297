// A file's bytes mapped into memory, read-only: how an input that fits in
// RAM is held (text, and fixed-size records in a file of their own). The run reads the page cache's own pages where they lie;
// loading the input into memory of its own instead costs a zeroed fresh page
// and a copy per byte, which on the development VM took 1.0-5.5 s for 2 GiB
// (median 2.8 s) against 0.76-1.42 s (median 0.81 s) to map and scan it from
// a cold cache (bench/map_vs_read.cpp; docs/benchmarks.md, "Two passes").
//
// Where read() returns short or fails, a mapped page raises SIGBUS: a file
// that shrinks under the run, or a page the disk cannot read. A handler
// installed with the first mapping ends the run as the run's own checks
// would: one line, "extshuffle: input 'X' changed size during the run (N
// bytes at the start, M now)" or "extshuffle: input 'X': a page of it could
// not be read", exit status 1, after removing the paths registered for
// cleanup (io/cleanup_registry.hpp). A SIGBUS outside every mapping keeps
// its default action.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace extshuffle::io {

class BlockFile;

class MappedBytes {
 public:
  // Maps the `bytes` bytes at `offset` of `file`, followed by one writable
  // byte that is this process's own (the terminator a last record may
  // lack). nullopt where the file cannot be mapped (a memory file; mmap
  // refused): the caller reads it instead. `display_name` names the input in
  // the SIGBUS message ("'path'", "standard input").
  static std::optional<MappedBytes> map(const BlockFile& file, std::uint64_t offset, std::uint64_t bytes,
                                        const std::string& display_name);

  MappedBytes(MappedBytes&& other) noexcept;
  MappedBytes& operator=(MappedBytes&& other) noexcept;
  MappedBytes(const MappedBytes&) = delete;
  MappedBytes& operator=(const MappedBytes&) = delete;
  ~MappedBytes();

  const std::byte* data() const { return base_ + in_page_; }
  std::uint64_t bytes() const { return bytes_; }
  // The byte after the mapped ones, writable, zero until written.
  std::byte& after() { return base_[in_page_ + bytes_]; }
  // Advice for the pages: read far ahead while they are scanned in order
  // (MADV_SEQUENTIAL: 0.85 s for 2 GiB from a cold cache, 1.5-2 s without),
  // then no advice for the run's random reads.
  void expect_sequential(bool sequential);
  // Unmaps from this process the pages wholly inside bytes [from, to) of
  // data() (MADV_DONTNEED: they stay in the page cache, a later access maps
  // them again), so that a scan of a large mapping keeps its resident set
  // (peak RSS) to what it has not passed yet.
  void drop_pages(std::uint64_t from, std::uint64_t to);

  // Maps the pages of a range of bytes inside a mapping now, before a run
  // shuffles a fixed-size input where it lies (layouts/fixed_records.cpp):
  // the kernel is asked to read the whole range at once (MADV_WILLNEED),
  // then its pages are mapped (MADV_POPULATE_READ), rather than faulted in
  // one by one in the shuffle's random order, each fault waiting for the
  // disk. A page that cannot be read raises SIGBUS as any access would.
  static void populate(const std::byte* at, std::uint64_t bytes);

 private:
  MappedBytes() = default;
  void release() noexcept;

  std::byte* base_ = nullptr;  // page-aligned
  std::size_t length_ = 0;     // of the whole mapping, the writable page included
  std::uint64_t in_page_ = 0;  // of the first byte, from base_
  std::uint64_t bytes_ = 0;
  int slot_ = -1;  // in the SIGBUS handler's table
};

}  // namespace extshuffle::io

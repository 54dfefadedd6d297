// Where a stream of bytes goes, appended in order: a bucket's region in
// scratch space (BucketWriter), or, under MPI, the send buffers towards the
// rank that owns the bucket. The walk's scatter writes every slice of a
// split through this interface, so it does not care which.
#pragma once

#include <cstddef>
#include <cstdint>

namespace extshuffle::io {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Appends `bytes` bytes; a sink is used by one thread at a time.
  virtual void append(const std::byte* data, std::uint64_t bytes) = 0;
};

}  // namespace extshuffle::io

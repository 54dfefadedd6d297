// Writes of a whole range at an offset of a file descriptor, the one loop
// that every positioned write of an output goes through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace extshuffle::io {

// Writes `bytes` at `offset` of `fd`, synchronously (EINTR retried, short
// writes continued). Throws IoError ("cannot write output", `destination`),
// EIO where the kernel writes nothing and reports no error.
void write_at(int fd, const std::byte* data, std::size_t bytes, std::uint64_t offset, const std::string& destination);

}  // namespace extshuffle::io

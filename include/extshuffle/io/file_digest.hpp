// The one digest of an output file (docs/cli.md "Datasets", the manifest's
// xxh64): xxh64 with seed 0, what `xxh64sum` and Python's xxhash print,
// taken either as the bytes stream to the file (StreamDigest) or read back
// through the descriptor of its hidden temporary (read_back_digest()),
// always before the commit renames anything: never by path, never after.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace extshuffle::io {

// xxh64 (seed 0) of bytes as they pass. A plain value: its state is bytes,
// so that a checkpoint keeps it (state()) and a resumed run goes on from
// it (restore()).
class StreamDigest {
 public:
  StreamDigest();
  void add(const void* data, std::size_t bytes);
  std::uint64_t value() const;
  std::string_view state() const { return {reinterpret_cast<const char*>(state_), sizeof state_}; }
  // Throws Error when `state` is not one state() gave (its size differs).
  void restore(std::string_view state);

 private:
  alignas(8) unsigned char state_[88];  // XXH64_state_t's bytes (checked where xxhash.h is included)
};

struct FileDigest {
  std::uint64_t bytes = 0;
  std::uint64_t xxh64 = 0;
};

// The size and xxh64 of the file open as `descriptor`, read from its first
// byte to its end with pread (the descriptor's offset is left alone), 1 MiB
// at a time. `destination` names the output in messages. Throws IoError.
FileDigest read_back_digest(int descriptor, const std::string& destination);

// An xxh64 as the manifest writes it: 16 lower-case hex digits.
std::string xxh64_hex(std::uint64_t xxh64);

}  // namespace extshuffle::io

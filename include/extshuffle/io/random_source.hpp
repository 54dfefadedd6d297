// shuf's --random-source=FILE: the randomness comes from a file, so that
// the same file gives the same output. extshuffle's randomness is all
// addressed by one 64-bit seed (core/stream.hpp), so the file gives the
// seed: its first 8 bytes, read as a little-endian number. A run with
// --random-source=FILE is the run with --seed that number (`od -An -tu8
// -N8 FILE` prints it); the rest of the file is never read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace extshuffle::io {

inline constexpr std::size_t kRandomSourceBytes = 8;

// The seed that `path` gives: its first 8 bytes, little-endian. Reads
// exactly those bytes (a FIFO, /dev/urandom or `<(cmd)` work; the writer
// of a pipe may see SIGPIPE afterwards). Throws IoError naming the file
// when it cannot be opened or read, and InputError when it ends before 8
// bytes ("random source 'f': holds 3 bytes, the seed needs 8").
std::uint64_t seed_from_random_source(const std::string& path);

}  // namespace extshuffle::io

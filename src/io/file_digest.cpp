// The one digest of an output file (io/file_digest.hpp).
#include "extshuffle/io/file_digest.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "extshuffle/errors.hpp"

// Inlined, as in record_digest.cpp: a call per buffer of bytes.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace extshuffle::io {
namespace {

static_assert(sizeof(XXH64_state_t) == 88 && alignof(XXH64_state_t) <= 8,
              "StreamDigest keeps XXH64_state_t's bytes: its size is part of a checkpoint's journal");

XXH64_state_t* as_state(unsigned char* bytes) { return reinterpret_cast<XXH64_state_t*>(bytes); }
const XXH64_state_t* as_state(const unsigned char* bytes) { return reinterpret_cast<const XXH64_state_t*>(bytes); }

}  // namespace

StreamDigest::StreamDigest() { XXH64_reset(as_state(state_), 0); }

void StreamDigest::add(const void* data, std::size_t bytes) { XXH64_update(as_state(state_), data, bytes); }

std::uint64_t StreamDigest::value() const { return XXH64_digest(as_state(state_)); }

void StreamDigest::restore(std::string_view state) {
  if (state.size() != sizeof state_)
    throw Error("checkpoint journal: the output's state is not this run's: not trusted");
  std::memcpy(state_, state.data(), sizeof state_);
}

FileDigest read_back_digest(int descriptor, const std::string& destination) {
  StreamDigest digest;
  std::vector<char> buffer(std::size_t{1} << 20);
  FileDigest file;
  for (;;) {
    const ssize_t got = ::pread(descriptor, buffer.data(), buffer.size(), static_cast<off_t>(file.bytes));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw IoError("cannot read back output", destination, errno);
    if (got == 0) break;
    digest.add(buffer.data(), static_cast<std::size_t>(got));
    file.bytes += static_cast<std::uint64_t>(got);
  }
  file.xxh64 = digest.value();
  return file;
}

std::string xxh64_hex(std::uint64_t xxh64) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(xxh64));
  return text;
}

}  // namespace extshuffle::io

#include "extshuffle/io/compression.hpp"

#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "codec_support.hpp"

namespace extshuffle::io {

using namespace codec_support;

Codec codec_for_path(std::string_view path) {
  if (ends_with_nocase(path, ".gz")) return Codec::kGzip;
  if (ends_with_nocase(path, ".zst") || ends_with_nocase(path, ".zstd")) return Codec::kZstd;
  return Codec::kNone;
}

std::string_view codec_name(Codec codec) {
  switch (codec) {
    case Codec::kGzip:
      return "gzip";
    case Codec::kZstd:
      return "zstd";
    case Codec::kNone:
      break;
  }
  return "none";
}

}  // namespace extshuffle::io

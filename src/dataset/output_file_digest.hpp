// The xxh64 (seed 0) of each output file's bytes as they pass to it, which
// the manifest records (sharded_output.hpp); a plain struct, so that a
// checkpoint keeps its state as bytes (sharded_output_checkpoint.cpp).
#pragma once

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace extshuffle::dataset {

struct FileDigest {
  XXH64_state_t state;
  FileDigest() { XXH64_reset(&state, 0); }
};

}  // namespace extshuffle::dataset

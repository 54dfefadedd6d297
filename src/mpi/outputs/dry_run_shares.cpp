#include "dry_run_shares.hpp"

#include <algorithm>

namespace extshuffle::mpi {

std::string describe_shares(const DistributedInput::State& in, int ranks) {
  std::string text;
  for (int q = 0; q < ranks; ++q) {
    // The records each rank holds: its chunks, or its 1/P of a spread
    // root's bytes (docs/mpi.md, "How the work is shared").
    const std::uint64_t records = in.held_begin[q + 1] - in.held_begin[q];
    const std::uint64_t bytes =
        in.framed ? in.held_byte_begin[q + 1] - in.held_byte_begin[q] : records * in.record_size;
    text += "rank " + std::to_string(q) + ": " + std::to_string(records) + " records, " + std::to_string(bytes) +
            " bytes\n";
  }
  return text;
}

}  // namespace extshuffle::mpi

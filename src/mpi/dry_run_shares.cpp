#include "dry_run_shares.hpp"

#include <algorithm>

namespace extshuffle::mpi {

std::string describe_shares(const JobOptions& config, const DistributedInput::State& in, int ranks) {
  std::string text;
  const bool leaf = core::is_leaf(in.records, config.constants);
  const auto record_at = [&](std::uint64_t chunk) {
    return std::min(in.records, core::chunk_first(chunk, config.constants));
  };
  for (int q = 0; q < ranks; ++q) {
    std::uint64_t records = 0, bytes = 0;
    if (leaf) {
      records = q == 0 ? in.records : 0;
      bytes = q == 0 ? in.data_bytes() : 0;
    } else {
      records = record_at(in.chunk_begin[q + 1]) - record_at(in.chunk_begin[q]);
      bytes = in.text ? in.chunk_data(q, config.constants).bytes : records * in.record_size;
    }
    text += "rank " + std::to_string(q) + ": " + std::to_string(records) + " records, " + std::to_string(bytes) +
            " bytes\n";
  }
  return text;
}

}  // namespace extshuffle::mpi

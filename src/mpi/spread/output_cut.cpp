#include "output_cut.hpp"

#include <algorithm>
#include <numeric>

#include "all_to_all.hpp"
#include "distribution.hpp"

namespace extshuffle::mpi {

OutputRange cut_output_by_bytes(OutputRange traced, std::uint64_t header_bytes, Communicator& comm) {
  const int ranks = comm.size();
  const std::uint64_t mine = std::accumulate(traced.lengths.begin(), traced.lengths.end(), std::uint64_t{0});
  const std::uint64_t total = header_bytes + comm.sum(mine);
  // Where each rank's range of the stream begins: T r / P (the header starts rank 0's).
  std::vector<std::uint64_t> cut(ranks);
  for (int r = 0; r < ranks; ++r) cut[r] = range_begin(total, r, ranks);
  // Each traced record to the rank in whose range it starts: the
  // destinations ascend with the records, so each rank's are one run.
  std::vector<int> send(ranks, 0);
  std::vector<std::uint64_t> pairs;
  pairs.reserve(2 * traced.inputs.size());
  std::uint64_t at = header_bytes + comm.exclusive_sum(mine);
  for (std::size_t k = 0; k < traced.inputs.size(); ++k) {
    const auto to = static_cast<std::size_t>(std::upper_bound(cut.begin(), cut.end(), at) - cut.begin()) - 1;
    send[to] += 2;
    pairs.push_back(traced.inputs[k]);
    pairs.push_back(traced.lengths[k]);
    at += traced.lengths[k];
  }
  traced = {};
  const std::vector<int> receive = all_to_all(send);
  // From the lower ranks first: their records come first in the output.
  std::vector<std::uint64_t> received = all_to_all(pairs, send, receive);
  pairs = {};
  OutputRange range;
  range.inputs.reserve(received.size() / 2);
  range.lengths.reserve(received.size() / 2);
  for (std::size_t k = 0; k < received.size(); k += 2) {
    range.inputs.push_back(received[k]);
    range.lengths.push_back(received[k + 1]);
  }
  return range;
}

}  // namespace extshuffle::mpi

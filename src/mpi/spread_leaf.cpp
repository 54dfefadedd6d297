#include "spread_leaf.hpp"

#include <algorithm>
#include <climits>
#include <optional>

#include "extshuffle/core/variable_philox.hpp"
#include "extshuffle/mpi/rank_failure.hpp"
#include "held_records.hpp"
#include "output_range.hpp"
#include "record_fetch.hpp"

namespace extshuffle::mpi {
namespace {

// A round's window: the bytes received, with up to P windows' bytes sent
// beside them (every rank's window may lie on this one), within the budget
// and within what one MPI call counts.
std::uint64_t window_bytes(std::uint64_t memory_bytes, int ranks) {
  const auto p = static_cast<std::uint64_t>(ranks);
  const std::uint64_t budget = memory_bytes / (2 * p);
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(budget, INT_MAX / (p + 1)));
}

}  // namespace

std::vector<std::uint64_t> leaf_range_inputs(std::uint64_t seed, std::uint64_t records, int rank, int ranks) {
  // The root's leaf shuffle, as the single-machine run draws it (the root is
  // node {0, 0}: modes/permutation_prefix.cpp).
  const core::VariablePhilox f =
      core::shuffle_bijection(seed, {core::NodeId{0, 0}, core::Purpose::kLeafShuffle, 0}, records);
  const std::uint64_t domain = f.domain_size();
  const auto share = [&](int r) {
    return static_cast<std::uint64_t>(static_cast<unsigned __int128>(domain) * static_cast<unsigned>(r) /
                                      static_cast<unsigned>(ranks));
  };
  std::vector<std::uint64_t> inputs;
  inputs.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(records, share(rank + 1) - share(rank))));
  for (std::uint64_t i = share(rank); i < share(rank + 1); ++i) {
    const std::uint64_t image = f(i);
    if (image < records) inputs.push_back(image);
  }
  return inputs;
}

void spread_leaf(const JobOptions& config, DistributedInput::State& in, const std::string& display_name,
                 SharedOutput& output, Communicator& comm, RankStats& stats) {
  const int me = comm.rank(), ranks = comm.size();
  std::vector<std::uint64_t> wanted = leaf_range_inputs(config.seed, in.records, me, ranks);
  const std::uint64_t first_record = comm.exclusive_sum(wanted.size());
  // -n: the output positions past the first K are cut.
  const std::uint64_t head = config.head_count;
  wanted.resize(head > first_record ? std::min<std::uint64_t>(wanted.size(), head - first_record) : 0);
  std::optional<HeldRecords> held;
  checkpoint(comm, [&] {
    held.emplace(in.held_data(), in.held_begin[me], in.held_begin[me + 1], in.text ? 0 : in.record_size, in.syntax,
                 display_name);
  });
  FetchStats fetched;
  RecordFetch fetch(std::move(wanted), in.held_begin, *held, comm, fetched);
  const std::uint64_t first_byte = in.header.size() + comm.exclusive_sum(fetch.wanted_bytes());
  std::optional<OutputRange> out;
  checkpoint(comm, [&] {
    out.emplace(output, first_record, me == 0 ? 0 : first_byte);
    if (me == 0) out->write(reinterpret_cast<const std::byte*>(in.header.data()), in.header.size());
  });
  std::exception_ptr failure = fetch.write_all(*out, window_bytes(config.memory_bytes, ranks));
  try {
    if (!failure) out->finish();
    in.check_unchanged();
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
  agree(comm, failure);
  stats.rounds = fetched.rounds;
  stats.bytes_sent = fetched.bytes_sent;
  stats.bytes_received = fetched.bytes_received;
  stats.count_bytes_sent = fetched.count_bytes_sent;
  stats.seconds_exchanging = fetched.seconds_exchanging;
  stats.input_bytes_read = held->input_bytes_read();
  stats.bytes_read += held->input_bytes_read();
  stats.output_bytes = out->bytes_written();
  stats.bytes_written += out->bytes_written();
}

}  // namespace extshuffle::mpi

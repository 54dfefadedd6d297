#include "spread_root.hpp"

#include <algorithm>
#include <climits>
#include <optional>

#include "extshuffle/ioperm/output_sources.hpp"
#include "extshuffle/mpi/rank_failure.hpp"
#include "inputs/held_records.hpp"
#include "output_cut.hpp"
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

// This rank's range of the output, cut by bytes (output_cut.hpp) from the
// records it traced: text records' lengths asked of their holders first
// (a RecordFetch's first exchange), fixed-size ones known.
OutputRange output_range(std::vector<std::uint64_t> traced, const DistributedInput::State& in, HeldRecords& held,
                         Communicator& comm, FetchStats& stats) {
  OutputRange range;
  if (in.framed) {
    RecordFetch lengths(std::move(traced), in.held_begin, held, comm, stats);
    range = OutputRange{lengths.take_wanted(), lengths.take_lengths()};
  } else {
    range.lengths.assign(traced.size(), in.record_size);
    range.inputs = std::move(traced);
  }
  return cut_output_by_bytes(std::move(range), in.header.size(), comm);
}

}  // namespace

std::vector<std::uint64_t> root_range_inputs(std::uint64_t seed, std::uint64_t records,
                                             const core::PlanConstants& constants, int rank, int ranks) {
  const ioperm::RootSources sources(seed, records, constants);
  return sources.domain_inputs(sources.domain_share(rank, ranks), sources.domain_share(rank + 1, ranks));
}

void shuffle_spread_root(const ioperm::RunOptions& run, std::uint64_t output_records, DistributedInput::State& in,
                         const std::string& display_name, const OpenRankSink& open_sink, Communicator& comm,
                         RankStats& stats, std::atomic<std::uint64_t>* progress) {
  const int me = comm.rank(), ranks = comm.size();
  // Met at a checkpoint: the trace allocates a word per record of the share.
  std::vector<std::uint64_t> wanted;
  checkpoint(comm, [&] { wanted = root_range_inputs(run.seed, in.records, run.constants, me, ranks); });
  const std::uint64_t first_traced = comm.exclusive_sum(wanted.size());
  // -n: the output positions past the first K are cut.
  const std::uint64_t head = output_records;
  wanted.resize(head > first_traced ? std::min<std::uint64_t>(wanted.size(), head - first_traced) : 0);
  std::optional<HeldRecords> held;
  checkpoint(comm, [&] {
    held.emplace(in.held_data(), in.held_begin[me], in.held_begin[me + 1], in.framed ? 0 : in.record_size, in.syntax,
                 display_name);
  });
  FetchStats fetched;
  OutputRange range = output_range(std::move(wanted), in, *held, comm, fetched);
  const std::uint64_t first_record = comm.exclusive_sum(range.inputs.size());
  // The cut gave the lengths: the holders are sent the requests alone.
  RecordFetch fetch(std::move(range.inputs), std::move(range.lengths), in.held_begin, *held, comm, fetched);
  const std::uint64_t first_byte = in.header.size() + comm.exclusive_sum(fetch.wanted_bytes());
  RankSink* out = nullptr;
  checkpoint(comm, [&] { out = &open_sink(first_record, first_record + fetch.records(), first_byte); });
  const ioperm::OutputSink sink = [&](const std::byte* data, std::size_t bytes) {
    out->write(data, bytes);
    if (progress) progress->fetch_add(bytes, std::memory_order_relaxed);
  };
  std::exception_ptr failure = fetch.write_all(sink, window_bytes(run.memory_bytes, ranks));
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
}

}  // namespace extshuffle::mpi

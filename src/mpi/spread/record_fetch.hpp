// Records fetched by exchange: each rank knows which input records its
// range of the output takes, in output order (spread_root.hpp), and the
// ranks that hold them (held_begin); it asks each holder once for all of
// the records it wants from it (their indices, in output order, one
// all-to-all), and learns their lengths from the reply (unless it knows
// them: a range cut by bytes, output_cut.hpp); then, in rounds
// that every rank takes part in, it takes a window of its output at a time
// (bounded in bytes), and the holders send the window's records, packed
// one after another in the order asked, in one all-to-all of bytes.
//
// Memory per rank: the window's bytes received, and at most P windows'
// bytes sent (every rank's window may be held by this one alone): the
// caller sizes the window so that both fit its budget. Besides, 8 bytes
// per wanted record thrice (its index, its length, the requests this rank
// serves): under 25 MiB for a leaf of 2^20 records, and at most 24 bytes
// times N / P for a spread root of two levels (fewer than ~8P chunks, so
// under 8 L records a rank: 192 MiB at L = 2^20), outside -S.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "extshuffle/mpi/communicator.hpp"
#include "inputs/held_records.hpp"
#include "extshuffle/ioperm/fixed_size_shuffle.hpp"

namespace extshuffle::mpi {

struct FetchStats {
  std::uint64_t rounds = 0;
  std::uint64_t bytes_sent = 0, bytes_received = 0;  // records' bytes to and from other ranks
  std::uint64_t count_bytes_sent = 0;                // indices, lengths and counts to other ranks
  double seconds_exchanging = 0;
};

class RecordFetch {
 public:
  // `wanted`: input record indices in output order; rank r holds records
  // [held_begin[r], held_begin[r + 1]), this rank's being `held`.
  // Exchanges the requests and the lengths. Collective; a failure ends the
  // job (abort_job: the other ranks are inside the exchange).
  RecordFetch(std::vector<std::uint64_t> wanted, const std::vector<std::uint64_t>& held_begin, HeldRecords& held,
              Communicator& comm, FetchStats& stats);
  // The same for records whose `lengths` are known (in the order of
  // `wanted`, as the holders would say them): the requests alone are sent.
  RecordFetch(std::vector<std::uint64_t> wanted, std::vector<std::uint64_t> lengths,
              const std::vector<std::uint64_t>& held_begin, HeldRecords& held, Communicator& comm, FetchStats& stats);
  // The bytes of the wanted records.
  std::uint64_t wanted_bytes() const { return wanted_bytes_; }
  // How many records are wanted.
  std::uint64_t records() const { return wanted_.size(); }
  // The wanted records and their lengths, in output order, moved out (the
  // fetch cannot run after).
  std::vector<std::uint64_t> take_wanted() { return std::move(wanted_); }
  std::vector<std::uint64_t> take_lengths() { return std::move(lengths_); }
  // Fetches the wanted records, at most `window_bytes` received a round
  // (one record at least), and hands them to `out` in output order.
  // Returns the failure writing them met (the rounds go on to the end
  // without writing: the other ranks wait for this one's turns). Collective.
  std::exception_ptr write_all(const ioperm::OutputSink& out, std::uint64_t window_bytes);

 private:
  int holder(std::uint64_t record) const;
  // The constructors' exchange: requests_, lengths_ (unless known), wanted_bytes_.
  void ask_for_records(bool lengths_known);
  // The ends of this rank's windows, in positions of `wanted_`.
  std::vector<std::uint64_t> windows(std::uint64_t window_bytes) const;
  // One round: the records of window [first, end) of `wanted_` into
  // receive_, each holder's from receive_at_[h]. A failure here leaves the
  // other ranks inside the exchange: it ends the job (abort_job).
  void exchange(std::uint64_t first, std::uint64_t end);
  // Then the window, in output order, to `out`.
  void write_window(std::uint64_t first, std::uint64_t end, const ioperm::OutputSink& out) const;

  std::vector<std::uint64_t> wanted_, lengths_;  // in output order
  const std::vector<std::uint64_t>& held_begin_;
  HeldRecords& held_;
  Communicator& comm_;
  FetchStats& stats_;
  int ranks_, me_;
  std::uint64_t wanted_bytes_ = 0;
  // The requests this rank serves: rank q's at [requests_begin_[q], requests_begin_[q + 1]),
  // the first served_[q] of them already sent.
  std::vector<std::uint64_t> requests_;
  std::vector<std::uint64_t> requests_begin_, served_;
  std::vector<std::byte> send_, receive_;
  std::vector<int> receive_at_;
};

}  // namespace extshuffle::mpi

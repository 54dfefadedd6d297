#include "exchange_targets.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "extshuffle/ioperm/phase_timer.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {
namespace {

constexpr int kTag = 7;
// The counts to each rank start with: status, largest message, slot size,
// whether this rank wants a point after the round.
constexpr std::uint64_t kHeader = 4;

struct Segment {
  const std::byte* data;
  std::uint64_t bytes;
};

}  // namespace

class ExchangeTargets::PoolSink final : public io::ByteSink {
 public:
  PoolSink(ExchangeTargets& owner, bool kept) : owner_(owner), kept_(kept) {}

  void append(const std::byte* data, std::uint64_t bytes) override {
    while (kept_ && bytes > 0) {
      if (cursor_ == limit_) take_block();
      const std::uint64_t take = std::min<std::uint64_t>(bytes, static_cast<std::uint64_t>(limit_ - cursor_));
      std::memcpy(cursor_, data, take);
      if (!segments_.empty() && segments_.back().data + segments_.back().bytes == cursor_) {
        segments_.back().bytes += take;
      } else {
        segments_.push_back({cursor_, take});
      }
      cursor_ += take;
      data += take;
      bytes -= take;
      total_ += take;
    }
  }
  void clear() {
    segments_.clear();
    cursor_ = limit_ = nullptr;
    total_ = 0;
  }
  const std::vector<Segment>& segments() const { return segments_; }
  std::uint64_t total() const { return total_; }

 private:
  // Blocks come from the pool by an atomic add: the scatter fills buckets
  // on several threads. The pool holds a group's bytes and one partly
  // filled block per bucket (root_exchange.cpp sizes it), so it never runs out.
  void take_block() {
    const ExchangeMemory& m = owner_.memory_;
    const std::uint64_t at = owner_.pool_used_.fetch_add(m.block_bytes, std::memory_order_relaxed);
    if (at + m.block_bytes > m.pool_bytes) throw std::logic_error("exchange pool exhausted");
    cursor_ = m.pool + at;
    limit_ = cursor_ + m.block_bytes;
  }

  ExchangeTargets& owner_;
  bool kept_;
  std::byte* cursor_ = nullptr;
  std::byte* limit_ = nullptr;
  std::vector<Segment> segments_;
  std::uint64_t total_ = 0;
};

ExchangeTargets::ExchangeTargets(const Distribution& d, int rank, ReceivedBuckets& received,
                                 const ExchangeMemory& memory, ExchangeStats& stats)
    : d_(d), rank_(rank), received_(received), memory_(memory), stats_(stats), sinks_(d.buckets),
      receive_bucket_(d.ranks), receive_left_(d.ranks) {
  for (std::uint64_t j = 0; j < d.buckets; ++j) {
    if (d.owner(j) == rank) continue;
    // -n: a bucket wholly past the output is neither sent nor stored.
    const bool kept = core::bucket_first(d.root.records, d.buckets, j) < received.output_records();
    sinks_[j] = std::make_unique<PoolSink>(*this, kept);
  }
}

ExchangeTargets::~ExchangeTargets() = default;

io::ByteSink& ExchangeTargets::bucket(std::uint64_t j) {
  return sinks_[j] ? *sinks_[j] : static_cast<io::ByteSink&>(received_.writer(rank_, j));
}

std::uint64_t ExchangeTargets::group_done() {
  if (round(kActive) == Outcome::kSomeoneFailed) throw PeerFailed();
  return received_.take_written_bytes();
}

bool ExchangeTargets::finish(bool failed, const std::function<void()>& done_point) {
  for (;;) {
    const Outcome outcome = round(failed ? kFailed : kDone);
    if (outcome != Outcome::kGoOn) return outcome == Outcome::kSomeoneFailed;
    if (take_point() && done_point && !failed) done_point();
  }
}

ExchangeTargets::Outcome ExchangeTargets::round(Status status) {
  ioperm::PhaseTimer timer(stats_.seconds_exchanging);
  const RoundCounts counts = exchange_counts(status);
  // 2-3. The bytes, in sub-rounds that fit every rank's receive buffer. A
  // failure to deliver (scratch full) is kept until the round is over: the
  // other ranks' sub-rounds still need this one.
  std::exception_ptr delivery_failure;
  if (!counts.someone_failed && counts.largest > 0) {
    for (std::uint64_t offset = 0; offset < counts.largest; offset += counts.cap) {
      exchange_bytes(offset, counts.cap, counts.incoming);
      ++stats_.sub_rounds;
      if (delivery_failure) continue;
      try {
        deliver(offset, counts.cap, counts.incoming);
      } catch (...) {
        delivery_failure = std::current_exception();
      }
    }
  }
  for (auto& sink : sinks_) {
    if (sink) static_cast<PoolSink&>(*sink).clear();
  }
  pool_used_.store(0, std::memory_order_relaxed);
  if (delivery_failure) std::rethrow_exception(delivery_failure);
  if (counts.someone_failed) return Outcome::kSomeoneFailed;
  ++rounds_done_;
  point_agreed_ = counts.point && !counts.all_done;  // the last round: the exchange's own record follows
  return counts.all_done ? Outcome::kAllDone : Outcome::kGoOn;
}

ExchangeTargets::RoundCounts ExchangeTargets::exchange_counts(Status status) {
  const int ranks = d_.ranks;
  const std::uint64_t mine = d_.end_bucket(rank_) - d_.first_bucket(rank_);
  // A sub-round's message from each other rank fits in its slot of the
  // receive buffer; the ranks take the smallest slot of any.
  const std::uint64_t cap =
      std::min(kMaxMessageBytes, memory_.receive_bytes / static_cast<std::uint64_t>(std::max(1, ranks - 1)));
  // To each rank: this rank's status, its largest message this round, its
  // slot size, and its bytes for each of that rank's buckets.
  std::vector<std::uint64_t> counts_out;
  std::vector<int> out_counts(ranks), out_displacements(ranks), in_counts(ranks), in_displacements(ranks);
  std::uint64_t largest = 0;
  for (int r = 0; r < ranks; ++r) {
    out_displacements[r] = static_cast<int>(counts_out.size());
    counts_out.push_back(status);
    counts_out.push_back(0);  // the largest message, filled in below
    counts_out.push_back(cap);
    counts_out.push_back(point_wanted_ ? 1 : 0);
    std::uint64_t bytes = 0;
    for (std::uint64_t j = d_.first_bucket(r); j < d_.end_bucket(r); ++j) {
      const std::uint64_t held = r == rank_ ? 0 : static_cast<PoolSink&>(*sinks_[j]).total();
      counts_out.push_back(held);
      bytes += held;
    }
    largest = std::max(largest, bytes);
    out_counts[r] = static_cast<int>(counts_out.size()) - out_displacements[r];
    in_counts[r] = static_cast<int>(kHeader + mine);
    in_displacements[r] = r * in_counts[r];
  }
  for (int r = 0; r < ranks; ++r) counts_out[out_displacements[r] + 1] = largest;
  counts_in_.resize(ranks * (kHeader + mine));
  MPI_Alltoallv(counts_out.data(), out_counts.data(), out_displacements.data(), MPI_UINT64_T, counts_in_.data(),
                in_counts.data(), in_displacements.data(), MPI_UINT64_T, MPI_COMM_WORLD);
  stats_.count_bytes_sent += (counts_out.size() - static_cast<std::uint64_t>(out_counts[rank_])) * 8;
  ++stats_.rounds;

  RoundCounts counts;
  counts.cap = cap;
  counts.incoming.assign(ranks, 0);
  for (int s = 0; s < ranks; ++s) {
    const std::uint64_t* from = counts_in_.data() + s * (kHeader + mine);
    counts.someone_failed = counts.someone_failed || from[0] == kFailed;
    counts.all_done = counts.all_done && from[0] != kActive;
    counts.largest = std::max(counts.largest, from[1]);
    counts.cap = std::min(counts.cap, from[2]);
    counts.point = counts.point || from[3] != 0;
    for (std::uint64_t k = 0; k < mine; ++k) counts.incoming[s] += from[kHeader + k];
    receive_bucket_[s] = 0;
    receive_left_[s] = mine > 0 ? from[kHeader] : 0;
  }
  return counts;
}

void ExchangeTargets::deliver(std::uint64_t offset, std::uint64_t cap, const std::vector<std::uint64_t>& incoming) {
  const std::uint64_t mine = d_.end_bucket(rank_) - d_.first_bucket(rank_);
  for (int s = 0; s < d_.ranks; ++s) {
    if (s == rank_ || incoming[s] <= offset) continue;
    const std::byte* piece = memory_.receive + static_cast<std::uint64_t>(s < rank_ ? s : s - 1) * cap;
    std::uint64_t left = std::min(cap, incoming[s] - offset);
    stats_.bytes_received += left;
    const std::uint64_t* from = counts_in_.data() + s * (kHeader + mine);
    while (left > 0) {
      while (receive_left_[s] == 0) receive_left_[s] = from[kHeader + ++receive_bucket_[s]];
      const std::uint64_t take = std::min(left, receive_left_[s]);
      received_.writer(s, received_.first() + receive_bucket_[s]).append(piece, take);
      piece += take;
      left -= take;
      receive_left_[s] -= take;
    }
  }
}

void ExchangeTargets::exchange_bytes(std::uint64_t offset, std::uint64_t cap, const std::vector<std::uint64_t>& incoming) {
  const int ranks = d_.ranks;
  std::vector<MPI_Request> requests;
  requests.reserve(2 * static_cast<std::size_t>(ranks));
  try {
    for (int s = 0; s < ranks; ++s) {
      if (s == rank_ || incoming[s] <= offset) continue;
      std::byte* into = memory_.receive + static_cast<std::uint64_t>(s < rank_ ? s : s - 1) * cap;
      requests.emplace_back();
      MPI_Irecv(into, static_cast<int>(std::min(cap, incoming[s] - offset)), MPI_BYTE, s, kTag, MPI_COMM_WORLD,
                &requests.back());
    }
    std::vector<int> lengths;
    std::vector<MPI_Aint> addresses;
    for (int r = 0; r < ranks; ++r) {
      if (r == rank_) continue;
      // The segments of bytes [offset, offset + cap) of r's stream.
      lengths.clear();
      addresses.clear();
      std::uint64_t skip = offset, want = cap;
      for (std::uint64_t j = d_.first_bucket(r); j < d_.end_bucket(r) && want > 0; ++j) {
        for (const Segment& segment : static_cast<PoolSink&>(*sinks_[j]).segments()) {
          if (skip >= segment.bytes) {
            skip -= segment.bytes;
            continue;
          }
          const std::uint64_t take = std::min(segment.bytes - skip, want);
          MPI_Aint address;
          MPI_Get_address(segment.data + skip, &address);
          addresses.push_back(address);
          lengths.push_back(static_cast<int>(take));
          stats_.bytes_sent += take;
          want -= take;
          skip = 0;
          if (want == 0) break;
        }
      }
      if (lengths.empty()) continue;
      MPI_Datatype pieces;
      MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), addresses.data(), MPI_BYTE, &pieces);
      MPI_Type_commit(&pieces);
      requests.emplace_back();
      MPI_Isend(MPI_BOTTOM, 1, pieces, r, kTag, MPI_COMM_WORLD, &requests.back());
      MPI_Type_free(&pieces);  // freed by MPI once the send is done
    }
  } catch (...) {
    // Requests are posted on both sides: the ranks can no longer meet.
    abort_job(std::current_exception());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

}  // namespace extshuffle::mpi

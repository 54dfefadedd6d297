// Step 3 of the root's split across the ranks (Gustedt's ParPerm: send
// a_ij records from P_i to P'_j): the walk's scatter appends each slice of
// a shuffled chunk to its bucket here (ioperm::BucketTargets). A bucket this
// rank owns goes straight to its writer in ReceivedBuckets; any other
// bucket's slices wait in blocks of a pool until the walk ends its chunk
// group (group_done), when every rank exchanges what it holds for every other
// in one round:
//   1. the counts: an all-to-all of each rank's bytes for each bucket of each
//      other rank (and whether it has more chunks to come, and whether it
//      wishes a --checkpoint point after the round), so that every
//      receiver knows the size and place of every incoming piece before it
//      arrives, and buffers are sized exactly;
//   2. the bytes: non-blocking point-to-point sends and receives between all
//      pairs at once, straight from the pool's blocks (an MPI indexed
//      datatype, no packing copy), in messages of at most kMaxMessageBytes
//      and sub-rounds that fit the receive buffer (MPI counts are int: no
//      message nears 2 GiB, whatever the chunk group's size);
//   3. each received piece appended to its (source, bucket) writer.
// MPI_Ialltoallv would need int displacements into one send buffer (2 GiB),
// hence the pairs of MPI_Isend/MPI_Irecv.
//
// A rank that fails, or that has no chunks left, keeps taking part in the
// rounds (finish()); a failure travels in the counts, so every rank stops at
// the same round and the ranks meet again at the next checkpoint.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "distribution.hpp"
#include "extshuffle/ioperm/bucket_targets.hpp"
#include "received_buckets.hpp"

namespace extshuffle::mpi {

// Largest message of the exchange: well under MPI's 2 GiB int count.
inline constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 30;

// Thrown out of group_done() when another rank has failed: the walk's
// scatter unwinds, and the ranks meet at the next checkpoint.
class PeerFailed : public std::exception {
 public:
  const char* what() const noexcept override { return "another rank failed"; }
};

struct ExchangeStats {
  std::uint64_t rounds = 0, sub_rounds = 0;
  std::uint64_t bytes_sent = 0, bytes_received = 0;  // records' bytes to and from other ranks
  std::uint64_t count_bytes_sent = 0;                // the counts' bytes
  double seconds_exchanging = 0;                     // in the rounds (counts, bytes, appends)
};

// The memory of the exchange, outside the walk's arena.
struct ExchangeMemory {
  std::byte* pool = nullptr;  // blocks for other ranks' buckets
  std::uint64_t pool_bytes = 0, block_bytes = 0;
  std::byte* receive = nullptr;  // one sub-round's incoming bytes
  std::uint64_t receive_bytes = 0;
};

class ExchangeTargets final : public ioperm::BucketTargets {
 public:
  ExchangeTargets(const Distribution& d, int rank, ReceivedBuckets& received, const ExchangeMemory& memory,
                  ExchangeStats& stats);
  ~ExchangeTargets() override;

  io::ByteSink& bucket(std::uint64_t j) override;
  // One round; throws PeerFailed when another rank has failed.
  std::uint64_t group_done() override;
  // After this rank's last chunk, or after it failed (`failed`): rounds with
  // nothing from this rank until every rank has finished, or one has
  // failed; after each round the ranks agreed on a point, `done_point` is
  // made (when given). Returns whether one failed.
  bool finish(bool failed, const std::function<void()>& done_point = {});

  // --checkpoint's points of pass 1 (resume/scatter_points.hpp): whether
  // this rank wants one after its next round. Every rank's wish travels in
  // the round's counts, and every rank makes a point after each round any
  // rank wished one after: the ranks' points are after the same rounds.
  void want_point(bool wanted) { point_wanted_ = wanted; }
  // Whether the ranks agreed on a point after the last round (once).
  bool take_point() { return std::exchange(point_agreed_, false); }
  // Rounds done, the same count on every rank: from `first` (the round a
  // resumed exchange goes on after).
  std::uint64_t rounds_done() const { return rounds_done_; }
  void start_after_round(std::uint64_t first) { rounds_done_ = first; }

  class PoolSink;  // a bucket's bytes held for the next round

 private:
  enum Status : std::uint64_t { kActive = 0, kDone = 1, kFailed = 2 };
  enum class Outcome { kGoOn, kAllDone, kSomeoneFailed };
  Outcome round(Status status);
  // What step 1 of a round tells every rank.
  struct RoundCounts {
    bool someone_failed = false, all_done = true;
    bool point = false;         // some rank wants a point after this round
    std::uint64_t largest = 0;  // the largest message any rank sends this round
    std::uint64_t cap = 0;      // the smallest receive slot of any rank: a sub-round's message at most
    std::vector<std::uint64_t> incoming;  // per source: its bytes for this rank this round
  };
  // Step 1: every rank's status, largest message, slot and bytes per bucket.
  RoundCounts exchange_counts(Status status);
  // Step 2 for one sub-round: bytes [offset, offset + cap) of every pair's stream.
  void exchange_bytes(std::uint64_t offset, std::uint64_t cap, const std::vector<std::uint64_t>& incoming);
  // Step 3 for one sub-round: each source's piece to its (source, bucket)
  // writers. Throws what a writer throws (scratch full).
  void deliver(std::uint64_t offset, std::uint64_t cap, const std::vector<std::uint64_t>& incoming);

  const Distribution& d_;
  int rank_;
  ReceivedBuckets& received_;
  ExchangeMemory memory_;
  ExchangeStats& stats_;
  std::atomic<std::uint64_t> pool_used_{0};
  std::vector<std::unique_ptr<io::ByteSink>> sinks_;  // per bucket; null: this rank's own
  // Per source: the bucket its next received byte belongs to, and what
  // that bucket still expects from it this round.
  std::vector<std::uint64_t> receive_bucket_, receive_left_;
  std::vector<std::uint64_t> counts_in_;  // this round's counts, per source: header, per bucket
  bool point_wanted_ = false, point_agreed_ = false;
  std::uint64_t rounds_done_ = 0;
};

}  // namespace extshuffle::mpi

#include "root_exchange.hpp"

#include <algorithm>
#include <exception>
#include <functional>
#include <string>

#include "exchange_budget.hpp"
#include "exchange_targets.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/mpi/rank_failure.hpp"
#include "mapped_memory.hpp"
#include "resume/job_resume.hpp"
#include "resume/scatter_points.hpp"

namespace extshuffle::mpi {
namespace {

ExchangeBudget exchange_budget(RankRun& r, const Distribution& d, ioperm::NodePath path) {
  const auto rules = walk_for(r.options, r.output_records, r.in, r.options.run.memory_bytes, device::Device::kCpu);
  const std::optional<ExchangeBudget> share =
      plan_exchange_budget(rules, d, r.me, r.options.run.memory_bytes, r.in.root_facts(), path);
  if (!share) {
    throw BudgetError("--memory too small for " + std::to_string(d.ranks) +
                      " ranks: " + std::to_string(r.options.run.memory_bytes) +
                      " bytes cannot hold the scatter's chunk memory, its slices for other ranks and a buffer "
                      "per rank and bucket");
  }
  return *share;
}

// This rank's chunks scattered (steps 1-3 of the root's split), then rounds
// until every rank's are; a failure anywhere is agreed on by all. With
// `checkpointed`, points made after the rounds the ranks agree on, from
// its `from` on.
void scatter_rounds(RankRun& r, const Distribution& d, ioperm::NodePath path, const ioperm::DistributedWalk& walk,
                    io::BucketStore& store, ExchangeTargets& targets, ReceivedBuckets& received,
                    const ExchangeCheckpoint* checkpointed, std::uint32_t tag_width, std::uint64_t group_bytes) {
  std::exception_ptr failure;
  bool stopped = false;  // by a failure seen in a round
  ioperm::WalkStats walked;
  const core::PlanConstants& c = r.options.run.constants;
  const std::uint64_t end_chunk = d.chunk_begin[r.me + 1];
  std::optional<ScatterPoints> points;
  try {
    const io::ByteExtents chunks = r.in.chunk_data(r.me, c);
    r.stats.input_bytes_read = r.in.chunk_bytes_read(chunks);
    if (checkpointed) {
      points.emplace(*r.resume, r.dataset_index, received, targets,
                     JournalledExchange{checkpointed->plan, tag_width, {}}, checkpointed->from,
                     core::chunk_first(d.chunk_begin[r.me], c),
                     ioperm::scatter_point_spacing_bytes(chunks.bytes, ReceivedBuckets::pairs(d, r.me), group_bytes));
    }
    const std::uint64_t first_record = points ? points->first_record() : core::chunk_first(d.chunk_begin[r.me], c);
    const std::uint64_t first_chunk = std::max(d.chunk_begin[r.me], first_record / c.leaf_records);
    if (r.stats.chunks > 0 && first_chunk < end_chunk) {
      walk.scatter_chunks(store, d.root, points ? io::tail_of(chunks, points->first_offset()) : chunks,
                          r.in.root_facts(), path, first_chunk, end_chunk, targets, walked,
                          points ? points->after_group() : nullptr, first_record);
    }
  } catch (const PeerFailed&) {
    stopped = true;
  } catch (...) {
    failure = std::current_exception();
  }
  const std::function<void()> done_point = [&] {
    if (points) points->when_done();
  };
  while (!stopped) {
    try {
      targets.finish(failure != nullptr, done_point);
      stopped = true;
    } catch (...) {
      if (!failure) failure = std::current_exception();  // then one more round, to say so
    }
  }
  try {
    if (!failure && points) points->settle();
    if (!failure) r.stats.bytes_written += received.finish();
  } catch (...) {
    failure = std::current_exception();
  }
  add_walk_stats(r.stats, walked);
  agree(r.comm, failure);
}

// The received buckets dropped when their writers' buffers go on a
// failure: the split's writers would otherwise finish (and checksum) into
// unmapped memory as the caller unwinds. Declared after the buffers.
class DropOnFailure {
 public:
  explicit DropOnFailure(std::optional<ReceivedBuckets>& received)
      : received_(received), exceptions_(std::uncaught_exceptions()) {}
  ~DropOnFailure() {
    if (std::uncaught_exceptions() > exceptions_) received_.reset();
  }
  DropOnFailure(const DropOnFailure&) = delete;
  DropOnFailure& operator=(const DropOnFailure&) = delete;

 private:
  std::optional<ReceivedBuckets>& received_;
  int exceptions_;
};

// This rank's part of the root's plan, as the journal keeps it with the
// exchange: the buckets, the rank's, the split's path and a digest (FNV-1a)
// of the records every rank sends to each of them.
std::string exchange_plan(const RankRun& r, const Distribution& d, ioperm::NodePath path) {
  std::uint64_t digest = 14695981039346656037ull;
  for (std::uint64_t j = d.first_bucket(r.me); j < d.end_bucket(r.me); ++j) {
    for (int s = 0; s < d.ranks; ++s) digest = (digest ^ d.sent_by(s, j)) * 1099511628211ull;
  }
  return std::to_string(d.root.records) + " records, " + std::to_string(d.buckets) + " buckets, this rank's " +
         std::to_string(d.first_bucket(r.me)) + "-" + std::to_string(d.end_bucket(r.me)) + ", " +
         (path == ioperm::NodePath::kRouted ? "routed" : "in memory") + ", counts " + std::to_string(digest);
}

// A point's plan against the root's plan drawn again: the same, or the
// journal is not trusted (on every rank).
void check_same_plan(RankRun& r, const std::string& plan, const std::string& kept) {
  checkpoint(r.comm, [&] {
    if (kept != plan) {
      throw Error("checkpoint journal '" + r.options.run.checkpoint_dir + "': the root's plan drawn again (" + plan +
                  ") is not the one its buckets were exchanged under (" + kept + "): not trusted");
    }
  });
}

}  // namespace

ioperm::NodePath agree_on_path(RankRun& r, const Distribution& d) {
  std::optional<ExchangeBudget> in_memory;
  checkpoint(r.comm, [&] {
    const auto rules = walk_for(r.options, r.output_records, r.in, r.options.run.memory_bytes, device::Device::kCpu);
    in_memory = plan_exchange_budget(rules, d, r.me, r.options.run.memory_bytes, r.in.root_facts(),
                                     ioperm::NodePath::kChunksInMemory);
  });
  const bool routed = r.comm.max(in_memory ? 0 : 1) == 1;
  return routed ? ioperm::NodePath::kRouted : ioperm::NodePath::kChunksInMemory;
}

std::uint32_t scatter_and_exchange(RankRun& r, const Distribution& d, ioperm::NodePath path, io::BucketStore& store,
                                   std::optional<ReceivedBuckets>& received, const ExchangeCheckpoint* checkpointed) {
  const auto t0 = Clock::now();
  const bool routed = path == ioperm::NodePath::kRouted;
  std::uint32_t tag_width = 0;
  MappedMemory writer_buffers;
  const DropOnFailure drop(received);
  ExchangeStats exchange;
  {
    std::optional<ioperm::DistributedWalk> scatter;
    ExchangeBudget budget;
    MappedMemory pool, receive;
    checkpoint(r.comm, [&] {
      budget = exchange_budget(r, d, path);
      scatter.emplace(
          walk_options(r.options, r.output_records, r.in, budget.scatter_arena_bytes, device::Device::kCpu, r.progress),
          r.in.framed);
      tag_width = routed ? scatter->tag_width(core::bucket_records(d.root.records, d.buckets, 0)) : 0;
      pool = MappedMemory(budget.pool_bytes);
      receive = MappedMemory(budget.receive_bytes);
      writer_buffers = MappedMemory(2 * budget.writer_pairs * budget.writer_buffer_bytes);
      received.emplace(store, d, r.me, *scatter, r.in.data_bytes(), tag_width, r.output_records, writer_buffers.get(),
                       budget.writer_buffer_bytes);
      // --checkpoint, before the first bucket's byte: the pairs' CRC-32C
      // kept, and a resumed rank's pairs going on as its point left them
      // (each bucket checked as step 4 reads it: damage is exit 1, never a
      // wrong output).
      if (checkpointed && checkpointed->from) {
        const JournalledScatter& from = *checkpointed->from;
        if (from.received.tag_width != tag_width) {
          throw Error("checkpoint: the exchange it resumes tagged records with another width: not trusted");
        }
        received->resume(from.received.buckets);
      } else if (checkpointed) {
        received->keep_for_resume();
      }
    });
    ExchangeTargets targets(
        d, r.me, *received,
        ExchangeMemory{pool.get(), budget.pool_bytes, budget.block_bytes, receive.get(), budget.receive_bytes},
        exchange);
    if (checkpointed && checkpointed->from) targets.start_after_round(checkpointed->from->round);
    scatter_rounds(r, d, path, *scatter, store, targets, *received, checkpointed, tag_width,
                   budget.scatter_arena_bytes);
  }
  writer_buffers.release();  // the writers are done; their pages go back
  r.stats.seconds_scattering = since(t0);
  r.stats.rounds = exchange.rounds;
  r.stats.sub_rounds = exchange.sub_rounds;
  // With the chunks' bytes that crossed from their readers (chunk_readers.hpp).
  r.stats.bytes_sent = exchange.bytes_sent + r.in.chunk_bytes_sent();
  r.stats.bytes_received = exchange.bytes_received + r.in.chunk_bytes_received();
  r.stats.count_bytes_sent = exchange.count_bytes_sent;
  r.stats.seconds_exchanging = exchange.seconds_exchanging;
  return tag_width;
}

void resume_exchange(RankRun& r, const Distribution& d, ioperm::NodePath path, io::BucketStore& store,
                     std::uint32_t tag_width, const io::SplitState& buckets, std::optional<ReceivedBuckets>& received) {
  const auto t0 = Clock::now();
  MappedMemory writer_buffers;
  const DropOnFailure drop(received);
  checkpoint(r.comm, [&] {
    // The walk and the writers' buffers as the exchange had them: the
    // pairs' regions come from the walk's rules; nothing is written.
    // (The job that exchanged planned the same budget: it fitted then.)
    const std::optional<ExchangeBudget> budget = plan_exchange_budget(
        walk_for(r.options, r.output_records, r.in, r.options.run.memory_bytes, device::Device::kCpu), d, r.me,
        r.options.run.memory_bytes, r.in.root_facts(), path);
    if (!budget) throw Error("checkpoint: the exchange it resumes no longer fits --memory: not trusted");
    const ioperm::DistributedWalk scatter(
        walk_options(r.options, r.output_records, r.in, budget->scatter_arena_bytes, device::Device::kCpu),
        r.in.framed);
    writer_buffers = MappedMemory(2 * budget->writer_pairs * budget->writer_buffer_bytes);
    received.emplace(store, d, r.me, scatter, r.in.data_bytes(), tag_width, r.output_records, writer_buffers.get(),
                     budget->writer_buffer_bytes);
    received->resume(buckets);
  });
  r.stats.seconds_scattering = since(t0);
}

std::uint32_t exchange_or_resume(RankRun& r, const Distribution& d, ioperm::NodePath path, io::BucketStore& store,
                                 std::optional<ReceivedBuckets>& received) {
  const std::string plan = r.resume ? exchange_plan(r, d, path) : std::string();
  const JobResume::Point point = r.resume ? r.resume->point(r.dataset_index) : JobResume::Point::kStart;
  if (point >= JobResume::Point::kExchanged) {
    const JournalledExchange& kept = r.resume->exchanged(r.dataset_index);
    check_same_plan(r, plan, kept.plan);
    resume_exchange(r, d, path, store, kept.tag_width, kept.buckets, received);
    return kept.tag_width;
  }
  ExchangeCheckpoint checkpointed{plan, nullptr};
  if (point == JobResume::Point::kScattered) {
    checkpointed.from = &r.resume->scattered(r.dataset_index);
    check_same_plan(r, plan, checkpointed.from->received.plan);
  }
  const std::uint32_t tag_width = scatter_and_exchange(r, d, path, store, received, r.resume ? &checkpointed : nullptr);
  if (r.resume) {
    checkpoint(r.comm, [&] { r.resume->record_exchanged(r.dataset_index, {plan, tag_width, received->checkpoint()}); });
  }
  return tag_width;
}

}  // namespace extshuffle::mpi

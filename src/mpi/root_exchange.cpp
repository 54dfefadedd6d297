#include "root_exchange.hpp"

#include <exception>
#include <string>

#include "exchange_budget.hpp"
#include "exchange_targets.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/mpi/rank_failure.hpp"
#include "mapped_memory.hpp"

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
// until every rank's are; a failure anywhere is agreed on by all.
void scatter_rounds(RankRun& r, const Distribution& d, ioperm::NodePath path, const ioperm::DistributedWalk& walk,
                    io::BucketStore& store, ExchangeTargets& targets, ReceivedBuckets& received) {
  std::exception_ptr failure;
  bool stopped = false;  // by a failure seen in a round
  ioperm::WalkStats walked;
  try {
    const io::ByteExtents chunks = r.in.chunk_data(r.me, r.options.run.constants);
    r.stats.input_bytes_read = r.in.chunk_bytes_read(chunks);
    if (r.stats.chunks > 0) {
      walk.scatter_chunks(store, d.root, chunks, r.in.root_facts(), path, d.chunk_begin[r.me], d.chunk_begin[r.me + 1],
                          targets, walked);
    }
  } catch (const PeerFailed&) {
    stopped = true;
  } catch (...) {
    failure = std::current_exception();
  }
  while (!stopped) {
    try {
      targets.finish(failure != nullptr);
      stopped = true;
    } catch (...) {
      if (!failure) failure = std::current_exception();  // then one more round, to say so
    }
  }
  try {
    if (!failure) r.stats.bytes_written += received.finish();
  } catch (...) {
    failure = std::current_exception();
  }
  add_walk_stats(r.stats, walked);
  agree(r.comm, failure);
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
                                   std::optional<ReceivedBuckets>& received) {
  const auto t0 = Clock::now();
  const bool routed = path == ioperm::NodePath::kRouted;
  std::uint32_t tag_width = 0;
  MappedMemory writer_buffers;
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
    });
    if (r.resume) received->keep_for_resume();  // --checkpoint, before the first bucket's byte
    ExchangeTargets targets(
        d, r.me, *received,
        ExchangeMemory{pool.get(), budget.pool_bytes, budget.block_bytes, receive.get(), budget.receive_bytes},
        exchange);
    scatter_rounds(r, d, path, *scatter, store, targets, *received);
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
                     io::BlockFile& scratch, std::uint32_t tag_width, const io::SplitState& buckets,
                     std::optional<ReceivedBuckets>& received) {
  const auto t0 = Clock::now();
  MappedMemory writer_buffers;
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
    received->resume(buckets, scratch);
  });
  r.stats.seconds_scattering = since(t0);
}

}  // namespace extshuffle::mpi

// One run across the ranks, in order (Gustedt's ParPerm over the root split
// of the canonical plan; docs/design.md, "Several machines"):
//   1. the output: rank 0 creates the hidden file beside the destination,
//      the other ranks open it;
//   2. the counts: each rank draws the column sums of its chunks' rows, the
//      ranks exchange them (distribution.hpp);
//   3. the root's split: each rank's driver reads, shuffles and cuts its
//      chunks (PlanWalk::scatter_chunks); the slices move to the ranks that
//      own their buckets in rounds (exchange_targets.hpp), into each rank's
//      own scratch space (received_buckets.hpp);
//   4. each rank runs its buckets through the unchanged single-machine
//      driver (PlanWalk::run_subtree), writing its contiguous range of the
//      output at its offset (fixed-size records: by arithmetic; text: an
//      exclusive sum of the ranks' bytes);
//   5. every rank fsyncs, the ranks agree, rank 0 renames.
// A root that is a leaf (N <= L) has no split: rank 0 runs it alone.
// Between the steps the ranks meet at checkpoints (rank_failure.hpp).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "distributed_input.hpp"
#include "distribution.hpp"
#include "driver/fixed_records.hpp"
#include "driver/plan_walk.hpp"
#include "driver/text_records.hpp"
#include "exchange_budget.hpp"
#include "exchange_targets.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/mpi/rank_failure.hpp"
#include "mapped_memory.hpp"
#include "rank_output.hpp"
#include "received_buckets.hpp"
#include "shared_output.hpp"

namespace extshuffle::mpi {
namespace {

using State = DistributedInput::State;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::uint64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

// The driver's record layout over options of its own (a layout keeps a
// reference to the options it was made with, and each walk has its budget).
struct Walker {
  driver::VariableOptions options;
  std::unique_ptr<driver::RecordLayout> layout;
  Walker(const driver::Config& config, const State& in, std::uint64_t memory_bytes, device::Device device) {
    options.record_size = in.record_size;
    options.seed = config.seed;
    options.constants = config.constants;
    options.device = device;
    options.threads = config.threads;
    options.memory_bytes = memory_bytes;
    options.output_records = config.head_count;
    options.syntax = in.syntax;
    if (in.text) {
      layout = std::make_unique<driver::TextRecords>(options);
    } else {
      layout = std::make_unique<driver::FixedRecords>(options);
    }
  }
};

void add_walk_stats(RankStats& rank, const driver::ExternalStats& e) {
  rank.bytes_read += e.bytes_read;
  rank.bytes_written += e.bytes_written;
}

// A root of at most L records is one leaf: rank 0 runs it as extshuffle
// would (the executors' own entry points), the other ranks wait.
std::uint32_t run_alone(const driver::Config& config, State& in, SharedOutput& output, RankStats& stats) {
  RangeWriter writer(output, 0);
  writer.write(reinterpret_cast<const std::byte*>(in.header.data()), in.header.size());
  const driver::OutputSink sink = [&](const std::byte* data, std::size_t bytes) { writer.write(data, bytes); };
  Walker w(config, in, config.memory_bytes, config.device);
  driver::ExternalStats e;
  if (in.text) {
    const driver::TextInput text{&in.source->data(), in.data_offset, in.source->bytes() - in.data_offset,
                                 in.add_terminator && in.data_offset < in.source->bytes()};
    e = driver::shuffle_variable(text, in.records, in.source->scratch(), in.source->scratch_offset(), w.options, sink);
  } else {
    e = driver::shuffle_external(in.source->data(), in.data_offset, in.records, in.source->scratch(),
                                 in.source->scratch_offset(), w.options, sink);
  }
  writer.finish();
  add_walk_stats(stats, e);
  stats.output_bytes = writer.bytes_written();
  return e.passes;
}

}  // namespace

DistributedResult run(const driver::Config& config, DistributedInput input, Communicator& comm) {
  const auto start = Clock::now();
  State& in = *input.state_;
  const int me = comm.rank();
  RankStats stats;
  stats.rank = static_cast<std::uint64_t>(me);
  stats.seconds_counting = in.seconds_counting;
  const core::PlanConstants& c = config.constants;
  const std::uint64_t n = in.records;
  const bool split = !core::is_leaf(n, c);

  // 1. The output, after the checks a single-machine run makes first.
  std::unique_ptr<SharedOutput> output;
  checkpoint(comm, [&] {
    core::check_plan(n, c);
    if (!in.text && !in.header.empty() && config.head_count < n) {
      throw UsageError("-n cannot shorten a .npy array: its header's shape would no longer match");
    }
    Walker(config, in, config.memory_bytes, config.device).layout->check_budget(in.root_facts(), config.memory_bytes);
    if (me == 0) output = SharedOutput::create(config.output_path);
  });
  const std::uint64_t inode = comm.broadcast(me == 0 ? output->inode() : 0, 0);
  checkpoint(comm, [&] {
    if (me != 0) output = SharedOutput::join(config.output_path, inode);
  });

  std::uint32_t passes = 1;
  bool routed = false;
  if (!split) {
    checkpoint(comm, [&] {
      if (me == 0) passes = run_alone(config, in, *output, stats);
      in.source->check_unchanged();
    });
  } else {
    // 2. The counts.
    auto t0 = Clock::now();
    const Distribution d = distribute(config.seed, n, c, in.chunk_begin, comm);
    stats.seconds_counting += since(t0);
    stats.splits_drawn = d.splits_drawn;
    stats.chunks = d.chunk_begin[me + 1] - d.chunk_begin[me];
    stats.buckets = d.end_bucket(me) - d.first_bucket(me);

    // 3. The root's split, exchanged. Its path is the same on every rank (a
    // routed split tags the records its buckets receive): chunks in memory
    // where every rank's share of the budget holds whole chunks, else
    // routed record by record (chunks larger than memory).
    t0 = Clock::now();
    const driver::NodeFacts root = in.root_facts();
    std::optional<ExchangeBudget> in_memory;
    checkpoint(comm, [&] {
      const Walker rules(config, in, config.memory_bytes, device::Device::kCpu);
      in_memory = plan_exchange_budget(*rules.layout, d, me, config.memory_bytes, root,
                                       driver::NodePath::kChunksInMemory);
    });
    routed = comm.max(in_memory ? 0 : 1) == 1;
    const driver::NodePath path = routed ? driver::NodePath::kRouted : driver::NodePath::kChunksInMemory;
    std::uint32_t tag_width = 0;
    io::BucketStore store(in.source->scratch(), in.source->scratch_offset());
    std::optional<ReceivedBuckets> received;
    MappedMemory writer_buffers;
    ExchangeStats exchange;
    {
      std::optional<Walker> scatter;
      ExchangeBudget budget;
      MappedMemory pool, receive;
      checkpoint(comm, [&] {
        const Walker rules(config, in, config.memory_bytes, device::Device::kCpu);
        const std::optional<ExchangeBudget> share =
            routed ? plan_exchange_budget(*rules.layout, d, me, config.memory_bytes, root, path) : in_memory;
        if (!share) {
          throw BudgetError("--memory too small for " + std::to_string(d.ranks) + " ranks: " +
                            std::to_string(config.memory_bytes) +
                            " bytes cannot hold the scatter's chunk memory, its slices for other ranks and a buffer "
                            "per rank and bucket");
        }
        budget = *share;
        tag_width = routed ? root_tag_width(*rules.layout, d) : 0;
        scatter.emplace(config, in, budget.scatter_arena_bytes, device::Device::kCpu);
        pool = MappedMemory(budget.pool_bytes);
        receive = MappedMemory(budget.receive_bytes);
        writer_buffers = MappedMemory(2 * budget.writer_pairs * budget.writer_buffer_bytes);
        received.emplace(store, d, me, *scatter->layout, in.data_bytes(), tag_width, config.head_count,
                         writer_buffers.get(), budget.writer_buffer_bytes);
      });
      const driver::OutputSink no_output = [](const std::byte*, std::size_t) {};
      driver::PlanWalk walk(*scatter->layout, store, scatter->options, no_output);
      ExchangeTargets targets(d, me, *received,
                              ExchangeMemory{pool.get(), budget.pool_bytes, budget.block_bytes, receive.get(),
                                             budget.receive_bytes},
                              exchange);
      std::exception_ptr failure;
      bool stopped = false;  // by a failure seen in a round
      try {
        if (stats.chunks > 0) {
          walk.scatter_chunks(d.root, in.chunk_data(me, c), root, true, path, d.chunk_begin[me], d.chunk_begin[me + 1],
                              targets);
        }
      } catch (const PeerFailed&) {
        stopped = true;
      } catch (...) {
        failure = std::current_exception();
      }
      // This rank's chunks are done (or it failed): rounds until every rank's are.
      while (!stopped) {
        try {
          targets.finish(failure != nullptr);
          stopped = true;
        } catch (...) {
          if (!failure) failure = std::current_exception();  // then one more round, to say so
        }
      }
      try {
        if (!failure) stats.bytes_written += received->finish();
      } catch (...) {
        failure = std::current_exception();
      }
      add_walk_stats(stats, walk.stats());
      agree(comm, failure);
    }
    writer_buffers.release();  // the writers are done; their pages go back
    stats.seconds_scattering = since(t0);
    stats.rounds = exchange.rounds;
    stats.sub_rounds = exchange.sub_rounds;
    stats.bytes_sent = exchange.bytes_sent;
    stats.bytes_received = exchange.bytes_received;
    stats.count_bytes_sent = exchange.count_bytes_sent;
    stats.seconds_exchanging = exchange.seconds_exchanging;

    // 4. This rank's buckets, to its range of the output (their records'
    // bytes: a routed split's tags stay behind).
    t0 = Clock::now();
    RankOutput ranges(d, me, in.text ? 0 : in.record_size, in.syntax, config.head_count, in.header.size());
    auto bucket_facts = [&](std::uint64_t j) {
      const std::uint64_t records = core::bucket_records(n, d.buckets, j);
      return driver::NodeFacts{records, received->bucket(j).bytes - records * tag_width, routed,
                               root.max_record_bytes, 1};
    };
    std::uint64_t my_bytes = 0;
    for (std::uint64_t j = received->first(); j < received->end(); ++j) {
      if (received->kept(j)) my_bytes += bucket_facts(j).record_bytes;
    }
    const std::uint64_t offset = ranges.offset(my_bytes, comm);
    checkpoint(comm, [&] {
      Walker buckets(config, in, config.memory_bytes, config.device);
      RangeWriter writer(*output, me == 0 ? 0 : offset);
      if (me == 0) writer.write(reinterpret_cast<const std::byte*>(in.header.data()), in.header.size());
      const driver::OutputSink sink = [&](const std::byte* data, std::size_t bytes) { ranges.write(writer, data, bytes); };
      driver::PlanWalk walk(*buckets.layout, store, buckets.options, sink);
      std::uint64_t end = received->first();
      while (end < received->end() && received->kept(end)) ++end;
      passes = walk.run_buckets(d.root, d.buckets, received->first(), end, root, routed, *received) + 1;
      writer.finish();
      add_walk_stats(stats, walk.stats());
      stats.output_bytes = writer.bytes_written();
      in.source->check_unchanged();
    });
    stats.seconds_buckets = since(t0);
  }

  // 5. Commit: every rank syncs its range; once all have, rank 0 renames.
  const auto t_commit = Clock::now();
  checkpoint(comm, [&] { output->sync(); });
  checkpoint(comm, [&] {
    if (me == 0) output->commit();
  });
  output->forget();
  stats.seconds_committing = since(t_commit);
  stats.seconds = since(start);
  stats.peak_rss_bytes = peak_rss_bytes();

  DistributedResult result;
  result.routed = routed;
  const std::vector<RankStats> all = comm.all_gather(stats);
  const std::uint64_t job_passes = comm.max(passes);
  driver::RunStats& s = result.stats;
  s.records = n;
  s.bytes = in.source->bytes();
  s.levels = core::plan_levels(n, c);
  s.passes = static_cast<std::uint32_t>(job_passes);
  for (const RankStats& r : all) {
    s.bytes_read += r.bytes_read;
    s.bytes_written += r.bytes_written;
    s.seconds = std::max(s.seconds, r.seconds);
    s.peak_rss_bytes = std::max(s.peak_rss_bytes, r.peak_rss_bytes);
  }
  result.ranks = me == 0 ? all : std::vector<RankStats>{stats};
  return result;
}

}  // namespace extshuffle::mpi

// One dataset across the ranks, in order (Gustedt's ParPerm over the root
// split of the canonical plan; docs/design.md, "Several machines"):
//   1. the output: its pieces planned (piece_plan.hpp), rank 0 creates
//      their hidden files beside their destinations, the other ranks open
//      them (open_shared_output);
//   2. the counts: each rank draws the column sums of its chunks' rows, the
//      ranks exchange them (distribution.hpp; draw_counts);
//   3. the root's split: each rank's walk reads, shuffles and cuts its
//      chunks (ioperm::DistributedWalk::scatter_chunks); the slices move to
//      the ranks that own their buckets in rounds (exchange_targets.hpp),
//      into each rank's own scratch space (received_buckets.hpp;
//      root_exchange.cpp);
//   4. each rank runs its buckets through the walk's step 4
//      (DistributedWalk::run_buckets), writing its contiguous range of the
//      output through a sink that cuts it into the pieces (piece_sink.hpp),
//      from its offset (fixed-size records: by arithmetic; text: an
//      exclusive sum of the ranks' bytes; run_own_buckets);
//   5. every rank fsyncs, the ranks agree, rank 0 renames every piece and
//      writes the manifest (distributed_commit.hpp), once the Job's every
//      dataset is written.
// A root that is a leaf (N <= L), or of two levels with too few chunks for
// the ranks (distribution.hpp, spread_root()), is not scattered by whole
// chunks: the ranks share its shuffles (spread_root.hpp); one rank runs a
// leaf root as extshuffle does.
// Between the steps the ranks meet at checkpoints (rank_failure.hpp).

#include <algorithm>
#include <optional>

#include "outputs/distributed_commit.hpp"
#include "inputs/distributed_input.hpp"
#include "outputs/distributed_verify.hpp"
#include "outputs/dry_run_shares.hpp"
#include "distribution.hpp"
#include "extshuffle/driver/peak_rss.hpp"
#include "extshuffle/driver/progress_meter.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/ioperm/distributed_walk.hpp"
#include "extshuffle/ioperm/text_shuffle.hpp"
#include "extshuffle/mpi/rank_failure.hpp"
#include "extshuffle/dataset/input_layout.hpp"
#include "extshuffle/dataset/output_parts.hpp"
#include "outputs/rank_sink.hpp"
#include "outputs/rank_range.hpp"
#include "rank_run.hpp"
#include "received_buckets.hpp"
#include "resume/job_resume.hpp"
#include "resume/range_points.hpp"
#include "root_exchange.hpp"
#include "spread/spread_root.hpp"

namespace extshuffle::mpi {
namespace {

using State = DistributedInput::State;

// What the input warns of (a dataset of tar archives: members skipped,
// samples cut; the same on every rank), said by rank 0 alone.
std::vector<std::string> input_warnings(const State& in) {
  if (in.rank != 0 || !in.files) return {};
  return in.files->warnings;
}

// 1. The output, after the checks a single-machine run makes first: its
// pieces, planned for the records it takes (-n, or where the last split
// ends: the walks need not produce the rest).
void open_shared_output(RankRun& r) {
  const std::uint64_t n = r.in.records;
  checkpoint(r.comm, [&] {
    core::check_plan(n, r.options.run.constants);
    if (!r.in.framed && !r.in.header.empty() && r.options.output.head_count < n) {
      throw UsageError("-n cannot shorten a .npy array: its header's shape would no longer match");
    }
    r.plan = plan_pieces(r.options, r.output_path, r.in.framed ? 0 : r.in.record_size,
                         std::min(r.options.output.head_count, n));
    dataset::check_verify_takes_all(r.options.input.verify, r.options.output.head_count, n, r.plan.records);
    walk_for(r.options, r.output_records, r.in, r.options.run.memory_bytes, r.options.run.device)
        .check_budget(r.in.root_facts());
  });
  if (r.me == 0 && r.plan.left_out > 0) {
    r.warnings.push_back(dataset::left_out_warning(r.plan.left_out, r.plan.records));
  }
  r.output_records = r.plan.records;
  if (r.plan.cut_by_bytes) return;  // the pieces are known once the ranks have scanned their ranges
  std::vector<std::string> paths;
  for (const Piece& piece : r.plan.pieces) paths.push_back(piece.path);
  // --checkpoint: rank 0 reopens the temporaries its journal names, or
  // journals the ones it creates (docs/mpi.md "A killed job").
  std::vector<std::pair<std::string, std::uint64_t>> reopen;
  const std::vector<JournalledPiece>* journalled = r.resume ? r.resume->pieces(r.dataset_index) : nullptr;
  for (std::size_t k = 0; journalled && k < journalled->size(); ++k) {
    reopen.emplace_back((*journalled)[k].hidden_name, (*journalled)[k].inode);
  }
  r.files = SharedPieces::open(paths, r.comm, reopen, r.resume != nullptr);
  if (!r.resume) return;
  checkpoint(r.comm, [&] {
    if (r.me != 0 || reopen.size() == paths.size()) return;
    std::vector<JournalledPiece> pieces;
    for (std::size_t k = 0; k < r.files->size(); ++k) {
      SharedOutput& file = r.files->file(k);
      pieces.push_back({file.hidden_path(), file.hidden_name(), file.inode()});
    }
    r.resume->record_pieces(r.dataset_index, pieces);
  });
}

// --checkpoint: this rank's range of the output written, placed and synced,
// made durable (docs/mpi.md "A killed job"). Pieces cut by bytes are
// opened late and not journalled: such a dataset always starts over.
void record_placed(RankRun& r) {
  if (!r.resume || r.plan.cut_by_bytes) return;
  checkpoint(r.comm, [&] {
    r.files->sync();
    r.resume->record_placed(r.dataset_index, r.written.state());
  });
}

// The sink of this rank's output range (rank_sink.hpp).
void open_sink(RankRun& r, std::optional<RankSink>& sink, std::uint64_t first_record, std::uint64_t end_record,
               std::uint64_t first_byte) {
  sink.emplace(r.options, r.output_path, r.in, r.plan, r.files, r.me, first_record, end_record, first_byte);
}

// Every rank's pieces complete (rank_sink.hpp).
void place_parts(RankRun& r, RankSink& sink) {
  sink.place(r.comm);
  r.stats.output_bytes = sink.bytes_written();
  r.written = sink.written();
}

// A root of at most L records on one rank: run as extshuffle would (the
// shuffles' own entry points, their threads and in-memory gathers), which
// the exchange of a spread root would only slow down.
std::uint32_t run_alone(RankRun& r) {
  State& in = r.in;
  std::uint32_t passes = 1;
  std::optional<RankSink> pieces;
  checkpoint(r.comm, [&] {
    open_sink(r, pieces, 0, r.plan.records, 0);
    const ioperm::OutputSink sink = [&](const std::byte* data, std::size_t bytes) { pieces->write(data, bytes); };
    const ioperm::TextOptions o =
        walk_options(r.options, r.output_records, in, r.options.run.memory_bytes, r.options.run.device, r.progress);
    ioperm::WalkStats e;
    if (in.framed) {
      e = ioperm::shuffle_text(in.whole_text(), in.records, in.scratch(), in.scratch_offset(), o, sink);
    } else {
      e = ioperm::shuffle_fixed_size(in.whole_file(), in.whole_offset(), in.records, in.scratch(),
                                     in.scratch_offset(), o.walk, sink);
    }
    add_walk_stats(r.stats, e);
    r.stats.input_bytes_read = in.data_bytes();
    passes = e.passes;
    pieces->finish();
    in.check_unchanged();
  });
  place_parts(r, *pieces);
  return passes;
}

// A spread root (distribution.hpp, spread_root()): every rank its share
// (spread_root.hpp), written through its sink like a rank's buckets.
std::uint32_t run_spread_root(RankRun& r) {
  const auto t0 = Clock::now();
  std::optional<RankSink> pieces;
  const OpenRankSink open = [&](std::uint64_t first_record, std::uint64_t end_record,
                                std::uint64_t first_byte) -> RankSink& {
    open_sink(r, pieces, first_record, end_record, first_byte);
    return *pieces;
  };
  shuffle_spread_root(r.options.run, r.output_records, r.in, r.display_name, open, r.comm, r.stats, r.progress);
  place_parts(r, *pieces);
  r.stats.bytes_written += r.stats.output_bytes;
  r.stats.seconds_buckets = since(t0);
  return 1;
}

// 2. The counts: this rank's rows of the root's communication matrix, and
// every rank's column sums.
Distribution draw_counts(RankRun& r) {
  const auto t0 = Clock::now();
  Distribution d = distribute(r.options.run.seed, r.in.records, r.options.run.constants, r.in.chunk_begin, r.comm);
  r.stats.seconds_counting += since(t0);
  r.stats.splits_drawn = d.splits_drawn;
  r.stats.chunks = d.chunk_begin[r.me + 1] - d.chunk_begin[r.me];
  r.stats.buckets = d.end_bucket(r.me) - d.first_bucket(r.me);
  return d;
}

// 4. This rank's buckets, to its range of the output (their records' bytes:
// a routed split's tags stay behind). Returns the passes through disk.
std::uint32_t run_own_buckets(RankRun& r, const Distribution& d, bool routed, std::uint32_t tag_width,
                              io::BucketStore& store, ReceivedBuckets& received) {
  const auto t0 = Clock::now();
  State& in = r.in;
  const ioperm::NodeFacts root = in.root_facts();
  RankRange ranges(d, r.me, in.framed ? 0 : in.record_size, in.syntax, r.plan.records, in.header.size());
  auto bucket_facts = [&](std::uint64_t j) {
    const std::uint64_t records = core::bucket_records(in.records, d.buckets, j);
    return ioperm::NodeFacts{records, received.bucket(j).bytes - records * tag_width, routed, root.max_record_bytes,
                             1};
  };
  std::uint64_t my_bytes = 0;
  for (std::uint64_t j = received.first(); j < received.end(); ++j) {
    if (received.kept(j)) my_bytes += bucket_facts(j).record_bytes;
  }
  const std::uint64_t offset = ranges.offset(my_bytes, r.comm);
  std::uint32_t passes = 1;
  std::optional<RankSink> pieces;
  checkpoint(r.comm, [&] {
    const auto walk =
        walk_for(r.options, r.output_records, in, r.options.run.memory_bytes, r.options.run.device, r.progress);
    open_sink(r, pieces, ranges.first_record(), ranges.end_record(), offset);
    std::uint64_t end = received.first();
    while (end < received.end() && received.kept(end)) ++end;
    // --checkpoint: from this rank's last *bucket j written*, and new ones
    // made as it goes (resume/range_points.hpp).
    const bool points = r.resume && !r.plan.cut_by_bytes;
    RangePoints made(points ? r.resume : nullptr, r.dataset_index, received.first(), end, offset);
    const std::uint64_t first = made.start(*pieces, ranges);
    const ioperm::OutputSink sink = [&](const std::byte* data, std::size_t bytes) {
      made.handed(bytes);
      ranges.write(data, bytes, [&](const std::byte* kept, std::size_t n) { pieces->write(kept, n); });
    };
    ioperm::WalkStats walked;
    passes = walk.run_buckets(store, sink, d.root, d.buckets, first, end, root, routed, received, walked,
                              points ? made.emit_points(*pieces, *r.files, ranges) : nullptr) +
             1;
    pieces->finish();
    add_walk_stats(r.stats, walked);
    in.check_unchanged();
  });
  place_parts(r, *pieces);
  r.stats.seconds_buckets = since(t0);
  return passes;
}

// The job's totals from every rank's stats (on every rank; the ranks' own
// lines on rank 0 only).
DistributedResult gather_result(RankRun& r, std::uint32_t passes, bool routed) {
  DistributedResult result;
  result.routed = routed;
  const std::vector<RankStats> all = r.comm.all_gather(r.stats);
  RunStats& s = result.stats;
  s.records = r.in.records;
  s.bytes = r.in.input_bytes;
  s.levels = core::plan_levels(r.in.records, r.options.run.constants);
  s.passes = static_cast<std::uint32_t>(r.comm.max(passes));
  for (const RankStats& rank : all) {
    s.bytes_read += rank.bytes_read;
    s.bytes_written += rank.bytes_written;
    s.seconds = std::max(s.seconds, rank.seconds);
    s.peak_rss_bytes = std::max(s.peak_rss_bytes, rank.peak_rss_bytes);
  }
  result.ranks = r.me == 0 ? all : std::vector<RankStats>{r.stats};
  return result;
}

}  // namespace

DistributedResult run_into(const JobOptions& options, const JobDataset& dataset, DistributedInput input,
                           Communicator& comm, DistributedCommit& commit, JobResume* resume,
                           std::size_t dataset_index) {
  const auto start = Clock::now();
  if (options.run.dry_run) {
    DistributedResult result;
    // Each rank's scratch, from what its staging wrote and its buckets.
    std::uint64_t scratch = 0;
    checkpoint(comm, [&] {
      scratch = scratch_estimate(
          *input.state_,
          walk_for(options, options.output.head_count, *input.state_, options.run.memory_bytes, options.run.device),
          options.run.constants, options.run.memory_bytes);
    });
    const std::vector<std::uint64_t> scratch_bytes = comm.all_gather(scratch);
    if (comm.rank() == 0) result.dry_run_text = describe_shares(*input.state_, comm.size(), scratch_bytes);
    result.warnings = input_warnings(*input.state_);
    return result;
  }
  RankRun r{.options = options,
            .output_records = options.output.head_count,
            .output_path = dataset.output,
            .display_name = dataset::input_display_name(dataset.inputs.front()),
            .in = *input.state_,
            .comm = comm,
            .me = comm.rank(),
            .stats = {},
            .plan = {},
            .files = nullptr,
            .written = {},
            .warnings = {},
            .progress = nullptr,
            .resume = resume,
            .dataset_index = dataset_index};
  r.stats.rank = static_cast<std::uint64_t>(r.me);
  r.warnings = input_warnings(r.in);
  r.stats.seconds_counting = r.in.seconds_counting;
  r.stats.layout_bytes_read = r.in.layout_bytes_read;
  r.stats.bytes_read += r.in.layout_bytes_read;
  r.stats.bytes_written += r.in.staged_scratch_bytes();
  // --progress, on rank 0: its own walks' bytes read and written, of about
  // four times its share of the records' bytes (its chunks read and
  // scattered, its buckets read and written; all of it read and written
  // once for a root that is one leaf on one rank; a spread root counts the
  // bytes it writes, about its share). Shown capped at 100%.
  std::optional<driver::ProgressMeter> meter;
  if (r.me == 0 && options.run.progress) {
    const std::uint64_t bytes = r.in.data_bytes();
    const auto ranks = static_cast<std::uint64_t>(comm.size());
    const std::uint64_t expected = ranks == 1 && core::is_leaf(r.in.records, options.run.constants) ? 2 * bytes
                                   : spread_root(r.in.records, options.run.constants, comm.size())  ? bytes / ranks
                                                                                                    : 4 * bytes / ranks;
    meter.emplace(expected, options.run.progress);
    r.progress = meter->counter();
  }
  open_shared_output(r);
  std::uint32_t passes = 1;
  bool routed = false;
  if (resume && resume->placed(dataset_index) && !r.plan.cut_by_bytes) {
    // Every rank placed its range before the job was stopped: only the
    // commit is left.
    passes = 0;
    r.written = dataset::RecordDigest::from_state(resume->written_state(dataset_index));
  } else if (core::is_leaf(r.in.records, r.options.run.constants) && comm.size() == 1) {
    passes = run_alone(r);
  } else if (spread_root(r.in.records, r.options.run.constants, comm.size())) {
    passes = run_spread_root(r);
  } else {
    const Distribution d = draw_counts(r);
    const ioperm::NodePath path = agree_on_path(r, d);
    routed = path == ioperm::NodePath::kRouted;
    // --checkpoint: the buckets in DIR/rank-R/scratch-K, kept for a rerun.
    std::unique_ptr<io::BlockFile> kept_scratch;
    if (resume) checkpoint(comm, [&] { kept_scratch = resume->scratch(dataset_index); });
    io::BucketStore store(kept_scratch ? *kept_scratch : r.in.scratch(), kept_scratch ? 0 : r.in.scratch_offset());
    std::optional<ReceivedBuckets> received;
    const std::uint32_t tag_width = exchange_or_resume(r, d, path, store, received);
    passes = run_own_buckets(r, d, routed, tag_width, store, *received);
  }
  if (passes > 0) record_placed(r);
  if (options.input.verify) {
    check_reads_against_holders(r.in, comm);
    dataset::RecordDigest read;
    checkpoint(comm, [&] { read = digest_held_records(r.in, r.display_name); });
    check_distributed_digests(read, r.written, comm);
  }
  RunResult described;  // what the manifest says of the dataset; its files are the commit's
  described.inputs = r.in.file_infos();
  described.format = r.in.format_name;
  described.records_written = r.plan.records;
  described.stats.records = r.in.records;
  commit.add(std::move(r.files), std::move(r.plan), std::move(described), dataset.output);
  r.stats.seconds = since(start);
  r.stats.peak_rss_bytes = driver::peak_rss_bytes();
  DistributedResult result = gather_result(r, passes, routed);
  result.warnings = std::move(r.warnings);
  return result;
}

}  // namespace extshuffle::mpi

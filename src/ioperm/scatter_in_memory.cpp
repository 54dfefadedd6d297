// Steps 1-3 of a split whose chunks fit in memory (Gustedt's IOPerm, section
// 6; docs/conventions.md, The canonical plan): 1. the chunks' rows of the communication matrix
// (matrix_rows.hpp), 2. the chunks shuffled (the layout's chunk groups, on
// the device back end), 3. each chunk cut by its row into slices, appended
// to the buckets.
#include <future>
#include <vector>

#include "walk_support.hpp"
#include "matrix_rows.hpp"
#include "plan_walk.hpp"

namespace extshuffle::ioperm {

// Steps 1-3 with the chunks in memory: groups of chunks read ahead,
// shuffled as one batch while their rows are drawn, cut into slices.
void PlanWalk::scatter_in_memory(const core::Node& node, const io::ByteExtents& chunk_data, bool root,
                                 std::uint64_t first_chunk, std::uint64_t end_chunk, BucketTargets& targets,
                                 const ScatterPoint* points) {
  const core::PlanConstants& c = o_.run.constants;
  const std::uint64_t p = core::bucket_count(node.records, c);
  const SplitLayout layout = layout_.split_layout(p, o_.run.memory_bytes);
  ChunkRows rows(o_.run.seed, node, c);
  std::vector<std::uint64_t> group_rows;    // the rows of the current chunk group
  std::vector<std::uint64_t> slice_starts;  // per chunk of a group: where each bucket's slice starts
  const auto groups =
      layout_.open_chunk_groups(node, chunk_data, root, first_chunk, end_chunk, layout.chunk_memory_bytes, ctx_);
  for (std::uint64_t i = first_chunk; i < end_chunk;) {
    const std::uint64_t count = groups->next(i);
    {
      // 2. Shuffle the group's chunks in one parallel batch, while 1. the
      // group's rows of the matrix are drawn on a thread of their own.
      PhaseTimer timer(stats_.seconds_shuffling);
      auto drawn = std::async(std::launch::async, [&] { rows.draw(i, i + count, group_rows); });
      groups->shuffle(i, count);
      drawn.get();
    }
    {
      // 3. Every chunk's slice appended to its bucket, bucket ranges on
      // all threads (a memory-bound copy; each bucket has one writer).
      PhaseTimer timer(stats_.seconds_scattering);
      slice_starts.resize(count * (p + 1));
      for (std::uint64_t g = 0; g < count; ++g) {
        const std::uint64_t* row = group_rows.data() + g * p;
        std::uint64_t* starts = slice_starts.data() + g * (p + 1);
        starts[0] = 0;
        for (std::uint64_t j = 0; j < p; ++j) starts[j + 1] = starts[j] + row[j];
      }
      scatter_by_bucket_ranges(p, ctx_.threads, [&](std::uint64_t j) {
        for (std::uint64_t g = 0; g < count; ++g) {
          const std::uint64_t* starts = slice_starts.data() + g * (p + 1);
          if (starts[j + 1] > starts[j]) groups->append_slice(g, starts[j], starts[j + 1], targets.bucket(j));
        }
      });
    }
    stats_.bytes_written += targets.group_done();
    ctx_.publish_progress();
    i += count;
    if (points) (*points)(core::chunk_first(i, c), groups->consumed_bytes());
  }
  groups->finish();
}

}  // namespace extshuffle::ioperm

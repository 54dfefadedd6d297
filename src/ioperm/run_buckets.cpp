// Step 4 of a split (Gustedt's IOPerm, section 6): the recursion into each
// bucket, in bucket order, so that the output is the buckets' outputs one
// after the other.
#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "extshuffle/io/crc32c.hpp"
#include "extshuffle/io/scratch_damage.hpp"
#include "walk_support.hpp"
#include "plan_walk.hpp"
#include "position_tag.hpp"
#include "tuning.hpp"

namespace extshuffle::ioperm {
namespace {

// Buckets [first, end), read one after the other into `bytes`, against
// the checksums they keep (a checkpointed split's: walk_checkpoint.hpp).
void check_group(const StoredBuckets& buckets, std::uint64_t first, std::uint64_t end, const std::byte* bytes) {
  for (std::uint64_t j = first; j < end; ++j) {
    const io::ByteExtents bucket = buckets.bucket(j);
    if (bucket.crc32c && io::crc32c(io::kCrc32cStart, bytes, bucket.bytes) != *bucket.crc32c) {
      throw Error(io::kCheckpointRegionDamaged);
    }
    bytes += bucket.bytes;
  }
}

}  // namespace

// Consecutive buckets that fit in a third of the budget together are read
// with one request, the next group while this one runs, and run from memory
// with the last third as workspace; larger buckets run on their own.
std::uint32_t PlanWalk::run_buckets(const core::Node& node, std::uint64_t p, std::uint64_t first, std::uint64_t end,
                                    const NodeFacts& facts, bool routed, StoredBuckets& split,
                                    const EmitPoint* points) {
  const std::uint64_t third = align_down(o_.run.memory_bytes / tuning::kBucketGroupBudgetDivisor, 64);
  const std::uint32_t tag_width =
      routed ? PositionTag::for_node(core::bucket_records(node.records, p, 0), layout_.framed()).width : 0;
  auto child_facts = [&](std::uint64_t j) {
    const std::uint64_t records = core::bucket_records(node.records, p, j);
    return NodeFacts{records, split.bucket(j).bytes - records * tag_width, routed, facts.max_record_bytes,
                     node.id.depth + 1};
  };
  struct Group {
    std::uint64_t first, end;  // buckets [first, end)
    std::uint64_t bytes;
    bool alone;                // too large to run from a group: run_node() on its own
  };
  std::vector<std::uint64_t> bucket_bytes(p);
  std::vector<Group> groups;
  for (std::uint64_t j = first; j < end && output_.wanted(node.id.first + core::bucket_first(node.records, p, j)); ++j) {
    const std::uint64_t bytes = split.bucket(j).bytes;
    bucket_bytes[j] = bytes;
    if (bytes > third || !layout_.runs_in_group(child_facts(j), bytes, third)) {
      groups.push_back({j, j + 1, bytes, true});
    } else if (groups.empty() || groups.back().alone || groups.back().bytes + bytes > third) {
      groups.push_back({j, j + 1, bytes, false});
    } else {
      groups.back().end = j + 1;
      groups.back().bytes += bytes;
    }
  }
  std::byte* inputs[2] = {ctx_.arena, ctx_.arena + third};
  std::byte* output = ctx_.arena + 2 * third;
  io::ByteExtents extents[2];
  std::optional<io::ExtentReader> reader;
  auto start_read = [&](std::size_t g) {
    if (g >= groups.size() || groups[g].alone) return;
    extents[g % 2] = split.buckets(groups[g].first, groups[g].end);
    reader.emplace(extents[g % 2]);
    reader->start(inputs[g % 2], groups[g].bytes);
    stats_.bytes_read += groups[g].bytes;
  };
  std::uint32_t deepest = 1;
  start_read(0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const Group& group = groups[g];
    if (group.alone) {
      deepest = std::max(deepest, run_node(core::bucket_node(node, p, group.first), split.bucket(group.first),
                                           child_facts(group.first), false));
      start_read(g + 1);
    } else {
      {
        PhaseTimer timer(stats_.seconds_reading);
        reader->finish();
      }
      // The next group's read is under way while this one is checked:
      // the check is on the critical path (one thread), the read on the disk.
      start_read(g + 1);
      check_group(split, group.first, group.end, inputs[g % 2]);
      stats_.nodes_in_memory += group.end - group.first;
      layout_.run_buckets_in_memory(
          node, p, group.first, group.end,
          std::span<const std::uint64_t>(bucket_bytes).subspan(group.first, group.end - group.first), routed,
          inputs[g % 2], output, ctx_);
    }
    const auto release = [&split, group] {
      for (std::uint64_t j = group.first; j < group.end; ++j) split.discard(j);
    };
    if (points) {
      (*points)(group.end, release);
    } else {
      release();
    }
  }
  return deepest;
}

}  // namespace extshuffle::ioperm

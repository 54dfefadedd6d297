#include "routed_memory.hpp"

#include <algorithm>

#include "chunk_router.hpp"
#include "walk_support.hpp"
#include "extshuffle/errors.hpp"
#include "record_stream.hpp"
#include "tuning.hpp"

namespace extshuffle::ioperm {

std::uint64_t minimum_stream_space(const RecordLayout& layout, std::uint64_t longest_record_bytes) {
  const std::uint64_t longest = layout.framed() ? longest_record_bytes : layout.options().record_size;
  if (longest == 0) return tuning::kMinStreamSpace;
  return std::max(tuning::kMinStreamFloor, align_up(longest + 8, 64));
}

RoutedSplitMemory routed_split_memory(const RecordLayout& layout, std::uint64_t p, std::uint32_t open_chunks,
                                      std::uint64_t longest_record_bytes, std::uint64_t budget,
                                      const BucketWindows* windows) {
  RoutedSplitMemory m;
  const bool into_windows = windows != nullptr && !windows->empty();
  m.router_bytes = ChunkRouter::memory_bytes(layout.options().run.constants, p, open_chunks, into_windows) +
                   (into_windows ? windows->orders_bytes : 0);
  const std::uint64_t destinations = into_windows ? windows->destinations() : p;
  const std::uint64_t left = budget > m.router_bytes ? budget - m.router_bytes : 0;
  // The stream takes up to kMaxStreamSpace (and at most half of what is
  // left, but never less than its smallest space and batch); the
  // destinations' write buffers take the rest. So a larger budget never
  // fails where a smaller one fits (minimum_routed_split_bytes counts on it).
  const std::uint64_t smallest_space = minimum_stream_space(layout, longest_record_bytes);
  auto arrays_bytes = [destinations](std::uint64_t batch) {
    return RecordStream::arrays_bytes(batch) + route_arrays_bytes(batch, destinations);
  };
  const std::uint64_t smallest_stream = smallest_space + arrays_bytes(tuning::kMinRouteBatch);
  if (left < smallest_stream) throw BudgetError("--memory too small to route records to buckets");
  const std::uint64_t stream_share =
      std::max(std::min(tuning::kMaxStreamSpace + tuning::kMaxStreamSpace / 64, left / 2), smallest_stream);
  m.bucket_buffer_bytes = bucket_buffer_bytes(left - stream_share, destinations);
  const std::uint64_t rest = left - 2 * destinations * m.bucket_buffer_bytes;  // >= smallest_stream
  // A batch of rest / 256 records, fewer where its arrays would leave the
  // stream less than its smallest space.
  const std::uint64_t batch_fits =
      tuning::kMinRouteBatch + (rest - smallest_stream) / (arrays_bytes(2) - arrays_bytes(1));
  m.max_batch =
      std::clamp<std::uint64_t>(std::min(rest / 256, batch_fits), tuning::kMinRouteBatch, tuning::kMaxRouteBatch);
  const std::uint64_t arrays = arrays_bytes(m.max_batch);
  m.space_bytes = align_down(std::min(rest - arrays, tuning::kMaxStreamSpace), 64);
  m.chunk_memory_bytes = m.router_bytes + m.space_bytes + arrays;
  return m;
}

std::uint64_t minimum_routed_split_bytes(const RecordLayout& layout, std::uint64_t p, std::uint32_t open_chunks,
                                         std::uint64_t longest_record_bytes) {
  const std::uint64_t stream = minimum_stream_space(layout, longest_record_bytes) +
                               RecordStream::arrays_bytes(tuning::kMinRouteBatch) +
                               route_arrays_bytes(tuning::kMinRouteBatch, p);
  // A lower bound (the parts at their smallest), raised until the split fits:
  // steps of 1/256 of the budget stay within 0.4% of the exact minimum.
  std::uint64_t budget = ChunkRouter::memory_bytes(layout.options().run.constants, p, open_chunks) + stream +
                         2 * p * tuning::kMinBucketBufferBytes;
  for (;; budget += std::max<std::uint64_t>(1024, budget / 256)) {
    try {
      if (routed_split_memory(layout, p, open_chunks, longest_record_bytes, budget).bucket_buffer_bytes >=
          tuning::kMinBucketBufferBytes) {
        return budget;
      }
    } catch (const BudgetError&) {
    }
  }
}

}  // namespace extshuffle::ioperm

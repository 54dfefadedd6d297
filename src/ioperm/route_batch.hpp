// Records routed one by one to their destinations (the buckets of a routed
// split, the windows of a leaf larger than memory): for a batch of located
// records, each record's destination and its position there are computed
// on all threads, the batch is ordered by destination (a counting sort that
// keeps the batch's order within each destination), and each destination's
// records are appended, each behind its position tag, destinations in
// ranges across the threads (one thread per destination's sink).
#pragma once

#include <cstddef>
#include <cstdint>

#include "walk_support.hpp"
#include "extshuffle/io/byte_sink.hpp"
#include "extshuffle/io/scratch_damage.hpp"
#include "position_tag.hpp"
#include "record_stream.hpp"
#include "routed_memory.hpp"

namespace extshuffle::ioperm {

struct RouteArrays {
  std::uint32_t* destination = nullptr;  // per record of the batch
  std::uint64_t* position = nullptr;     // per record: its position in its destination
  std::uint32_t* order = nullptr;        // the batch ordered by destination
  std::uint64_t* starts = nullptr;       // destination d's records are order[starts[d], starts[d + 1])

  // Carves route_arrays_bytes(max_batch, destinations) bytes at `cursor`.
  static RouteArrays carve_from(std::byte*& cursor, std::uint64_t max_batch, std::uint64_t destinations) {
    RouteArrays a;
    a.destination = carve<std::uint32_t>(cursor, max_batch);
    a.position = carve<std::uint64_t>(cursor, max_batch);
    a.order = carve<std::uint32_t>(cursor, max_batch);
    a.starts = carve<std::uint64_t>(cursor, destinations + 1);
    return a;
  }
};

// Records [first, end) of the batch. `locate(position, destination&,
// position_there&)` is called from several threads; `sink_of(d)` gives
// destination d's sink.
template <class Locate, class SinkOf>
void route_batch(const RecordBatch& batch, std::uint64_t first, std::uint64_t end, std::uint64_t destinations,
                 const PositionTag& tag, RouteArrays& a, int threads, Locate&& locate, SinkOf&& sink_of) {
  const auto count = static_cast<std::int64_t>(end);
  const auto from = static_cast<std::int64_t>(first);
#pragma omp parallel for schedule(static) num_threads(threads) if (count - from >= 4096 && threads > 1)
  for (std::int64_t k = from; k < count; ++k) {
    std::uint64_t destination = 0;
    locate(batch.positions[k], destination, a.position[k]);
    a.destination[k] = static_cast<std::uint32_t>(destination);
  }
  std::fill(a.starts, a.starts + destinations + 1, 0);
  // Positions read from scratch were checked (record_stream.hpp), so every
  // destination is in range; the compare keeps a damaged one from indexing.
  for (std::int64_t k = from; k < count; ++k) {
    if (a.destination[k] >= destinations) [[unlikely]] io::throw_scratch_damaged();
    ++a.starts[a.destination[k] + 1];
  }
  for (std::uint64_t d = 0; d < destinations; ++d) a.starts[d + 1] += a.starts[d];
  for (std::int64_t k = from; k < count; ++k) a.order[a.starts[a.destination[k]]++] = static_cast<std::uint32_t>(k);
  for (std::uint64_t d = destinations; d > 0; --d) a.starts[d] = a.starts[d - 1];  // back to the starts
  a.starts[0] = 0;
  scatter_by_bucket_ranges(destinations, end - first >= 4096 ? threads : 1, [&](std::uint64_t d) {
    if (a.starts[d] == a.starts[d + 1]) return;
    io::ByteSink& sink = sink_of(d);
    std::byte prefix[8];
    for (std::uint64_t e = a.starts[d]; e < a.starts[d + 1]; ++e) {
      const std::uint32_t k = a.order[e];
      tag.write(a.position[k], prefix);
      sink.append(prefix, tag.width);
      sink.append(batch.base + batch.offsets[k], batch.lengths[k]);
    }
  });
}

}  // namespace extshuffle::ioperm

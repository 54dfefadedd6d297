#include "text_gather.hpp"

#include <algorithm>
#include <cstring>

#include "executor_support.hpp"
#include "extshuffle/errors.hpp"
#include "tuning.hpp"

namespace extshuffle::driver {

std::uint64_t text_gather_arrays_bytes(std::uint64_t m) {
  return 2 * align_up(8 * (m + 1), 64) + align_up(8 * m, 64) + 2 * align_up(4 * m, 64);
}

void throw_record_too_large(std::uint64_t bytes, std::uint64_t budget) {
  throw InputError("a record of at least " + std::to_string(bytes) + " bytes does not fit in what --memory " +
                   std::to_string(budget) + " leaves for one record: raise --memory");
}

std::uint64_t text_gather_in_windows(const io::ByteExtents& data, std::uint64_t start, std::uint64_t m,
                                     const core::VariablePhilox& f, const TextScan& scan, std::byte* arrays,
                                     std::byte* space, std::uint64_t space_bytes, std::uint64_t budget,
                                     RunContext& ctx, const OnWindow& on_window) {
  std::byte* cursor = arrays;
  auto* offsets = carve<std::uint64_t>(cursor, m + 1);
  auto* lengths = carve<std::uint64_t>(cursor, m);
  auto* permutation = carve<std::uint32_t>(cursor, m);
  auto* inverse = carve<std::uint32_t>(cursor, m);
  auto* position_offsets = carve<std::uint64_t>(cursor, m + 1);
  const std::uint64_t piece_bytes = std::min<std::uint64_t>(align_down(space_bytes / 4, 64), tuning::kGatherPieceBytes);
  std::byte* window = space + piece_bytes;
  const std::uint64_t window_bytes = space_bytes - piece_bytes;
  io::ExtentReader reader(data);

  // 1. Find the chunk's records, streaming through it.
  std::uint64_t chunk_end = 0;
  {
    PhaseTimer timer(ctx.stats.seconds_reading);
    reader.seek(start);
    std::uint64_t buffer_position = start, fill = 0, k = 0;
    const std::byte* at = space;
    while (k < m) {
      const std::byte* stop = scan.next_record(at, space + fill);
      if (stop) {
        offsets[k] = buffer_position + static_cast<std::uint64_t>(at - space);
        lengths[k] = static_cast<std::uint64_t>(stop - at);
        at = stop;
        ++k;
        continue;
      }
      const std::uint64_t kept = static_cast<std::uint64_t>(space + fill - at);
      if (kept == space_bytes) throw_record_too_large(kept, budget);
      if (reader.at_end()) throw InputError(records_changed_message(m));
      std::memmove(space, at, kept);
      buffer_position += static_cast<std::uint64_t>(at - space);
      fill = kept;
      at = space;
      const std::uint64_t got = reader.read_now(space + fill, space_bytes - fill);
      fill += got;
      ctx.stats.bytes_read += got;
    }
    chunk_end = offsets[m - 1] + lengths[m - 1];
  }

  // 2. The chunk's permutation and its inverse.
  {
    PhaseTimer timer(ctx.stats.seconds_shuffling);
    for (std::uint32_t e = 0; e < m; ++e) inverse[e] = e;
    device::shuffle_records(device::Device::kCpu,
                            device::ShuffleJob{reinterpret_cast<const std::byte*>(inverse),
                                               reinterpret_cast<std::byte*>(permutation), m, f},
                            sizeof(std::uint32_t), ctx.threads);
    for (std::uint32_t p = 0; p < m; ++p) inverse[permutation[p]] = p;
  }

  // 3. Each window of consecutive positions takes one pass over the chunk.
  for (std::uint64_t k0 = 0; k0 < m;) {
    std::uint64_t k1 = k0;
    position_offsets[0] = 0;
    while (k1 < m && position_offsets[k1 - k0] + lengths[permutation[k1]] <= window_bytes) {
      position_offsets[k1 - k0 + 1] = position_offsets[k1 - k0] + lengths[permutation[k1]];
      ++k1;
    }
    if (k1 == k0) throw_record_too_large(lengths[permutation[k0]], budget);
    {
      PhaseTimer timer(ctx.stats.seconds_reading);
      reader.seek(offsets[0]);
      std::uint64_t e = 0;
      for (std::uint64_t q0 = offsets[0]; q0 < chunk_end;) {
        const std::uint64_t got = reader.read_now(space, std::min(piece_bytes, chunk_end - q0));
        ctx.stats.bytes_read += got;
        const std::uint64_t q1 = q0 + got;
        while (e < m && offsets[e] < q1) {
          const std::uint64_t a = offsets[e], b = a + lengths[e], p = inverse[e];
          if (p >= k0 && p < k1) {
            const std::uint64_t lo = std::max(a, q0), hi = std::min(b, q1);
            if (lo < hi) std::memcpy(window + position_offsets[p - k0] + (lo - a), space + (lo - q0), hi - lo);
          }
          if (b > q1) break;
          ++e;
        }
        q0 = q1;
      }
    }
    on_window(Window{window, k0, k1, position_offsets, 0});
    k0 = k1;
  }
  return chunk_end;
}

}  // namespace extshuffle::driver

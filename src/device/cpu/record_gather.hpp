// The random gather at the heart of every shuffle on the CPU: output record
// k takes source record indices[k]. A chunk or leaf (8 MiB and more) is far
// larger than the caches, so nearly every source read misses them, and with
// 4 KiB pages the TLB as well; the loads are independent, but the core keeps
// too few of them in flight to hide the memory's latency. Prefetching each
// source a fixed distance ahead of its copy keeps more misses in flight
// (docs/benchmarks.md, "Prefetched gathers").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace extshuffle::device::cpu {

// How many records ahead of the copy the gather prefetches, chosen by
// bench/gather_bench.cpp (docs/benchmarks.md, "Prefetched gathers"): from
// cold memory with 4 KiB pages, 8-byte records took 12.4 ns a record by
// index unprefetched against 7.4 at 32 ahead, 17.3 against 14.8 with Philox
// (two threads); 16 was slower, 64 within the noise of 32.
inline constexpr std::uint32_t kGatherPrefetchRecords = 32;

// Above this record size the gather does not prefetch: a record spans
// several lines that the copy streams itself (128-byte records gained as
// much as 8-byte ones in bench/gather_bench.cpp; larger ones not measured).
inline constexpr std::size_t kGatherPrefetchMaxRecordBytes = 256;

// Copies one record; a compile-time size turns memcpy into a few moves.
template <std::size_t kSize>
struct FixedCopy {
  void operator()(std::byte* to, const std::byte* from, std::size_t) const { std::memcpy(to, from, kSize); }
};
struct VariableCopy {
  void operator()(std::byte* to, const std::byte* from, std::size_t size) const { std::memcpy(to, from, size); }
};

// Calls f(copy) with the copy for records of `record_size` bytes: fixed
// sizes for the common powers of two, memcpy of a run-time size otherwise.
template <class F>
decltype(auto) with_record_copy(std::size_t record_size, F&& f) {
  switch (record_size) {
    case 1: return f(FixedCopy<1>{});
    case 2: return f(FixedCopy<2>{});
    case 4: return f(FixedCopy<4>{});
    case 8: return f(FixedCopy<8>{});
    case 16: return f(FixedCopy<16>{});
    case 32: return f(FixedCopy<32>{});
    case 64: return f(FixedCopy<64>{});
    default: return f(VariableCopy{});
  }
}

// Prefetches the record at `from`: its first line and, when it straddles
// two, its last.
inline void prefetch_record(const std::byte* from, std::size_t record_size) {
  __builtin_prefetch(from);
  __builtin_prefetch(from + record_size - 1);
}

// The records of a gather and where the sources after them are: `ahead`
// continues `indices` (the next batch's, when they come in batches), so that
// the last records of a batch are prefetched like the others.
template <class Index>
struct GatherIndices {
  const Index* indices;
  std::uint64_t count;
  const Index* ahead = nullptr;
  std::uint64_t ahead_count = 0;
};

// to + k * record_size receives from + g.indices[k] * record_size for
// k < g.count, prefetching `distance` records ahead (0: none). One thread;
// no allocation.
template <class Copy, class Index>
void gather_records(const std::byte* from, const GatherIndices<Index>& g, std::size_t record_size, std::byte* to,
                    std::uint32_t distance = kGatherPrefetchRecords) {
  const Copy copy;
  std::uint64_t k = 0;
  if (record_size <= kGatherPrefetchMaxRecordBytes && distance > 0) {
    // 1. Sources within this batch; 2. the batch's last `distance` records,
    // prefetching the next batch's first sources.
    const std::uint64_t inside = g.count > distance ? g.count - distance : 0;
    for (; k < inside; ++k) {
      prefetch_record(from + g.indices[k + distance] * record_size, record_size);
      copy(to + k * record_size, from + g.indices[k] * record_size, record_size);
    }
    for (; k < g.count; ++k) {
      const std::uint64_t next = k + distance - g.count;
      if (next < g.ahead_count) prefetch_record(from + g.ahead[next] * record_size, record_size);
      copy(to + k * record_size, from + g.indices[k] * record_size, record_size);
    }
    return;
  }
  for (; k < g.count; ++k) copy(to + k * record_size, from + g.indices[k] * record_size, record_size);
}

// Prefetches the first `distance` sources of a gather that has no batch
// before it to do so.
template <class Index>
void prefetch_first(const std::byte* from, const Index* indices, std::uint64_t count, std::size_t record_size,
                    std::uint32_t distance = kGatherPrefetchRecords) {
  if (record_size > kGatherPrefetchMaxRecordBytes) return;
  for (std::uint64_t k = 0; k < count && k < distance; ++k)
    prefetch_record(from + indices[k] * record_size, record_size);
}

// The whole gather of `count` records through 32-bit indices, one thread:
// device::gather_by_permutation with a chosen prefetch distance (0: none).
void gather_indexed(const std::byte* from, const std::uint32_t* indices, std::uint64_t count, std::size_t record_size,
                    std::byte* to, std::uint32_t distance);

}  // namespace extshuffle::device::cpu

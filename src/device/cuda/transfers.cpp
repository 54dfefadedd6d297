#include "device/cuda/transfers.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "device/cuda/cuda_resources.hpp"

namespace extshuffle::device::cuda {
namespace {

// Copies below this many bytes stay on one thread; larger ones are cut into
// blocks of this size. Not measured on a GPU machine; one memcpy thread moves
// ~10 GB/s on this VM, under a PCIe 5 link's ~50 GB/s.
constexpr std::size_t kParallelCopyBlockBytes = std::size_t{1} << 20;

bool direct(const HostRange& r) {
  return r.bytes >= kDirectMinBytes && is_pinned(r.host) && is_pinned(r.host + r.bytes - 1);
}

// A piece being assembled in one pinned slot: device bytes [start, start + fill).
struct Piece {
  PinnedRing::Slot* slot = nullptr;
  std::uint64_t start = 0;
  std::uint64_t fill = 0;
  std::vector<HostRange> parts;  // copy out: where the slot's bytes go (device_offset from `start`)
};

}  // namespace

void copy_host_bytes(std::byte* to, const std::byte* from, std::size_t bytes, int threads) {
  if (bytes < 2 * kParallelCopyBlockBytes || threads <= 1) {
    std::memcpy(to, from, bytes);
    return;
  }
  const auto blocks = static_cast<std::int64_t>((bytes + kParallelCopyBlockBytes - 1) / kParallelCopyBlockBytes);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::size_t at = static_cast<std::size_t>(b) * kParallelCopyBlockBytes;
    std::memcpy(to + at, from + at, std::min(kParallelCopyBlockBytes, bytes - at));
  }
}

namespace {

// Walks `ranges` as the pieces they move in: each pinned range of at least
// kDirectMinBytes in parts of one slot's size, `direct_part(slot, range, at,
// bytes)`, a slot taken for each to keep the DMAs in ring order; the other
// ranges' bytes packed into staged pieces of one slot of device-contiguous
// bytes, `staged_part(range, at, bytes)` for each part as it joins `piece`,
// and `flush()` when a piece is complete.
template <class Direct, class Staged, class Flush>
void walk_pieces(std::span<const HostRange> ranges, PinnedRing& ring, Piece& piece, Direct&& direct_part,
                 Staged&& staged_part, Flush&& flush) {
  const std::uint64_t slot_bytes = ring.slot_bytes();
  for (const HostRange& r : ranges) {
    if (direct(r)) {
      flush();
      for (std::uint64_t at = 0; at < r.bytes; at += slot_bytes) {
        direct_part(ring.take(), r, at, std::min(slot_bytes, r.bytes - at));
      }
      continue;
    }
    for (std::uint64_t at = 0; at < r.bytes;) {
      if (piece.slot != nullptr && (piece.fill == slot_bytes || piece.start + piece.fill != r.device_offset + at)) {
        flush();
      }
      if (piece.slot == nullptr) {
        piece.slot = &ring.take();
        piece.start = r.device_offset + at;
      }
      const std::uint64_t bytes = std::min(slot_bytes - piece.fill, r.bytes - at);
      staged_part(r, at, bytes);
      piece.fill += bytes;
      at += bytes;
    }
  }
  flush();
}

}  // namespace

void Transfers::copy_in(std::span<const HostRange> ranges, std::byte* d_base, cudaStream_t stream,
                        const AwaitHostBytes& await) {
  Piece piece;
  walk_pieces(
      ranges, ring_, piece,
      [&](PinnedRing::Slot& slot, const HostRange& r, std::uint64_t at, std::uint64_t bytes) {
        if (await) await(r.device_offset + at + bytes);
        check(cudaMemcpyAsync(d_base + r.device_offset + at, r.host + at, bytes, cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync");
        slot.done.record(stream);
        slot.busy = true;
      },
      [&](const HostRange& r, std::uint64_t at, std::uint64_t bytes) {
        if (await) await(r.device_offset + at + bytes);
        copy_host_bytes(piece.slot->data + piece.fill, r.host + at, bytes, threads_);
      },
      [&] {
        if (piece.slot == nullptr) return;
        check(cudaMemcpyAsync(d_base + piece.start, piece.slot->data, piece.fill, cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync");
        piece.slot->done.record(stream);
        piece.slot->busy = true;
        piece = Piece{};
      });
}

void Transfers::copy_out(std::span<const HostRange> ranges, const std::byte* d_base, cudaStream_t stream,
                         const HostBytesLanded& landed) {
  const int threads = threads_;
  Piece piece;
  walk_pieces(
      ranges, ring_, piece,
      [&](PinnedRing::Slot& slot, const HostRange& r, std::uint64_t at, std::uint64_t bytes) {
        check(cudaMemcpyAsync(r.host + at, d_base + r.device_offset + at, bytes, cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync");
        slot.done.record(stream);
        slot.busy = true;
        if (landed) slot.then = [host = r.host + at, bytes, landed] { landed(host, bytes); };
      },
      [&](const HostRange& r, std::uint64_t at, std::uint64_t bytes) {
        piece.parts.push_back({r.host + at, piece.fill, bytes});
      },
      [&] {
        if (piece.slot == nullptr) return;
        PinnedRing::Slot& slot = *piece.slot;
        check(cudaMemcpyAsync(slot.data, d_base + piece.start, piece.fill, cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync");
        slot.done.record(stream);
        slot.busy = true;
        slot.then = [data = slot.data, parts = std::move(piece.parts), threads, landed] {
          for (const HostRange& p : parts) {
            copy_host_bytes(p.host, data + p.device_offset, p.bytes, threads);
            if (landed) landed(p.host, p.bytes);
          }
        };
        piece = Piece{};
      });
}

}  // namespace extshuffle::device::cuda

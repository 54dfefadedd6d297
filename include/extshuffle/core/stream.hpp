// Addressed random streams on Philox4x32-10 (Random123).
//
// Every random decision of the permutation is drawn from a stream named by
// what it is for: (node, purpose, index), docs/conventions.md, The canonical plan. Nothing depends on
// the order in which work runs, so results cannot depend on thread count,
// memory budget or device.
//
// Layout of one Philox call (key = the 64-bit seed):
//   counter word 0 = purpose (4 bits) << 28 | block counter (28 bits)
//   counter word 1 = index (32 bits)
//   counter words 2, 3 = node code = depth << 56 | first output position
// The packing is injective on its domain, so distinct addresses never share a
// Philox block; check_stream_address() enforces the domain on the host.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <Random123/philox.h>

#include "extshuffle/core/host_device.hpp"

namespace extshuffle::core {

// What a stream is for. Values are part of the permutation version (2).
// Value 3 was version 1's matrix row stream (rows drawn in chunk order); it is
// retired, not reused. Values 5 and 6 are not in the permutation: they fix
// what --repeat and very large -i ranges output for a seed.
enum class Purpose : std::uint32_t {
  kLeafShuffle = 1,   // keys of the bijective shuffle of a leaf node
  kChunkShuffle = 2,  // keys of the bijective shuffle of chunk `index` of a split node
  kMatrixSplit = 4,   // the split at row `index` of a split node's communication matrix (recursive_matrix.hpp)
  // Outside the permutation, one stream per element of a sequence
  // (sequence_address() below):
  kRepeatDraw = 5,    // --repeat: the record of draw j, with replacement
  kRangeSample = 6,   // -i LO-HI beyond the plan's reach: the number at position j, without replacement
  kLab = 15,          // free streams for statistical experiments, never in the permutation
};

// A node of the canonical plan: its depth and the output position of its first record.
struct NodeId {
  std::uint32_t depth = 0;
  std::uint64_t first = 0;
};

struct StreamAddress {
  NodeId node;
  Purpose purpose = Purpose::kLab;
  std::uint64_t index = 0;
};

inline constexpr std::uint64_t kMaxNodeFirst = (std::uint64_t{1} << 56) - 1;
inline constexpr std::uint32_t kMaxDepth = 255;
inline constexpr std::uint64_t kMaxStreamIndex = 0xFFFFFFFFull;
inline constexpr std::uint32_t kMaxStreamBlocks = 1u << 28;

// Throws std::out_of_range if the address lies outside the injective packing.
inline void check_stream_address(const StreamAddress& address) {
  if (address.node.first > kMaxNodeFirst || address.node.depth > kMaxDepth ||
      address.index > kMaxStreamIndex) {
    throw std::out_of_range("stream address out of range: depth " +
                            std::to_string(address.node.depth) + ", first " +
                            std::to_string(address.node.first) + ", index " +
                            std::to_string(address.index));
  }
}

// The stream of element j (any 64-bit j) of a sequence drawn for `purpose`:
// node (depth 0, first = j >> 32), index = j mod 2^32. Purposes 5 and 6 are
// used by nothing else, so these never meet a stream of the permutation.
inline StreamAddress sequence_address(Purpose purpose, std::uint64_t j) {
  return StreamAddress{NodeId{0, j >> 32}, purpose, j & kMaxStreamIndex};
}

// Sequential draws from one addressed stream. Cheap to construct (no Philox
// call until the first draw); copying it copies its position.
class Stream {
 public:
  EXTSHUFFLE_HOST_DEVICE Stream(std::uint64_t seed, const StreamAddress& address) {
    key_.v[0] = static_cast<std::uint32_t>(seed);
    key_.v[1] = static_cast<std::uint32_t>(seed >> 32);
    const std::uint64_t node_code =
        (std::uint64_t{address.node.depth} << 56) | (address.node.first & kMaxNodeFirst);
    purpose_bits_ = static_cast<std::uint32_t>(address.purpose) << 28;
    counter_.v[0] = 0;
    counter_.v[1] = static_cast<std::uint32_t>(address.index);
    counter_.v[2] = static_cast<std::uint32_t>(node_code);
    counter_.v[3] = static_cast<std::uint32_t>(node_code >> 32);
  }

  // Next 32 random bits. Blocks of four words are consumed in order.
  EXTSHUFFLE_HOST_DEVICE std::uint32_t next_u32() {
    if (used_ == 4) refill();
    return block_.v[used_++];
  }

  EXTSHUFFLE_HOST_DEVICE std::uint64_t next_u64() {
    const std::uint64_t lo = next_u32();
    const std::uint64_t hi = next_u32();
    return (hi << 32) | lo;
  }

  // Uniform double in the open interval (0, 1): 53 random bits, centred in
  // their cell, so log(u) and 1/u are always finite.
  EXTSHUFFLE_HOST_DEVICE double next_double_open() {
    return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53;
  }

  // Uniform integer in [0, bound) for 0 < bound <= 2^64-1, by Lemire's
  // multiply-and-reject method: exact, no modulo bias.
  EXTSHUFFLE_HOST_DEVICE std::uint64_t next_below(std::uint64_t bound) {
    for (;;) {
      const std::uint64_t x = next_u64();
      const unsigned __int128 m = static_cast<unsigned __int128>(x) * bound;
      const std::uint64_t low = static_cast<std::uint64_t>(m);
      if (low >= bound || low >= (0 - bound) % bound) return static_cast<std::uint64_t>(m >> 64);
    }
  }

  // Blocks drawn so far (each is one Philox4x32-10 call, four words).
  EXTSHUFFLE_HOST_DEVICE std::uint32_t blocks_used() const { return blocks_; }

 private:
  EXTSHUFFLE_HOST_DEVICE void refill() {
    r123::Philox4x32::ctr_type counter = counter_;
    counter.v[0] = purpose_bits_ | (blocks_ & (kMaxStreamBlocks - 1));
    block_ = r123::Philox4x32()(counter, key_);
    ++blocks_;
    used_ = 0;
  }

  r123::Philox4x32::key_type key_;
  r123::Philox4x32::ctr_type counter_;
  r123::Philox4x32::ctr_type block_{};
  std::uint32_t purpose_bits_ = 0;
  std::uint32_t blocks_ = 0;
  std::uint32_t used_ = 4;
};

}  // namespace extshuffle::core

// The index form of one bijective shuffle (Mitchell et al., Algorithm 1):
// which input record each output position takes, or where each input record
// goes, as 32-bit indices, without moving any record. The walk uses it
// where records are too large, or too many, to be shuffled in place: a chunk
// whose records are routed one by one to their buckets, a leaf emitted by
// gathering from memory or by windows through scratch space.
#pragma once

#include <cstddef>
#include <cstdint>

#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::device {

// For the shuffle of m records by f (m <= 2^32): permutation[k] is the input
// record that output position k takes, so that shuffle_records' output[k]
// = input[permutation[k]]. Cost: one evaluation of f per domain index, on up
// to `threads` threads (0: all cores); the result does not depend on them.
void shuffle_permutation(const core::VariablePhilox& f, std::uint64_t m, std::uint32_t* permutation,
                         int threads = 0);

// The inverse: inverse[e] is the output position that input record e takes.
void shuffle_inverse(const core::VariablePhilox& f, std::uint64_t m, std::uint32_t* inverse, int threads = 0);

// The records a permutation orders: out + k * record_size receives
// records + permutation[k] * record_size, for k < count, on the calling
// thread. Each source is prefetched a fixed distance ahead of its copy
// (docs/benchmarks.md, "Prefetched gathers"); the bytes are those of the
// plain loop. `out` must not overlap the sources.
void gather_by_permutation(const std::byte* records, const std::uint32_t* permutation, std::uint64_t count,
                           std::size_t record_size, std::byte* out);

}  // namespace extshuffle::device

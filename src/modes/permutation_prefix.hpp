// The first K positions of P(seed, N) without the other N - K: what `-i
// LO-HI -n K` needs when the range is far larger than K (shuf's
// `-i 1-$SIZE_MAX -n 2`). The plan is walked backwards from the output:
// output position j lies in one bucket of the root, that bucket's input is
// the concatenation of one slice of every chunk's shuffle (the communication
// matrix says which), so each position is traced down to its leaf and back
// up through the chunk shuffles to the input index it came from.
#pragma once

#include <cstdint>
#include <vector>

#include "extshuffle/core/plan.hpp"

namespace extshuffle::modes {

// order[j] = the input index of the record that P(seed, n) puts at output
// position j, for j < min(k, n): the same numbers as the first k of
// oracle_order() and of the walk, for any n that check_plan() accepts.
//
// Cost, for k within bucket 0 of every level (k <= L / 2 is always so):
// per level, one matrix split per range on the paths from the root of the
// chunk tree to the rows the k positions come from (at most k x log2(chunks)
// hypergeometric draws, ~200 ns each), and the chunk shuffles' bijection at
// k points (a chunk of L records has a domain of exactly L, so a point costs
// one evaluation; a shorter chunk or leaf is compacted up to the position
// wanted, at most twice that many evaluations). Past bucket 0 each split
// draws one more colour per bucket spanned. Memory: O(k) words. Throws
// std::invalid_argument if check_plan() rejects n.
std::vector<std::uint64_t> permutation_prefix(std::uint64_t seed, std::uint64_t n, std::uint64_t k,
                                              const core::PlanConstants& constants);

// An estimate of permutation_prefix()'s work for (n, k) in hypergeometric
// draws (the unit that dominates it), to compare with writing and shuffling
// all n indices. Cost: one walk down the plan's first buckets.
double permutation_prefix_draws(std::uint64_t n, std::uint64_t k, const core::PlanConstants& constants);

}  // namespace extshuffle::modes

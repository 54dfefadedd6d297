// The inverse of VariablePhilox (Mitchell et al. 3.2: every round is
// invertible, which is why the network is a bijection): the library's
// (extshuffle/core/variable_philox_inverse.hpp), and what the lab builds on it.
//
// With f^-1 the bijective shuffle of n records needs no pass over the whole
// domain: the records 0..n-1 land in the order of their preimages f^-1(v)
// (Algorithm 1 keeps the domain indices i with f(i) < n in increasing order).
// That makes the chi-square test at n = 5 cheap for any domain width, e.g.
// the paper's 2^3 or widths far above the project's minimum of 2^4.
#pragma once

#include <cstdint>
#include <span>

#include "extshuffle/core/variable_philox.hpp"
#include "extshuffle/core/variable_philox_inverse.hpp"

namespace permlab {

// f^-1(value) for value in [0, f.domain_size()); f(inverse(f, x)) == x.
using extshuffle::core::variable_philox_inverse;

// The order the bijective shuffle gives n records (n <= order.size() <= 64):
// order[i] = the record at output position i. Cost n inversions and a sort.
void order_by_inverse(const extshuffle::core::VariablePhilox& f, std::span<std::uint32_t> order);

}  // namespace permlab

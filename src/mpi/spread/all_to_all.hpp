// MPI's all-to-all exchanges as the spread root uses them (record_fetch.hpp,
// output_cut.hpp): counts and displacements are ints, so every count and
// every sum of them is checked to fit.
#pragma once

#include <cstdint>
#include <vector>

namespace extshuffle::mpi {

// `n` as an MPI count; throws InputError when it exceeds INT_MAX.
int as_count(std::uint64_t n);

// Exclusive sums of `counts`, as MPI displacements (their total checked too).
std::vector<int> displacements(const std::vector<int>& counts);

// One int to and from every rank (MPI_Alltoall).
std::vector<int> all_to_all(const std::vector<int>& counts);

// Values grouped by destination (`send_counts` each); returns those
// received, grouped by source (`receive_counts` each).
std::vector<std::uint64_t> all_to_all(const std::vector<std::uint64_t>& values, const std::vector<int>& send_counts,
                                      const std::vector<int>& receive_counts);

}  // namespace extshuffle::mpi

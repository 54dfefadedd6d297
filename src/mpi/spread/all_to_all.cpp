#include "all_to_all.hpp"

#include <mpi.h>

#include <climits>
#include <string>

#include "extshuffle/errors.hpp"

namespace extshuffle::mpi {

int as_count(std::uint64_t n) {
  if (n > static_cast<std::uint64_t>(INT_MAX)) {
    throw InputError("a round of the record exchange would move " + std::to_string(n) +
                     " bytes or values at once, more than MPI counts (2^31 - 1)");
  }
  return static_cast<int>(n);
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> at(counts.size());
  std::uint64_t sum = 0;
  for (std::size_t q = 0; q < counts.size(); ++q) {
    at[q] = as_count(sum);
    sum += static_cast<std::uint64_t>(counts[q]);
  }
  as_count(sum);
  return at;
}

std::vector<int> all_to_all(const std::vector<int>& counts) {
  std::vector<int> theirs(counts.size());
  MPI_Alltoall(counts.data(), 1, MPI_INT, theirs.data(), 1, MPI_INT, MPI_COMM_WORLD);
  return theirs;
}

std::vector<std::uint64_t> all_to_all(const std::vector<std::uint64_t>& values, const std::vector<int>& send_counts,
                                      const std::vector<int>& receive_counts) {
  const std::vector<int> send_at = displacements(send_counts), receive_at = displacements(receive_counts);
  std::uint64_t total = 0;
  for (const int c : receive_counts) total += static_cast<std::uint64_t>(c);
  std::vector<std::uint64_t> received(total);
  MPI_Alltoallv(values.data(), send_counts.data(), send_at.data(), MPI_UINT64_T, received.data(), receive_counts.data(),
                receive_at.data(), MPI_UINT64_T, MPI_COMM_WORLD);
  return received;
}

}  // namespace extshuffle::mpi

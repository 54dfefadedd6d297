// --dry-run under MPI: after extshuffle's own plan, what each rank would
// do: its share of the records and of their bytes (the records it holds:
// the top-level chunks it would scatter, or its share of a spread root).
#pragma once

#include <string>

#include "inputs/distributed_input.hpp"

namespace extshuffle::mpi {

// "rank R: N records, B bytes", one line a rank.
std::string describe_shares(const DistributedInput::State& in, int ranks);

}  // namespace extshuffle::mpi

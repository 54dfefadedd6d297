// A root of at most L records (a leaf: one bijective shuffle, no split),
// spread over the ranks so that each reads, sends and writes about 1/P of
// it, the output byte for byte extshuffle's:
//   1. each rank holds an even share of the records (held_record_split;
//      held_records.hpp);
//   2. the leaf's shuffle is a keyed bijection f on a domain of 2^bits >= N
//      indices, compacted: output position j takes input record f(i_j),
//      where i_0 < i_1 < ... are the domain indices whose image is below N
//      (Mitchell et al., Listing 1; modes/permutation_prefix.cpp traces the
//      same). Rank r evaluates f on its even share of the domain, in order:
//      the images below N are, in output order, the input records of its
//      range of the output, which starts at the exclusive sum of the ranks'
//      counts;
//   3. each rank fetches those records from their holders by exchange
//      (record_fetch.hpp) and writes its range of the output at its offset
//      (text: the exclusive sum of the ranks' bytes), the header by rank 0.
// With -n the ranges are cut at the first K output positions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "distributed_input.hpp"
#include "extshuffle/mpi/communicator.hpp"
#include "extshuffle/mpi/distributed_run.hpp"
#include "shared_output.hpp"

namespace extshuffle::mpi {

// The input records (of the leaf root of `records` records under `seed`)
// that rank `rank` of `ranks`'s share of the domain gives, in output order.
std::vector<std::uint64_t> leaf_range_inputs(std::uint64_t seed, std::uint64_t records, int rank, int ranks);

// Shuffles the leaf root `in` into `output`, every rank its share; adds
// what this rank did to `stats`. `display_name` names the input. Throws
// RankFailure on every rank. Collective.
void spread_leaf(const JobOptions& config, DistributedInput::State& in, const std::string& display_name,
                 SharedOutput& output, Communicator& comm, RankStats& stats);

}  // namespace extshuffle::mpi

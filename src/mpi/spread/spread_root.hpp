// A root spread over the ranks (distribution.hpp, spread_root(): a leaf,
// or two levels with too few chunks for an even split of whole chunks), so
// that each rank reads, sends and writes about 1/P of it, the output byte
// for byte extshuffle's:
//   1. each rank holds the records that start in its 1/P of the input's
//      bytes (text_split.hpp, held_records_by_bytes in dataset_cuts.hpp;
//      fixed-size records: held_record_split; held_records.hpp);
//   2. the root's leaf shuffles (the root's own, or one per bucket) are
//      keyed bijections on power-of-two domains, compacted: domain points
//      whose image is below the leaf's records give, in order, its output
//      (Mitchell et al., Listing 1). Laid end to end, the buckets' domains
//      are the root's (ioperm/output_sources.hpp, RootSources); rank r
//      takes its share of it, cut where near-equal outputs fall on each
//      side, and traces each output back (bucket -> the matrix column ->
//      the chunk's shuffle -> the input index) to learn the input records
//      of its share; the output is then cut by bytes (output_cut.hpp), each
//      rank's range starting at the exclusive sum of the ranks' counts. Splitting the domain, not the output positions,
//      keeps each rank's bijection evaluations to its own share: a rank
//      whose range began inside a bucket would otherwise walk that bucket's
//      domain from its start (with 2 chunks on 4 ranks, up to 3 shares);
//   3. each rank fetches those records from their holders by exchange
//      (record_fetch.hpp) and writes its range of the output at its offset
//      (text: the exclusive sum of the ranks' bytes), the header by rank 0.
// With -n the ranges are cut at the first K output positions.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "inputs/distributed_input.hpp"
#include "extshuffle/core/plan.hpp"
#include "extshuffle/mpi/communicator.hpp"
#include "extshuffle/mpi/distributed_run.hpp"
#include "outputs/rank_sink.hpp"

namespace extshuffle::mpi {

// The input records (of the spread root of `records` records under `seed`)
// that rank `rank` of `ranks`'s share of the root's domain gives, in output
// order. Memory: a word per record of the share.
std::vector<std::uint64_t> root_range_inputs(std::uint64_t seed, std::uint64_t records,
                                             const core::PlanConstants& constants, int rank, int ranks);

// Shuffles the spread root `in` into `output`, every rank its share; adds
// what this rank did to `stats`. `display_name` names the input. Throws
// RankFailure on every rank. Collective.
// The sink of this rank's range of the output: records [first_record,
// end_record) from stream byte first_byte (rank_sink.hpp).
using OpenRankSink =
    std::function<RankSink&(std::uint64_t first_record, std::uint64_t end_record, std::uint64_t first_byte)>;

// `output_records`: the output's first records that are written (-n, or
// where the last split ends). `progress`, when set, counts the bytes this
// rank writes (--progress on rank 0).
void shuffle_spread_root(const ioperm::RunOptions& run, std::uint64_t output_records, DistributedInput::State& in,
                         const std::string& display_name, const OpenRankSink& open_sink, Communicator& comm,
                         RankStats& stats, std::atomic<std::uint64_t>* progress = nullptr);

}  // namespace extshuffle::mpi

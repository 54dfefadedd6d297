// The fields of extshuffle-mpi's RANK lines (--stats: one a rank, after
// the job's RESULT line): mpi::RankStats as one list, printed as the RESULT
// line's fields are (cli/result_fields.hpp).
#pragma once

#include <array>

#include "cli/result_fields.hpp"
#include "extshuffle/mpi/distributed_run.hpp"

namespace extshuffle::cli {

inline constexpr std::array<StatField<mpi::RankStats>, 21> kRankFields{{
    {"rank", &mpi::RankStats::rank},
    {"chunks", &mpi::RankStats::chunks},
    {"buckets", &mpi::RankStats::buckets},
    {"splits_drawn", &mpi::RankStats::splits_drawn},
    {"rounds", &mpi::RankStats::rounds},
    {"sub_rounds", &mpi::RankStats::sub_rounds},
    {"bytes_sent", &mpi::RankStats::bytes_sent},
    {"bytes_received", &mpi::RankStats::bytes_received},
    {"count_bytes_sent", &mpi::RankStats::count_bytes_sent},
    {"input_bytes_read", &mpi::RankStats::input_bytes_read},
    {"layout_bytes_read", &mpi::RankStats::layout_bytes_read},
    {"bytes_read", &mpi::RankStats::bytes_read},
    {"bytes_written", &mpi::RankStats::bytes_written},
    {"output_bytes", &mpi::RankStats::output_bytes},
    {"peak_rss_bytes", &mpi::RankStats::peak_rss_bytes},
    {"seconds", &mpi::RankStats::seconds},
    {"seconds_counting", &mpi::RankStats::seconds_counting},
    {"seconds_scattering", &mpi::RankStats::seconds_scattering},
    {"seconds_exchanging", &mpi::RankStats::seconds_exchanging},
    {"seconds_buckets", &mpi::RankStats::seconds_buckets},
    {"seconds_committing", &mpi::RankStats::seconds_committing},
}};
static_assert(lists_every_member(kRankFields), "a member of mpi::RankStats is missing from kRankFields");

}  // namespace extshuffle::cli

// shuf's generated inputs (-e ARG..., -i LO-HI): no file is read; the N
// items are printed one per line in the order P(seed, N) that a file of N
// records takes.
#pragma once

#include "extshuffle/driver/config.hpp"
#include "extshuffle/driver/run.hpp"

namespace extshuffle::driver {

// Shuffles config.echo_items or the integers config.range_low..range_high
// into config.output_path. The indices 0..N-1 are written as 8-byte records
// to scratch space (8 N bytes) and shuffled by the fixed-size executor; the
// sink prints the item each index names. Returns the stats but seconds and
// peak_rss_bytes, which the caller measures. Throws IoError, BudgetError.
RunStats run_generated(const Config& config);

}  // namespace extshuffle::driver

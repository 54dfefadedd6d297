// The tests' name for the statistics helpers of extshuffle_labstats
// (tools/labstats/include/labstats/statistics.hpp), which tools/permlab shares:
// no copy here, only the names in extshuffle::testing.
#pragma once

#include "labstats/statistics.hpp"

namespace extshuffle::testing {

using labstats::chi_square_p_value;
using labstats::chi_square_statistic;
using labstats::ChiSquareResult;
using labstats::normal_two_sided_p_value;
using labstats::pooled_chi_square;
using labstats::regularized_gamma_q;

}  // namespace extshuffle::testing

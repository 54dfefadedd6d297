// --dry-run's report (docs/cli.md): the plan, the schedule the run would
// follow (the run's own decisions, ioperm/node_path.hpp, computed without
// IO) and the budgets from which fewer passes would do.
#pragma once

#include <cstdint>
#include <string>

#include "extshuffle/dataset/input_layout.hpp"
#include "extshuffle/ioperm/fixed_size_shuffle.hpp"
#include "extshuffle/job.hpp"

namespace extshuffle::driver {

// The schedule of a dataset of `record_bytes` bytes of records. For text,
// from what the counting pass found: the longest record and the records'
// spread in size (ioperm/node_path.hpp).
ioperm::Schedule schedule_for(const JobOptions& options, const dataset::InputLayout& layout,
                              std::uint64_t record_bytes);

// Three lines, each ending in '\n': the plan, the schedule, the expected IO.
std::string describe_schedule(const dataset::InputLayout& layout, const JobOptions& options,
                              const ioperm::Schedule& schedule);

// One line "fewer passes: ..." naming the -S of each smaller pass count, or
// nothing when no budget up to 2^60 bytes saves a pass. Cost: a bisection
// over schedule_for() per pass count.
// The scratch space the run needs at most: the spool of compressed inputs
// and pipes, and the buckets of its passes through disk.
std::string describe_scratch(const JobOptions& options, std::uint64_t spooled_bytes, std::uint64_t record_bytes,
                             const ioperm::Schedule& s);

// A dry run of shuf's -r, -e, -i or -n 0: what it would output.
std::string describe_mode(const JobOptions& options);

std::string describe_fewer_passes(const dataset::InputLayout& layout, const JobOptions& options,
                                  std::uint64_t record_bytes, std::uint32_t passes);

}  // namespace extshuffle::driver

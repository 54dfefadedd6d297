// One part of --split as the Job's options hold it (job.hpp); what the
// parts mean for the output, and the parser, are in output_parts.hpp. In
// the dataset room, which cuts the output into files; the Job, above it,
// holds them.
#pragma once

#include <cstdint>
#include <string>

namespace extshuffle {

// One part of --split: its name and its size, a decimal fraction of the
// records or a count of them.
struct SplitPart {
  std::string name;
  std::string size_text;  // as written ("0.98", "5000"), for the manifest
  bool is_fraction = false;
  bool is_rest = false;     // SIZE "rest": the records the other splits leave
  std::uint64_t count = 0;  // records, when not a fraction
  // The fraction, exactly as written: numerator / 10^decimals.
  std::uint64_t numerator = 0;
  unsigned decimals = 0;
};

}  // namespace extshuffle

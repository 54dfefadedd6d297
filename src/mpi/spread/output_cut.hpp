// Each rank's range of a spread root's output cut by bytes (docs/mpi.md,
// "How the work is shared"). The trace gives each rank the outputs of its
// share of the root's domain, cut where equal counts of records are
// expected: near-equal counts, but with records of uneven sizes, uneven
// bytes (and, with a domain wider than the records, counts uneven within
// sampling noise). The output stream (the header, then the records in
// output order) is cut instead at bytes T r / P of its T bytes: rank r
// writes the records that start in [T r / P, T (r + 1) / P). Each rank
// knows where its traced records start in the stream (an exclusive sum of
// the ranks' bytes) and sends each one's index and length to the rank
// that writes it; the records stay in output order (the ranges are
// contiguous and ascend with the rank), so the output is the same; only
// who writes which part of it changes. A rank's bytes then differ from
// T / P by less than the longest record.
#pragma once

#include <cstdint>
#include <vector>

#include "extshuffle/mpi/communicator.hpp"

namespace extshuffle::mpi {

struct OutputRange {
  std::vector<std::uint64_t> inputs;   // the input records of this rank's range, in output order
  std::vector<std::uint64_t> lengths;  // their bytes
};

// The range of the output this rank writes, cut by bytes, given the
// records this rank traced (`traced`, in output order, the ranks' traces
// one after another in rank order) and a header of `header_bytes` bytes
// before the records (written by rank 0, counted in its bytes). Memory:
// two words per record traced and received, the traced ones released
// before the exchange, so four words a record at most. Collective.
OutputRange cut_output_by_bytes(OutputRange traced, std::uint64_t header_bytes, Communicator& comm);

}  // namespace extshuffle::mpi

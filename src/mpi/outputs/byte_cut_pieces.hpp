// --shard-size on text records under MPI. extshuffle ends a shard before
// the record that would take its records' bytes past the size (a shard
// holds one record at least; a split's end ends its shard): where a shard
// ends depends on the size of every record before it in its split, so no
// rank can cut its range alone. Each rank spools its output range to its
// scratch space (RangeSpool), then the ranks scan in rank order, each
// starting from the state the rank before it ends with (the shard being
// filled and its bytes), and tell every rank where their shards start;
// the pieces are then planned as for any cut and the spools replayed into
// them (piece_sink.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "extshuffle/dataset/record_cutter.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/mpi/communicator.hpp"
#include "piece_plan.hpp"

namespace extshuffle::mpi {

// A rank's output range in its scratch space, whole records in order, in
// pieces of about 1 MiB that each end where a write of whole records ended.
class RangeSpool {
 public:
  explicit RangeSpool(const std::string& directory);
  void write(const std::byte* data, std::size_t bytes);
  void finish();  // writes what is buffered
  // Hands the spooled bytes back in order, in those pieces.
  void replay(const std::function<void(const std::byte*, std::size_t)>& sink) const;

 private:
  std::unique_ptr<io::BlockFile> file_;
  std::string buffer_;
  std::uint64_t bytes_ = 0;
  std::vector<std::uint64_t> pieces_;  // the bytes of each, in order
};

// Collective: the pieces of `plan` (planned with cut_by_bytes) from every
// rank's spool of output records [first_record, end_record). Returns the
// bytes of the piece this rank's first record continues, before that
// record (0 when it starts a piece). Throws RankFailure on every rank.
std::uint64_t cut_pieces_by_bytes(PiecePlan& plan, const JobOptions& options, const std::string& pattern,
                                  const RangeSpool& spool, const dataset::RecordCutter& cutter,
                                  std::uint64_t first_record, std::uint64_t end_record, Communicator& comm);

}  // namespace extshuffle::mpi

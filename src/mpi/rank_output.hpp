// A rank's part of the output: its buckets' records, in bucket order, from
// the output position of its first bucket; in the file, from an offset that
// fixed-size records give by arithmetic and text records by an exclusive sum
// of the ranks' bytes (a bucket's output holds exactly the bytes it
// received). With -n, the records past the first K are cut here, counted
// from the output position of the rank's first bucket: the driver's own cut
// counts from the start of each rank's walk, so it may hand on a few records
// more.
#pragma once

#include <cstddef>
#include <cstdint>

#include "distribution.hpp"
#include "extshuffle/formats/record_syntax.hpp"
#include "output_range.hpp"

namespace extshuffle::mpi {

class RankOutput {
 public:
  // `record_size` 0: text records of `syntax`. `head_count`: -n.
  RankOutput(const Distribution& d, int rank, std::size_t record_size, const formats::RecordSyntax& syntax,
             std::uint64_t head_count, std::uint64_t header_bytes);
  // Where this rank's buckets start in the output file, given the bytes
  // its kept buckets hold. Collective.
  std::uint64_t offset(std::uint64_t bucket_bytes, Communicator& comm);
  // Hands on the driver's output (whole records), cut after the first
  // head_count records of the permutation.
  void write(OutputRange& writer, const std::byte* data, std::uint64_t bytes);
  // The output position of this rank's first record.
  std::uint64_t first_record() const { return first_position_; }

 private:
  const Distribution& d_;
  int rank_;
  std::size_t record_size_;
  formats::RecordSyntax syntax_;
  std::uint64_t head_count_, header_bytes_;
  std::uint64_t first_position_ = 0;
  bool whole_range_ = true;   // the rank's records are all wanted
  std::uint64_t wanted_ = 0;  // otherwise, how many more are
};

}  // namespace extshuffle::mpi

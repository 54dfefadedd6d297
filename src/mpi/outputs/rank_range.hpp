// A rank's part of the output: its buckets' records, in bucket order, from
// the output position of its first bucket; in the file, from an offset that
// fixed-size records give by arithmetic and text records by an exclusive sum
// of the ranks' bytes (a bucket's output holds exactly the bytes it
// received). With -n, the records past the first K are cut here, counted
// from the output position of the rank's first bucket: the walk's own cut
// counts from the start of each rank's walk, so it may hand on a few records
// more.
#pragma once

#include <cstddef>
#include <cstdint>

#include "distribution.hpp"
#include "extshuffle/formats/record_syntax.hpp"

namespace extshuffle::mpi {

class RankRange {
 public:
  // `record_size` 0: text records of `syntax`. `head_count`: -n.
  RankRange(const Distribution& d, int rank, std::size_t record_size, const formats::RecordSyntax& syntax,
            std::uint64_t head_count, std::uint64_t header_bytes);
  // Where this rank's buckets start in the output file, given the bytes
  // its kept buckets hold. Collective.
  std::uint64_t offset(std::uint64_t bucket_bytes, Communicator& comm);
  // Hands on the walk's output (whole records) to `sink`, cut after the
  // first head_count records of the permutation.
  template <class Sink>
  void write(const std::byte* data, std::uint64_t bytes, Sink&& sink) {
    sink(data, whole_range_ ? bytes : wanted_bytes(data, bytes));
  }
  // A resumed range (--checkpoint): the walk's output starts at bucket
  // `bucket` (one of this rank's, or its end); returns the output record
  // it starts at (head_count applied).
  std::uint64_t resume_at(std::uint64_t bucket);
  // The output position (a record of the permutation) bucket j starts at.
  std::uint64_t bucket_position(std::uint64_t j) const;
  // This rank's range of the output's records (head_count applied).
  std::uint64_t first_record() const { return first_record_; }
  std::uint64_t end_record() const { return end_record_; }

 private:
  const Distribution& d_;
  int rank_;
  std::size_t record_size_;
  formats::RecordSyntax syntax_;
  std::uint64_t head_count_, header_bytes_;
  std::uint64_t wanted_bytes(const std::byte* data, std::uint64_t bytes);
  std::uint64_t first_record_ = 0, end_record_ = 0, end_position_ = 0;
  bool whole_range_ = true;   // the rank's records are all wanted
  std::uint64_t wanted_ = 0;  // otherwise, how many more are
};

}  // namespace extshuffle::mpi

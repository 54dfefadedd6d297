#include "rank_range.hpp"

#include <algorithm>

namespace extshuffle::mpi {

RankRange::RankRange(const Distribution& d, int rank, std::size_t record_size, const formats::RecordSyntax& syntax,
                     std::uint64_t head_count, std::uint64_t header_bytes)
    : d_(d), rank_(rank), record_size_(record_size), syntax_(syntax), head_count_(head_count),
      header_bytes_(header_bytes) {
  const std::uint64_t first = std::min(d.first_bucket(rank), d.buckets);
  const std::uint64_t end = std::min(d.end_bucket(rank), d.buckets);
  end_position_ = bucket_position(end);
  end_record_ = std::min(end_position_, head_count);
  first_record_ = resume_at(first);
}

std::uint64_t RankRange::bucket_position(std::uint64_t j) const {
  return j < d_.buckets ? core::bucket_first(d_.root.records, d_.buckets, j) : d_.root.records;
}

std::uint64_t RankRange::resume_at(std::uint64_t bucket) {
  const std::uint64_t position = bucket_position(std::min(bucket, d_.buckets));
  wanted_ = head_count_ > position ? head_count_ - position : 0;
  whole_range_ = wanted_ >= end_position_ - position;
  return std::min(position, head_count_);
}

std::uint64_t RankRange::offset(std::uint64_t bucket_bytes, Communicator& comm) {
  if (record_size_ > 0) {
    const std::uint64_t first = std::min(d_.first_bucket(rank_), d_.buckets);
    const std::uint64_t position = first < d_.buckets ? core::bucket_first(d_.root.records, d_.buckets, first) : 0;
    return header_bytes_ + position * record_size_;
  }
  return header_bytes_ + comm.exclusive_sum(bucket_bytes);
}

std::uint64_t RankRange::wanted_bytes(const std::byte* data, std::uint64_t bytes) {
  std::uint64_t take = 0;
  if (record_size_ > 0) {
    const std::uint64_t records = std::min<std::uint64_t>(bytes / record_size_, wanted_);
    take = records * record_size_;
    wanted_ -= records;
  } else {
    // Text: count whole records up to the cut.
    const auto* begin = reinterpret_cast<const char*>(data);
    const char* p = begin;
    formats::QuoteState state = formats::QuoteState::kFieldStart;
    while (wanted_ > 0 && p < begin + bytes) {
      // Framed records (TFRecord, tar samples) end where their length says.
      const char* end = syntax_.framing == formats::Framing::kLines
                            ? formats::find_record_end(p, begin + bytes, syntax_, state)
                            : formats::scan_record(p, begin + bytes, syntax_).end;
      p = end ? end : begin + bytes;
      --wanted_;
    }
    take = static_cast<std::uint64_t>(p - begin);
  }
  return take;
}

}  // namespace extshuffle::mpi

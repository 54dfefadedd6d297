#include "piece_plan.hpp"

#include <algorithm>

#include "extshuffle/dataset/output_parts.hpp"

namespace extshuffle::mpi {

std::size_t PiecePlan::piece_of(std::uint64_t record) const {
  // The last piece starting at or before `record` that holds records.
  auto after = std::upper_bound(pieces.begin(), pieces.end(), record,
                                [](std::uint64_t r, const Piece& p) { return r < p.first_record; });
  std::size_t k = static_cast<std::size_t>(after - pieces.begin()) - 1;
  while (pieces[k].records == 0 || record >= pieces[k].first_record + pieces[k].records) ++k;
  return k;
}

PiecePlan plan_pieces(const JobOptions& options, const std::string& output, std::size_t record_size,
                      std::uint64_t records) {
  PiecePlan plan;
  plan.several_files = dataset::writes_several_files(options.output.shard_count, options.output.shard_bytes,
                                                     options.output.splits.size());
  if (!plan.several_files) {
    plan.records = records;
    plan.pieces.push_back({output, "", 0, 1, 0, records});
    return plan;
  }
  dataset::check_output_pattern(output, options.output.shard_count, options.output.shard_bytes,
                                options.output.splits.size());
  const std::vector<std::uint64_t> ends = options.output.splits.empty()
                                              ? std::vector<std::uint64_t>{records}
                                              : dataset::split_ends(options.output.splits, records);
  plan.records = ends.back();
  plan.left_out = records - ends.back();
  plan.split_ends = ends;
  plan.cut_by_bytes = options.output.shard_count == 0 && options.output.shard_bytes > 0 && record_size == 0;
  if (plan.cut_by_bytes) return plan;
  std::uint64_t first = 0;
  for (std::size_t s = 0; s < ends.size(); ++s) {
    const std::string name = options.output.splits.empty() ? "" : options.output.splits[s].name;
    const std::uint64_t split_records = ends[s] - first;
    std::uint64_t shards = 1, per_shard = 0;
    if (options.output.shard_count > 0) {
      shards = options.output.shard_count;
    } else if (options.output.shard_bytes > 0) {
      // Fixed-size records: --shard-size is a number of records a shard.
      per_shard = std::max<std::uint64_t>(1, options.output.shard_bytes / record_size);
      shards = std::max<std::uint64_t>(1, (split_records + per_shard - 1) / per_shard);
    }
    for (std::uint64_t k = 0; k < shards; ++k) {
      const std::uint64_t n = per_shard > 0
                                  ? std::min(per_shard, split_records - std::min(split_records, k * per_shard))
                                  : dataset::shard_records(split_records, shards, k);
      plan.pieces.push_back({dataset::output_file_name(output, name, k, shards), name, k, shards, first, n});
      first += n;
    }
  }
  return plan;
}

}  // namespace extshuffle::mpi

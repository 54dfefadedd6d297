#include "byte_cut_pieces.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {
namespace {

constexpr std::size_t kBlockBytes = std::size_t{1} << 20;

// Where the scan stands after a record: the split and the shard being
// filled, and its records' bytes and count so far.
struct CutState {
  std::uint64_t split = 0, shard = 0, bytes = 0, records = 0;
};

// A shard that starts inside a rank's range: at output record `record`.
struct ShardStart {
  std::uint64_t record, split, shard;
};

// extshuffle's rule (dataset/sharded_output.cpp, ShardedOutput::write),
// over whole records from output record `cursor` on.
void scan(CutState& state, std::uint64_t& cursor, const std::vector<std::uint64_t>& ends, std::uint64_t max_bytes,
          const dataset::RecordCutter& cutter, const std::byte* data, std::size_t bytes,
          std::vector<ShardStart>& starts) {
  while (bytes > 0) {
    while (cursor == ends[state.split]) state = {state.split + 1, 0, 0, 0};  // a split ends its shard
    const std::uint64_t left = ends[state.split] - cursor;
    const dataset::RecordCutter::Cut in_split = cutter.take_records(data, bytes, left);
    const std::uint64_t room = max_bytes - std::min(max_bytes, state.bytes);
    const dataset::RecordCutter::Cut cut = cutter.take_bytes(data, in_split.bytes, room, state.records == 0);
    state.bytes += cutter.written_bytes(cut);
    state.records += cut.records;
    cursor += cut.records;
    data += cut.bytes;
    bytes -= cut.bytes;
    if (cut.records < in_split.records) {
      state = {state.split, state.shard + 1, 0, 0};
      starts.push_back({cursor, state.split, state.shard});
    }
  }
}

template <class T>
std::string as_bytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

template <class T>
std::vector<T> from_bytes(const std::string& text) {
  std::vector<T> values(text.size() / sizeof(T));
  std::memcpy(values.data(), text.data(), values.size() * sizeof(T));
  return values;
}

}  // namespace

RangeSpool::RangeSpool(const std::string& directory) : file_(io::BlockFile::create_scratch(directory)) {}

void RangeSpool::write(const std::byte* data, std::size_t bytes) {
  buffer_.append(reinterpret_cast<const char*>(data), bytes);
  if (buffer_.size() >= kBlockBytes) finish();
}

void RangeSpool::finish() {
  if (buffer_.empty()) return;
  file_->write_now(buffer_.data(), bytes_, buffer_.size());
  bytes_ += buffer_.size();
  pieces_.push_back(buffer_.size());
  buffer_.clear();
}

void RangeSpool::replay(const std::function<void(const std::byte*, std::size_t)>& sink) const {
  // Each piece ends where a write ended: whole records, without finding them.
  std::vector<std::byte> block(pieces_.empty() ? 0 : *std::max_element(pieces_.begin(), pieces_.end()));
  std::uint64_t offset = 0;
  for (const std::uint64_t bytes : pieces_) {
    file_->read_now(block.data(), offset, static_cast<std::size_t>(bytes));
    sink(block.data(), static_cast<std::size_t>(bytes));
    offset += bytes;
  }
}

std::uint64_t cut_pieces_by_bytes(PiecePlan& plan, const JobOptions& options, const std::string& pattern,
                                  const RangeSpool& spool, const dataset::RecordCutter& cutter,
                                  std::uint64_t first_record, std::uint64_t end_record, Communicator& comm) {
  // The ranks in order: each scans from the state the one before ends with.
  CutState state;
  std::uint64_t head_bytes = 0;
  std::vector<ShardStart> starts;  // every rank's, in order
  for (int q = 0; q < comm.size(); ++q) {
    std::string said;
    if (q == comm.rank()) {
      checkpoint(comm, [&] {
        head_bytes = state.bytes;
        std::uint64_t cursor = first_record;
        if (cursor < end_record && cursor == plan.split_ends[state.split]) head_bytes = 0;
        std::vector<ShardStart> mine;
        spool.replay([&](const std::byte* data, std::size_t bytes) {
          scan(state, cursor, plan.split_ends, options.output.shard_bytes, cutter, data, bytes, mine);
        });
        said = as_bytes(std::vector<CutState>{state}) + as_bytes(mine);
      });
    } else {
      checkpoint(comm, [] {});
    }
    said = comm.broadcast(said, q);
    state = from_bytes<CutState>(said.substr(0, sizeof(CutState))).front();
    for (const ShardStart& s : from_bytes<ShardStart>(said.substr(sizeof(CutState)))) starts.push_back(s);
  }
  // The pieces: each split's first shard at its start, then the starts found.
  plan.pieces.clear();
  std::uint64_t first = 0;
  std::size_t next = 0;
  for (std::size_t s = 0; s < plan.split_ends.size(); ++s) {
    std::vector<std::uint64_t> begin{first};
    for (; next < starts.size() && starts[next].split == s; ++next) begin.push_back(starts[next].record);
    begin.push_back(plan.split_ends[s]);
    const std::string name = options.output.splits.empty() ? "" : options.output.splits[s].name;
    const std::uint64_t shards = begin.size() - 1;
    for (std::uint64_t k = 0; k < shards; ++k) {
      plan.pieces.push_back(
          {dataset::output_file_name(pattern, name, k, shards), name, k, shards, begin[k], begin[k + 1] - begin[k]});
    }
    first = plan.split_ends[s];
  }
  return head_bytes;
}

}  // namespace extshuffle::mpi

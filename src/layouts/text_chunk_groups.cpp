// Steps 1 and 2 of a split for text records: the node's bytes are read
// ahead into the chunk space while earlier chunks are shuffled and
// scattered; records are located in place (in bulk where every terminator
// ends a record), and each chunk's record indices are shuffled.
#include <vector>

#include "ioperm/walk_support.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/terminator_scan.hpp"
#include "ioperm/read_ahead_space.hpp"
#include "text_records.hpp"

namespace extshuffle::ioperm {
namespace {

class TextChunkGroups final : public ChunkGroups {
 public:
  TextChunkGroups(const core::Node& node, const io::ByteExtents& data, std::uint64_t end_chunk, const TextScan& scan,
                  const TextSplit& layout, const TextOptions& o, RunContext& ctx)
      : node_(node), end_chunk_(end_chunk), scan_(scan), layout_(layout), o_(o), ctx_(ctx),
        space_(data, ctx.arena, layout.space_bytes, ctx) {
    arrays_ = ctx.arena + align_up(layout.space_bytes, 64);
    space_.start_read();
  }

  std::uint64_t next(std::uint64_t i) override {
    const core::PlanConstants& c = o_.walk.run.constants;
    release_group();
    for (;;) {
      space_.finish_read();
      if (space_.begin() > 0 && (space_.begin() >= layout_.space_bytes / 2 || space_.full())) space_.compact();
      // Find the records of up to G whole chunks in what has been read.
      group_.clear();
      std::byte* const space = space_.space();
      const std::byte* const filled = space + space_.fill();
      const std::byte* at = space + space_.begin();
      for (std::uint64_t g = 0; g < layout_.group_chunks && i + g < end_chunk_; ++g) {
        const std::uint64_t m = core::chunk_records(node_.records, i + g, c);
        auto* offsets = reinterpret_cast<std::uint32_t*>(arrays_ + align_up(4 * c.leaf_records, 64)) +
                        g * (2 * c.leaf_records + 1);
        const std::byte* walk = at;
        const std::byte* base = nullptr;
        std::uint64_t k = 0;
        if (scan_.plain_terminators()) {
          const auto* text = reinterpret_cast<const char*>(at);
          offsets[0] = 0;
          k = formats::find_record_ends(text, reinterpret_cast<const char*>(filled), o_.syntax.terminator, m,
                                        offsets + 1);
          base = at;
          walk = at + (k > 0 ? offsets[k] : 0);
        } else {
          for (; k < m; ++k) {
            const std::byte* stop = scan_.next_record(walk, filled);
            if (!stop) break;
            if (k == 0) base = walk;
            offsets[k] = static_cast<std::uint32_t>(walk - base);
            walk = stop;
          }
        }
        if (k < m) break;
        offsets[m] = static_cast<std::uint32_t>(walk - base);
        group_.push_back({base, m, offsets, offsets + c.leaf_records + 1});
        at = walk;
      }
      if (!group_.empty()) {
        group_end_ = static_cast<std::uint64_t>(at - space);
        // Read ahead into the free space while this group is shuffled and scattered.
        space_.start_read();
        return group_.size();
      }
      if (space_.at_end()) scan_.throw_records_changed(node_.records);
      // A chunk larger than the chunk space: the path is chosen only when
      // L records of the input's longest fit, so the input has changed.
      if (space_.begin() == 0 && space_.full()) scan_.throw_records_changed(node_.records);
      if (space_.begin() > 0) space_.compact();
      space_.start_read();
    }
  }

  void shuffle(std::uint64_t i, std::uint64_t count) override {
    auto* identity = reinterpret_cast<std::uint32_t*>(arrays_);
    if (!identity_ready_) {
      for (std::uint32_t k = 0; k < o_.walk.run.constants.leaf_records; ++k) identity[k] = k;
      identity_ready_ = true;
    }
    jobs_.clear();
    for (std::uint64_t g = 0; g < count; ++g) {
      jobs_.push_back(
          {reinterpret_cast<const std::byte*>(identity), reinterpret_cast<std::byte*>(group_[g].permutation),
           group_[g].m,
           core::shuffle_bijection(o_.walk.run.seed, {node_.id, core::Purpose::kChunkShuffle, i + g}, group_[g].m)});
    }
    device::shuffle_records(o_.walk.run.device, jobs_, sizeof(std::uint32_t), ctx_.threads);
  }

  void append_slice(std::uint64_t g, std::uint64_t k0, std::uint64_t k1, io::ByteSink& bucket) const override {
    const GroupChunk& chunk = group_[g];
    for (std::uint64_t k = k0; k < k1; ++k) {
      if (k + 16 < k1) __builtin_prefetch(chunk.base + chunk.offsets[chunk.permutation[k + 16]]);
      const std::uint32_t e = chunk.permutation[k];
      const std::byte* record = chunk.base + chunk.offsets[e];
      bucket.append(record, scan_.record_length(record, chunk.offsets[e + 1] - chunk.offsets[e]));
    }
  }

  std::uint64_t consumed_bytes() const override { return space_.data_offset(group_end_); }

  // After the node's last record only blank records (when skipped) may follow.
  void finish() override {
    release_group();
    space_.expect_only_blank_records(scan_, node_.records);
  }

 private:
  struct GroupChunk {
    const std::byte* base;
    std::uint64_t m;
    std::uint32_t* offsets;
    std::uint32_t* permutation;
  };

  // The last group's bytes are spent once it has been scattered.
  void release_group() {
    if (group_.empty()) return;
    space_.spend_to(group_end_);
    group_.clear();
  }

  core::Node node_;
  std::uint64_t end_chunk_;
  TextScan scan_;
  TextSplit layout_;
  const TextOptions& o_;
  RunContext& ctx_;
  ReadAheadSpace space_;
  std::byte* arrays_ = nullptr;
  std::uint64_t group_end_ = 0;
  bool identity_ready_ = false;
  std::vector<GroupChunk> group_;
  std::vector<device::ShuffleJob> jobs_;
};

}  // namespace

std::unique_ptr<ChunkGroups> open_text_chunk_groups(const core::Node& node, const io::ByteExtents& data,
                                                    std::uint64_t end_chunk, const TextScan& scan,
                                                    const TextSplit& layout, const TextOptions& o,
                                                    RunContext& ctx) {
  return std::make_unique<TextChunkGroups>(node, data, end_chunk, scan, layout, o, ctx);
}

}  // namespace extshuffle::ioperm

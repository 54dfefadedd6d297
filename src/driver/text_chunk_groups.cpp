// Steps 1 and 2 of a split for text records: the node's bytes are read
// ahead into the chunk space while earlier chunks are shuffled and
// scattered; records are located in place (in bulk where every terminator
// ends a record), and each chunk's record indices are shuffled.
#include <cstring>
#include <vector>

#include "executor_support.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/terminator_scan.hpp"
#include "text_gather.hpp"
#include "text_records.hpp"

namespace extshuffle::driver {
namespace {

class TextChunkGroups final : public ChunkGroups {
 public:
  TextChunkGroups(const core::Node& node, const io::ByteExtents& data, std::uint64_t end_chunk, const TextScan& scan,
                  const TextSplit& layout, const VariableOptions& o, RunContext& ctx)
      : node_(node), data_(data), end_chunk_(end_chunk), scan_(scan), layout_(layout), o_(o), ctx_(ctx),
        reader_(data) {
    space_ = ctx.arena;
    arrays_ = ctx.arena + align_up(layout.space_bytes, 64);
    start_read();
  }

  std::uint64_t next(std::uint64_t i) override {
    const core::PlanConstants& c = o_.constants;
    release_group();
    for (;;) {
      finish_read();
      if (begin_ > 0 && (begin_ >= layout_.space_bytes / 2 || fill_ == layout_.space_bytes)) compact();
      // Find the records of up to G whole chunks in what has been read.
      group_.clear();
      const std::byte* at = space_ + begin_;
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
          k = formats::find_record_ends(text, reinterpret_cast<const char*>(space_ + fill_), o_.syntax.terminator, m,
                                        offsets + 1);
          base = at;
          walk = at + (k > 0 ? offsets[k] : 0);
        } else {
          for (; k < m; ++k) {
            const std::byte* stop = scan_.next_record(walk, space_ + fill_);
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
        group_end_ = static_cast<std::uint64_t>(at - space_);
        // Read ahead into the free space while this group is shuffled and scattered.
        start_read();
        return group_.size();
      }
      if (reader_.at_end()) throw InputError(records_changed_message(node_.records));
      if (begin_ == 0 && fill_ == layout_.space_bytes) return 0;  // a chunk larger than the chunk space
      if (begin_ > 0) compact();
      start_read();
    }
  }

  void shuffle(std::uint64_t i, std::uint64_t count) override {
    auto* identity = reinterpret_cast<std::uint32_t*>(arrays_);
    if (!identity_ready_) {
      for (std::uint32_t k = 0; k < o_.constants.leaf_records; ++k) identity[k] = k;
      identity_ready_ = true;
    }
    jobs_.clear();
    for (std::uint64_t g = 0; g < count; ++g) {
      jobs_.push_back({reinterpret_cast<const std::byte*>(identity), reinterpret_cast<std::byte*>(group_[g].permutation),
                       group_[g].m,
                       core::shuffle_bijection(o_.seed, {node_.id, core::Purpose::kChunkShuffle, i + g}, group_[g].m)});
    }
    device::shuffle_records(o_.device, jobs_, sizeof(std::uint32_t), ctx_.threads);
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

  void gather_chunk(std::uint64_t, std::uint64_t m, const core::VariablePhilox& f, const OnWindow& on_window) override {
    const std::uint64_t chunk_end = text_gather_in_windows(data_, buffer_position_, m, f, scan_, arrays_, space_,
                                                           layout_.space_bytes, o_.memory_bytes, ctx_, on_window);
    identity_ready_ = false;  // the gather reused the arrays
    reader_.seek(chunk_end);
    buffer_position_ = chunk_end;
    fill_ = begin_ = 0;
    start_read();
  }

  // After the node's last record only blank records (when skipped) may follow.
  void finish() override {
    release_group();
    finish_read();
    const std::byte* at = space_ + begin_;
    const std::byte* end = space_ + fill_;
    for (;;) {
      if (at != end) {
        if (!scan_.filter_blank) throw InputError(records_changed_message(node_.records));
        if (scan_.next_record(at, end) || at != end) throw InputError(records_changed_message(node_.records));
      }
      if (reader_.at_end()) return;
      const std::uint64_t got = reader_.read_now(space_, layout_.space_bytes);
      at = space_;
      end = space_ + got;
    }
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
    begin_ = group_end_;
    group_.clear();
  }
  void start_read() {
    if (!reading_ && !reader_.at_end() && fill_ < layout_.space_bytes) {
      reader_.start(space_ + fill_, layout_.space_bytes - fill_);
      reading_ = true;
    }
  }
  void finish_read() {
    if (!reading_) return;
    PhaseTimer timer(ctx_.stats.seconds_reading);
    const std::uint64_t got = reader_.finish();
    fill_ += got;
    ctx_.stats.bytes_read += got;
    reading_ = false;
  }
  void compact() {
    std::memmove(space_, space_ + begin_, fill_ - begin_);
    buffer_position_ += begin_;
    fill_ -= begin_;
    begin_ = 0;
  }

  core::Node node_;
  const io::ByteExtents& data_;
  std::uint64_t end_chunk_;
  TextScan scan_;
  TextSplit layout_;
  const VariableOptions& o_;
  RunContext& ctx_;
  io::ExtentReader reader_;
  std::byte* space_ = nullptr;
  std::byte* arrays_ = nullptr;
  std::uint64_t fill_ = 0, begin_ = 0, buffer_position_ = 0, group_end_ = 0;
  bool reading_ = false;
  bool identity_ready_ = false;
  std::vector<GroupChunk> group_;
  std::vector<device::ShuffleJob> jobs_;
};

}  // namespace

std::unique_ptr<ChunkGroups> open_text_chunk_groups(const core::Node& node, const io::ByteExtents& data,
                                                    std::uint64_t end_chunk, const TextScan& scan,
                                                    const TextSplit& layout, const VariableOptions& o,
                                                    RunContext& ctx) {
  return std::make_unique<TextChunkGroups>(node, data, end_chunk, scan, layout, o, ctx);
}

}  // namespace extshuffle::driver

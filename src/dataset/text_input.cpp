#include "extshuffle/dataset/text_input.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/dataset/record_digest.hpp"
#include "extshuffle/formats/terminator_scan.hpp"
#include "extshuffle/formats/tfrecord.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/block_file.hpp"

namespace extshuffle::dataset {

namespace {

// Terminators counted in bulk, and the longest gap between them (the
// longest record): ends found 64 Ki at a time, `open` the bytes since the
// last terminator of earlier pieces.
class TerminatorCount {
 public:
  // With `sink`, each record is handed on too, the first starting at byte
  // `first` of the input.
  TerminatorCount(char terminator, RecordSink* sink = nullptr, std::uint64_t first = 0)
      : terminator_(terminator), ends_(kBlock), sink_(sink), record_start_(first) {}
  // Continuing an earlier count's bulk part (no sink).
  TerminatorCount(char terminator, const TextCountProgress& earlier)
      : terminator_(terminator), ends_(kBlock), records_(earlier.records), longest_(earlier.longest_record_bytes),
        open_(earlier.open_bytes), squares_(earlier.record_bytes_squared), sink_(nullptr), record_start_(0) {}
  void save(TextCountProgress& progress) const {
    progress.records = records_;
    progress.longest_record_bytes = longest_;
    progress.open_bytes = open_;
    progress.record_bytes_squared = squares_;
  }
  // [begin, end): the next bytes of the input, at byte `offset` of it.
  void add(const char* begin, const char* end, std::uint64_t offset) {
    for (const char* at = begin;;) {
      const std::size_t found = formats::find_record_ends(at, end, terminator_, kBlock, ends_.data());
      std::uint64_t previous = 0;
      for (std::size_t k = 0; k < found; ++k) {
        const std::uint64_t length = ends_[k] - previous + (k == 0 ? open_ : 0);
        longest_ = std::max(longest_, length);
        squares_ += static_cast<double>(length) * static_cast<double>(length);
        previous = ends_[k];
      }
      if (sink_ != nullptr) hand_on(offset + static_cast<std::uint64_t>(at - begin), found);
      records_ += found;
      if (found > 0) open_ = 0;
      at += previous;
      if (found < kBlock) {
        open_ += static_cast<std::uint64_t>(end - at);
        return;
      }
    }
  }
  std::uint64_t records() const { return records_; }
  // The longest record, counting an unterminated last one (it gets a terminator).
  std::uint64_t longest() const { return std::max(longest_, open_ > 0 ? open_ + 1 : 0); }
  double squares() const {
    const double last = open_ > 0 ? static_cast<double>(open_ + 1) : 0;
    return squares_ + last * last;
  }
  // The sink's last record: one that lacks its terminator, up to `input_end`.
  void hand_on_unterminated(std::uint64_t input_end) {
    if (sink_ != nullptr) sink_->record(record_start_, input_end);
  }

 private:
  // The `found` record ends in ends_, from input byte `offset`.
  void hand_on(std::uint64_t offset, std::size_t found) {
    if (found == 0) return;
    sink_->records(record_start_, offset, ends_.data(), found);
    record_start_ = offset + ends_[found - 1];
  }

  static constexpr std::size_t kBlock = 65536;
  char terminator_;
  std::vector<std::uint64_t> ends_;
  std::uint64_t records_ = 0, longest_ = 0, open_ = 0;
  double squares_ = 0;
  RecordSink* sink_;
  std::uint64_t record_start_;
};

// Pieces of the counting pass when it streams (two in turn while it only
// counts terminators): 2 MiB keeps them in the CPU's caches and the pass
// within kCountingBytes of memory (driver/run_dataset.cpp, --dry-run's peak).
constexpr std::size_t kCountPieceBytes = std::size_t{2} << 20;
// How far apart a count's progress is told (TextCountResume): a rerun
// counts again at most 1/64 of the input, and never more than this; each
// is a journal record and a sync, a few a second at most at the disk's speed.
constexpr std::uint64_t kMostCountProgressBytes = std::uint64_t{256} << 20;
// Counts the terminators in [from, bytes) of the input at `offset` of
// `file`, reading the next piece while this one is counted so that the disk
// never waits for the count; `last_byte` becomes the input's last byte when
// there is any. `counted_through`, when given, is told after each piece.
void count_rest(io::BlockFile& file, std::uint64_t offset, std::uint64_t from, std::uint64_t bytes,
                TerminatorCount& count, char& last_byte,
                const std::function<void(std::uint64_t)>& counted_through = {}) {
  std::uint64_t at = from;
  io::read_sequentially(file, offset + from, bytes - from, kCountPieceBytes,
                        [&](const std::byte* data, std::size_t size) {
    const auto* text = reinterpret_cast<const char*>(data);
    count.add(text, text + size, at);
    at += size;
    last_byte = text[size - 1];
    if (counted_through) counted_through(at);
  });
}

// The counting pass over one input: record by record while the header
// lasts and wherever the syntax needs it (quoting, blank records skipped,
// a digest, TFRecord frames), then, for plain lines, the terminators of the
// rest in bulk.
class TextCounter {
 public:
  TextCounter(io::BlockFile& file, std::uint64_t offset, std::uint64_t bytes, const formats::RecordSyntax& syntax,
              std::uint64_t header_records, bool skip_blank, const std::string& display_name, RecordDigest* digest,
              const std::byte* mapped, RecordSink* sink, TextCountResume* resume)
      : file_(file), offset_(offset), bytes_(bytes), syntax_(syntax), header_records_(header_records),
        skip_blank_(skip_blank), display_name_(display_name), digest_(digest), mapped_(mapped), sink_(sink),
        framed_(syntax.framing == formats::Framing::kTfrecord),
        count_terminators_(!syntax.quoted && !skip_blank && !digest && !framed_),
        resume_(!digest && !mapped && !sink ? resume : nullptr), last_byte_(syntax.terminator) {
    if (mapped != nullptr) {
      buffer_ = reinterpret_cast<const char*>(mapped);
      capacity_ = bytes;
    } else {
      capacity_ = kCountPieceBytes;
      storage_ = io::allocate_aligned(capacity_);
      buffer_ = reinterpret_cast<const char*>(storage_.get());
    }
  }

  TextCount count() {
    const TextCountProgress* from = resume_ ? resume_->from : nullptr;
    if (from && from->through <= bytes_ && from->before.header_bytes <= from->through &&
        from->by_records == !count_terminators_) {
      if (count_terminators_) {
        count_on_from(*from);
      } else {
        go_on_by_records(*from);
      }
      resume_->counted_on = true;
    } else {
      count_from_start();
    }
    // With blank records skipped, a record's span in the node reaches to the
    // next record: bound it by the blank records' bytes too (rare; see the
    // header).
    if (skip_blank_) count_.longest_record_bytes = std::max(count_.longest_record_bytes, bytes_ - count_.header_bytes);
    count_.add_terminator = bytes_ > 0 && last_byte_ != syntax_.terminator && !framed_;
    return count_;
  }

 private:
  void count_from_start() {
    while (position_ + fill_ < bytes_ || at_ < fill_) {
      if (position_ + fill_ < bytes_) read_more();
      if (count_terminators_ && headers_seen_ == header_records_) {
        TerminatorCount terminators(syntax_.terminator, sink_, position_ + at_);
        count_terminators_to_end(terminators);
        return;
      }
      count_records_read();
      tell_record_progress();
    }
  }

  // Record by record (quoting, blank records skipped, TFRecord frames): the
  // count goes on at the record `from.through` starts, the header passed,
  // with every record before it in `from.before`: the same additions in
  // the same order as one pass.
  void go_on_by_records(const TextCountProgress& from) {
    count_ = from.before;
    last_byte_ = from.last_byte;
    position_ = told_ = from.through;
    headers_seen_ = header_records_;
    count_from_start();
  }

  // Record by record, past the header: where the next record starts, and
  // the count so far, once each progress_spacing() more is read.
  void tell_record_progress() {
    if (count_terminators_ || !resume_ || !resume_->progress || headers_seen_ < header_records_ || at_ == 0) return;
    // Spaced by the bytes read, as the bulk count's are: `through` lags
    // them by the record in progress.
    const std::uint64_t through = position_ + at_, read = position_ + fill_;
    if (read - told_ < progress_spacing() || through == bytes_) return;
    told_ = read;
    TextCountProgress progress;
    progress.through = through;
    progress.before = count_;
    progress.by_records = true;
    progress.last_byte = buffer_[at_ - 1];
    resume_->progress(progress);
  }

  // The rest of an input an earlier pass counted through `from.through`:
  // the bulk count taken up where it was, the same additions in the same
  // order as one pass makes.
  void count_on_from(const TextCountProgress& from) {
    count_ = from.before;
    last_byte_ = from.last_byte;
    TerminatorCount terminators(syntax_.terminator, from);
    count_rest(file_, offset_, from.through, bytes_, terminators, last_byte_, progress_of(terminators, from.through));
    add_bulk(terminators);
  }

  // 1/64 of the input, a piece at least, kMostCountProgressBytes at most.
  std::uint64_t progress_spacing() const {
    return std::clamp<std::uint64_t>(bytes_ / 64, kCountPieceBytes, kMostCountProgressBytes);
  }

  // Tells resume_'s progress once each progress_spacing() more is counted.
  std::function<void(std::uint64_t)> progress_of(const TerminatorCount& terminators, std::uint64_t from) {
    if (!resume_ || !resume_->progress) return {};
    return [this, &terminators, spacing = progress_spacing(), told = from](std::uint64_t through) mutable {
      if (through - told < spacing || through == bytes_) return;
      told = through;
      TextCountProgress progress;
      progress.through = through;
      progress.before = count_;
      terminators.save(progress);
      progress.last_byte = last_byte_;
      resume_->progress(progress);
    };
  }

  // The bulk count's records, and the last line if unterminated.
  void add_bulk(TerminatorCount& terminators) {
    count_.records += terminators.records();
    count_.longest_record_bytes = std::max(count_.longest_record_bytes, terminators.longest());
    count_.record_bytes_squared += terminators.squares();
    if (last_byte_ != syntax_.terminator && bytes_ > 0) {  // the last line, unterminated
      ++count_.records;
      terminators.hand_on_unterminated(bytes_);
    }
  }

  // Mapped: counted where the bytes lie, a piece at a time, the reads of
  // the next kMappedAheadBytes asked for before the piece is counted. The
  // kernel's own read-ahead on faults keeps few reads in flight: the pass
  // over 512 MiB from a cold cache took 0.6-0.9 s, a cold `cat` of it 0.3-0.5 s
  // (docs/benchmarks.md, "Text in RAM: the counting pass read ahead, the
  // gather beside the write").
  static constexpr std::size_t kMappedPieceBytes = std::size_t{8} << 20;
  static constexpr std::size_t kMappedAheadBytes = std::size_t{64} << 20;

  // The next piece, after fill_.
  void read_more() {
    if (mapped_ != nullptr) {
      fill_ = std::min<std::uint64_t>(bytes_, fill_ + kMappedPieceBytes);
      read_ahead(std::min<std::uint64_t>(bytes_, fill_ + kMappedAheadBytes));
    } else {
      read_next_piece();
    }
    last_byte_ = buffer_[fill_ - 1];
  }

  // Asks the kernel to read the mapped bytes up to `to` (MADV_WILLNEED
  // starts the reads and returns): a hint, so its failure changes nothing.
  void read_ahead(std::uint64_t to) {
    if (to <= advised_) return;
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto from = reinterpret_cast<std::uintptr_t>(mapped_ + advised_) / page * page;
    (void)::madvise(reinterpret_cast<void*>(from), reinterpret_cast<std::uintptr_t>(mapped_ + to) - from,
                    MADV_WILLNEED);
    advised_ = to;
  }

  // Streaming, the bytes pass through a buffer of one piece (grown for a
  // longer record) that keeps only the record in progress.
  void read_next_piece() {
    std::memmove(storage_.get(), buffer_ + at_, fill_ - at_);
    position_ += at_;
    fill_ -= at_;
    at_ = 0;
    if (fill_ == capacity_) {
      io::AlignedBuffer larger = io::allocate_aligned(2 * capacity_);
      std::memcpy(larger.get(), storage_.get(), fill_);
      storage_ = std::move(larger);
      capacity_ *= 2;
      buffer_ = reinterpret_cast<const char*>(storage_.get());
    }
    const std::size_t take =
        static_cast<std::size_t>(std::min<std::uint64_t>(capacity_ - fill_, bytes_ - position_ - fill_));
    file_.read_now(storage_.get() + fill_, offset_ + position_ + fill_, take);
    fill_ += take;
  }

  // Plain lines need no record boundaries once the header is passed: the
  // terminators from at_ to the input's end, counted in bulk.
  void count_terminators_to_end(TerminatorCount& terminators) {
    terminators.add(buffer_ + at_, buffer_ + fill_, position_ + at_);
    if (mapped_ != nullptr) {
      while (fill_ < bytes_) {
        const std::size_t from = fill_;
        read_more();
        terminators.add(buffer_ + from, buffer_ + fill_, from);
      }
    } else {
      count_rest(file_, offset_, position_ + fill_, bytes_, terminators, last_byte_,
                 progress_of(terminators, position_ + fill_));
    }
    add_bulk(terminators);
  }

  // The whole records of [at_, fill_), and at the input's end the last one
  // even without its terminator.
  void count_records_read() {
    const bool at_input_end = position_ + fill_ == bytes_;
    while (at_ < fill_) {
      // TFRecord: each frame's CRCs, checked here once (and its truncation).
      if (framed_) {
        formats::check_tfrecord_frame(buffer_ + at_, buffer_ + fill_, bytes_ - position_ - at_, position_ + at_,
                                      display_name_);
      }
      const formats::RecordScan scan = formats::scan_record(buffer_ + at_, buffer_ + fill_, syntax_);
      if (scan.end) {
        count_record(static_cast<std::size_t>(scan.end - buffer_), false);
        continue;
      }
      if (!at_input_end) return;
      if (scan.inside_quotes) {
        throw InputError("input " + display_name_ + ": unterminated quoted field in the record starting at byte " +
                         std::to_string(position_ + at_));
      }
      // The last record lacks its terminator: it ends at the input's end.
      count_record(fill_, true);
    }
  }

  // The record [at_, end) (a header line while the header lasts), and one
  // byte more for the terminator that an `unterminated` one gets.
  void count_record(std::size_t end, bool unterminated) {
    const std::size_t begin = std::exchange(at_, end);
    if (headers_seen_ < header_records_) {
      ++headers_seen_;
      count_.header_bytes = position_ + end;
      return;
    }
    const std::uint64_t length = end - begin + (unterminated ? 1 : 0);
    if (skip_blank_ && formats::is_blank_record(buffer_ + begin, buffer_ + begin + length)) return;
    ++count_.records;
    if (sink_ != nullptr) sink_->record(position_ + begin, position_ + end);
    count_.longest_record_bytes = std::max(count_.longest_record_bytes, length);
    count_.record_bytes_squared += static_cast<double>(length) * static_cast<double>(length);
    if (!digest_) return;
    if (unterminated) {
      std::string record(buffer_ + begin, end - begin);
      record += syntax_.terminator;
      digest_->add(reinterpret_cast<const std::byte*>(record.data()), record.size());
    } else {
      digest_->add(reinterpret_cast<const std::byte*>(buffer_ + begin), length);
    }
  }

  io::BlockFile& file_;
  const std::uint64_t offset_, bytes_;
  const formats::RecordSyntax& syntax_;
  const std::uint64_t header_records_;
  const bool skip_blank_;
  const std::string& display_name_;
  RecordDigest* const digest_;
  const std::byte* const mapped_;
  RecordSink* const sink_;
  const bool framed_;
  const bool count_terminators_;
  TextCountResume* const resume_;  // null where the count cannot go on from a progress
  io::AlignedBuffer storage_;  // streaming: the piece read, and the record in progress before it
  std::size_t capacity_ = 0;
  const char* buffer_ = nullptr;
  std::uint64_t position_ = 0;  // of buffer_[0] in the input
  std::size_t fill_ = 0, at_ = 0;
  std::uint64_t advised_ = 0;  // mapped: the bytes before it asked for (read_ahead)
  std::uint64_t headers_seen_ = 0;
  std::uint64_t told_ = 0;  // record by record: the bytes read when the last progress was told
  char last_byte_;
  TextCount count_;
};

}  // namespace

TextCount count_text_records(io::BlockFile& file, std::uint64_t offset, std::uint64_t bytes,
                             const formats::RecordSyntax& syntax, std::uint64_t header_records, bool skip_blank,
                             const std::string& display_name, RecordDigest* digest, const std::byte* mapped,
                             RecordSink* sink, TextCountResume* resume) {
  return TextCounter(file, offset, bytes, syntax, header_records, skip_blank, display_name, digest, mapped, sink,
                     resume)
      .count();
}

}  // namespace extshuffle::dataset

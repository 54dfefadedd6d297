#include "sharded_output.hpp"

#include <algorithm>

#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/npy_rows.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/io/file_digest.hpp"
#include "extshuffle/io/input_set.hpp"
#include "extshuffle/io/output_file.hpp"
#include "extshuffle/dataset/stale_pieces.hpp"

namespace extshuffle::dataset {

ShardedOutput::ShardedOutput(OutputSpec spec) : spec_(std::move(spec)) {
  if (spec_.resumable && io::codec_for_path(spec_.pattern) != io::Codec::kNone) {
    throw UsageError("--checkpoint: output '" + spec_.pattern + "' is compressed, and a compressor cannot be " +
                     "continued where it stopped: write it uncompressed (and compress it after), or run without "
                     "--checkpoint");
  }
  if (several_files()) {
    check_output_pattern(spec_.pattern, spec_.options.shard_count, spec_.options.shard_bytes,
                         spec_.options.splits.size());
    io::raise_open_file_limit();  // every finished file keeps a descriptor until the commit
  }
  open_file(file_name(0, 0, std::max<std::uint64_t>(spec_.options.shard_count, 1)));
}

ShardedOutput::~ShardedOutput() = default;

std::string ShardedOutput::file_name(std::size_t split, std::uint64_t shard, std::uint64_t shards) const {
  if (!several_files()) return spec_.pattern;
  return output_file_name(spec_.pattern, spec_.options.splits.empty() ? "" : spec_.options.splits[split].name, shard,
                          shards);
}

void ShardedOutput::open_file(const std::string& name) {
  file_ = std::make_unique<io::OutputFile>(name, std::move(spare_buffers_), spec_.resumable);
  if (unbuffered_) file_->prefer_unbuffered();
}

void ShardedOutput::prefer_unbuffered() {
  unbuffered_ = true;
  if (file_) file_->prefer_unbuffered();
}

std::uint64_t ShardedOutput::start(const OutputRecordForm& form, std::uint64_t records) {
  form_ = form;
  cutter_ = std::make_unique<RecordCutter>(form.record_size, form.syntax);
  const std::vector<std::uint64_t> ends =
      spec_.options.splits.empty() ? std::vector<std::uint64_t>{records} : split_ends(spec_.options.splits, records);
  std::uint64_t first = 0;
  for (std::size_t s = 0; s < ends.size(); ++s) {
    Split split;
    split.name = spec_.options.splits.empty() ? "" : spec_.options.splits[s].name;
    split.records = ends[s] - first;
    first = ends[s];
    if (spec_.options.shard_count > 0) {
      split.shards = spec_.options.shard_count;
    } else if (spec_.options.shard_bytes > 0 && form.record_size > 0) {
      // Fixed-size records: --shard-size is a number of records per shard.
      split.shard_records = std::max<std::uint64_t>(1, spec_.options.shard_bytes / form.record_size);
      split.shards = std::max<std::uint64_t>(1, (split.records + split.shard_records - 1) / split.shard_records);
    } else if (spec_.options.shard_bytes > 0) {
      split.shards = 0;  // text: cut where the bytes say, counted at the end
    } else {
      split.shards = 1;
    }
    splits_.push_back(split);
  }
  expected_records_ = ends.back();
  records_left_out_ = records - ends.back();
  begin_part();
  return expected_records_;
}

std::uint64_t ShardedOutput::planned_records(std::size_t split, std::uint64_t shard) const {
  const Split& s = splits_[split];
  if (s.shards == 0) return UINT64_MAX;
  if (s.shard_records > 0) return std::min(s.shard_records, s.records - std::min(s.records, shard * s.shard_records));
  return shard_records(s.records, s.shards, shard);
}

void ShardedOutput::begin_part() {
  const Split& s = splits_[split_];
  if (!file_) open_file(file_name(split_, shard_, s.shards > 0 ? s.shards : shard_ + 1));
  part_planned_ = planned_records(split_, shard_);
  part_records_ = part_bytes_ = 0;
  digest_ = io::StreamDigest();
  open_part_writer();
  // Each file is complete on its own: its header (a .npy one with its own rows).
  const std::string header = form_.npy ? formats::npy_header_with_rows(form_.header, part_planned_) : form_.header;
  writer_->write(header.data(), header.size());
  if (spec_.index) {
    piece_index_ = std::make_unique<PieceIndex>(file_->destination(), form_.record_size, form_.syntax, header.size(),
                                                std::move(index_buffers_));
  }
  in_part_ = true;
}

// The current file's writer: compressed as its name says, each byte
// digested on its way to the file.
void ShardedOutput::open_part_writer() {
  io::OutputFile* file = file_.get();
  io::StreamDigest* digest = &digest_;
  writer_ = std::make_unique<io::CompressingWriter>(
      io::codec_for_path(file->destination()),
      [file, digest](const void* data, std::size_t bytes) {
        digest->add(data, bytes);
        file->write(data, bytes);
      },
      spec_.threads);
}

void ShardedOutput::write_records(const std::byte* data, std::size_t bytes) {
  if (form_.syntax.framing != formats::Framing::kTarSample) {
    writer_->write(data, bytes);
    if (piece_index_) piece_index_->add(data, bytes);
    return;
  }
  tar_frames_.write(data, bytes, [this](const std::byte* sample, std::size_t n) {
    writer_->write(sample, n);
    if (piece_index_) piece_index_->add(sample, n);
  });
}

// --verify: the file's bytes read back through its temporary's descriptor,
// once, long before any rename, against the digest of the bytes as they
// went to it (and so against what the manifest will say).
void ShardedOutput::check_read_back(const OutputFileInfo& info) const {
  const io::FileDigest read = io::read_back_digest(file_->descriptor(), info.path);
  if (read.bytes == info.bytes && io::xxh64_hex(read.xxh64) == info.xxh64) return;
  throw Error("verify failed: output '" + info.path + "' reads back as " + std::to_string(read.bytes) +
              " bytes with xxh64 " + io::xxh64_hex(read.xxh64) + ", not the " + std::to_string(info.bytes) +
              " bytes with xxh64 " + info.xxh64 + " written");
}

void ShardedOutput::end_part() {
  writer_->write(form_.trailer.data(), form_.trailer.size());
  writer_->finish();
  writer_.reset();
  file_->finish();
  if (piece_index_) {
    const IndexedFile facts = written_file_facts(file_->descriptor(), file_->destination());
    finished_indexes_.push_back(piece_index_->finish(facts, form_.index_reading, part_records_));
    index_buffers_ = finished_indexes_.back()->take_buffers();
    piece_index_.reset();
  }
  const Split& s = splits_[split_];
  OutputFileInfo info;
  info.path = file_->destination();
  info.split = s.name;
  info.shard = shard_;
  info.shards = s.shards;
  info.records = part_records_;
  info.bytes = file_->bytes_written();
  info.xxh64 = io::xxh64_hex(digest_.value());
  if (spec_.read_back && !file_->is_direct()) check_read_back(info);
  infos_.push_back(info);
  split_of_.push_back(split_);
  spare_buffers_ = file_->take_buffers();
  finished_.push_back(std::move(file_));
  split_written_ += part_records_;
  in_part_ = false;
  const bool split_done = s.shards > 0 ? shard_ + 1 == s.shards : split_written_ == s.records;
  if (split_done) {
    ++split_;
    shard_ = 0;
    split_written_ = 0;
  } else {
    ++shard_;
  }
}

void ShardedOutput::write(const std::byte* data, std::size_t bytes) {
  while (bytes > 0) {
    if (!in_part_) {
      if (split_ >= splits_.size()) throw Error("internal error: the output holds more records than planned");
      begin_part();
    }
    const Split& s = splits_[split_];
    RecordCutter::Cut cut;
    bool full = false;
    if (s.shards == 0) {
      // Text cut by --shard-size: within the split, while the bytes fit.
      const std::uint64_t left = s.records - split_written_ - part_records_;
      const RecordCutter::Cut in_split = cutter_->take_records(data, bytes, left);
      const std::uint64_t room = spec_.options.shard_bytes - std::min(spec_.options.shard_bytes, part_bytes_);
      cut = cutter_->take_bytes(data, in_split.bytes, room, part_records_ == 0);
      full = cut.records < in_split.records || cut.records == left;
    } else if (split_ + 1 == splits_.size() && shard_ + 1 == s.shards) {
      // The last file takes the rest: no need to find its records.
      cut = {bytes, 0};
    } else {
      cut = cutter_->take_records(data, bytes, part_planned_ - part_records_);
      full = part_records_ + cut.records == part_planned_;
    }
    write_records(data, cut.bytes);
    part_records_ += cut.records;
    part_bytes_ += cut.bytes;
    if (form_.syntax.framing == formats::Framing::kTarSample) part_bytes_ -= formats::kTarFrameBytes * cut.records;
    data += cut.bytes;
    bytes -= cut.bytes;
    if (full) end_part();
  }
}

void ShardedOutput::finish() {
  // The file being written, then every file still to come (they are empty).
  while (split_ < splits_.size()) {
    if (!in_part_) begin_part();
    const Split& s = splits_[split_];
    const bool last = s.shards > 0 && split_ + 1 == splits_.size() && shard_ + 1 == s.shards;
    if (last) part_records_ = part_planned_;  // its records were not counted
    const bool complete = s.shards > 0 ? part_records_ == part_planned_ : split_written_ + part_records_ == s.records;
    if (!complete) {
      throw Error("internal error: output file '" + file_->destination() + "' got " + std::to_string(part_records_) +
                  " records, not the " + std::to_string(part_planned_) + " planned");
    }
    end_part();
  }
  // Shards cut by bytes are counted now; every name is final.
  for (std::size_t k = 0; k < infos_.size(); ++k) {
    if (infos_[k].shards == 0) {
      infos_[k].shards = static_cast<std::uint64_t>(std::count(split_of_.begin(), split_of_.end(), split_of_[k]));
    }
    infos_[k].path = file_name(split_of_[k], infos_[k].shard, infos_[k].shards);
  }
}

std::vector<std::string> ShardedOutput::find_stale() const {
  if (!several_files()) return {};
  std::vector<std::string> names, written;
  for (const Split& s : splits_) names.push_back(s.name);
  for (const OutputFileInfo& info : infos_) written.push_back(info.path);
  return find_stale_pieces(spec_.pattern, spec_.options.splits.empty() ? std::vector<std::string>{} : names, written);
}

void ShardedOutput::start_stream() {
  form_ = OutputRecordForm{};
  splits_.push_back(Split{"", UINT64_MAX, 1, 0});
  begin_part();
}

void ShardedOutput::write_stream(const void* data, std::size_t bytes) { writer_->write(data, bytes); }

void ShardedOutput::finish_stream(std::uint64_t records) {
  part_records_ = records;
  end_part();
  // A stream is one file: no other file will take its write buffers (a Job
  // of thousands of --index-only outputs would hold 2 MiB each).
  spare_buffers_ = {};
}

void ShardedOutput::prepare() {
  // Every file on disk first, then their hidden names: a failure before the
  // last leaves none of them.
  for (auto& file : finished_) file->sync();
  for (auto& index : finished_indexes_) index->sync();
  for (std::size_t k = 0; k < finished_.size(); ++k) finished_[k]->rename_destination(infos_[k].path);
  for (std::size_t k = 0; k < finished_indexes_.size(); ++k) {
    finished_indexes_[k]->rename_destination(index_path_beside(infos_[k].path));
  }
  for (auto& file : finished_) file->prepare_commit();
  for (auto& index : finished_indexes_) index->prepare_commit();
}

std::vector<io::PendingRename> ShardedOutput::pending_renames() const {
  std::vector<io::PendingRename> renames;
  for (std::size_t k = 0; k < finished_.size(); ++k) {
    if (auto rename = finished_[k]->pending_rename()) renames.push_back(std::move(*rename));
    if (k >= finished_indexes_.size()) continue;
    if (auto rename = finished_indexes_[k]->pending_rename()) renames.push_back(std::move(*rename));
  }
  return renames;
}

void ShardedOutput::published() {
  for (auto& file : finished_) file->published();
  for (auto& index : finished_indexes_) index->published();
}

}  // namespace extshuffle::dataset

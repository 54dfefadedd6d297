// A sharded output's state at a checkpoint and its resumption (docs/cli.md
// "Resuming a run"): which file the records have reached and how far, each
// finished file's temporary and what the manifest says of it, the current
// file's temporary and its digest so far. Taken between two records, where
// the cutter and the tar frames hold nothing.
#include <cstring>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/checkpoint_journal.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/io/file_digest.hpp"
#include "extshuffle/io/output_file.hpp"

namespace extshuffle::dataset {

namespace {

void put_temporary(io::FieldWriter& out, const std::string& destination, const io::ResumableOutput& file) {
  out.bytes(destination);
  out.bytes(file.temporary);
  out.u64(file.device);
  out.u64(file.inode);
  out.u64(file.bytes);
}

std::pair<std::string, io::ResumableOutput> take_temporary(io::FieldReader& in) {
  std::string destination = in.bytes();
  io::ResumableOutput file;
  file.temporary = in.bytes();
  file.device = in.u64();
  file.inode = in.u64();
  file.bytes = in.u64();
  return {std::move(destination), std::move(file)};
}

}  // namespace

std::string ShardedOutput::checkpoint() {
  if (!tar_frames_.at_frame_boundary()) throw Error("internal error: an output checkpoint inside a record");
  io::FieldWriter out;
  for (const std::uint64_t value :
       {std::uint64_t{split_}, shard_, std::uint64_t{in_part_}, part_records_, part_bytes_, split_written_}) {
    out.u64(value);
  }
  out.u64(finished_.size());
  for (std::size_t k = 0; k < finished_.size(); ++k) {
    put_temporary(out, finished_[k]->destination(), finished_[k]->checkpoint());
    const OutputFileInfo& info = infos_[k];
    out.bytes(info.path);
    out.bytes(info.split);
    for (const std::uint64_t value : {info.shard, info.shards, info.records, info.bytes}) out.u64(value);
    out.bytes(info.xxh64);
    out.u64(split_of_[k]);
  }
  if (in_part_) {
    put_temporary(out, file_->destination(), file_->checkpoint());
    out.bytes(digest_.state());
  }
  return out.text();
}

std::vector<int> ShardedOutput::descriptors() const {
  // A file renamed into place already (resumed at its commit) has none.
  std::vector<int> fds;
  for (const auto& file : finished_) {
    if (file->descriptor() >= 0) fds.push_back(file->descriptor());
  }
  if (file_ && file_->descriptor() >= 0) fds.push_back(file_->descriptor());
  return fds;
}

void ShardedOutput::resume(std::string_view state) {
  io::FieldReader in(state);
  split_ = in.u64();
  shard_ = in.u64();
  const bool in_part = in.u64() != 0;
  part_records_ = in.u64();
  part_bytes_ = in.u64();
  split_written_ = in.u64();
  const std::uint64_t finished = in.u64();
  if (split_ > splits_.size() || finished > (std::uint64_t{1} << 32)) {
    throw Error("checkpoint journal: the output's state is not this run's: not trusted");
  }
  for (std::uint64_t k = 0; k < finished; ++k) {
    auto [destination, temporary] = take_temporary(in);
    OutputFileInfo info;
    info.path = in.bytes();
    finished_.push_back(io::OutputFile::resume(destination, temporary, true, info.path));
    info.split = in.bytes();
    info.shard = in.u64();
    info.shards = in.u64();
    info.records = in.u64();
    info.bytes = in.u64();
    info.xxh64 = in.bytes();
    infos_.push_back(std::move(info));
    split_of_.push_back(static_cast<std::size_t>(in.u64()));
  }
  // The file the constructor opened is not the one to continue: it goes
  // (its temporary removed), its buffers serve the continued one.
  spare_buffers_ = {};
  writer_.reset();
  file_.reset();
  in_part_ = in_part;
  if (!in_part_) return;
  auto [destination, temporary] = take_temporary(in);
  file_ = io::OutputFile::resume(destination, temporary, false);
  part_planned_ = planned_records(split_, shard_);
  digest_.restore(in.bytes());
  open_part_writer();
}

}  // namespace extshuffle::dataset

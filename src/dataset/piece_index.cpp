#include "piece_index.hpp"

#include <sys/stat.h>

#include <cerrno>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/file_fingerprint.hpp"
#include "extshuffle/io/output_file.hpp"

namespace extshuffle::dataset {

PieceIndex::PieceIndex(const std::string& piece_name, std::size_t record_size, const formats::RecordSyntax& syntax,
                       std::uint64_t header_bytes, io::AlignedBuffer buffers)
    : file_(std::make_unique<io::OutputFile>(index_path_beside(piece_name), std::move(buffers))),
      record_size_(record_size), cutter_(record_size, syntax), header_bytes_(header_bytes), position_(header_bytes) {
  io::OutputFile* file = file_.get();
  writer_ = std::make_unique<RecordIndexWriter>(
      [file](const void* data, std::size_t bytes) { file->write(data, bytes); }, false);
  if (record_size == 0 && syntax.framing == formats::Framing::kTarSample) {
    tar_.emplace("-o '" + piece_name + "'", false);
    RecordIndexWriter* writer = writer_.get();
    tar_->set_member_sink([writer](std::uint64_t sample, std::string_view name, std::uint64_t at, std::uint64_t size) {
      writer->member(sample, name, at, size);
    });
  }
}

PieceIndex::~PieceIndex() = default;

void PieceIndex::add(const std::byte* data, std::size_t bytes) {
  if (tar_) {
    tar_->add(reinterpret_cast<const char*>(data), bytes);
  } else if (record_size_ == 0) {
    cutter_.hand_records(data, bytes, position_, *writer_);
  }
  position_ += bytes;
}

std::unique_ptr<io::OutputFile> PieceIndex::finish(const IndexedFile& piece, const IndexReading& reading,
                                                   std::uint64_t records) {
  IndexHeader header;
  header.input = piece;
  header.reading = reading;
  header.records = records;
  header.data_offset = header_bytes_;
  if (tar_) {
    const formats::TarIndex index = tar_->finish();
    writer_->finish(header, &index);
  } else {
    writer_->finish(header, nullptr);
  }
  file_->finish();
  return std::move(file_);
}

IndexedFile written_file_facts(int fd, const std::string& name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError("cannot read back output", name, errno);
  IndexedFile facts;
  facts.bytes = static_cast<std::uint64_t>(st.st_size);
  facts.mtime_ns = std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  facts.fingerprint = io::fingerprint_file(fd, facts.bytes, kIndexFingerprintSeed, name).to_string();
  return facts;
}

}  // namespace extshuffle::dataset

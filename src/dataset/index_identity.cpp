#include "extshuffle/dataset/index_identity.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "extshuffle/dataset/input_layout.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/formats/npy_layout.hpp"
#include "extshuffle/io/file_fingerprint.hpp"

namespace extshuffle::dataset {
namespace {

struct Compression {
  const char* suffix;
  const char* name;
  const char* command;
};

// Compressions a file name announces, and how to undo them.
constexpr std::array<Compression, 6> kCompressions{{{".gz", "gzip", "gzip -dk"},
                                                    {".zst", "zstd", "zstd -d"},
                                                    {".zstd", "zstd", "zstd -d"},
                                                    {".xz", "xz", "xz -dk"},
                                                    {".bz2", "bzip2", "bzip2 -dk"},
                                                    {".lz4", "lz4", "lz4 -d"}}};

struct stat stat_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw IoError("cannot open input", path, errno);
  return st;
}

std::string describe(const IndexReading& r) {
  std::string text = r.format;
  if (r.record_size > 0) text += ", records of " + std::to_string(r.record_size) + " bytes";
  if (r.header_records > 0) text += ", --header=" + std::to_string(r.header_records);
  if (r.skip_empty) text += ", --skip-empty";
  if (r.zero_terminated) text += ", -z";
  if (r.ignore_zeros) text += ", --ignore-zeros";
  return text;
}

}  // namespace

std::string read_file_head(const std::string& path, std::uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open input", path, errno);
  std::string head(bytes, '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = ::pread(fd, head.data() + got, head.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw IoError("cannot read input", path, error);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  head.resize(got);
  return head;
}

void check_indexable(const std::string& path, const std::string& role) {
  const std::string shown = input_display_name(path);
  for (const Compression& c : kCompressions) {
    const std::string suffix = c.suffix;
    if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      throw UsageError(role + ": input " + shown + " is compressed (" + c.name +
                       "): its records cannot be read at an offset; decompress it first (" + c.command + " '" + path +
                       "'), or write an uncompressed copy with extshuffle");
    }
  }
  struct stat st {};
  if (path == "-" || (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
    throw UsageError(role + ": input " + shown +
                     " is not a regular file: records are read at offsets, which a stream does not have; copy it "
                     "to a file first");
  }
}

IndexReading expected_reading(const DatasetOptions& options, const std::string& path, formats::DetectedFormat* format) {
  const std::string name = input_display_name(path);
  const struct stat st = stat_of(path);
  std::string head = read_file_head(path, formats::kDetectionProbeBytes);
  const formats::DetectedFormat detected =
      formats::detect_format(options.format, options.record_size, options.zero_terminated, path, head, name);
  if (format != nullptr) *format = detected;
  std::uint64_t record_size = options.record_size;
  if (detected.kind == formats::RecordKind::kNpy) {
    const auto bytes = static_cast<std::uint64_t>(st.st_size);
    const std::uint64_t wanted = formats::npy_head_bytes(head, bytes);
    if (wanted > head.size()) head = read_file_head(path, wanted);
    record_size = formats::npy_layout(head, bytes, options.record_size, name).record_size;
  } else if (detected.kind == formats::RecordKind::kFramed) {
    check_frame_options(options, detected.framed_format);
  }
  return index_reading(options, detected, record_size);
}

IndexReading index_reading(const DatasetOptions& options, const formats::DetectedFormat& format,
                           std::uint64_t record_size) {
  IndexReading reading;
  reading.format = format_name(format);
  if (format.kind != formats::RecordKind::kFramed) {
    reading.record_size = record_size;
  } else if (format.framing() == formats::Framing::kTarSample) {
    reading.ignore_zeros = options.ignore_zeros;
  } else if (format.framing() == formats::Framing::kLines) {
    reading.header_records = header_records(options, format.framed_format);
    reading.skip_empty = options.skip_empty;
    reading.zero_terminated = options.zero_terminated;
  }
  return reading;
}

IndexedFile indexed_file_facts(const std::string& path, bool fingerprint) {
  const struct stat st = stat_of(path);
  IndexedFile facts;
  facts.bytes = static_cast<std::uint64_t>(st.st_size);
  facts.mtime_ns = std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  if (fingerprint) facts.fingerprint = io::fingerprint_path(path, kIndexFingerprintSeed).to_string();
  return facts;
}

void check_index_matches(const IndexHeader& index, const std::string& index_path, const std::string& input_path,
                         const IndexedFile& facts, const IndexReading& reading) {
  const std::string start = "index '" + index_path + "' is not the index of '" + input_path + "' ";
  const std::string rebuild = ": rebuild it (extshuffle --index-only '" + input_path + "')";
  if (index.input.bytes != facts.bytes) {
    throw InputError(start + "as it is now: it was made for a file of " + std::to_string(index.input.bytes) +
                     " bytes, the input holds " + std::to_string(facts.bytes) + rebuild);
  }
  if (index.input.fingerprint != facts.fingerprint) {
    throw InputError(start + "as it is now: the input's sampled blocks differ from those indexed" + rebuild);
  }
  if (index.input.mtime_ns != facts.mtime_ns) {
    throw InputError(start + "as it is now: the input's modification time is not the one indexed" + rebuild);
  }
  if (!(index.reading == reading)) {
    throw InputError(start + "read as " + describe(reading) + ": it was made reading it as " + describe(index.reading) +
                     " (give those options, or rebuild it with these)");
  }
}

IndexHeader fixed_records_layout(const std::string& path, const IndexReading& reading) {
  const struct stat st = stat_of(path);
  IndexHeader layout;
  layout.reading = reading;
  layout.input.bytes = static_cast<std::uint64_t>(st.st_size);
  layout.input.mtime_ns = std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  const std::string name = input_display_name(path);
  if (reading.format == "npy") {
    std::string head = read_file_head(path, formats::kDetectionProbeBytes);
    const std::uint64_t wanted = formats::npy_head_bytes(head, layout.input.bytes);
    if (wanted > head.size()) head = read_file_head(path, wanted);
    const formats::NpyLayout npy = formats::npy_layout(head, layout.input.bytes, 0, name);
    layout.data_offset = npy.data_offset;
    layout.records = npy.records;
  } else {
    layout.records = formats::fixed_record_count(layout.input.bytes, reading.record_size, name);
  }
  return layout;
}

}  // namespace extshuffle::dataset

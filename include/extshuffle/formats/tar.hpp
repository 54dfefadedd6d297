// WebDataset tar shards (docs/conventions.md, Record formats): a record is one sample, the
// consecutive regular members of a tar archive whose names share a key,
// the member's path up to the first '.' of its last component, as the
// webdataset library groups them (`e39871fd.jpg`, `e39871fd.json`,
// `e39871fd.cls` are one sample with key `e39871fd`).
//
// What is read: POSIX ustar headers, pax extended headers ('x': path and
// size override the ustar fields; every other key is kept, not
// interpreted), GNU long names and long link names ('L', 'K'), sizes in
// octal or GNU base-256. A member's bytes are its extended headers, its
// header, its data and the data's padding to 512 bytes: a sample comes out
// byte for byte as it went in. The archive ends at its first zero block
// (the end-of-archive trailer), or at the input's end when it has no
// trailer; what follows the trailer must be zeros (the rest of the last
// record): anything else is another archive concatenated to it (`cat a.tar
// b.tar`), refused rather than dropped, unless zero blocks are read through
// (ignore_zeros, GNU tar's --ignore-zeros), which reads every archive of
// the concatenation.
//
// Directories, links, character and block devices and FIFOs are skipped
// (counted, hard links apart: webdataset's reader skips them too). Refused
// with InputError: a header whose checksum does not match, a member cut
// short by the input's end, a pax global header ('g') or a member of
// another type (GNU sparse files, in the old 'S' form or in pax form:
// GNU.sparse.* records, formats 0.0, 0.1 and 1.0; multi-volume parts), a
// malformed size or pax record, and, when asked for (--verify), a key that
// repeats non-consecutively (a sample split in two).
//
// Inside the shuffle a sample travels as a frame: its length (8 bytes,
// little-endian) and then its bytes, so that its end is found without
// looking at the next sample. The frames are built over the input's bytes
// without copying them (the prefixes live in memory, dataset/tar_input.cpp);
// the output drops the prefixes (TarFrameStripper) and ends every file with
// its own trailer of two zero blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace extshuffle::formats {

inline constexpr std::size_t kTarBlockBytes = 512;
// The end-of-archive trailer each output file ends with: two zero blocks.
inline constexpr std::size_t kTarTrailerBytes = 2 * kTarBlockBytes;
// A sample's frame inside the shuffle: this many bytes of length, then the sample.
inline constexpr std::size_t kTarFrameBytes = 8;
// The largest pax or GNU long-name payload read (a path of this many bytes
// is absurd; a larger one is refused rather than held in memory).
inline constexpr std::uint64_t kTarMaxExtendedBytes = std::uint64_t{16} << 20;

// The key webdataset groups a member by: `path` up to the first '.' of its
// last component ("a/b.c/x.y.z" -> "a/b.c/x"). A last component with no
// '.' (webdataset skips such a member) is a key of its own: the whole path.
std::string_view tar_sample_key(std::string_view path);

// The end of the frame that starts at `begin` in [begin, end): one past its
// sample, or nullptr when [begin, end) does not hold all of it. Cost: a load.
const char* tar_frame_end(const char* begin, const char* end);

// Appends a frame holding `sample` to `out` (tests).
void append_tar_frame(std::string& out, std::string_view sample);

// A header block's checksum: the stored value (readable: a valid number)
// against the sum of its bytes with the checksum field counted as spaces,
// unsigned or signed as some old tars wrote it. Cost: one pass over 512 bytes.
struct TarChecksum {
  bool readable = false;
  std::uint64_t stored = 0, computed = 0;
  bool matches = false;
};
TarChecksum tar_header_checksum(const char* header);

// Byte ranges of the input that make up the samples.
struct TarRange {
  std::uint64_t offset = 0;  // from the archive's first byte
  std::uint64_t bytes = 0;
};

// Where an archive's samples lie, found by TarScanner.
struct TarIndex {
  // Sample k is ranges[first_range[k]] .. ranges[first_range[k + 1] - 1]:
  // one range, unless a skipped member (a directory) lies inside it.
  std::vector<TarRange> ranges;
  std::vector<std::uint64_t> first_range;  // samples + 1 entries
  // Each sample's frame prefix: its bytes, little-endian (the driver points
  // at these 8 bytes in front of the sample's ranges).
  std::vector<std::uint64_t> frame_lengths;
  std::uint64_t archive_end = 0;        // where the trailer starts (the input's end without one)
  bool trailer_found = false;           // a zero block ended the archive
  std::uint64_t members = 0;            // regular members in samples
  std::uint64_t skipped_members = 0;    // directories, links, devices, FIFOs
  std::uint64_t hard_links = 0;         // of them, hard links (their data is another member's)
  std::uint64_t longest_sample_bytes = 0;
  double sample_bytes_squared = 0;      // the sum of the squares of the samples' bytes
  std::string first_key, last_key;

  std::uint64_t samples() const { return frame_lengths.size(); }
};

// Reads an archive front to back, from bytes given in order, and indexes
// its samples. Memory: about 40 bytes a sample, and with check_repeats its
// key; with a sample callback, the sample being read (a 4 GiB member takes
// 4 GiB then: only --verify asks for it). Throws InputError naming
// `display_name` and the byte offset of what is wrong.
class TarScanner {
 public:
  // Receives each complete sample as its frame (prefix and bytes), in order.
  using SampleSink = std::function<void(std::string_view frame)>;

  // Receives each regular member of a sample as its header is read: the
  // sample's number (from 0), the member's name (pax and GNU long names
  // applied), where its data starts and how many bytes it holds (an index of
  // the members: dataset/record_index_writer.hpp).
  using MemberSink =
      std::function<void(std::uint64_t sample, std::string_view name, std::uint64_t data_offset, std::uint64_t bytes)>;

  // `ignore_zeros`: zero blocks are skipped, not the archive's end.
  TarScanner(std::string display_name, bool check_repeats, SampleSink on_sample = {}, bool ignore_zeros = false);
  // Before the first add(): members are handed to `on_member` too.
  void set_member_sink(MemberSink on_member) { on_member_ = std::move(on_member); }
  // The next `bytes` bytes of the archive.
  void add(const char* data, std::size_t bytes);
  // Without a sample sink: how many of the next bytes are a member's data
  // and padding, which the index does not need to see; skip(n) passes over
  // n <= skippable() of them instead of add(). So an archive is indexed from
  // its headers alone (dataset/tar_input.cpp maps it and touches only those).
  std::uint64_t skippable() const { return state_ == State::kSkip && !on_sample_ ? skip_left_ : 0; }
  void skip(std::uint64_t bytes);
  // After the input's last byte: throws for a member or header cut short.
  // Returns the index.
  TarIndex finish();

 private:
  // kTrailer: after the end-of-archive block, where only zeros may follow.
  enum class State { kHeader, kExtended, kSkip, kTrailer };
  void header_complete();
  void parse_extended();
  void begin_member(const std::string& name, char type, std::uint64_t size, std::uint64_t data_offset);
  void end_member();
  void close_sample();
  std::string where(std::uint64_t offset) const;

  void check_trailer(const char* data, std::size_t bytes);

  std::string display_name_;
  bool check_repeats_;
  bool ignore_zeros_;
  SampleSink on_sample_;
  MemberSink on_member_;
  TarIndex index_;
  State state_ = State::kHeader;
  std::uint64_t position_ = 0;      // of the next byte given
  std::uint64_t member_start_ = 0;  // of the current member's first header (extended ones included)
  char header_[kTarBlockBytes];
  std::size_t header_fill_ = 0;
  // An extended header ('x', 'L', 'K') being read: its payload, and what is left of it and its padding.
  char extended_type_ = 0;
  std::string extended_;
  std::uint64_t extended_left_ = 0, padding_left_ = 0;
  // What the extended headers say for the next member.
  std::string pax_path_, gnu_long_name_;
  bool has_pax_path_ = false, has_gnu_long_name_ = false, has_pax_size_ = false;
  std::uint64_t pax_size_ = 0;
  bool has_extended_ = false;
  bool pax_sparse_ = false;  // GNU.sparse.* records: the member is a sparse file
  // The member whose data is being passed: whether it is in a sample.
  std::uint64_t skip_left_ = 0;
  bool member_in_sample_ = false;
  std::string member_name_;
  // The sample being gathered.
  bool in_sample_ = false;
  std::string key_;
  std::uint64_t sample_offset_ = 0, sample_bytes_ = 0;
  std::string sample_frame_;  // with on_sample_: its frame so far
  std::string member_bytes_;  // with on_sample_: the current member's bytes so far
  std::unordered_map<std::string, std::uint64_t> seen_keys_;  // with check_repeats: key -> its sample's offset
};

// Drops the frame prefixes from a stream of frames given in any pieces,
// passing on the samples' bytes.
class TarFrameStripper {
 public:
  using Sink = std::function<void(const std::byte* data, std::size_t bytes)>;
  void write(const std::byte* data, std::size_t bytes, const Sink& sink);
  // Whether the frames given so far were all whole.
  bool at_frame_boundary() const { return prefix_fill_ == 0 && sample_left_ == 0; }

 private:
  unsigned char prefix_[kTarFrameBytes] = {};
  std::size_t prefix_fill_ = 0;
  std::uint64_t sample_left_ = 0;
};

}  // namespace extshuffle::formats

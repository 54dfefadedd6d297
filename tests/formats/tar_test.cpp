// WebDataset tar samples (formats/tar.hpp): the key rule, how TarScanner
// groups members into samples and indexes their bytes (extended headers
// with them), every way it refuses an archive, and the frames the shuffle
// moves. The archives are written here by the test's own ustar code.
#include "extshuffle/formats/tar.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "support/tar_archives.hpp"

#include "support/same_bytes.hpp"

namespace extshuffle::formats::tar_test {
namespace {

using testing::header;
using testing::HeaderFields;
using testing::kTrailer;
using testing::member;
using testing::octal;
using testing::padded;
using testing::pax_member;
using testing::pax_record;

TarIndex scan(const std::string& archive, bool check_repeats = false, std::size_t piece = 0,
              std::vector<std::string>* frames = nullptr) {
  TarScanner::SampleSink sink;
  if (frames) sink = [frames](std::string_view frame) { frames->emplace_back(frame); };
  TarScanner scanner("'t.tar'", check_repeats, sink);
  if (piece == 0) piece = archive.size() + 1;
  for (std::size_t at = 0; at < archive.size(); at += piece) {
    scanner.add(archive.data() + at, std::min(piece, archive.size() - at));
  }
  return scanner.finish();
}

// As dataset/tar_input.cpp indexes a mapped archive: headers fed a block at
// a time, every member's data skipped unseen.
TarIndex scan_skipping(const std::string& archive) {
  TarScanner scanner("'t.tar'", false);
  for (std::size_t at = 0; at < archive.size();) {
    const std::uint64_t skip = std::min<std::uint64_t>(scanner.skippable(), archive.size() - at);
    const std::size_t take = skip > 0 ? skip : std::min<std::size_t>(512, archive.size() - at);
    if (skip > 0) {
      scanner.skip(skip);
    } else {
      scanner.add(archive.data() + at, take);
    }
    at += take;
  }
  return scanner.finish();
}

void expect_same_index(const TarIndex& a, const TarIndex& b) {
  EXPECT_EQ(a.frame_lengths, b.frame_lengths);
  EXPECT_EQ(a.first_range, b.first_range);
  ASSERT_EQ(a.ranges.size(), b.ranges.size());
  for (std::size_t k = 0; k < a.ranges.size(); ++k) {
    EXPECT_EQ(a.ranges[k].offset, b.ranges[k].offset);
    EXPECT_EQ(a.ranges[k].bytes, b.ranges[k].bytes);
  }
  EXPECT_EQ(a.archive_end, b.archive_end);
  EXPECT_EQ(a.skipped_members, b.skipped_members);
}

std::string sample_bytes(const std::string& archive, const TarIndex& index, std::size_t k) {
  std::string out;
  for (std::uint64_t r = index.first_range[k]; r < index.first_range[k + 1]; ++r) {
    out += archive.substr(index.ranges[r].offset, index.ranges[r].bytes);
  }
  return out;
}

std::string error_of(const std::string& archive, bool check_repeats = false) {
  try {
    scan(archive, check_repeats);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TarSampleKey, IsThePathUpToTheFirstDotOfItsLastComponent) {
  EXPECT_EQ(tar_sample_key("e39871fd.jpg"), "e39871fd");
  EXPECT_EQ(tar_sample_key("e39871fd.seg.png"), "e39871fd");
  EXPECT_EQ(tar_sample_key("dir.v1/a.b.c"), "dir.v1/a");
  EXPECT_EQ(tar_sample_key("a/b/c.txt"), "a/b/c");
  EXPECT_EQ(tar_sample_key("noext"), "noext");
  EXPECT_EQ(tar_sample_key("d/noext"), "d/noext");
  EXPECT_EQ(tar_sample_key("d/.hidden"), "d/.hidden");  // webdataset needs a byte before the dot
  EXPECT_EQ(tar_sample_key(".a.b"), ".a");
}

TEST(TarScanner, GroupsConsecutiveMembersByKeyAndKeepsTheirBytes) {
  const std::string a = member("a.jpg", std::string(700, 'j')) + member("a.json", "{}") + member("a.cls", "3");
  const std::string b = member("b.jpg", "");
  const std::string c = member("c.txt", std::string(512, 't'));
  const std::string archive = a + b + c + kTrailer + std::string(1000, '\0');  // the rest of a 10240-byte record
  for (std::size_t piece : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{512}, std::size_t{1000}}) {
    std::vector<std::string> frames;
    const TarIndex index = scan(archive, true, piece, &frames);
    ASSERT_EQ(index.samples(), 3u) << piece;
    EXPECT_SAME_BYTES(sample_bytes(archive, index, 0), a);
    EXPECT_SAME_BYTES(sample_bytes(archive, index, 1), b);
    EXPECT_SAME_BYTES(sample_bytes(archive, index, 2), c);
    EXPECT_EQ(index.frame_lengths, (std::vector<std::uint64_t>{a.size(), b.size(), c.size()}));
    EXPECT_EQ(index.members, 5u);
    EXPECT_EQ(index.archive_end, a.size() + b.size() + c.size());
    EXPECT_TRUE(index.trailer_found);
    EXPECT_EQ(index.longest_sample_bytes, a.size());
    EXPECT_EQ(index.first_key, "a");
    EXPECT_EQ(index.last_key, "c");
    ASSERT_EQ(frames.size(), 3u);
    std::string framed;
    append_tar_frame(framed, a);
    EXPECT_SAME_BYTES(frames[0], framed);
  }
}

TEST(TarScanner, ReadsPaxPathsAndSizesGnuLongNamesAndBase256Sizes) {
  // A 300-byte path in a pax header; the ustar name is a stand-in.
  const std::string long_path = std::string(200, 'd') + "/" + std::string(95, 'k') + ".jpg";
  const std::string pax_sample = pax_member(pax_record("path", long_path) + pax_record("mtime", "1.25")) +
                                 member("stand-in.jpg", "image");
  // The same key by GNU long name: the key comes from the long name, not the header's.
  HeaderFields longname;
  longname.name = "././@LongLink";
  longname.type = 'L';
  const std::string name_data = std::string(200, 'd') + "/" + std::string(95, 'k') + ".json";
  longname.size = name_data.size() + 1;
  longname.gnu_magic = true;
  const std::string gnu_sample = header(longname) + padded(name_data + '\0') + member("truncated.json", "{}");
  // pax size overrides the header's (which says 0 here).
  const std::string pax_size = pax_member(pax_record("size", "600")) + member("p.bin", "") + padded(std::string(600, 'p'));
  // A base-256 size, and a name of exactly 100 bytes (no NUL), and a ustar prefix.
  HeaderFields big;
  big.name = std::string(96, 'n') + ".bin";
  big.size = 1000;
  big.base256_size = true;
  const std::string base256 = header(big) + padded(std::string(1000, 'b'));
  HeaderFields prefixed;
  prefixed.name = "q.txt";
  prefixed.prefix = "some/dir";
  prefixed.size = 3;
  const std::string with_prefix = header(prefixed) + padded("abc");
  const std::string archive = pax_sample + gnu_sample + pax_size + base256 + with_prefix + kTrailer;
  const TarIndex index = scan(archive, true, 100);
  expect_same_index(index, scan_skipping(archive));
  ASSERT_EQ(index.samples(), 4u);
  EXPECT_SAME_BYTES(sample_bytes(archive, index, 0), pax_sample + gnu_sample);  // one key: two members
  EXPECT_SAME_BYTES(sample_bytes(archive, index, 1), pax_size);
  EXPECT_SAME_BYTES(sample_bytes(archive, index, 2), base256);
  EXPECT_SAME_BYTES(sample_bytes(archive, index, 3), with_prefix);
  EXPECT_EQ(index.first_key, std::string(200, 'd') + "/" + std::string(95, 'k'));
  EXPECT_EQ(index.last_key, "some/dir/q");
}

TEST(TarScanner, SkipsDirectoriesAndLinksAndCountsThem) {
  const std::string a1 = member("a.jpg", "1"), dir = member("a.d/", "", '5'), a2 = member("a.txt", "2");
  const std::string link = member("l.jpg", "", '2'), hard = member("h.jpg", "", '1');
  const std::string b = member("b.jpg", "3");
  const std::string archive = a1 + dir + a2 + link + hard + b + kTrailer;
  std::vector<std::string> frames;
  const TarIndex index = scan(archive, true, 3, &frames);
  expect_same_index(index, scan_skipping(archive));
  ASSERT_EQ(index.samples(), 2u);
  EXPECT_EQ(index.skipped_members, 3u);
  EXPECT_EQ(index.hard_links, 1u);
  EXPECT_SAME_BYTES(sample_bytes(archive, index, 0), a1 + a2);  // two ranges around the directory
  EXPECT_EQ(index.first_range[1] - index.first_range[0], 2u);
  EXPECT_SAME_BYTES(sample_bytes(archive, index, 1), b);
  std::string framed;
  append_tar_frame(framed, a1 + a2);
  EXPECT_SAME_BYTES(frames[0], framed);
}

TEST(TarScanner, EmptyInputsAndArchivesWithoutTrailer) {
  EXPECT_EQ(scan("").samples(), 0u);
  EXPECT_EQ(scan(kTrailer).samples(), 0u);
  const std::string a = member("a.txt", "x");
  const TarIndex index = scan(a);
  EXPECT_EQ(index.samples(), 1u);
  EXPECT_FALSE(index.trailer_found);
  EXPECT_EQ(index.archive_end, a.size());
}

// `cat a.tar b.tar`: what follows the first zero block is refused, never
// dropped; read through the zero blocks, it is every archive's samples.
TEST(TarScanner, DataAfterTheEndIsRefusedUnlessZeroBlocksAreReadThrough) {
  const std::string a = member("a.txt", "x"), b = member("b.txt", "y") + member("b.jpg", "z");
  const std::string archive = a + kTrailer + std::string(512, '\0') + b + kTrailer;
  const std::string error = error_of(archive);
  EXPECT_EQ(error, "input 't.tar': data at byte 2560 after the end-of-archive marker at byte 1024 (archives "
                   "concatenated?): give --ignore-zeros to read every archive in it, or name the archives one by one");
  EXPECT_THROW(scan_skipping(archive), InputError);
  EXPECT_NE(error_of(a + std::string(512, '\0') + member("b.txt", "y")).find("data at byte 1536"), std::string::npos);
  for (std::size_t piece : {std::size_t{1}, std::size_t{512}, std::size_t{5000}}) {
    std::vector<std::string> frames;
    TarScanner scanner("'t.tar'", true, [&](std::string_view f) { frames.emplace_back(f); }, true);
    for (std::size_t at = 0; at < archive.size(); at += piece) {
      scanner.add(archive.data() + at, std::min(piece, archive.size() - at));
    }
    const TarIndex index = scanner.finish();
    ASSERT_EQ(index.samples(), 2u) << piece;
    EXPECT_SAME_BYTES(sample_bytes(archive, index, 0), a);
    EXPECT_SAME_BYTES(sample_bytes(archive, index, 1), b);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_SAME_BYTES(frames[1].substr(kTarFrameBytes), b);
  }
}

// tar --sparse --format=posix: the member's data is a map and the parts it
// maps, not the file (formats 0.0, 0.1 and 1.0 all write GNU.sparse.* records).
TEST(TarScanner, PaxSparseMembersAreRefusedLikeTheGnuForm) {
  for (const char* key : {"GNU.sparse.major", "GNU.sparse.map", "GNU.sparse.numblocks"}) {
    const std::string archive = pax_member(pax_record(key, "1")) + member("GNUSparseFile.1/f.bin", "data") + kTrailer;
    EXPECT_NE(error_of(archive).find("member 'GNUSparseFile.1/f.bin' is a GNU sparse file (pax GNU.sparse.*"),
              std::string::npos)
        << key << ": " << error_of(archive);
  }
}

TEST(TarScanner, RefusesCorruptAndTruncatedArchivesNamingTheByte) {
  const std::string a = member("a.txt", std::string(600, 'x'));
  std::string corrupt = a + member("b.txt", "y") + kTrailer;
  corrupt[a.size() + 10] ^= 1;
  EXPECT_EQ(error_of(corrupt).find("input 't.tar': tar header at byte 1536: checksum mismatch"), 0u) << error_of(corrupt);
  EXPECT_NE(error_of(std::string(512, 'z')).find("checksum mismatch"), std::string::npos);
  const std::string truncated = a.substr(0, 700);
  EXPECT_THROW(scan_skipping(truncated), InputError);
  EXPECT_THROW(scan_skipping(corrupt), InputError);
  EXPECT_EQ(scan_skipping(a + kTrailer).samples(), 1u);
  EXPECT_EQ(error_of(truncated), "input 't.tar': tar member 'a.txt' at byte 0 is truncated: the input ends 836 bytes "
                                 "before the member's end");
  EXPECT_NE(error_of(a + std::string(100, 'h')).find("tar header at byte 1536 is truncated"), std::string::npos);
  EXPECT_NE(error_of(pax_member(pax_record("path", "x.txt"))).find("ends inside an extended header"),
            std::string::npos);
  EXPECT_NE(error_of(pax_member(pax_record("path", "x.txt")) + kTrailer).find("followed by the end of the archive"),
            std::string::npos);
  EXPECT_NE(error_of(pax_member("garbage") + a).find("malformed pax record 'garbage'"), std::string::npos);
  EXPECT_NE(error_of(pax_member(pax_record("size", "1x")) + a).find("malformed pax size"), std::string::npos);
  HeaderFields global;
  global.name = "g";
  global.type = 'g';
  EXPECT_NE(error_of(header(global) + a).find("pax global header"), std::string::npos);
  EXPECT_NE(error_of(member("s.bin", "", 'S')).find("member 's.bin' is a GNU sparse file"), std::string::npos);
  HeaderFields bad_size;
  bad_size.name = "b.txt";
  std::string h = header(bad_size);
  h[124] = 'z';
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::memcpy(h.data() + 148, octal(sum, 7).data(), 7);
  EXPECT_NE(error_of(h).find("malformed size field"), std::string::npos);
}

TEST(TarScanner, RefusesASampleSplitInTwoOnlyWhenAsked) {
  const std::string archive = member("a.jpg", "1") + member("b.jpg", "2") + member("a.txt", "3") + kTrailer;
  EXPECT_EQ(scan(archive).samples(), 3u);
  EXPECT_EQ(error_of(archive, true), "input 't.tar': sample key 'a' at byte 2048 repeats the sample at byte 0 with "
                                     "other members between them (a sample split in two)");
}

TEST(TarFrames, EndWhereTheirLengthSaysAndStripInAnyPieces) {
  std::string frames;
  append_tar_frame(frames, "first sample");
  append_tar_frame(frames, "");
  append_tar_frame(frames, std::string(3000, 's'));
  RecordSyntax syntax = framed_syntax(Format::kTar, false);
  ASSERT_EQ(syntax.framing, Framing::kTarSample);
  const char* at = frames.data();
  const char* end = at + frames.size();
  EXPECT_EQ(scan_record(at, end, syntax).end, at + 8 + 12);
  EXPECT_EQ(scan_record(at + 20, end, syntax).end, at + 28);
  EXPECT_EQ(scan_record(at + 28, end, syntax).end, end);
  EXPECT_EQ(scan_record(at + 28, end - 1, syntax).end, nullptr);
  EXPECT_EQ(scan_record(at, at + 7, syntax).end, nullptr);
  for (std::size_t piece : {1, 5, 8, 13, 4096}) {
    TarFrameStripper stripper;
    std::string out;
    for (std::size_t k = 0; k < frames.size(); k += piece) {
      stripper.write(reinterpret_cast<const std::byte*>(frames.data() + k), std::min(piece, frames.size() - k),
                     [&](const std::byte* data, std::size_t n) { out.append(reinterpret_cast<const char*>(data), n); });
    }
    EXPECT_SAME_BYTES(out, "first sample" + std::string(3000, 's')) << piece;
    EXPECT_TRUE(stripper.at_frame_boundary());
  }
}

TEST(TarFormat, IsChosenByTheExtensionAlsoCompressed) {
  EXPECT_EQ(format_by_extension("train-00001.tar"), Format::kTar);
  EXPECT_EQ(format_by_extension("a.tar.gz"), Format::kTar);
  EXPECT_EQ(format_by_extension("a.tar.zst"), Format::kTar);
  EXPECT_EQ(format_by_extension("a.tarball"), Format::kAuto);
  EXPECT_THROW(detect_format(Format::kTar, 0, true, "a.tar", "", "'a.tar'"), UsageError);
  EXPECT_THROW(detect_format(Format::kTar, 8, false, "a.tar", "", "'a.tar'"), UsageError);
}

}  // namespace
}  // namespace extshuffle::formats::tar_test

namespace extshuffle::io::tar_test {
namespace {

// Frames over an input: 8 bytes in memory, then a range of a file, as the
// tar layout builds them. ExtentReader gathers the small file ranges into
// one read; every position and length must read what the extents say.
TEST(TarFrameExtents, ReadBackWhateverTheStartAndLength) {
  // An input file as the tool opens one (a memory file would take only aligned requests quietly).
  std::string input(300000, '\0');
  for (std::size_t k = 0; k < input.size(); ++k) input[k] = static_cast<char>(k * 7 + k / 251);
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("extshuffle-tar-test-" + std::to_string(::getpid()) + ".bin");
  std::ofstream(path, std::ios::binary).write(input.data(), static_cast<std::streamsize>(input.size()));
  std::unique_ptr<BlockFile> file = BlockFile::open_input(path.string());
  std::filesystem::remove(path);
  const std::vector<std::uint64_t> prefixes(400, 0x0102030405060708ull);
  ByteExtents data;
  std::string expected;
  std::uint64_t offset = 0;
  for (std::size_t k = 0; k < prefixes.size() && offset < input.size(); ++k) {
    // Mostly contiguous small ranges; now and then a gap, a large range, or another order.
    const std::uint64_t bytes = k % 37 == 5 ? 70000 : (k * 131) % 700;
    const std::uint64_t at = k % 11 == 3 ? offset + 512 : offset;
    if (at + bytes > input.size()) break;
    data.append({nullptr, 0, 8, reinterpret_cast<const std::byte*>(&prefixes[k])});
    expected.append(reinterpret_cast<const char*>(&prefixes[k]), 8);
    data.append({file.get(), at, bytes, nullptr});
    expected.append(input, at, bytes);
    offset = at + bytes;
  }
  ASSERT_EQ(data.bytes, expected.size());
  for (const std::uint64_t start : {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{8}, std::uint64_t{12345}}) {
    for (const std::uint64_t length : {std::uint64_t{1}, std::uint64_t{9}, std::uint64_t{4099}, data.bytes}) {
      ExtentReader reader(data);
      reader.seek(start);
      std::string got;
      while (!reader.at_end() && got.size() < 3 * length) {
        std::string piece(length, '\0');
        const std::uint64_t n = reader.read_now(reinterpret_cast<std::byte*>(piece.data()), length);
        got.append(piece, 0, n);
      }
      const std::string want = expected.substr(start, got.size());
      ASSERT_SAME_BYTES(got, want) << start << " " << length;
      EXPECT_EQ(got.size(), std::min<std::uint64_t>(expected.size() - start, 3 * length))
          << start << " " << length;
    }
  }
}

}  // namespace
}  // namespace extshuffle::io::tar_test

// Bad input read through a record index (dataset/indexed_records.hpp,
// index_identity.hpp, mapped_index.hpp): every way an index and its input can
// disagree gives one line (InputError naming the file, or out_of_range for a
// record past the end) and never a wrong record. An index of another file
// or of other options, a truncated or damaged index, an input that grew,
// shrank, was rewritten in place (a terminator moved, a CRC's data changed,
// a tar header changed) or touched, before or after it was opened.
#include "extshuffle/dataset/indexed_records.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "extshuffle/dataset/index_identity.hpp"
#include "extshuffle/dataset/indexed_dataset.hpp"
#include "extshuffle/dataset/mapped_index.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/tfrecord.hpp"
#include "support/command.hpp"
#include "support/indexed_files.hpp"
#include "support/tar_archives.hpp"

namespace extshuffle::dataset::indexed_records_test {
namespace {

using testing::indexed;
using testing::open_beside;
using testing::read_file;
using testing::read_segments;
using testing::TempDir;
using testing::write_file;

// Record `k` read as the record; the message of what it throws, else "".
std::string read_error(const IndexedRecords& records, std::uint64_t k, RecordForm form = RecordForm::kRecord) {
  try {
    read_segments(records, records.plan(std::vector<std::uint64_t>{k}, form));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool one_line(const std::string& message, const std::string& part) {
  return message.find('\n') == std::string::npos && message.find(part) != std::string::npos;
}

// The same modification time as before: a rewrite that keeps size and
// time, which only the checks of what is read can see.
void keep_time(const std::string& path, const struct stat& before) {
  const struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

TEST(IndexedRecords, AnIndexOfAnotherFileOrOtherOptionsIsRefused) {
  TempDir dir;
  const std::string a = indexed(dir, "a.txt", "a\nb\n");
  const std::string b = indexed(dir, "b.txt", "c\nd\ne\n");
  const std::string message = error_of([&] { open_indexed_dataset({a}, {index_path_beside(b)}, {}, true); });
  EXPECT_TRUE(one_line(message, "is not the index of '" + a + "'")) << message;
  DatasetOptions other;
  other.format = formats::Format::kCsv;
  const std::string options = error_of([&] { open_beside({a}, other); });
  EXPECT_TRUE(one_line(options, "it was made reading it as lines")) << options;
}

TEST(IndexedRecords, ATruncatedOrDamagedIndexIsRefused) {
  TempDir dir;
  const std::string a = indexed(dir, "a.txt", std::string(5000, 'x').append("\ny\n"));
  const std::string index = read_file(index_path_beside(a));
  for (const std::size_t cut : {index.size() - 1, index.size() / 2, std::size_t{70}, std::size_t{3}}) {
    write_file(index_path_beside(a), index.substr(0, cut));
    const std::string message = error_of([&] { open_beside({a}); });
    EXPECT_TRUE(one_line(message, "index '" + index_path_beside(a) + "'")) << cut << ": " << message;
  }
  write_file(index_path_beside(a), "not an index at all, but long enough to be read as one. " + std::string(100, '-'));
  EXPECT_TRUE(one_line(error_of([&] { open_beside({a}); }), "not an extshuffle record index"));
  // An offset past the file's end (a damaged array): refused at the read.
  std::string damaged = index;
  const std::uint64_t far = 1u << 30;
  std::memcpy(damaged.data() + 64 + 8, &far, 8);
  write_file(index_path_beside(a), damaged);
  const auto records = open_beside({a});
  EXPECT_TRUE(one_line(read_error(*records, 0), "lies at bytes 0-1073741824 of a file of 5003"));
  EXPECT_TRUE(one_line(read_error(*records, 1), "lies at bytes 1073741824-5003"));
}

TEST(IndexedRecords, AnInputThatGrewOrShrankIsRefused) {
  TempDir dir;
  const std::string a = indexed(dir, "a.txt", "a\nb\n");
  write_file(a, "a\nb\nc\n");
  EXPECT_TRUE(one_line(error_of([&] { open_beside({a}); }), "it was made for a file of 4 bytes, the input holds 6"));
  // Changed after it was opened: refused when the file is opened for the first read.
  const std::string b = indexed(dir, "b.txt", "a\nb\n");
  const auto records = open_beside({b});
  write_file(b, "a\n");
  EXPECT_TRUE(one_line(read_error(*records, 0), "it holds 2 bytes, the index says 4"));
}

TEST(IndexedRecords, AnInputTruncatedWhileOpenGivesOneLine) {
  TempDir dir;
  const std::string a = indexed(dir, "a.txt", std::string(100, 'a').append("\n").append(100, 'b').append("\n"));
  const auto records = open_beside({a});
  EXPECT_EQ(read_error(*records, 0), "");  // the file is open now
  ASSERT_EQ(::truncate(a.c_str(), 150), 0);
  EXPECT_TRUE(one_line(read_error(*records, 1), "it ends at byte 150, its index has records up to byte 202"));
}

TEST(IndexedRecords, ARewriteOfTheSameSizeAndTimeIsCaughtByWhatIsRead) {
  TempDir dir;
  // Lines: a terminator moved.
  const std::string a = indexed(dir, "a.txt", "aaaa\nbb\n");
  struct stat st {};
  ASSERT_EQ(::stat(a.c_str(), &st), 0);
  write_file(a, "aa\nbbbb\n");
  keep_time(a, st);
  DatasetOptions options;
  // Opened without the fingerprint check, as a data loader's worker does:
  // only the record's own check stands between it and a wrong record.
  auto lines = open_indexed_dataset({a}, {index_path_beside(a)}, options, false);
  EXPECT_TRUE(one_line(read_error(*lines, 0), "record 0 at byte 0 does not end with its terminator"));
  EXPECT_TRUE(one_line(read_error(*lines, 0, RecordForm::kRaw), "does not end with its terminator"));
  // With the fingerprint (the first 64 KiB block is sampled): refused at once.
  EXPECT_TRUE(one_line(error_of([&] { open_beside({a}); }), "sampled blocks differ"));
  // TFRecord: a byte of the data changed.
  std::string frames;
  formats::append_tfrecord_frame(frames, "payload one");
  formats::append_tfrecord_frame(frames, "payload two");
  const std::string t = indexed(dir, "a.tfrecord", frames);
  ASSERT_EQ(::stat(t.c_str(), &st), 0);
  frames[14] ^= 1;
  write_file(t, frames);
  keep_time(t, st);
  const auto tf = open_indexed_dataset({t}, {index_path_beside(t)}, options, false);
  EXPECT_TRUE(one_line(read_error(*tf, 0), "does not match its TFRecord CRCs"));
  EXPECT_TRUE(one_line(read_error(*tf, 0, RecordForm::kRaw), "does not match its TFRecord CRCs"));
  EXPECT_EQ(read_error(*tf, 1), "");
  // Tar: a member's header changed.
  std::string archive = testing::member("x.txt", "data") + testing::member("y.txt", "more") + testing::kTrailer;
  const std::string r = indexed(dir, "a.tar", archive);
  ASSERT_EQ(::stat(r.c_str(), &st), 0);
  archive[1024 + 3] ^= 1;
  write_file(r, archive);
  keep_time(r, st);
  const auto tar = open_indexed_dataset({r}, {index_path_beside(r)}, options, false);
  EXPECT_EQ(read_error(*tar, 0), "");
  EXPECT_TRUE(one_line(read_error(*tar, 1), "does not start with a valid tar header"));
  EXPECT_TRUE(one_line(read_error(*tar, 1, RecordForm::kRaw), "does not start with a valid tar header"));
}

TEST(IndexedRecords, ATouchedInputIsRefused) {
  TempDir dir;
  const std::string a = indexed(dir, "a.txt", "a\nb\n");
  const auto records = open_beside({a});
  struct stat st {};
  ASSERT_EQ(::stat(a.c_str(), &st), 0);
  st.st_mtim.tv_sec -= 10;
  keep_time(a, st);
  EXPECT_TRUE(one_line(read_error(*records, 0), "its modification time is not the index's"));
  EXPECT_TRUE(one_line(error_of([&] { open_beside({a}); }), "the input's modification time is not the one indexed"));
}

TEST(IndexedRecords, RecordsPastTheEndAndInputsWithoutOffsetsAreRefused) {
  TempDir dir;
  const std::string a = indexed(dir, "a.txt", "a\nb\n");
  const auto records = open_beside({a});
  EXPECT_THROW(records->plan(std::vector<std::uint64_t>{0, 2}, RecordForm::kRecord), std::out_of_range);
  write_file(dir / "a.jsonl.gz", "x");
  const std::string gz = (dir / "a.jsonl.gz").string();
  const std::string message = error_of([&] { check_indexable(gz, "Dataset"); });
  EXPECT_TRUE(one_line(message, "is compressed (gzip): its records cannot be read at an offset; decompress it first"))
      << message;
  for (const char* name : {"a.zst", "a.xz", "a.bz2", "a.lz4"}) {
    EXPECT_TRUE(one_line(error_of([&] { check_indexable((dir / name).string(), "Dataset"); }), "is compressed"));
  }
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_TRUE(one_line(error_of([&] { check_indexable((dir / "fifo").string(), "Dataset"); }), "not a regular file"));
}

}  // namespace
}  // namespace extshuffle::dataset::indexed_records_test

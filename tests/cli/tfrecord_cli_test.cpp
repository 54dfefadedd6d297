// Black-box tests of TFRecord input and output (--format tfrecord, .tfrecord
// and .tfrecords names): the frames written are the input's frames, byte for
// byte, in the order P(seed, N) that N lines take, through RAM and through
// scratch space; corrupt and truncated frames are one-line errors naming the
// byte offset, with nothing written. The frames are written and read here by
// the test's own TFRecord code (a bitwise CRC-32C), not the library's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/command.hpp"
#include "support/tools.hpp"

namespace extshuffle::testing::tfrecord_cli_test {
namespace {

const std::string kBinary = extshuffle_binary();
const std::string kKnobs = " --leaf-records 256 --fanout 8 -j 1 ";

// CRC-32C bit by bit (reflected polynomial 0x82F63B78), as RFC 3720 defines it.
std::uint32_t bitwise_crc32c(const std::string& bytes) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (const char c : bytes) {
    crc ^= static_cast<unsigned char>(c);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::uint32_t masked(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

std::string le_bytes(std::uint64_t value, int bytes) {
  std::string out;
  for (int k = 0; k < bytes; ++k) out += static_cast<char>((value >> (8 * k)) & 0xFF);
  return out;
}

std::uint64_t le_value(const std::string& bytes, std::size_t at, int count) {
  std::uint64_t value = 0;
  for (int k = count - 1; k >= 0; --k) value = (value << 8) | static_cast<unsigned char>(bytes[at + k]);
  return value;
}

std::string tfrecord_frame(const std::string& data) {
  const std::string length = le_bytes(data.size(), 8);
  return length + le_bytes(masked(bitwise_crc32c(length)), 4) + data + le_bytes(masked(bitwise_crc32c(data)), 4);
}

// The test's TFRecord reader: every frame's length, both CRCs, no bytes left over.
std::vector<std::string> read_tfrecords(const std::string& file) {
  std::vector<std::string> records;
  for (std::size_t at = 0; at < file.size();) {
    if (file.size() - at < 16) throw std::runtime_error("truncated frame header at " + std::to_string(at));
    const std::uint64_t length = le_value(file, at, 8);
    if (le_value(file, at + 8, 4) != masked(bitwise_crc32c(file.substr(at, 8)))) {
      throw std::runtime_error("length CRC at " + std::to_string(at));
    }
    if (length > file.size() - at - 16) throw std::runtime_error("truncated frame at " + std::to_string(at));
    const std::string data = file.substr(at + 12, length);
    if (le_value(file, at + 12 + length, 4) != masked(bitwise_crc32c(data))) {
      throw std::runtime_error("data CRC at " + std::to_string(at));
    }
    records.push_back(data);
    at += 16 + length;
  }
  return records;
}

// Record i: its number, then bytes that would cut lines or CSV apart
// (newlines, NULs, quotes), of lengths from 0 to a few KiB.
std::string payload(std::uint64_t i) {
  if (i % 97 == 0) return "";
  std::string data = std::to_string(i) + std::string("\n\"\0,", 4);
  data += std::string(((i * 2654435761u) >> 7) % (i % 50 == 0 ? 5000 : 700), static_cast<char>(i % 256));
  return data;
}

std::vector<std::string> payloads(std::uint64_t n) {
  std::vector<std::string> records;
  for (std::uint64_t i = 0; i < n; ++i) records.push_back(payload(i));
  return records;
}

std::string tfrecord_file(const std::vector<std::string>& records) {
  std::string file;
  for (const std::string& r : records) file += tfrecord_frame(r);
  return file;
}

// The order P(seed, n) as the tool puts n numbered lines.
std::vector<std::uint64_t> line_order(const TempDir& dir, std::uint64_t n, const std::string& options) {
  std::string lines;
  for (std::uint64_t i = 0; i < n; ++i) lines += std::to_string(i) + "\n";
  write_file(dir / "order.txt", lines);
  const auto r = run_command(kBinary + options + " " + (dir / "order.txt").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::uint64_t> order;
  for (std::size_t at = 0; at < r.out.size();) {
    const std::size_t end = r.out.find('\n', at);
    order.push_back(std::stoull(r.out.substr(at, end - at)));
    at = end + 1;
  }
  return order;
}

TEST(TfrecordCli, ShufflesFramesUnchangedInTheOrderLinesTake) {
  TempDir dir;
  const std::uint64_t n = 3000;
  const auto records = payloads(n);
  write_file(dir / "in.tfrecord", tfrecord_file(records));
  // Through RAM (the default budget), and through scratch space with the
  // testing knobs at a small budget (three levels of the plan, two of them
  // through scratch space).
  for (const std::string& options : {std::string(" --seed 7 "), kKnobs + "--seed 7 -S 700K "}) {
    const std::vector<std::uint64_t> expected = line_order(dir, n, options);
    ASSERT_EQ(expected.size(), n);
    const auto r = run_command("cd " + dir.path().string() + " && " + kBinary + options +
                               "--stats in.tfrecord -o out.tfrecords");
    ASSERT_EQ(r.exit_code, 0) << options << r.err;
    const auto out = read_tfrecords(read_file(dir / "out.tfrecords"));
    ASSERT_EQ(out.size(), n);
    for (std::uint64_t k = 0; k < n; ++k)
      ASSERT_SAME_BYTES(out[k], records[expected[k]]) << options << " position " << k;
    if (options.find("-S 700K") != std::string::npos) {
      EXPECT_NE(r.err.find("levels=3 passes=2"), std::string::npos) << r.err;
    }
  }
}

TEST(TfrecordCli, FormatOptionCompressionHeadCountAndVerify) {
  SKIP_WITHOUT("gzip", "zstd");
  TempDir dir;
  const std::uint64_t n = 500;
  const auto records = payloads(n);
  const std::string file = tfrecord_file(records);
  write_file(dir / "data.bin", file);
  const auto plain = run_command(kBinary + " --seed 3 --format tfrecord " + (dir / "data.bin").string());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto sorted_in = records;
  auto sorted_out = read_tfrecords(plain.out);
  std::sort(sorted_in.begin(), sorted_in.end());
  std::sort(sorted_out.begin(), sorted_out.end());
  EXPECT_EQ(sorted_out, sorted_in);
  // .tfrecord.gz in, .tfrecord.zst out: the same frames.
  const auto gz = run_command("gzip -c " + (dir / "data.bin").string() + " > " + (dir / "in.tfrecord.gz").string() +
                              " && " + kBinary + " --seed 3 " + (dir / "in.tfrecord.gz").string() + " " +
                              (dir / "out.tfrecord.zst").string() + " && zstd -dc " +
                              (dir / "out.tfrecord.zst").string());
  ASSERT_EQ(gz.exit_code, 0) << gz.err;
  EXPECT_SAME_BYTES(gz.out, plain.out);
  // -n K: the first K frames of the full run.
  const auto head = run_command(kBinary + " --seed 3 -n 17 --format tfrecord " + (dir / "data.bin").string());
  ASSERT_EQ(head.exit_code, 0) << head.err;
  const auto first = read_tfrecords(head.out);
  ASSERT_EQ(first.size(), 17u);
  EXPECT_TRUE(std::equal(first.begin(), first.end(), read_tfrecords(plain.out).begin()));
  const auto verified = run_command(kBinary + " --seed 3 --verify --format tfrecord " + (dir / "data.bin").string());
  ASSERT_EQ(verified.exit_code, 0) << verified.err;
  EXPECT_SAME_BYTES(verified.out, plain.out);
}

// A corrupt or truncated frame: exit 1, one line naming the file and the
// frame's byte offset, and an existing output left as it was.
TEST(TfrecordCli, CorruptOrTruncatedFrameIsAnErrorWithNothingWritten) {
  TempDir dir;
  const auto records = payloads(200);
  const std::string good = tfrecord_file(records);
  std::size_t tenth = 0;  // byte offset of frame 10
  for (int k = 0; k < 10; ++k) tenth += 16 + records[k].size();
  std::string bad_data = good, bad_length = good;
  bad_data[tenth + 12 + 1] ^= 0x20;  // a data byte of frame 10 (frame 10's data is "10\n...")
  bad_length[tenth + 2] ^= 0x01;     // its length field
  const std::string truncated = good.substr(0, good.size() - 3);
  std::size_t last = good.size() - 16 - records.back().size();
  struct Case {
    std::string bytes, expected;
  };
  const std::vector<Case> cases{
      {bad_data, "at byte " + std::to_string(tenth) + ": data CRC mismatch"},
      {bad_length, "at byte " + std::to_string(tenth) + ": length CRC mismatch"},
      {truncated, "TFRecord frame at byte " + std::to_string(last) + " is truncated"},
      {good.substr(0, good.size() - 16 - records.back().size() + 5), "at byte " + std::to_string(last) + " is truncated"},
  };
  for (const Case& c : cases) {
    write_file(dir / "in.tfrecord", c.bytes);
    write_file(dir / "out.tfrecord", "keep me");
    const auto r = run_command(kBinary + " --seed 1 " + (dir / "in.tfrecord").string() + " -o " +
                               (dir / "out.tfrecord").string());
    EXPECT_EQ(r.exit_code, 1) << c.expected;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("extshuffle: input '", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_SAME_BYTES(read_file(dir / "out.tfrecord"), "keep me");
  }
}

TEST(TfrecordCli, LineOptionsAreUsageErrors) {
  TempDir dir;
  write_file(dir / "in.tfrecord", tfrecord_file(payloads(5)));
  const std::string in = (dir / "in.tfrecord").string();
  for (const char* option : {"-z", "--header", "--header=2", "--skip-empty",
                             "--format tfrecord --record-size 8"}) {
    const auto r = run_command(kBinary + " --seed 1 " + std::string(option) + " " + in);
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }
  // Without a name or --format, frames look binary: the hint names tfrecord.
  write_file(dir / "frames", tfrecord_file(payloads(5)));
  const auto r = run_command(kBinary + " --seed 1 " + (dir / "frames").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--format tfrecord"), std::string::npos) << r.err;
}

// --repeat draws whole frames, from RAM and one read per draw (-S 100K).
TEST(TfrecordCli, RepeatDrawsWholeFrames) {
  TempDir dir;
  const auto records = payloads(1000);
  write_file(dir / "in.tfrecord", tfrecord_file(records));
  const std::string base = kBinary + " -r -n 700 --seed 5 " + (dir / "in.tfrecord").string();
  const auto in_ram = run_command(base);
  const auto by_offset = run_command(base + " -S 100K");
  ASSERT_EQ(in_ram.exit_code, 0) << in_ram.err;
  EXPECT_SAME_BYTES(by_offset.out, in_ram.out);
  const auto drawn = read_tfrecords(in_ram.out);
  ASSERT_EQ(drawn.size(), 700u);
  for (const std::string& r : drawn) EXPECT_NE(std::find(records.begin(), records.end(), r), records.end());
}

TEST(TfrecordCli, EmptyFileGivesEmptyOutput) {
  TempDir dir;
  write_file(dir / "empty.tfrecord", "");
  const auto r = run_command(kBinary + " --seed 1 " + (dir / "empty.tfrecord").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace extshuffle::testing::tfrecord_cli_test

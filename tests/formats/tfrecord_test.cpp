// TFRecord frames (formats/tfrecord.hpp): ISA-L's CRC-32C against the
// published check values, TensorFlow's masking, where scan_record() ends a
// frame, and every way check_tfrecord_frame() refuses a bad one.
#include "extshuffle/formats/tfrecord.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/formats/record_syntax.hpp"

#include "support/same_bytes.hpp"

namespace extshuffle::formats::tfrecord_test {
namespace {

RecordSyntax framed() {
  RecordSyntax syntax;
  syntax.framing = Framing::kTfrecord;
  return syntax;
}

std::string frame(std::string_view data) {
  std::string out;
  append_tfrecord_frame(out, data);
  return out;
}

// Runs the check on `bytes` as the whole input (everything read).
void check_whole(const std::string& bytes, std::uint64_t offset = 0) {
  check_tfrecord_frame(bytes.data(), bytes.data() + bytes.size(), bytes.size(), offset, "'t.tfrecord'");
}

std::string error_of(const std::string& bytes) {
  try {
    check_whole(bytes, 100);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// RFC 3720 (iSCSI), appendix B.4, and the customary "123456789" check value.
TEST(Crc32c, MatchesThePublishedCheckValues) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  const std::vector<unsigned char> zeros(32, 0), ones(32, 0xFF);
  std::vector<unsigned char> ascending(32);
  std::iota(ascending.begin(), ascending.end(), 0);
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones.data(), ones.size()), 0x62A8AB43u);
  EXPECT_EQ(crc32c(ascending.data(), ascending.size()), 0x46DD794Eu);
  EXPECT_EQ(crc32c("", 0), 0u);
}

TEST(Crc32c, ContinuesAcrossPieces) {
  const std::string text = "The quick brown fox jumps over the lazy dog";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    EXPECT_EQ(crc32c(text.data() + cut, text.size() - cut, crc32c(text.data(), cut)), crc32c(text.data(), text.size()));
  }
}

// TensorFlow's crc32c::Mask: rotate right by 15 bits, add 0xa282ead8.
TEST(TfrecordFrame, MaskIsTensorFlowsRotateAndAdd) {
  EXPECT_EQ(mask_tfrecord_crc(0), 0xa282ead8u);
  EXPECT_EQ(mask_tfrecord_crc(0x00008000u), 0xa282ead9u);  // bit 15 rotates to bit 0
  EXPECT_EQ(mask_tfrecord_crc(0x00000001u), 0xa282ead8u + 0x00020000u);
}

TEST(TfrecordFrame, FrameHoldsLengthItsCrcDataAndDataCrc) {
  const std::string f = frame("abc");
  ASSERT_EQ(f.size(), 16u + 3u);
  EXPECT_EQ(tfrecord_data_length(f.data()), 3u);
  EXPECT_EQ(f.substr(12, 3), "abc");
  const std::uint32_t data_crc = mask_tfrecord_crc(crc32c("abc", 3));
  EXPECT_SAME_BYTES(f.substr(15), std::string(reinterpret_cast<const char*>(&data_crc), 4));
  EXPECT_NO_THROW(check_whole(f));
}

TEST(TfrecordFrame, ScanRecordEndsAtTheFrameEndWhateverTheBytes) {
  // Newlines, NULs and quotes inside the data are data.
  const std::string data = std::string("a\nb\0\"c\n", 7) + std::string(300, '\n');
  const std::string two = frame(data) + frame("");
  const RecordScan first = scan_record(two.data(), two.data() + two.size(), framed());
  ASSERT_NE(first.end, nullptr);
  EXPECT_EQ(first.end - two.data(), static_cast<long>(16 + data.size()));
  const RecordScan second = scan_record(first.end, two.data() + two.size(), framed());
  EXPECT_EQ(second.end, two.data() + two.size());  // an empty record is 16 bytes
  // Any shorter buffer holds no complete frame.
  for (std::size_t cut = 0; cut < 16 + data.size(); ++cut) {
    EXPECT_EQ(scan_record(two.data(), two.data() + cut, framed()).end, nullptr) << cut;
  }
}

TEST(TfrecordFrame, AbsurdLengthIsIncompleteNotAnOverflow) {
  std::string f = frame("x");
  const std::uint64_t huge = ~std::uint64_t{0} - 3;
  std::memcpy(f.data(), &huge, 8);
  EXPECT_EQ(scan_record(f.data(), f.data() + f.size(), framed()).end, nullptr);
}

TEST(TfrecordFrame, BadLengthCrcIsAnErrorNamingTheOffset) {
  std::string f = frame("payload");
  f[9] ^= 0x01;
  const std::string message = error_of(f);
  EXPECT_NE(message.find("'t.tfrecord'"), std::string::npos) << message;
  EXPECT_NE(message.find("at byte 100"), std::string::npos) << message;
  EXPECT_NE(message.find("length CRC mismatch"), std::string::npos) << message;
}

TEST(TfrecordFrame, BadDataCrcIsAnErrorNamingTheOffset) {
  for (const std::size_t flip : {12u, 15u, 19u, 22u}) {  // data bytes and the stored CRC
    std::string f = frame("payload");
    f[flip] ^= 0x40;
    const std::string message = error_of(f);
    EXPECT_NE(message.find("at byte 100: data CRC mismatch"), std::string::npos) << flip << ": " << message;
  }
}

TEST(TfrecordFrame, TruncatedFrameIsAnError) {
  const std::string f = frame("payload");
  for (std::size_t cut = 1; cut < f.size(); ++cut) {
    const std::string message = error_of(f.substr(0, cut));
    EXPECT_NE(message.find("is truncated"), std::string::npos) << cut << ": " << message;
  }
}

TEST(TfrecordFrame, PartlyReadFrameIsCheckedAsFarAsItGoes) {
  const std::string f = frame("payload");
  // Header read, data not yet: nothing to complain about.
  EXPECT_NO_THROW(check_tfrecord_frame(f.data(), f.data() + 12, f.size(), 0, "x"));
  EXPECT_NO_THROW(check_tfrecord_frame(f.data(), f.data() + 5, f.size(), 0, "x"));
  // A corrupt length CRC is caught before the data arrives.
  std::string bad = f;
  bad[8] ^= 1;
  EXPECT_THROW(check_tfrecord_frame(bad.data(), bad.data() + 12, bad.size(), 0, "x"), InputError);
}

TEST(TfrecordFormat, ChosenByNameAndByFormat) {
  EXPECT_EQ(format_by_extension("train.tfrecord"), Format::kTfrecord);
  EXPECT_EQ(format_by_extension("train.tfrecords"), Format::kTfrecord);
  EXPECT_EQ(format_by_extension("train.tfrecord.gz"), Format::kTfrecord);
  EXPECT_EQ(format_by_extension("train.tfrecords.zst"), Format::kTfrecord);
  const std::string binary("\x05\0\0\0\0\0\0\0", 8);
  const DetectedFormat d = detect_format(Format::kAuto, 0, false, "a.tfrecord", binary, "'a.tfrecord'");
  EXPECT_EQ(d.kind, RecordKind::kFramed);
  EXPECT_EQ(d.framed_format, Format::kTfrecord);
  EXPECT_EQ(framed_syntax(Format::kTfrecord, false).framing, Framing::kTfrecord);
  EXPECT_EQ(default_header_records(Format::kTfrecord), 0u);
  EXPECT_THROW(detect_format(Format::kTfrecord, 0, true, "a", binary, "'a'"), UsageError);
  EXPECT_THROW(detect_format(Format::kTfrecord, 8, false, "a", binary, "'a'"), UsageError);
}

}  // namespace
}  // namespace extshuffle::formats::tfrecord_test

// Compressed streams (io/compression.hpp): round trips, interoperability with
// the gzip and zstd command-line tools, and the messages for bad input.
#include "extshuffle/io/compression.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../support/command.hpp"
#include "extshuffle/errors.hpp"

namespace extshuffle::io::compression_test {
namespace {

using testing::read_file;
using testing::run_command;
using testing::TempDir;
using testing::write_file;

// Text-like data: lines of pseudo-random words and numbers (xorshift64, so
// the same on every platform), compressible about 3:1 like real JSONL.
std::string text_data(std::size_t bytes, std::uint64_t seed = 1) {
  static const char* const kWords[] = {"alpha", "beta",  "gamma", "delta", "\"id\":", "\"text\":",
                                       "{",     "}",     "true",  "null",  "shuffle", "record"};
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  std::string text;
  text.reserve(bytes + 64);
  while (text.size() < bytes) {
    const int words = 3 + static_cast<int>(next() % 8);
    for (int w = 0; w < words; ++w) {
      text += kWords[next() % 12];
      text += ' ';
      text += std::to_string(next() % 100000);
      text += ' ';
    }
    text += '\n';
  }
  text.resize(bytes);
  return text;
}

// Incompressible bytes.
std::string random_data(std::size_t bytes, std::uint64_t seed = 7) {
  std::string data(bytes, '\0');
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& c : data) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x >> 56);
  }
  return data;
}

// Compresses `data` with writes of `piece` bytes (0: one write).
std::string compress(Codec codec, const std::string& data, int threads = 1, std::size_t piece = 0,
                     std::size_t* largest_sink_call = nullptr) {
  std::string out;
  std::size_t largest = 0;
  CompressingWriter writer(
      codec,
      [&](const void* p, std::size_t n) {
        out.append(static_cast<const char*>(p), n);
        largest = std::max(largest, n);
      },
      threads);
  if (piece == 0) piece = std::max<std::size_t>(data.size(), 1);
  for (std::size_t at = 0; at < data.size(); at += piece) {
    writer.write(data.data() + at, std::min(piece, data.size() - at));
  }
  writer.finish();
  EXPECT_EQ(writer.bytes_written(), data.size());
  EXPECT_EQ(writer.compressed_bytes_written(), out.size());
  if (largest_sink_call) *largest_sink_call = largest;
  return out;
}

// Decompresses the file at `path` with reads of `piece` bytes.
std::string decompress_file(const std::filesystem::path& path, Codec codec, std::size_t piece = 1 << 20,
                            std::uint64_t* compressed_bytes = nullptr, std::uint64_t memory_bytes = 0) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path.string());
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  DecompressingReader reader(fd, codec, path.filename().string(), memory_bytes);
  std::string out;
  std::vector<char> buffer(piece);
  for (;;) {
    const std::size_t n = reader.read(buffer.data(), piece);
    out.append(buffer.data(), n);
    if (n < piece) {
      EXPECT_EQ(reader.read(buffer.data(), piece), 0u) << "a short read must mean the end";
      break;
    }
  }
  EXPECT_EQ(reader.bytes_read(), out.size());
  if (compressed_bytes) *compressed_bytes = reader.compressed_bytes_read();
  return out;
}

// The InputError message of decompressing `bytes` stored as `name`, or "" if none.
std::string decode_error(Codec codec, const std::string& bytes, const std::string& name) {
  TempDir dir;
  write_file(dir / name, bytes);
  try {
    decompress_file(dir / name, codec);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Byte equality that reports sizes and the first difference instead of
// printing megabytes.
::testing::AssertionResult same_bytes(const std::string& actual, const std::string& expected) {
  if (actual == expected) return ::testing::AssertionSuccess();
  const auto diff = std::mismatch(actual.begin(), actual.end(), expected.begin(), expected.end());
  return ::testing::AssertionFailure() << "got " << actual.size() << " bytes, expected " << expected.size()
                                       << "; first difference at byte " << (diff.first - actual.begin());
}

bool have_tool(const std::string& tool) { return run_command("command -v " + tool).exit_code == 0; }

const Codec kCodecs[] = {Codec::kGzip, Codec::kZstd};

TEST(CodecForPath, ChoosesByExtension) {
  EXPECT_EQ(codec_for_path("data.jsonl.gz"), Codec::kGzip);
  EXPECT_EQ(codec_for_path("/a/b/data.csv.GZ"), Codec::kGzip);
  EXPECT_EQ(codec_for_path("data.jsonl.zst"), Codec::kZstd);
  EXPECT_EQ(codec_for_path("data.jsonl.zstd"), Codec::kZstd);
  EXPECT_EQ(codec_for_path("DATA.ZST"), Codec::kZstd);
  EXPECT_EQ(codec_for_path(".gz"), Codec::kGzip);
  EXPECT_EQ(codec_for_path("-"), Codec::kNone);
  EXPECT_EQ(codec_for_path(""), Codec::kNone);
  EXPECT_EQ(codec_for_path("data.jsonl"), Codec::kNone);
  EXPECT_EQ(codec_for_path("data.tgz"), Codec::kNone);
  EXPECT_EQ(codec_for_path("data.gz.txt"), Codec::kNone);
  EXPECT_EQ(codec_for_path("data.gzip"), Codec::kNone);
  EXPECT_EQ(codec_for_path("data.zs"), Codec::kNone);
  EXPECT_EQ(codec_for_path("gz"), Codec::kNone);
  EXPECT_EQ(codec_for_path("dir.gz/data"), Codec::kNone);
}

TEST(CodecForPath, Names) {
  EXPECT_EQ(codec_name(Codec::kNone), "none");
  EXPECT_EQ(codec_name(Codec::kGzip), "gzip");
  EXPECT_EQ(codec_name(Codec::kZstd), "zstd");
}

TEST(Compression, RoundTripsSmallEmptyAndLargeInputs) {
  TempDir dir;
  const std::vector<std::string> inputs = {"", "hello\n", std::string(1, '\0'), text_data(100000),
                                           text_data(9 << 20, 3), random_data(3 << 20)};
  for (Codec codec : {Codec::kNone, Codec::kGzip, Codec::kZstd}) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      SCOPED_TRACE(std::string(codec_name(codec)) + " input " + std::to_string(i));
      const std::string packed = compress(codec, inputs[i], 2);
      if (codec != Codec::kNone && inputs[i].size() > 1000) {
        EXPECT_DIFFERENT_BYTES(packed, inputs[i]);
      }
      write_file(dir / "f", packed);
      std::uint64_t compressed = 0;
      // Read sizes that split the stream at odd places and one larger than the buffers.
      for (std::size_t piece : {std::size_t{1} << 20, std::size_t{4093}, std::size_t{3} << 20}) {
        EXPECT_TRUE(same_bytes(decompress_file(dir / "f", codec, piece, &compressed), inputs[i])) << "piece " << piece;
        EXPECT_EQ(compressed, packed.size());
      }
    }
  }
}

TEST(Compression, ByteByByteReadsAndWrites) {
  TempDir dir;
  const std::string input = text_data(20000);
  for (Codec codec : kCodecs) {
    SCOPED_TRACE(codec_name(codec));
    write_file(dir / "f", compress(codec, input, 1, 1));
    EXPECT_TRUE(same_bytes(decompress_file(dir / "f", codec, 1), input));
  }
}

TEST(Compression, WholeSmallInputIsStagedAndSinkGetsBoundedPieces) {
  for (Codec codec : kCodecs) {
    SCOPED_TRACE(codec_name(codec));
    std::size_t largest = 0;
    compress(codec, random_data(5 << 20), 2, 1 << 20, &largest);
    EXPECT_LE(largest, CompressingWriter::kBufferBytes);
    EXPECT_GT(largest, 0u);
  }
}

// The compressed bytes depend on the data only: not on how it was split into
// writes, nor (zstd) on the worker count.
TEST(Compression, OutputBytesDoNotDependOnWriteSizesOrThreads) {
  // 200 kB: one write takes the direct path, small ones the staging buffer,
  // and all of it reaches libzstd only at finish().
  for (const std::string& input : {text_data(300), text_data(200000, 8), text_data(5 << 20, 9)}) {
    for (Codec codec : kCodecs) {
      SCOPED_TRACE(std::string(codec_name(codec)) + " " + std::to_string(input.size()));
      const std::string reference = compress(codec, input, 1);
      for (std::size_t piece : {std::size_t{1}, std::size_t{1000}, std::size_t{100000}, std::size_t{3} << 20}) {
        if (piece == 1 && input.size() > 100000) continue;
        EXPECT_TRUE(same_bytes(compress(codec, input, 1, piece), reference)) << "piece " << piece;
      }
      for (int threads : {2, 4, 16}) {
        EXPECT_TRUE(same_bytes(compress(codec, input, threads, 65536), reference)) << "threads " << threads;
      }
    }
  }
}

TEST(Compression, HeadersAreDeterministicAndCarryChecksums) {
  const std::string gz = compress(Codec::kGzip, "x\n");
  ASSERT_GE(gz.size(), 18u);
  // Magic, deflate, no flags, mtime 0, no extra flags, OS 3 (Unix).
  EXPECT_SAME_BYTES(gz.substr(0, 10), std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10));
  const std::string zst = compress(Codec::kZstd, "x\n");
  ASSERT_GE(zst.size(), 5u);
  EXPECT_SAME_BYTES(zst.substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4));
  EXPECT_NE(static_cast<unsigned char>(zst[4]) & 0x04, 0) << "content checksum flag";
}

TEST(Compression, WriterLifecycle) {
  for (Codec codec : {Codec::kNone, Codec::kGzip, Codec::kZstd}) {
    std::string out;
    CompressingWriter writer(codec, [&](const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); });
    EXPECT_EQ(writer.codec(), codec);
    writer.write("abc", 3);
    writer.finish();
    const std::string once = out;
    writer.finish();  // a second call does nothing
    EXPECT_SAME_BYTES(out, once);
    EXPECT_THROW(writer.write("d", 1), std::logic_error);
    EXPECT_GT(writer.memory_bytes() + (codec == Codec::kNone ? 1 : 0), 0u);
  }
}

TEST(Compression, SinkExceptionsPropagate) {
  for (Codec codec : {Codec::kNone, Codec::kGzip, Codec::kZstd}) {
    CompressingWriter writer(codec, [](const void*, std::size_t) { throw IoError("cannot write output", "o", ENOSPC); });
    EXPECT_THROW(
        {
          writer.write(random_data(3 << 20).data(), 3 << 20);
          writer.finish();
        },
        IoError);
  }
}

TEST(Compression, ConcatenatedStreamsReadWhole) {
  // Multi-member gzip and multi-frame zstd made from our own output, so this
  // runs without the command-line tools.
  TempDir dir;
  const std::string a = text_data(2 << 20, 11);
  const std::string b = "second part\n";
  const std::string c = text_data(1000, 12);
  for (Codec codec : kCodecs) {
    SCOPED_TRACE(codec_name(codec));
    write_file(dir / "f", compress(codec, a) + compress(codec, "") + compress(codec, b) + compress(codec, c));
    EXPECT_TRUE(same_bytes(decompress_file(dir / "f", codec), a + b + c));
    EXPECT_TRUE(same_bytes(decompress_file(dir / "f", codec, 4096), a + b + c));
  }
}

TEST(Compression, ZstdSkippableFramesAreIgnored) {
  TempDir dir;
  // Magic 0x184D2A5? little-endian, 4-byte payload size, payload.
  const std::string skippable = std::string("\x53\x2a\x4d\x18\x05\x00\x00\x00", 8) + "meta!";
  write_file(dir / "f", skippable + compress(Codec::kZstd, "one\n") + skippable + compress(Codec::kZstd, "two\n"));
  EXPECT_EQ(decompress_file(dir / "f", Codec::kZstd), "one\ntwo\n");
}

TEST(Compression, ReadsFromAPipe) {
  const std::string input = text_data(3 << 20, 5);
  for (Codec codec : {Codec::kNone, Codec::kGzip, Codec::kZstd}) {
    SCOPED_TRACE(codec_name(codec));
    const std::string packed = compress(codec, input);
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::thread feeder([&] {
      // Small, uneven writes so that read(2) returns short pieces.
      for (std::size_t at = 0; at < packed.size(); at += 7777) {
        const std::size_t n = std::min<std::size_t>(7777, packed.size() - at);
        ASSERT_EQ(::write(fds[1], packed.data() + at, n), static_cast<ssize_t>(n));
      }
      ::close(fds[1]);
    });
    DecompressingReader reader(fds[0], codec, "standard input");
    std::string out(input.size() + 10, '\0');
    const std::size_t first = reader.read(out.data(), 1 << 20);
    EXPECT_EQ(first, std::size_t{1} << 20) << "a pipe request is filled, not returned short";
    const std::size_t rest = reader.read(out.data() + first, out.size() - first);
    feeder.join();
    ::close(fds[0]);
    out.resize(first + rest);
    EXPECT_TRUE(same_bytes(out, input));
    EXPECT_EQ(reader.compressed_bytes_read(), packed.size());
  }
}

TEST(Compression, SystemToolsDecodeWhatWeWrite) {
  TempDir dir;
  const std::string input = text_data(3 << 20, 21);
  write_file(dir / "in", input);
  write_file(dir / "ours.gz", compress(Codec::kGzip, input));
  auto r = run_command("gzip -t " + (dir / "ours.gz").string() + " && gzip -dc " + (dir / "ours.gz").string() +
                       " | cmp - " + (dir / "in").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  write_file(dir / "empty.gz", compress(Codec::kGzip, ""));
  r = run_command("gzip -dc " + (dir / "empty.gz").string() + " | wc -c");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
  if (!have_tool("zstd")) GTEST_SKIP() << "zstd command-line tool not installed (Debian package zstd)";
  write_file(dir / "ours.zst", compress(Codec::kZstd, input, 4));
  r = run_command("zstd -q -t " + (dir / "ours.zst").string() + " && zstd -q -dc " + (dir / "ours.zst").string() +
                  " | cmp - " + (dir / "in").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  write_file(dir / "empty.zst", compress(Codec::kZstd, ""));
  r = run_command("zstd -q -dc " + (dir / "empty.zst").string() + " | wc -c");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
}

TEST(Compression, WeDecodeWhatGzipWrites) {
  TempDir dir;
  const std::string a = text_data(3 << 20, 31);
  const std::string b = random_data(100000, 32);
  write_file(dir / "a", a);
  write_file(dir / "b", b);
  const std::string d = dir.path().string();
  auto r = run_command("cd " + d + " && gzip -k -9 a && gzip -k -1 b && cat a.gz b.gz > ab.gz && : | gzip > e.gz");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(same_bytes(decompress_file(dir / "a.gz", Codec::kGzip), a));  // carries the name "a" in its header
  EXPECT_TRUE(same_bytes(decompress_file(dir / "ab.gz", Codec::kGzip), a + b));
  EXPECT_TRUE(same_bytes(decompress_file(dir / "ab.gz", Codec::kGzip, 65536), a + b));
  EXPECT_EQ(decompress_file(dir / "e.gz", Codec::kGzip), "");
}

TEST(Compression, WeDecodeWhatZstdWrites) {
  if (!have_tool("zstd")) GTEST_SKIP() << "zstd command-line tool not installed (Debian package zstd)";
  TempDir dir;
  const std::string a = text_data(3 << 20, 41);
  const std::string b = random_data(100000, 42);
  write_file(dir / "a", a);
  write_file(dir / "b", b);
  const std::string d = dir.path().string();
  auto r = run_command("cd " + d +
                       " && zstd -q a -o a.zst && zstd -q -19 --no-check b -o b.zst && cat a.zst b.zst > ab.zst"
                       " && zstd -q -T4 --long=27 -c a > long.zst && : | zstd -q > e.zst");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(same_bytes(decompress_file(dir / "a.zst", Codec::kZstd), a));
  EXPECT_TRUE(same_bytes(decompress_file(dir / "ab.zst", Codec::kZstd), a + b));
  EXPECT_TRUE(same_bytes(decompress_file(dir / "ab.zst", Codec::kZstd, 65536), a + b));
  EXPECT_TRUE(same_bytes(decompress_file(dir / "long.zst", Codec::kZstd), a));
  EXPECT_EQ(decompress_file(dir / "e.zst", Codec::kZstd), "");
}

TEST(Compression, ZstdWindowsOver128MiBAreRefused) {
  if (!have_tool("zstd")) GTEST_SKIP() << "zstd command-line tool not installed (Debian package zstd)";
  TempDir dir;
  // From a pipe the size is unknown, so the frame keeps its 256 MiB window.
  auto r = run_command("printf \"a\\nb\\n\" | zstd -q --long=28 -c > " + (dir / "w.zst").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(decode_error(Codec::kZstd, read_file(dir / "w.zst"), "w.zst"),
            "input 'w.zst' is not valid zstd data: frame needs a window larger than 128 MiB (written with zstd "
            "--long?)");
}

// A zstd window is the decoder's largest buffer: held within the run's
// budget (at -S 16M a --long=27 input's took 155 MB at its peak), or refused
// naming the budget that reads it; a budget that holds a window over
// libzstd's default 128 MiB reads it.
TEST(Compression, ZstdWindowsAreHeldWithinTheBudget) {
  if (!have_tool("zstd")) GTEST_SKIP() << "zstd command-line tool not installed (Debian package zstd)";
  TempDir dir;
  auto r = run_command("printf \"a\\nb\\n\" | zstd -q --long=27 -c > " + (dir / "w27.zst").string() +
                       " && printf \"a\\nb\\n\" | zstd -q --long=28 -c > " + (dir / "w28.zst").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  constexpr std::uint64_t kMiB = 1 << 20;
  try {
    decompress_file(dir / "w27.zst", Codec::kZstd, 1 << 20, nullptr, 16 * kMiB);
    ADD_FAILURE() << "a 128 MiB window read within 16 MiB";
  } catch (const BudgetError& e) {
    EXPECT_EQ(std::string(e.what()),
              "input 'w27.zst': its zstd window of 128 MiB (written with zstd --long?) does not fit in the 16 MiB "
              "the memory budget holds: --memory must be at least 128M to read it");
  }
  EXPECT_EQ(decompress_file(dir / "w27.zst", Codec::kZstd, 1 << 20, nullptr, 128 * kMiB), "a\nb\n");
  EXPECT_EQ(decompress_file(dir / "w28.zst", Codec::kZstd, 1 << 20, nullptr, 256 * kMiB), "a\nb\n");
  // A budget below zstd -19's 8 MiB still reads what zstd writes without
  // --long (from a pipe, its frame keeps that window).
  r = run_command("printf \"a\\nb\\n\" | zstd -q -19 -c > " + (dir / "w23.zst").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(decompress_file(dir / "w23.zst", Codec::kZstd, 1 << 20, nullptr, 1 * kMiB), "a\nb\n");
}

TEST(Compression, EmptyFilesAreNotCompressedStreams) {
  // As gzip -d and zstd -d: an empty file is "unexpected end of file".
  EXPECT_EQ(decode_error(Codec::kGzip, "", "x.jsonl.gz"),
            "input 'x.jsonl.gz' is not valid gzip data: unexpected end of stream");
  EXPECT_EQ(decode_error(Codec::kZstd, "", "x.jsonl.zst"),
            "input 'x.jsonl.zst' is not valid zstd data: unexpected end of stream");
  EXPECT_EQ(decode_error(Codec::kNone, "", "x.jsonl"), "");
}

TEST(Compression, UncompressedInputIsNamedAsSuch) {
  const std::string plain = "{\"id\": 1}\n{\"id\": 2}\n";
  EXPECT_EQ(decode_error(Codec::kGzip, plain, "d.gz"), "input 'd.gz' is not valid gzip data: not in gzip format");
  EXPECT_EQ(decode_error(Codec::kZstd, plain, "d.zst"), "input 'd.zst' is not valid zstd data: not in zstd format");
  // Each other's formats.
  EXPECT_EQ(decode_error(Codec::kGzip, compress(Codec::kZstd, plain), "d.gz"),
            "input 'd.gz' is not valid gzip data: not in gzip format");
  EXPECT_EQ(decode_error(Codec::kZstd, compress(Codec::kGzip, plain), "d.zst"),
            "input 'd.zst' is not valid zstd data: not in zstd format");
}

TEST(Compression, TruncatedStreamsThrow) {
  const std::string input = text_data(2 << 20, 51);
  for (Codec codec : kCodecs) {
    const std::string packed = compress(codec, input);
    const std::string prefix = "input 'cut' is not valid " + std::string(codec_name(codec)) + " data: ";
    for (std::size_t keep : {std::size_t{1}, std::size_t{3}, std::size_t{12}, packed.size() / 3, packed.size() / 2,
                             packed.size() - 9, packed.size() - 4, packed.size() - 1}) {
      SCOPED_TRACE(std::string(codec_name(codec)) + " keeps " + std::to_string(keep) + " of " +
                   std::to_string(packed.size()));
      EXPECT_SAME_BYTES(decode_error(codec, packed.substr(0, keep), "cut"), prefix + "unexpected end of stream");
    }
    // A whole first member/frame followed by a cut second one.
    EXPECT_SAME_BYTES(decode_error(codec, packed + packed.substr(0, packed.size() / 2), "cut"),
                      prefix + "unexpected end of stream");
  }
}

TEST(Compression, CorruptStreamsThrow) {
  const std::string input = text_data(1 << 20, 61);
  for (Codec codec : kCodecs) {
    const std::string packed = compress(codec, input);
    const std::string prefix = "input 'bad' is not valid " + std::string(codec_name(codec)) + " data: ";
    // Flipped bits at several places in the compressed body: every one is caught
    // (by the block structure or, at the latest, the checksum).
    for (std::size_t at : {packed.size() / 5, packed.size() / 2, packed.size() * 4 / 5}) {
      SCOPED_TRACE(std::string(codec_name(codec)) + " byte " + std::to_string(at));
      std::string bad = packed;
      bad[at] = static_cast<char>(bad[at] ^ 0x10);
      const std::string message = decode_error(codec, bad, "bad");
      EXPECT_SAME_BYTES(message.substr(0, prefix.size()), prefix) << message;
      EXPECT_GT(message.size(), prefix.size() + 5) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos);
    }
    // A flipped checksum: the data decode, the check fails.
    std::string bad = packed;
    const std::size_t checksum_at = packed.size() - (codec == Codec::kGzip ? 8 : 4);
    bad[checksum_at] = static_cast<char>(bad[checksum_at] ^ 0x01);
    EXPECT_SAME_BYTES(decode_error(codec, bad, "bad"),
                      prefix + (codec == Codec::kGzip ? "incorrect data check" : "checksum mismatch"));
  }
}

TEST(Compression, TrailingBytes) {
  const std::string packed_gz = compress(Codec::kGzip, "abc\n");
  const std::string packed_zst = compress(Codec::kZstd, "abc\n");
  TempDir dir;
  // Zero padding after gzip data is accepted, as gzip -d does.
  write_file(dir / "f", packed_gz + std::string(3 << 20, '\0'));
  EXPECT_EQ(decompress_file(dir / "f", Codec::kGzip), "abc\n");
  // Other trailing bytes are refused (gzip -d warns and exits 2; zstd -d fails).
  EXPECT_EQ(decode_error(Codec::kGzip, packed_gz + "garbage\n", "g"),
            "input 'g' is not valid gzip data: trailing garbage after gzip data");
  EXPECT_EQ(decode_error(Codec::kGzip, packed_gz + std::string(100, '\0') + "x", "g"),
            "input 'g' is not valid gzip data: trailing garbage after gzip data");
  EXPECT_EQ(decode_error(Codec::kZstd, packed_zst + "garbage\n", "z"),
            "input 'z' is not valid zstd data: trailing garbage after zstd data");
}

TEST(Compression, ReadFailuresAreIoErrors) {
  TempDir dir;
  for (Codec codec : {Codec::kNone, Codec::kGzip, Codec::kZstd}) {
    const int fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    DecompressingReader reader(fd, codec, "somedir");
    char buffer[16];
    try {
      reader.read(buffer, sizeof buffer);
      ADD_FAILURE() << "no exception";
    } catch (const IoError& e) {
      EXPECT_EQ(e.error_number(), EISDIR);
      EXPECT_EQ(std::string(e.what()), "cannot read input 'somedir': Is a directory");
    }
    ::close(fd);
  }
}

TEST(Compression, MemoryIsBounded) {
  const std::string input = text_data(4 << 20, 71);
  for (Codec codec : kCodecs) {
    SCOPED_TRACE(codec_name(codec));
    CompressingWriter writer(codec, [](const void*, std::size_t) {}, 4);
    writer.write(input.data(), input.size());
    writer.finish();
    EXPECT_GE(writer.memory_bytes(), 2 * CompressingWriter::kBufferBytes);
    EXPECT_LE(writer.memory_bytes(), std::size_t{48} << 20) << "4 zstd workers, 2 MiB jobs";
    TempDir dir;
    write_file(dir / "f", compress(codec, input));
    const int fd = ::open((dir / "f").c_str(), O_RDONLY | O_CLOEXEC);
    DecompressingReader reader(fd, codec, "f");
    std::string out(input.size(), '\0');
    EXPECT_EQ(reader.read(out.data(), out.size()), input.size());
    EXPECT_GE(reader.memory_bytes(), DecompressingReader::kBufferBytes);
    EXPECT_LE(reader.memory_bytes(), std::size_t{16} << 20);
    ::close(fd);
  }
}

}  // namespace
}  // namespace extshuffle::io::compression_test

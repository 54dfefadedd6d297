#include "tar_input.hpp"

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/input_source.hpp"
#include "extshuffle/io/mapped_bytes.hpp"

#include <algorithm>
#include <optional>

namespace extshuffle::dataset {
namespace {

// How far the counting pass scans a mapped archive between unmapping the pages it passed.
constexpr std::uint64_t kTarDropBytes = std::uint64_t{16} << 20;

}  // namespace

InputLayout tar_layout(const DatasetOptions& options, io::InputSource& source, const std::string& name,
                       RecordSink* sink) {
  check_frame_options(options, formats::Format::kTar);
  if (options.repeat)
    throw UsageError("--repeat: not supported for tar archives (their samples are shuffled, not drawn)");
  InputLayout layout;
  layout.syntax = formats::framed_syntax(formats::Format::kTar, false);
  formats::TarScanner::SampleSink digest_sample;
  if (options.verify) {
    digest_sample = [&layout](std::string_view frame) {
      layout.digest.add(reinterpret_cast<const std::byte*>(frame.data()), frame.size());
    };
  }
  formats::TarScanner scanner(name, options.verify, std::move(digest_sample), options.ignore_zeros);
  if (sink != nullptr) {
    scanner.set_member_sink([sink](std::uint64_t sample, std::string_view member, std::uint64_t at,
                                   std::uint64_t size) { sink->member(sample, member, at, size); });
  }
  const std::uint64_t bytes = source.bytes();
  std::optional<io::MappedBytes> mapped;
  if (!options.verify && bytes > 0) mapped = io::MappedBytes::map(source.data(), source.data_offset(), bytes, name);
  if (mapped) {
    // 1. The headers alone, where they lie: a member's data is skipped, its
    //    pages never touched (2 GiB of 100 KB-1 MB samples: a few MB read).
    mapped->expect_sequential(true);
    const char* base = reinterpret_cast<const char*>(mapped->data());
    //    The pages passed are unmapped every kTarDropBytes, so that the
    //    headers' pages (and the read-ahead around them) do not pile up in
    //    the process's resident set: peak RSS stays within -S.
    std::uint64_t dropped = 0;
    for (std::uint64_t at = 0; at < bytes;) {
      if (at - dropped >= kTarDropBytes) {
        mapped->drop_pages(dropped, at);
        dropped = at;
      }
      const std::uint64_t skip = std::min(scanner.skippable(), bytes - at);
      const std::uint64_t take = skip > 0 ? skip : std::min<std::uint64_t>(formats::kTarBlockBytes, bytes - at);
      if (skip > 0) {
        scanner.skip(skip);
      } else {
        scanner.add(base + at, static_cast<std::size_t>(take));
      }
      at += take;
    }
  } else {
    // 1. Every byte (--verify digests the samples): one sequential read, in
    //    2 MiB pieces, the next read while this one is scanned.
    io::read_sequentially(source.data(), source.data_offset(), bytes, std::size_t{2} << 20,
                          [&](const std::byte* data, std::size_t n) {
                            scanner.add(reinterpret_cast<const char*>(data), n);
                          });
  }
  auto index = std::make_shared<formats::TarIndex>(scanner.finish());
  // 2. The records are the frames: 8 bytes more than each sample.
  TextCount& count = layout.text_count;
  count.records = index->samples();
  count.longest_record_bytes = index->samples() > 0 ? index->longest_sample_bytes + formats::kTarFrameBytes : 0;
  for (const std::uint64_t bytes : index->frame_lengths) {
    const double framed = static_cast<double>(bytes + formats::kTarFrameBytes);
    count.record_bytes_squared += framed * framed;
  }
  layout.records = count.records;
  layout.tar_index = std::move(index);
  return layout;
}

}  // namespace extshuffle::dataset

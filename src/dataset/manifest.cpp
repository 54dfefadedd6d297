#include "extshuffle/dataset/manifest.hpp"

#include <nlohmann/json.hpp>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/output_file.hpp"

namespace extshuffle::dataset {
namespace {

using json = nlohmann::ordered_json;

// The manifest's own format; a consumer checks it before reading the rest.
constexpr int kManifestVersion = 1;

json or_null(std::uint64_t value, std::uint64_t absent) { return value == absent ? json() : json(value); }

json options_of(const ManifestOptions& options) {
  json splits = json::array();
  for (const SplitPart& part : options.output.splits) splits.push_back({{"name", part.name}, {"size", part.size_text}});
  static const char* const kFormats[] = {"auto", "binary", "lines", "csv", "tsv", "jsonl", "tfrecord", "tar"};
  static_assert(std::size(kFormats) == static_cast<std::size_t>(formats::Format::kTar) + 1);
  return {{"format", kFormats[static_cast<int>(options.input.format)]},
          {"record_size", or_null(options.input.record_size, 0)},
          {"zero_terminated", options.input.zero_terminated},
          {"header_records", options.input.header_lines < 0 ? json() : json(options.input.header_lines)},
          {"skip_empty", options.input.skip_empty},
          {"head_count", or_null(options.output.head_count, UINT64_MAX)},
          {"shards", or_null(options.output.shard_count, 0)},
          {"shard_size_bytes", or_null(options.output.shard_bytes, 0)},
          {"split", options.output.splits.empty() ? json() : splits},
          {"clean", options.output.clean}};
}

}  // namespace

ManifestWriter::ManifestWriter(const ManifestOptions& options)
    : options_(options), file_(std::make_unique<io::OutputFile>(options.run.manifest_path)) {}

ManifestWriter::~ManifestWriter() = default;

void ManifestWriter::add(const ManifestEntry& run) { runs_.push_back(run); }

std::string ManifestWriter::text() const {
  const bool shipped = options_.run.constants.leaf_records == core::kPlanV2.leaf_records &&
                       options_.run.constants.max_fanout == core::kPlanV2.max_fanout;
  json inputs = json::array(), outputs = json::array(), patterns = json::array(), stale = json::array();
  const bool aligned = runs_.size() > 1;
  for (std::size_t d = 0; d < runs_.size(); ++d) {
    for (const InputFileInfo& in : runs_[d].inputs) {
      json entry = {{"path", in.path}, {"bytes", in.bytes}, {"records", in.records}};
      if (aligned) entry["dataset"] = d;
      inputs.push_back(entry);
    }
    for (const OutputFileInfo& out : runs_[d].outputs) {
      json entry = {{"path", out.path},       {"split", out.split.empty() ? json() : json(out.split)},
                    {"shard", out.shard},     {"shards", out.shards},
                    {"records", out.records}, {"bytes", out.bytes},
                    {"xxh64", out.xxh64}};
      if (aligned) entry["dataset"] = d;
      outputs.push_back(entry);
    }
    for (const std::string& path : runs_[d].stale_pieces) stale.push_back(path);
  }
  const ManifestEntry& first = runs_.empty() ? ManifestEntry() : runs_.front();
  json manifest = {
      {"manifest_version", kManifestVersion},
      {"extshuffle_version", EXTSHUFFLE_VERSION},
      // The permutation P(seed, N) is a function of these: with testing
      // constants it is none of the shipped versions.
      {"permutation_version", shipped ? json(core::kPermutationVersion) : json()},
      {"plan",
       {{"leaf_records", options_.run.constants.leaf_records}, {"max_fanout", options_.run.constants.max_fanout}}},
      {"seed", options_.run.seed},
      {"format", first.format},
      {"records", first.records},
      {"records_written", first.records_written},
      {"options", options_of(options_)},
      {"inputs", inputs},
      {"outputs", outputs},
      {"stale_pieces", stale}};
  return manifest.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

void ManifestWriter::prepare() {
  text_ = text();
  file_->write(text_.data(), text_.size());
  file_->prepare_commit();
}

std::optional<io::PendingRename> ManifestWriter::pending_rename() const { return file_->pending_rename(); }

void ManifestWriter::published() { file_->published(); }

}  // namespace extshuffle::dataset

// Files written with their record index beside them, as --index-only writes
// it (dataset/input_index.hpp), for the record index's tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "extshuffle/dataset/index_identity.hpp"
#include "extshuffle/dataset/indexed_dataset.hpp"
#include "extshuffle/dataset/indexed_records.hpp"
#include "extshuffle/dataset/input_index.hpp"
#include "extshuffle/dataset/record_index.hpp"
#include "extshuffle/io/input_source.hpp"
#include "support/command.hpp"

namespace extshuffle::testing {

// Writes `bytes` to `name` in `dir` and its index beside it, read with
// `options`; returns the file's path.
inline std::string indexed(const TempDir& dir, const std::string& name, const std::string& bytes,
                           const dataset::DatasetOptions& options = {}) {
  const std::string path = (dir / name).string();
  write_file(path, bytes);
  std::string index;
  io::InputSource source(path, dir.path().string());
  dataset::write_input_index(
      options, source, dataset::indexed_file_facts(path),
      [&index](const void* data, std::size_t n) { index.append(static_cast<const char*>(data), n); });
  write_file(dataset::index_path_beside(path), index);
  return path;
}

// The records of `paths`, one dataset, read through the indexes beside
// them (as Dataset finds them), with `options`.
inline std::unique_ptr<dataset::IndexedRecords> open_beside(const std::vector<std::string>& paths,
                                                            const dataset::DatasetOptions& options = {}) {
  std::vector<std::string> indexes;
  for (const std::string& path : paths) indexes.push_back(dataset::index_path_beside(path));
  return dataset::open_indexed_dataset(paths, indexes, options, true);
}

// The segments `plan` reads from `records`, each a string of its bytes
// (IndexedRecords::read() into buffers allocated as the plan says).
inline std::vector<std::string> read_segments(const dataset::IndexedRecords& records, const dataset::ReadPlan& plan) {
  std::vector<std::string> segments;
  for (const std::uint64_t bytes : plan.segment_bytes) segments.emplace_back(bytes, '\0');
  std::vector<std::byte*> targets;
  for (std::string& segment : segments) targets.push_back(reinterpret_cast<std::byte*>(segment.data()));
  records.read(plan, targets);
  return segments;
}

}  // namespace extshuffle::testing

#include "extshuffle/dataset/indexed_dataset.hpp"

#include "extshuffle/dataset/format_agreement.hpp"
#include "extshuffle/dataset/index_identity.hpp"
#include "extshuffle/dataset/input_layout.hpp"
#include "extshuffle/errors.hpp"

namespace extshuffle::dataset {
namespace {

// One file opened: its index mapped and checked, or its fixed-size layout.
IndexedInput open_input(const DatasetOptions& options, const std::string& path, const std::string& index_path,
                        bool check_fingerprint, InputLayout& agreement) {
  check_indexable(path, "Dataset");
  IndexedInput input;
  input.path = path;
  const IndexReading reading = expected_reading(options, path, &agreement.format);
  if (reading.record_size > 0) {
    input.layout = fixed_records_layout(path, reading);
  } else {
    if (index_path.empty()) throw UsageError("Dataset: input '" + path + "' needs a record index, and none was given");
    input.index = std::make_shared<const MappedIndex>(index_path);
    input.layout = input.index->header();
    IndexedFile facts = indexed_file_facts(path, check_fingerprint);
    if (!check_fingerprint) facts.fingerprint = input.layout.input.fingerprint;
    check_index_matches(input.layout, index_path, path, facts, reading);
  }
  agreement.record_size = reading.record_size;
  input.header = read_file_head(path, input.layout.data_offset);
  agreement.header = input.header;
  return input;
}

}  // namespace

bool needs_index(const DatasetOptions& options, const std::string& path) {
  check_indexable(path, "Dataset");
  return expected_reading(options, path).record_size == 0;
}

void check_index_of(const DatasetOptions& options, const std::string& path, const std::string& index_path) {
  InputLayout unused;
  (void)open_input(options, path, index_path, true, unused);
}

std::unique_ptr<IndexedRecords> open_indexed_dataset(const std::vector<std::string>& files,
                                                     const std::vector<std::string>& index_paths,
                                                     const DatasetOptions& options, bool check_fingerprints) {
  if (files.empty()) throw UsageError("Dataset: no input files");
  std::vector<IndexedInput> inputs;
  InputLayout first;
  for (std::size_t k = 0; k < files.size(); ++k) {
    InputLayout layout;
    inputs.push_back(
        open_input(options, files[k], k < index_paths.size() ? index_paths[k] : "", check_fingerprints, layout));
    if (k == 0) {
      first = layout;
    } else {
      check_inputs_agree(first, files[0], layout, files[k]);
    }
  }
  return std::make_unique<IndexedRecords>(std::move(inputs));
}

}  // namespace extshuffle::dataset

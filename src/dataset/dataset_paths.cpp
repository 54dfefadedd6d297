#include "extshuffle/dataset/dataset_paths.hpp"

#include <map>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/io/input_set.hpp"

namespace extshuffle::dataset {
namespace {

// A file's kind: the format its name says (compression left out), "npy",
// or none (empty).
std::string kind_of(const std::string& path) {
  std::string_view name(path);
  for (std::string_view compressed : {".gz", ".zst", ".zstd"}) {
    if (name.ends_with(compressed)) name.remove_suffix(compressed.size());
  }
  if (name.ends_with(".npy")) return "npy";
  const formats::Format format = formats::format_by_extension(name);
  if (format == formats::Format::kAuto) return {};
  const std::size_t dot = name.rfind('.');
  return std::string(name.substr(dot + 1));
}

void check_one_kind(const std::string& directory, const std::vector<std::string>& files) {
  std::map<std::string, std::size_t> kinds;
  std::vector<std::string> others;
  for (const std::string& file : files) {
    const std::string kind = kind_of(file);
    if (kind.empty()) {
      others.push_back(file.substr(file.rfind('/') + 1));
    } else {
      ++kinds[kind];
    }
  }
  if (kinds.empty() || others.empty()) return;
  std::string listed;
  for (std::size_t k = 0; k < others.size() && k < 5; ++k) listed += (k > 0 ? ", " : "") + others[k];
  if (others.size() > 5) listed += " and " + std::to_string(others.size() - 5) + " more";
  const std::string kind = kinds.begin()->first;
  const std::string prefix = directory.ends_with('/') ? directory : directory + "/";
  throw UsageError("input directory '" + directory + "': holds files that are not " + kind + " data beside its " +
                   kind + " files (" + listed + "): name the data files instead (e.g. " + prefix + "*." + kind +
                   "*)");
}

}  // namespace

std::vector<std::string> expand_dataset_paths(const std::vector<std::string>& operands) {
  std::vector<std::string> paths;
  for (const std::string& operand : operands) {
    const std::vector<std::string> files = io::expand_input_paths({operand});
    if (files.size() != 1 || files.front() != operand) check_one_kind(operand, files);
    paths.insert(paths.end(), files.begin(), files.end());
  }
  return paths;
}

}  // namespace extshuffle::dataset

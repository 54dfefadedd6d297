// Destination checks of a Job's plan (driver/destination_checks.hpp).
#include "destination_checks.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/dataset/stale_pieces.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/destination_directory.hpp"
#include "extshuffle/io/output_file.hpp"

namespace extshuffle::driver {
namespace {

bool several_files(const JobOptions& options) {
  return dataset::writes_several_files(options.output.shard_count, options.output.shard_bytes,
                                       options.output.splits.size());
}

std::vector<std::string> split_names(const JobOptions& options) {
  std::vector<std::string> names;
  for (const dataset::SplitPart& part : options.output.splits) names.push_back(part.name);
  return names;
}

// Whether `path` names an existing file the run writes into where it is
// (standard output, a device, a FIFO...), never replaced: no pattern.
bool written_in_place(const std::string& path) {
  struct stat st {};
  return path == "-" || io::named_descriptor(path) >= 0 ||
         (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

const std::string* input_named(const InputFiles& inputs, int directory, const std::string& name) {
  struct stat st {};
  for (const int flags : {AT_SYMLINK_NOFOLLOW, 0}) {
    if (::fstatat(directory, name.c_str(), &st, flags) != 0) continue;
    const auto at = inputs.find({st.st_dev, st.st_ino});
    if (at != inputs.end()) return &at->second;
  }
  return nullptr;
}

}  // namespace

std::vector<dataset::CommitDestination> commit_destinations(const Job& job,
                                                            const std::vector<std::vector<std::string>>& known_names) {
  std::vector<dataset::CommitDestination> destinations;
  for (std::size_t k = 0; k < job.datasets.size(); ++k) {
    const std::string& output = job.datasets[k].output;
    if (written_in_place(output)) continue;
    std::vector<std::string> names = known_names[k];
    if (names.empty()) names.push_back(output);
    destinations.push_back({output, split_names(job.options), dataset::directories_of(names)});
  }
  if (!job.options.run.manifest_path.empty()) {
    destinations.push_back(
        {job.options.run.manifest_path, {}, dataset::directories_of({job.options.run.manifest_path})});
  }
  for (const dataset::CommitDestination& d : destinations) {
    for (const std::string& directory : d.directories) {
      io::directory_descriptor(directory.empty() ? "." : directory, d.pattern);
    }
  }
  return destinations;
}

void check_destination_names(const Job& job, const std::vector<dataset::CommitDestination>& destinations,
                             const InputFiles& inputs) {
  const bool several = several_files(job.options);
  const std::string& manifest = job.options.run.manifest_path;
  for (const dataset::CommitDestination& d : destinations) {
    const bool pattern = several && d.pattern != manifest;
    if (pattern && !manifest.empty() && dataset::matches_output_pattern(d.pattern, d.split_names, manifest)) {
      throw UsageError("--manifest '" + manifest + "': is a name -o '" + d.pattern +
                       "' gives one of its pieces: the manifest and a piece would replace each other");
    }
    for (const std::string& directory : d.directories) {
      const int fd = io::directory_descriptor(directory.empty() ? "." : directory, d.pattern);
      // One directory, one descriptor: the manifest beside the pieces under
      // another spelling of the directory.
      if (pattern && !manifest.empty() &&
          io::directory_descriptor(io::directory_part(manifest), manifest) == fd &&
          dataset::matches_output_pattern(d.pattern, d.split_names, directory + io::name_part(manifest))) {
        throw UsageError("--manifest '" + manifest + "': is a name -o '" + d.pattern +
                         "' gives one of its pieces: the manifest and a piece would replace each other");
      }
      for (const std::string& name : io::names_in(fd, directory.empty() ? "." : directory)) {
        const std::string leftover = dataset::leftover_of(name);
        const bool piece = pattern && dataset::matches_output_pattern(d.pattern, d.split_names, directory + name);
        const bool left = !leftover.empty() &&
                          dataset::matches_output_pattern(d.pattern, d.split_names, directory + leftover);
        if (!piece && !left) continue;
        if (const std::string* input = input_named(inputs, fd, name)) {
          throw UsageError("-o '" + d.pattern + "': the input '" + *input + "' is '" + directory + name + "', " +
                           (piece ? "a name the pattern gives its pieces: the run would replace it, or --clean "
                                    "remove it"
                                  : "the name of an interrupted run's leftover, which the run removes") +
                           " (give the output another name)");
        }
      }
    }
  }
}

void check_standard_output(const Job& job, const InputFiles& inputs) {
  for (const JobDataset& dataset : job.datasets) {
    const int fd = dataset.output == "-" ? 1 : io::named_descriptor(dataset.output);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const auto input = inputs.find({st.st_dev, st.st_ino});
    if (input == inputs.end()) continue;
    const std::string what = dataset.output == "-" ? "standard output" : "-o '" + dataset.output + "'";
    throw UsageError(what + ": is the input '" + input->second +
                     "' (input file is output file): the run would read what it writes; shuffle in place with -o '" +
                     input->second + "'");
  }
}

}  // namespace extshuffle::driver

// check_job_files(): every path a Job reads and writes, checked before any work
// (driver/job_files.hpp).
#include "extshuffle/driver/job_files.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "extshuffle/errors.hpp"
#include "extshuffle/dataset/dataset_paths.hpp"
#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/dataset/record_index.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/io/destination_directory.hpp"
#include "extshuffle/io/input_set.hpp"
#include "extshuffle/io/output_file.hpp"
#include "extshuffle/io/pseudo_files.hpp"
#include "destination_checks.hpp"

namespace extshuffle::driver {
namespace {

// Descriptors beside the inputs and outputs: standard streams, scratch
// files, STXXL's, the manifest, logging.
constexpr std::uint64_t kReservedDescriptors = 64;

// What a path names: an existing file (device, inode) or a name still to be
// created (its directory's device and inode, and the name).
struct FileKey {
  dev_t device = 0;
  ino_t inode = 0;
  std::string name;  // empty: an existing file
  bool operator<(const FileKey& o) const { return std::tie(device, inode, name) < std::tie(o.device, o.inode, o.name); }
};

// One file to be written, as the Job's files list it.
struct Write {
  std::string path;  // as the user named it (or the pattern expanded)
  std::string role;  // "-o 'X'" or "--manifest 'X'": how messages name it
  bool in_place_allowed = false;
  FileKey key;
  FileKey directory;
  bool special = false;  // a device, FIFO, socket or terminal: written into, never replaced
  bool character_device = false;
  // A record index (--index, --index-only): a hidden name, which no run
  // reads as an input, so it may lie in an input directory.
  bool index = false;
  bool indexed = false;  // an output file with --index: it must be a regular file
};

std::string directory_of(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// A destination that cannot be created is refused before any work, as a
// usage error (exit 2), in the words opening it would have used.
[[noreturn]] void refuse_name(const std::string& path, int error_number) {
  throw UsageError(IoError("cannot write output", path, error_number).what());
}

// A destination whose directory lies on the kernel's pseudo file systems
// (/proc/self/comm): said as it is, not as the failed create of the
// temporary would say it ("No such file or directory").
void refuse_pseudo_file_system(const std::string& path, const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  const std::string pseudo = io::pseudo_file_system(fd);
  ::close(fd);
  if (pseudo.empty()) return;
  throw UsageError("cannot write output '" + path + "': it lies on the kernel's " + pseudo +
                   " file system, which takes no new files (the output is written whole beside its destination, "
                   "then renamed over it): give a file elsewhere, or standard output");
}

// Looks at a destination as OutputFile will (its symbolic links followed):
// a directory in the way, a parent that is missing or not a directory, and
// a name too long for its file system are refused (refuse_name).
void resolve_write(Write& write) {
  struct stat st {};
  // /dev/stdout, /dev/fd/N: the open file, written into (io/output_file.hpp).
  if (const int fd = io::named_descriptor(write.path); fd >= 0) {
    if (::fstat(fd, &st) != 0) refuse_name(write.path, errno);
    write.key = {st.st_dev, st.st_ino, ""};
    write.special = true;
    write.character_device = !S_ISREG(st.st_mode);
    return;
  }
  if (::stat(write.path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    write.key = {st.st_dev, st.st_ino, ""};
    write.special = true;
    write.character_device = S_ISCHR(st.st_mode);
    return;
  }
  const std::string target = io::final_target(write.path);
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) refuse_name(write.path, EISDIR);
    write.key = {st.st_dev, st.st_ino, ""};
    write.special = !S_ISREG(st.st_mode);
    write.character_device = S_ISCHR(st.st_mode);
  }
  const std::string directory = directory_of(target);
  struct stat dir {};
  if (::stat(directory.c_str(), &dir) != 0) refuse_name(write.path, errno);
  if (!S_ISDIR(dir.st_mode)) refuse_name(write.path, ENOTDIR);
  refuse_pseudo_file_system(write.path, directory);
  write.directory = {dir.st_dev, dir.st_ino, ""};
  const std::string name = std::filesystem::path(target).filename().string();
  if (write.key.name.empty() && write.key.inode == 0) write.key = {dir.st_dev, dir.st_ino, name};
  const long name_max = ::pathconf(directory.c_str(), _PC_NAME_MAX);
  if (!write.special &&
      (target.size() >= PATH_MAX || (name_max > 0 && name.size() > static_cast<std::size_t>(name_max)))) {
    refuse_name(write.path, ENAMETOOLONG);
  }
}

// The output files of one dataset whose names are known before the run:
// every split's every shard with --shards; one representative per split
// with --shard-size (their count is known only at the end).
std::vector<std::string> output_names(const JobOptions& options, const JobDataset& dataset) {
  const bool several = dataset::writes_several_files(options.output.shard_count, options.output.shard_bytes,
                                                     options.output.splits.size());
  if (!several || dataset.output == "-") return {dataset.output};
  std::vector<std::string> splits;
  for (const dataset::SplitPart& part : options.output.splits) splits.push_back(part.name);
  if (splits.empty()) splits.push_back("");
  const std::uint64_t shards = std::max<std::uint64_t>(options.output.shard_count, 1);
  std::vector<std::string> names;
  for (const std::string& split : splits) {
    for (std::uint64_t shard = 0; shard < shards; ++shard) {
      names.push_back(dataset::output_file_name(dataset.output, split, shard, shards));
    }
  }
  return names;
}

std::uint64_t output_file_count(const JobOptions& options, std::size_t datasets) {
  const std::uint64_t splits = std::max<std::size_t>(options.output.splits.size(), 1);
  const std::uint64_t shards =
      options.output.shard_bytes > 0 ? 0 : std::max<std::uint64_t>(options.output.shard_count, 1);
  const unsigned __int128 files = static_cast<unsigned __int128>(splits) * shards * datasets;
  return files > UINT64_MAX / 2 ? UINT64_MAX / 2 : static_cast<std::uint64_t>(files);
}

// Every output file of a finished dataset keeps a descriptor until the
// commit: refuse a count the process cannot have, before the shuffle.
void check_descriptors(JobFiles& files) {
  io::raise_open_file_limit();
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  files.descriptors = files.output_files + files.reads.size() + kReservedDescriptors;
  if (files.output_files > 0 && files.descriptors > limit.rlim_cur) {
    throw UsageError("the run writes " + std::to_string(files.output_files) + " output files and reads " +
                     std::to_string(files.reads.size()) + " inputs, which needs " + std::to_string(files.descriptors) +
                     " open files, more than this process may open (" + std::to_string(limit.rlim_cur) +
                     ", ulimit -n): write fewer pieces or raise the limit");
  }
}

struct Reads {
  std::map<FileKey, std::string> files;        // existing input files
  std::map<FileKey, std::string> directories;  // input directories
};

Reads read_keys(const Job& job, JobFiles& files) {
  Reads reads;
  for (const JobDataset& dataset : job.datasets) {
    if (job.options.mode.echo || job.options.mode.integer_range) break;
    for (const std::string& operand : dataset.inputs) {
      struct stat st {};
      if (operand != "-" && ::stat(operand.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        reads.directories.emplace(FileKey{st.st_dev, st.st_ino, ""}, operand);
      }
    }
    for (const std::string& path : dataset::expand_dataset_paths(dataset.inputs)) {
      files.reads.push_back(path);
      struct stat st {};
      if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        reads.files.emplace(FileKey{st.st_dev, st.st_ino, ""}, path);
      }
    }
  }
  return reads;
}

Write planned(const std::string& path, const std::string& role, bool in_place_allowed) {
  Write write;
  write.path = path;
  write.role = role;
  write.in_place_allowed = in_place_allowed;
  return write;
}

// --index-only: each dataset's index files, one a file of its input
// (beside it), or the one -o names for its one input file.
std::vector<std::string> index_only_names(const JobDataset& dataset) {
  const std::vector<std::string> inputs = dataset::expand_dataset_paths(dataset.inputs);
  if (dataset.output != "-") {
    if (inputs.size() != 1) {
      throw UsageError("--index-only -o '" + dataset.output + "': names the index of one file, and '" +
                       dataset.inputs[0] + "' is " + std::to_string(inputs.size()) +
                       " files (leave -o out to write each file's index beside it)");
    }
    return {dataset.output};
  }
  std::vector<std::string> names;
  for (const std::string& input : inputs) names.push_back(dataset::index_path_beside(input));
  return names;
}

std::vector<Write> planned_writes(const Job& job) {
  std::vector<Write> writes;
  if (job.options.index_only) {
    for (const JobDataset& dataset : job.datasets) {
      for (const std::string& name : index_only_names(dataset)) {
        writes.push_back(planned(name, "--index-only '" + name + "'", false));
        writes.back().index = true;
      }
    }
    return writes;
  }
  const bool single = job.datasets.size() == 1;
  const bool several = dataset::writes_several_files(job.options.output.shard_count, job.options.output.shard_bytes,
                                                     job.options.output.splits.size());
  for (const JobDataset& dataset : job.datasets) {
    for (const std::string& name : output_names(job.options, dataset)) {
      if (name == "-") continue;
      writes.push_back(planned(name, "-o '" + name + "'", single && !several));
      if (!job.options.index) continue;
      writes.back().indexed = true;
      if (io::codec_for_path(name) != io::Codec::kNone) {
        throw UsageError("--index: -o '" + name +
                         "' is compressed: an index gives offsets into a plain file; "
                         "write the output uncompressed");
      }
      const std::string index = dataset::index_path_beside(name);
      writes.push_back(planned(index, "--index '" + index + "'", false));
      writes.back().index = true;
    }
  }
  if (!job.options.run.manifest_path.empty()) {
    writes.push_back(
        planned(job.options.run.manifest_path, "--manifest '" + job.options.run.manifest_path + "'", false));
  }
  return writes;
}

void check_writes(std::vector<Write>& writes, const Reads& reads) {
  std::map<FileKey, std::string> seen;
  for (Write& write : writes) {
    resolve_write(write);
    if (write.special && (write.index || write.indexed)) {
      throw UsageError(write.role +
                       ": is not a regular file: a record index gives offsets into a file written "
                       "and renamed into place (--index, --index-only)");
    }
    if (write.special) {
      if (!write.character_device) {
        const auto [at, fresh] = seen.emplace(write.key, write.role);
        if (!fresh) throw UsageError(write.role + ": the same file as " + at->second + ": two writes to one file");
      }
      continue;
    }
    const auto [at, fresh] = seen.emplace(write.key, write.role);
    if (!fresh) throw UsageError(write.role + ": the same file as " + at->second + ": two writes to one file");
    const auto input = reads.files.find(write.key);
    if (input != reads.files.end() && !write.in_place_allowed) {
      throw UsageError(write.role + ": is the input '" + input->second +
                       "': only -o of a single dataset may name its input (shuffled in place, as shuf -o)");
    }
    const auto directory = reads.directories.find(write.directory);
    if (directory != reads.directories.end() && input == reads.files.end() && !write.index) {
      throw UsageError(write.role + ": lies in the input directory '" + directory->second +
                       "', whose files are read: the next run would read it back in");
    }
  }
}

// --index-only: each index file a destination of its own.
std::vector<dataset::CommitDestination> index_destinations(const std::vector<std::string>& names) {
  std::vector<dataset::CommitDestination> destinations;
  for (const std::string& name : names) {
    destinations.push_back({name, {}, dataset::directories_of({name})});
    const std::string& directory = destinations.back().directories.front();
    io::directory_descriptor(directory.empty() ? "." : directory, name);
  }
  return destinations;
}

// --index: beside each dataset's pattern (or file), the pattern of its
// pieces' indexes (dataset/record_index.hpp's names).
void append_index_destinations(const Job& job, const std::vector<std::vector<std::string>>& known,
                               std::vector<dataset::CommitDestination>& destinations) {
  std::vector<std::string> splits;
  for (const dataset::SplitPart& part : job.options.output.splits) splits.push_back(part.name);
  for (std::size_t k = 0; k < job.datasets.size(); ++k) {
    std::vector<std::string> names;
    for (const std::string& name : known[k]) names.push_back(dataset::index_path_beside(name));
    if (names.empty()) names.push_back(dataset::index_path_beside(job.datasets[k].output));
    destinations.push_back(
        {dataset::index_path_beside(job.datasets[k].output), splits, dataset::directories_of(names)});
    for (const std::string& directory : destinations.back().directories) {
      io::directory_descriptor(directory.empty() ? "." : directory, destinations.back().pattern);
    }
  }
}

}  // namespace

JobFiles check_job_files(const Job& job) {
  // A new Job: an output directory removed since an earlier job of this
  // process is looked up again by its name.
  io::forget_removed_directories();
  JobFiles files;
  const bool several = dataset::writes_several_files(job.options.output.shard_count, job.options.output.shard_bytes,
                                                     job.options.output.splits.size());
  for (const JobDataset& dataset : job.datasets) {
    if (several) {
      dataset::check_output_pattern(dataset.output, job.options.output.shard_count, job.options.output.shard_bytes,
                                    job.options.output.splits.size());
    }
  }
  const Reads reads = read_keys(job, files);
  files.output_files =
      job.options.index_only ? files.reads.size() : output_file_count(job.options, job.datasets.size());
  if (job.options.index) files.output_files = std::min(files.output_files, UINT64_MAX / 4) * 2;
  check_descriptors(files);  // before the names are expanded: --shards may ask for billions
  std::vector<Write> writes = planned_writes(job);
  check_writes(writes, reads);
  for (const Write& write : writes) files.writes.push_back(write.path);
  // Each destination directory opened now; every name it can be given,
  // leftovers' included, checked against the inputs.
  InputFiles inputs;
  for (const auto& [key, name] : reads.files) {
    inputs.emplace(std::pair<dev_t, ino_t>{key.device, key.inode}, name);
    files.read_files.emplace_back(key.device, key.inode);
  }
  std::vector<std::vector<std::string>> known;
  for (const JobDataset& dataset : job.datasets) known.push_back(output_names(job.options, dataset));
  files.destinations = job.options.index_only ? index_destinations(files.writes) : commit_destinations(job, known);
  if (job.options.index) append_index_destinations(job, known, files.destinations);
  check_destination_names(job, files.destinations, inputs);
  check_standard_output(job, inputs);
  files.leftovers = dataset::find_leftovers(files.destinations);
  return files;
}

}  // namespace extshuffle::driver

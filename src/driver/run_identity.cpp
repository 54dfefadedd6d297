#include "extshuffle/driver/run_identity.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/dataset/dataset_paths.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/file_fingerprint.hpp"

namespace extshuffle::driver {
namespace {

// The fingerprint's seed: any constant; the same on every run.
constexpr std::uint64_t kIdentitySeed = 0x6578747368756666;  // "extshuff"

std::string absolute_path(const std::string& path) {
  std::error_code error;
  const auto full = std::filesystem::weakly_canonical(std::filesystem::absolute(path), error);
  return error ? path : full.string();
}

// "KEY<tab>VALUE" a line; a tab, newline or backslash in a value (a path)
// escaped, so that every line splits at its one tab.
void identity_line(std::ostringstream& out, const std::string& key, const std::string& value) {
  out << key << '\t';
  for (const char c : value) {
    if (c == '\t' || c == '\n' || c == '\\') {
      out << '\\' << (c == '\t' ? 't' : c == '\n' ? 'n' : '\\');
    } else {
      out << c;
    }
  }
  out << '\n';
}

// One input file as it is on disk.
void identity_input(std::ostringstream& out, const std::string& key, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw IoError("cannot open input", path, errno);
  if (!S_ISREG(st.st_mode)) {
    throw UsageError("--checkpoint: input '" + path + "' is not a regular file (a pipe, a device): a resumed run " +
                     "could not read it again; name a file");
  }
  identity_line(out, key, absolute_path(path));
  identity_line(out, key + " size", std::to_string(st.st_size));
  identity_line(out, key + " modification time",
                std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec));
  identity_line(out, key + " device and inode", std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino));
  identity_line(out, key + " sampled blocks", io::fingerprint_path(path, kIdentitySeed).to_string());
}

std::string splits_text(const std::vector<SplitPart>& splits) {
  std::string text;
  for (const SplitPart& s : splits) text += (text.empty() ? "" : ",") + s.name + "=" + s.size_text;
  return text.empty() ? "none" : text;
}

std::map<std::string, std::string> identity_lines(const std::string& text) {
  std::map<std::string, std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t tab = line.find('\t');
    if (tab != std::string::npos) lines[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return lines;
}

}  // namespace

std::string job_identity(const Job& job) {
  const JobOptions& o = job.options;
  std::ostringstream out;
  identity_line(out, "program version", EXTSHUFFLE_VERSION);
  identity_line(out, "permutation version",
                std::to_string(core::kPermutationVersion) + " L=" + std::to_string(o.run.constants.leaf_records) +
                    " F=" + std::to_string(o.run.constants.max_fanout));
  identity_line(out, "--seed", std::to_string(o.run.seed));
  identity_line(out, "--format", std::to_string(static_cast<int>(o.input.format)));
  identity_line(out, "--record-size", std::to_string(o.input.record_size));
  identity_line(out, "--zero-terminated", std::to_string(o.input.zero_terminated));
  identity_line(out, "--ignore-zeros", std::to_string(o.input.ignore_zeros));
  identity_line(out, "--header", std::to_string(o.input.header_lines));
  identity_line(out, "--skip-empty", std::to_string(o.input.skip_empty));
  identity_line(out, "-n", std::to_string(o.output.head_count));
  identity_line(out, "--memory", std::to_string(o.run.memory_bytes));
  identity_line(out, "--shards", std::to_string(o.output.shard_count));
  identity_line(out, "--shard-size", std::to_string(o.output.shard_bytes));
  identity_line(out, "--split", splits_text(o.output.splits));
  identity_line(out, "--manifest", o.run.manifest_path.empty() ? "none" : absolute_path(o.run.manifest_path));
  identity_line(out, "--clean", std::to_string(o.output.clean));
  identity_line(out, "--verify", std::to_string(o.input.verify));
  identity_line(out, "datasets", std::to_string(job.datasets.size()));
  for (std::size_t k = 0; k < job.datasets.size(); ++k) {
    const JobDataset& d = job.datasets[k];
    const std::string prefix = job.datasets.size() > 1 ? "dataset " + std::to_string(k + 1) + " " : "";
    identity_line(out, prefix + "output", absolute_path(d.output));
    const std::vector<std::string> paths = dataset::expand_dataset_paths(d.inputs);
    identity_line(out, prefix + "inputs", std::to_string(paths.size()));
    for (std::size_t i = 0; i < paths.size(); ++i) {
      identity_input(out, prefix + "input " + std::to_string(i + 1), paths[i]);
    }
  }
  return out.str();
}

std::string plan_identity(std::uint64_t records, std::uint64_t bytes, std::uint64_t longest_record_bytes,
                          const ioperm::Schedule& s) {
  std::ostringstream out;
  identity_line(out, "records", std::to_string(records));
  identity_line(out, "record bytes", std::to_string(bytes));
  identity_line(out, "longest record", std::to_string(longest_record_bytes));
  identity_line(out, "plan levels", std::to_string(s.levels));
  identity_line(out, "schedule",
                std::to_string(s.passes) + " passes, " + std::to_string(s.nodes_on_disk) + "/" +
                    std::to_string(s.nodes_routed) + "/" + std::to_string(s.nodes_into_windows) + "/" +
                    std::to_string(s.leaf_orders_on_disk) + "/" + std::to_string(s.nodes_in_windows) + "/" +
                    std::to_string(s.nodes_in_memory) + " nodes");
  return out.str();
}

std::optional<std::string> identity_value(const std::string& identity, const std::string& key) {
  const auto lines = identity_lines(identity);
  const auto found = lines.find(key);
  if (found == lines.end()) return std::nullopt;
  return found->second;
}

std::optional<std::string> first_difference(const std::string& now, const std::string& then) {
  const auto a = identity_lines(now), b = identity_lines(then);
  std::istringstream in(now);
  for (std::string line; std::getline(in, line);) {
    const std::string key = line.substr(0, line.find('\t'));
    const auto was = b.find(key);
    const std::string before = was == b.end() ? "absent" : was->second;
    if (before != a.at(key)) return key + " is " + a.at(key) + ", was " + before;
  }
  for (const auto& [key, value] : b) {
    if (!a.count(key)) return key + " is absent, was " + value;
  }
  return std::nullopt;
}

}  // namespace extshuffle::driver

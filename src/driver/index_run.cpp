#include "index_run.hpp"

#include <sys/stat.h>

#include <cerrno>

#include <chrono>

#include "dataset/sharded_output.hpp"
#include "extshuffle/dataset/dataset_paths.hpp"
#include "extshuffle/dataset/index_identity.hpp"
#include "extshuffle/dataset/input_index.hpp"
#include "extshuffle/dataset/input_layout.hpp"
#include "extshuffle/driver/progress_meter.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/input_source.hpp"
#include "job_commit.hpp"
#include "extshuffle/driver/peak_rss.hpp"

namespace extshuffle::driver {
namespace {

struct IndexTask {
  std::string input;
  std::string index;
};

// Every input file and where its index goes, each input checked first.
std::vector<IndexTask> index_tasks(const std::vector<JobDataset>& datasets, std::uint64_t& total_bytes) {
  std::vector<IndexTask> tasks;
  for (const JobDataset& dataset : datasets) {
    for (const std::string& input : dataset::expand_dataset_paths(dataset.inputs)) {
      dataset::check_indexable(input, "--index-only");
      tasks.push_back({input, dataset.output == "-" ? dataset::index_path_beside(input) : dataset.output});
      struct stat st {};
      if (::stat(input.c_str(), &st) != 0) throw IoError("cannot open input", input, errno);
      total_bytes += static_cast<std::uint64_t>(st.st_size);
    }
  }
  return tasks;
}

// One input's index, into its output file.
RunResult index_one(const JobOptions& options, const IndexTask& task, std::atomic<std::uint64_t>* progress,
                    JobCommit& commit) {
  const auto start = std::chrono::steady_clock::now();
  dataset::OutputSpec spec;
  spec.pattern = task.index;
  auto output = std::make_unique<dataset::ShardedOutput>(spec);
  output->start_stream();
  const dataset::IndexedFile facts = dataset::indexed_file_facts(task.input);
  io::InputSource source(task.input, io::scratch_directory(options.run.tmpdir));
  const dataset::IndexHeader header = dataset::write_input_index(
      options.input, source, facts,
      [&output](const void* data, std::size_t bytes) { output->write_stream(data, bytes); }, progress);
  // The index holds the file as it was when the pass began: a file written
  // meanwhile would be indexed half old, half new.
  source.check_unchanged();
  if (!(dataset::indexed_file_facts(task.input) == facts)) {
    throw InputError("input " + dataset::input_display_name(task.input) +
                     " changed during the run: its index would describe neither its old records nor its new ones");
  }
  output->finish_stream(header.records);
  RunResult result;
  result.inputs = {{task.input, facts.bytes, header.records}};
  result.format = header.reading.format;
  result.outputs = output->files();
  result.stats.records = header.records;
  result.stats.bytes = facts.bytes;
  result.stats.bytes_read = facts.bytes;
  result.stats.bytes_written = result.outputs.empty() ? 0 : result.outputs.front().bytes;
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.stats.peak_rss_bytes = peak_rss_bytes();
  commit.add(std::move(output));
  return result;
}

}  // namespace

std::vector<RunResult> run_index_only(const JobOptions& options, const std::vector<JobDataset>& datasets,
                                      JobCommit& commit) {
  std::uint64_t total_bytes = 0;
  const std::vector<IndexTask> tasks = index_tasks(datasets, total_bytes);
  ProgressMeter progress(total_bytes, options.run.progress);
  std::vector<RunResult> results;
  for (const IndexTask& task : tasks) results.push_back(index_one(options, task, progress.counter(), commit));
  return results;
}

}  // namespace extshuffle::driver

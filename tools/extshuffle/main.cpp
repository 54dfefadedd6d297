// extshuffle: the command-line shell (docs/conventions.md, Rooms). Parses options (CLI11),
// validates them into the library's Job (make_job), sets up logging
// (spdlog, stderr only), calls the library, prints what it returns (the
// dry-run text, the RESULT line) and maps errors to exit codes: 0 success,
// 1 runtime failure, 2 usage error.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <spdlog/spdlog.h>

#include <optional>

#include "extshuffle/driver/error_report.hpp"
#include "extshuffle/driver/run_job.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/output_file.hpp"
#include "cli/make_job.hpp"
#include "cli/openmp_wait.hpp"
#include "cli/standard_streams.hpp"
#include "cli/options.hpp"
#include "cli/progress_display.hpp"
#include "cli/run_report.hpp"
#include "cli/worker_threads.hpp"

namespace {

using namespace extshuffle;

int run_cli(int argc, char** argv) {
  cli::Options options;
  if (const auto exit_code = cli::parse_options(argc, argv, options)) return *exit_code;
  cli::set_up_logging(options, "extshuffle");
  Job job = cli::make_job(options);
  cli::start_worker_threads(job.options.run.threads);
  cli::ProgressDisplay progress;
  if (!options.quiet && (options.progress || ::isatty(2))) job.options.run.progress = progress.callback();
  // A wait for another run's commit, said once, at every level but -q's.
  job.options.run.waiting = [&progress](const std::string& message) {
    progress.clear();
    spdlog::warn("{}", message);
  };
  const JobResult result = driver::run_job(job);
  progress.clear();
  for (const RunResult& dataset : result.datasets) {
    std::fputs(dataset.dry_run_text.c_str(), stdout);
    cli::say_messages(dataset.notes, dataset.warnings, dataset.output_warnings);
    if (options.stats) std::fprintf(stderr, "%s\n", cli::result_line(dataset.stats, job.options.run.seed).c_str());
  }
  const std::string seed_line = cli::drawn_seed_line(options, job.options);
  if (!seed_line.empty()) spdlog::warn("{}", seed_line);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cli::wait_passively(argv);
  cli::hold_standard_descriptors();
  cli::end_on_memory_exhaustion();
  // A closed pipe shows up as EPIPE from write(), handled as BrokenPipe.
  ::signal(SIGPIPE, SIG_IGN);
  try {
    io::start_io_threads();
    return run_cli(argc, argv);
  } catch (const io::BrokenPipe&) {
    // Like other filters: end quietly, as if killed by SIGPIPE (scratch and
    // temporary files are already gone: their owners' destructors ran).
    ::signal(SIGPIPE, SIG_DFL);
    ::raise(SIGPIPE);
    return 141;
  } catch (...) {
    // Every message reads "extshuffle: <what>: <why>" on one line.
    const driver::ErrorReport report = driver::describe_error(std::current_exception());
    std::fprintf(stderr, "extshuffle: %s\n", report.line.c_str());
    return report.exit_code;
  }
}

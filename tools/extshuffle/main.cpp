// extshuffle: the command-line shell (docs/conventions.md, Rooms). Parses options (CLI11),
// validates them into the library's Job (make_job), sets up logging
// (spdlog, stderr only), calls the library, prints what it returns (the
// dry-run text, the RESULT line) and maps errors to exit codes: 0 success,
// 1 runtime failure, 2 usage error.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <system_error>
#include <thread>
#include <vector>
#include <spdlog/spdlog.h>

#include <optional>

#include "extshuffle/driver/run_job.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/output_file.hpp"
#include "make_job.hpp"
#include "openmp_wait.hpp"
#include "standard_streams.hpp"
#include "options.hpp"
#include "progress_display.hpp"
#include "run_report.hpp"

namespace {

using namespace extshuffle;

// Every message reads "extshuffle: <what>: <why>" on one line. Most carry
// their <what> ("input 'x': ...", "invalid --memory '0': ..."); one that
// does not gets the part of the run it concerns: the command line for usage
// errors, the input for bad records, the run otherwise.
void print_error(const std::string& message, const char* what) {
  // ("input 'x' changed size ..." names its part already.)
  const bool named = message.find(": ") != std::string::npos || message.starts_with(std::string(what) + " ");
  std::string line = named ? message : std::string(what) + ": " + message;
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  std::fprintf(stderr, "extshuffle: %s\n", line.c_str());
}

// OpenMP's worker threads, started now while memory is plentiful. libgomp
// ends the process with a line of its own when one cannot start; as many
// threads started and joined first, with the same default attributes,
// throw std::system_error instead (reported as memory exhausted), and their
// stacks stay in glibc's cache for libgomp's threads, started next.
void start_worker_threads(int threads) {
  std::vector<std::thread> probes;
  try {
    for (int t = 1; t < threads; ++t) probes.emplace_back([] {});
  } catch (...) {
    for (std::thread& probe : probes) probe.join();
    throw;
  }
  for (std::thread& probe : probes) probe.join();
#pragma omp parallel num_threads(threads)
  {}
}

int run_cli(int argc, char** argv) {
  cli::Options options;
  if (const auto exit_code = cli::parse_options(argc, argv, options)) return *exit_code;
  cli::set_up_logging(options, "extshuffle");
  Job job = cli::make_job(options);
  start_worker_threads(job.options.threads);
  cli::ProgressDisplay progress;
  if (!options.quiet && (options.progress || ::isatty(2))) job.options.progress = progress.callback();
  // A wait for another run's commit, said once, at every level but -q's.
  job.options.waiting = [&progress](const std::string& message) {
    progress.clear();
    spdlog::warn("{}", message);
  };
  const JobResult result = driver::run_job(job);
  progress.clear();
  for (const RunResult& dataset : result.datasets) {
    std::fputs(dataset.dry_run_text.c_str(), stdout);
    for (const std::string& note : dataset.notes) spdlog::debug("{}", note);
    for (const std::string& warning : dataset.warnings) spdlog::warn("warning: {}", warning);
    // At the level -q keeps: about the files on disk.
    for (const std::string& warning : dataset.output_warnings) spdlog::error("warning: {}", warning);
    if (options.stats) std::fprintf(stderr, "%s\n", cli::result_line(dataset.stats, job.options.seed).c_str());
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
  } catch (const UsageError& e) {
    print_error(e.what(), "command line");
    return e.exit_code();
  } catch (const InputError& e) {
    print_error(e.what(), "input");
    return e.exit_code();
  } catch (const Error& e) {
    print_error(e.what(), "run");
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    // Memory exhausted (a ulimit -v below --memory): exit 1, as shuf does.
    print_error("out of memory: lower --memory or raise the process's memory limit", "run");
    return 1;
  } catch (const std::system_error& e) {
    // A thread that cannot be started for want of memory (EAGAIN under ulimit -v).
    const bool memory = e.code() == std::errc::resource_unavailable_try_again || e.code() == std::errc::not_enough_memory;
    print_error(memory ? "out of memory: lower --memory or raise the process's memory limit" : e.what(),
                memory ? "run" : "internal error");
    return 1;
  } catch (const std::exception& e) {
    print_error(e.what(), "internal error");
    return 1;
  }
}

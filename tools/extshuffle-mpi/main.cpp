// extshuffle-mpi: extshuffle's command line on the ranks of an MPI job
// (mpirun -np P extshuffle-mpi in out --seed S -S 4G -T /local/scratch).
// The same options (the code the front ends share, tools/cli) and the same output,
// byte for byte, for every P. Rank 0 parses first and alone prints help,
// the version, parse errors, the RESULT line and the job's error; the ranks
// agree on every failure (extshuffle/mpi/rank_failure.hpp), so the job ends
// with one line naming the rank that failed and why: exit code 0 success,
// 1 runtime failure, 2 usage error.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <spdlog/spdlog.h>
#include <string>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/mpi/communicator.hpp"
#include "extshuffle/mpi/distributed_run.hpp"
#include "extshuffle/mpi/rank_failure.hpp"
#include "extshuffle/io/block_file.hpp"
#include "cli/make_job.hpp"
#include "cli/openmp_wait.hpp"
#include "cli/options.hpp"
#include "cli/progress_display.hpp"
#include "cli/run_report.hpp"
#include "cli/standard_streams.hpp"
#include "rank_fields.hpp"

namespace {

using namespace extshuffle;

constexpr const char* kProgram = "extshuffle-mpi";

// --stats: the job's RESULT line (as extshuffle's, plus the ranks and the
// bytes they exchanged), then one RANK line per rank (rank_fields.hpp).
void print_stats(const mpi::DistributedResult& result, int ranks, std::uint64_t seed) {
  std::uint64_t sent = 0, counts = 0;
  for (const mpi::RankStats& r : result.ranks) {
    sent += r.bytes_sent;
    counts += r.count_bytes_sent;
  }
  const std::string job = cli::result_line(result.stats, seed) + " routed=" + (result.routed ? "1" : "0") +
                          " ranks=" + std::to_string(ranks) + " bytes_sent=" + std::to_string(sent) +
                          " count_bytes_sent=" + std::to_string(counts);
  std::fprintf(stderr, "%s\n", job.c_str());
  for (const mpi::RankStats& r : result.ranks) {
    std::string rank = "RANK";
    cli::append_fields(rank, cli::kRankFields, r);
    std::fprintf(stderr, "%s\n", rank.c_str());
  }
}

int run_cli(int argc, char** argv, mpi::Communicator& comm) {
  // 1. Rank 0 parses alone first: help, the version and parse errors are
  // printed once; the others then parse the same words, silently.
  cli::Options command_line;
  std::uint64_t verdict = 0;  // 0: go on; else the exit code + 1
  if (comm.rank() == 0) {
    if (const auto exit_code = cli::parse_options(argc, argv, command_line, kProgram)) verdict = *exit_code + 1;
  }
  verdict = comm.broadcast(verdict, 0);
  if (verdict != 0) return static_cast<int>(verdict - 1);
  if (comm.rank() != 0) cli::parse_options(argc, argv, command_line, kProgram);
  cli::set_up_logging(command_line, kProgram, comm.rank() != 0);  // rank 0 alone below errors: -v is read once

  Job job;
  mpi::checkpoint(comm, [&] {
    job = cli::make_job(command_line);
    // --checkpoint without --seed: the seed of the job it resumes, rank 0's.
    if (comm.rank() == 0 && command_line.seed.empty() && command_line.random_source.empty() &&
        !command_line.checkpoint.empty()) {
      if (const auto seed = mpi::checkpointed_seed(command_line.checkpoint)) job.options.run.seed = *seed;
    }
  });
  // One seed for all: a random one is rank 0's. The default budget and
  // thread count are shared by the ranks of a machine.
  JobOptions& options = job.options;
  options.run.seed = comm.broadcast(options.run.seed, 0);
  const int neighbours = comm.ranks_on_this_machine();
  if (command_line.memory.empty()) options.run.memory_bytes /= static_cast<std::uint64_t>(neighbours);
  if (command_line.threads == 0) options.run.threads = std::max(1, options.run.threads / neighbours);
  // Progress on rank 0 alone (its own walks: docs/mpi.md), as extshuffle
  // draws it: with --progress, or on a terminal, never with -q.
  cli::ProgressDisplay progress;
  if (comm.rank() == 0 && !command_line.quiet && (command_line.progress || ::isatty(2))) {
    options.run.progress = progress.callback();
  }
  // Rank 0 commits: a wait for another job's commit, said once (not with -q).
  options.run.waiting = [&progress](const std::string& message) {
    progress.clear();
    spdlog::warn("{}", message);
  };
  const std::vector<mpi::DistributedResult> results = mpi::run_job(job, comm);
  progress.clear();
  for (const mpi::DistributedResult& result : results) {
    if (comm.rank() != 0) continue;                   // rank 0 alone says what the job did, once
    std::fputs(result.dry_run_text.c_str(), stdout);  // --dry-run: the plan, the shares
    cli::say_messages(result.notes, result.warnings, result.output_warnings);
    if (command_line.stats && !options.run.dry_run) print_stats(result, comm.size(), options.run.seed);
  }
  const std::string seed_line = cli::drawn_seed_line(command_line, options);  // rank 0's logger alone prints
  if (!seed_line.empty()) spdlog::warn("{}", seed_line);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Before MPI starts: the process executed again keeps its pid and the
  // launcher's environment, so mpirun still knows it as the same rank.
  cli::wait_passively(argv);
  cli::hold_standard_descriptors();
  // A closed pipe shows up as EPIPE from write(), never as a signal.
  ::signal(SIGPIPE, SIG_IGN);
  mpi::Session session(argc, argv);
  mpi::Communicator comm;
  try {
    io::start_io_threads();
    return run_cli(argc, argv, comm);
  } catch (const mpi::RankFailure& e) {
    // Agreed on by every rank: rank 0 says it once.
    if (comm.rank() == 0) {
      if (e.exit_code() == 2) {
        std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
      } else {
        std::fprintf(stderr, "%s: rank %d: %s\n", kProgram, e.rank(), e.what());
      }
    }
    return e.exit_code();
  } catch (...) {
    // Outside any checkpoint: the other ranks cannot be told; end the job.
    mpi::abort_job(std::current_exception());
  }
}

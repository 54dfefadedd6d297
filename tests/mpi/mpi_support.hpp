// Helpers of the extshuffle-mpi tests: the mpirun command line for P ranks
// on this machine (oversubscribed: CI has 2 cores), and the single-machine
// reference each distributed run must equal byte for byte. The binaries and
// mpirun come from CMake (EXTSHUFFLE_BINARY, EXTSHUFFLE_MPI_BINARY,
// EXTSHUFFLE_MPIEXEC), or from the environment variables of those names
// (extshuffle-mpi is built against the site's MPI and is not in the
// relocatable bundle, nor are these tests).
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/command.hpp"

namespace extshuffle::testing {

inline std::string from_environment(const char* variable, const char* built_in) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0' ? value : built_in;
}
inline std::string extshuffle_mpi_binary() { return from_environment("EXTSHUFFLE_MPI_BINARY", EXTSHUFFLE_MPI_BINARY); }
inline std::string mpiexec() { return from_environment("EXTSHUFFLE_MPIEXEC", EXTSHUFFLE_MPIEXEC); }

// Start-up work an mpirun of these tests skips (EXTSHUFFLE_MPI_STARTUP_
// ENVIRONMENT, from tests/mpi/CMakeLists.txt), none of it what the ranks
// compute or how they talk (still TCP between processes): every launch made
// all four processes (mpirun and 3 ranks) read the PCI devices' config space
// (hwloc's I/O discovery, trapped by the hypervisor on a VM), load hwloc's
// OpenCL, GL (X11) and PCI plugins, open the PSM interconnects' libraries to
// find no device (pml ob1 is what a TCP-only run selects anyway), and zero
// PMIx's shared-memory job store (the hash store keeps the same job data).
// `mpirun -np 3` of a program that only initialises and meets at a barrier:
// 0.93 to 0.56 CPU s; a tiny extshuffle-mpi job, 1.15 to 0.79 CPU s
// (docs/reliability.md, CI). hwloc ignores names it does not know.
inline constexpr const char* kMpiStartupEnvironment = EXTSHUFFLE_MPI_STARTUP_ENVIRONMENT;

// OpenMP's wait policy as the tools set it for themselves
// (tools/cli/openmp_wait.hpp): given in the environment, each rank starts
// once instead of executing itself again to set it, the same policy in
// force (a 6000-record job on 3 ranks 0.94 -> 0.80 CPU s: docs/
// reliability.md, CI). MpiCli.OpenMpThreadsWaitPassivelyOnEveryRankUnlessTold
// launches without it, as users do (on_ranks_as_launched_by_users).
inline constexpr const char* kPassiveWait = "OMP_WAIT_POLICY=passive";

// The environment mpirun needs here: Open MPI refuses root unless told
// twice. The ranks talk over TCP only (the btl components tcp and self, no
// shared memory), as ranks on separate machines would: nothing in a run may
// lean on memory the ranks share. A rank waiting for a message yields its
// core: the ranks are oversubscribed (several tests at once, 2 cores), and
// one spinning in a collective kept the core its peer needed (the counting
// test on 3 ranks: 10.4 s spinning, 0.9 s yielding, for 20 texts).
// Open MPI's session directories go under a directory of this test
// process's own, one per mpirun: ctest starts several at once, and on the
// tree they shared under /tmp one failed now and then before any rank ran
// ("ORTE_ERROR_LOG ... session_dir.c").
// kMpiStartupEnvironment: what mpirun and each rank need not do at start-up.
// `as_launched_by_users`: without kPassiveWait (the tools' own choice of it
// is what is tested then).
inline std::string mpi_environment(bool as_launched_by_users = false) {
  static const TempDir sessions;  // removed when the test process ends
  static std::atomic<int> runs{0};
  std::string env = "OMPI_MCA_btl=tcp,self OMPI_MCA_mpi_yield_when_idle=1 " + std::string(kMpiStartupEnvironment) +
                    " OMPI_MCA_orte_tmpdir_base=" + (sessions / ("run-" + std::to_string(runs++))).string() + " ";
  if (!as_launched_by_users) env += std::string(kPassiveWait) + " ";
  if (::geteuid() == 0) env += "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";
  return env;
}

// `command` (a program and its arguments) on `ranks` ranks. mpirun's own
// banners (-q) are left out unless `mpirun_messages`.
inline std::string on_ranks(int ranks, const std::string& command, bool mpirun_messages = false) {
  return mpi_environment() + mpiexec() + " --oversubscribe" + (mpirun_messages ? "" : " -q") + " -np " +
         std::to_string(ranks) + " " + command;
}

// As on_ranks, with the environment a user's mpirun has (no kPassiveWait):
// each rank executes itself again before MPI starts.
inline std::string on_ranks_as_launched_by_users(int ranks, const std::string& command) {
  return mpi_environment(true) + mpiexec() + " --oversubscribe -q -np " + std::to_string(ranks) + " " + command;
}

// The command each rank runs for extshuffle-mpi `arguments` with a scratch
// directory of its own (-T), as ranks on separate machines have:
// `scratch_base`/rank-R, R the rank number Open MPI sets. The directories of
// ranks 0 to `ranks` - 1 are made here, before the launch: made by each
// rank's shell they cost a mkdir program a rank. `arguments` hold no double
// quote.
inline std::string own_scratch_command(const std::string& arguments, const std::filesystem::path& scratch_base,
                                       int ranks) {
  for (int rank = 0; rank < ranks; ++rank) {
    std::filesystem::create_directories(scratch_base / ("rank-" + std::to_string(rank)));
  }
  const std::string rank_scratch = (scratch_base / "rank-").string() + "\\$OMPI_COMM_WORLD_RANK";
  return "sh -c \"exec " + extshuffle_mpi_binary() + " " + arguments + " -T " + rank_scratch + "\"";
}

inline CommandResult run_mpi_own_scratch(int ranks, const std::string& arguments,
                                         const std::filesystem::path& scratch_base) {
  return run_command(on_ranks(ranks, own_scratch_command(arguments, scratch_base, ranks)));
}

// The scratch directories of one test program's ranks, removed when it ends.
struct RankScratchBase {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("extshuffle-mpi-ranks-" + std::to_string(::getpid()));
  ~RankScratchBase() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

// extshuffle-mpi with `arguments` on `ranks` ranks, each rank with its own
// scratch directory unless the arguments name one (-T) or hold a double
// quote: no rank can lean on another's scratch, as on separate machines.
inline CommandResult run_mpi(int ranks, const std::string& arguments, bool mpirun_messages = false) {
  if (arguments.find("-T ") != std::string::npos || arguments.find('"') != std::string::npos || mpirun_messages) {
    return run_command(on_ranks(ranks, extshuffle_mpi_binary() + " " + arguments, mpirun_messages));
  }
  static const RankScratchBase base;
  return run_mpi_own_scratch(ranks, arguments, base.path);
}

inline CommandResult run_single(const std::string& arguments) {
  return run_command(extshuffle_binary() + " " + arguments);
}

// Whether two files hold the same bytes, as cmp(1) says.
inline bool same_bytes(const std::string& a, const std::string& b) {
  return run_command("cmp -s " + a + " " + b).exit_code == 0;
}

}  // namespace extshuffle::testing

#include "extshuffle/mpi/rank_failure.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "extshuffle/driver/error_report.hpp"

namespace extshuffle::mpi {
namespace {

// What the job reports of `failure`: a RankFailure as the failing rank
// worded it, anything else as extshuffle words it.
driver::ErrorReport describe(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const RankFailure& e) {
    return {e.exit_code(), e.what()};
  } catch (...) {
    return driver::describe_error(failure);
  }
}

}  // namespace

void abort_job(const std::exception_ptr& failure) {
  const driver::ErrorReport report = describe(failure);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "extshuffle-mpi: rank %d: %s\n", rank, report.line.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, report.exit_code);
  std::_Exit(report.exit_code);
}

void agree(Communicator& comm, const std::exception_ptr& failure) {
  const auto size = static_cast<std::uint64_t>(comm.size());
  const std::uint64_t first = comm.min(failure ? static_cast<std::uint64_t>(comm.rank()) : size);
  if (first == size) return;
  const int root = static_cast<int>(first);
  driver::ErrorReport report;
  if (comm.rank() == root) report = describe(failure);
  const std::string line = comm.broadcast(report.line, root);
  const auto exit_code = static_cast<int>(comm.broadcast(static_cast<std::uint64_t>(report.exit_code), root));
  throw RankFailure(root, exit_code, line);
}

}  // namespace extshuffle::mpi

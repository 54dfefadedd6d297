#include "extshuffle/mpi/rank_failure.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace extshuffle::mpi {

ErrorReport describe(const std::exception_ptr& failure) {
  const auto one_line = [](std::string message, const char* what) {
    if (message.find(": ") == std::string::npos) message = std::string(what) + ": " + message;
    for (char& c : message) {
      if (c == '\n') c = ' ';
    }
    return message;
  };
  try {
    std::rethrow_exception(failure);
  } catch (const RankFailure& e) {
    return {e.exit_code(), e.what()};
  } catch (const UsageError& e) {
    return {e.exit_code(), one_line(e.what(), "command line")};
  } catch (const InputError& e) {
    return {e.exit_code(), one_line(e.what(), "input")};
  } catch (const Error& e) {
    return {e.exit_code(), one_line(e.what(), "run")};
  } catch (const std::exception& e) {
    return {1, one_line(e.what(), "internal error")};
  } catch (...) {
    return {1, "internal error: unknown exception"};
  }
}

void abort_job(const std::exception_ptr& failure) {
  const ErrorReport report = describe(failure);
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
  ErrorReport report;
  if (comm.rank() == root) report = describe(failure);
  const std::string line = comm.broadcast(report.line, root);
  const auto exit_code = static_cast<int>(comm.broadcast(static_cast<std::uint64_t>(report.exit_code), root));
  throw RankFailure(root, exit_code, line);
}

}  // namespace extshuffle::mpi

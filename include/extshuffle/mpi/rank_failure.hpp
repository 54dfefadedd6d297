// How the ranks of a job fail together. A rank that fails says so at the
// next checkpoint, where every rank learns which rank failed first and why,
// and every rank throws the same RankFailure: the job ends with one line
// naming that rank and its cause, nothing half-written, and no rank left
// waiting for another. Failures between checkpoints that leave the ranks
// unable to meet there (a rank killed, a failure inside a data exchange)
// end the job with MPI_Abort instead.
#pragma once

#include <exception>
#include <string>

#include "extshuffle/errors.hpp"
#include "extshuffle/mpi/communicator.hpp"

namespace extshuffle::mpi {

// The job's failure, on every rank: the failing rank's exit code and line
// ("<what>: <why>"), worded on that rank by the library's one error mapping
// (driver/error_report.hpp), since an exception cannot cross processes.
// Worded already, it passes through that mapping unchanged.
class RankFailure : public Error {
 public:
  RankFailure(int rank, int exit_code, const std::string& message)
      : Error(message), rank_(rank), exit_code_(exit_code) {}
  int rank() const noexcept { return rank_; }
  int exit_code() const noexcept override { return exit_code_; }

 private:
  int rank_;
  int exit_code_;
};

// The last resort, when the ranks can no longer meet at a checkpoint: prints
// "extshuffle-mpi: rank R: <line>" on stderr and ends the whole job with the
// error's exit code (MPI_Abort). Not collective.
[[noreturn]] void abort_job(const std::exception_ptr& failure);

// A checkpoint: every rank passes what it failed with (null if nothing).
// Returns when no rank failed; otherwise throws, on every rank, the
// RankFailure of the lowest rank that failed. Collective.
void agree(Communicator& comm, const std::exception_ptr& failure);

// Runs `step` and agrees on its outcome: the step's exception on this rank
// becomes the job's RankFailure on every rank. Collective.
template <class Step>
void checkpoint(Communicator& comm, Step&& step) {
  std::exception_ptr failure;
  try {
    step();
  } catch (...) {
    failure = std::current_exception();
  }
  agree(comm, failure);
}

}  // namespace extshuffle::mpi

#include "extshuffle/mpi/communicator.hpp"

#include <mpi.h>

#include <cstdlib>
#include <stdexcept>

namespace extshuffle::mpi {

Session::Session(int& argc, char**& argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw std::runtime_error("the MPI library does not support MPI_THREAD_FUNNELED");
  }
}

Session::~Session() { MPI_Finalize(); }

Communicator::Communicator() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
}

void Communicator::barrier() { MPI_Barrier(MPI_COMM_WORLD); }

std::uint64_t Communicator::broadcast(std::uint64_t value, int root) {
  MPI_Bcast(&value, 1, MPI_UINT64_T, root, MPI_COMM_WORLD);
  return value;
}

std::string Communicator::broadcast(const std::string& text, int root) {
  const std::uint64_t bytes = broadcast(static_cast<std::uint64_t>(text.size()), root);
  std::string copy = rank_ == root ? text : std::string(bytes, '\0');
  // Messages only: one line, far below MPI's int count.
  MPI_Bcast(copy.data(), static_cast<int>(bytes), MPI_CHAR, root, MPI_COMM_WORLD);
  return copy;
}

std::uint64_t Communicator::exclusive_sum(std::uint64_t value) {
  std::uint64_t below = 0;
  MPI_Exscan(&value, &below, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return rank_ == 0 ? 0 : below;  // MPI leaves rank 0's result undefined
}

namespace {
std::uint64_t all_reduce(std::uint64_t value, MPI_Op op) {
  std::uint64_t result = 0;
  MPI_Allreduce(&value, &result, 1, MPI_UINT64_T, op, MPI_COMM_WORLD);
  return result;
}
}  // namespace

std::uint64_t Communicator::sum(std::uint64_t value) { return all_reduce(value, MPI_SUM); }
std::uint64_t Communicator::max(std::uint64_t value) { return all_reduce(value, MPI_MAX); }
std::uint64_t Communicator::min(std::uint64_t value) { return all_reduce(value, MPI_MIN); }

void Communicator::all_gather_bytes(const void* mine, std::size_t bytes, void* all) {
  MPI_Allgather(mine, static_cast<int>(bytes), MPI_BYTE, all, static_cast<int>(bytes), MPI_BYTE, MPI_COMM_WORLD);
}

std::vector<std::uint64_t> Communicator::all_gather(const std::vector<std::uint64_t>& values) {
  std::vector<std::uint64_t> all(values.size() * static_cast<std::size_t>(size_));
  MPI_Allgather(values.data(), static_cast<int>(values.size()), MPI_UINT64_T, all.data(),
                static_cast<int>(values.size()), MPI_UINT64_T, MPI_COMM_WORLD);
  return all;
}

void Communicator::abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; this only tells the compiler so
}

}  // namespace extshuffle::mpi

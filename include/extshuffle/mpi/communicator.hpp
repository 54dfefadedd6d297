// The ranks of one extshuffle-mpi job (MPI_COMM_WORLD), through the few
// collective operations the distributed run needs, so that no header above
// src/mpi includes <mpi.h>. Every call is collective unless it says
// otherwise: every rank must make it, in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace extshuffle::mpi {

// MPI itself, initialised for one thread calling MPI (MPI_THREAD_FUNNELED:
// the driver's worker threads never do) and finalised on destruction. One
// per process, before any Communicator.
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

// MPI_COMM_WORLD: src/mpi's exchange uses it directly too.
class Communicator {
 public:
  Communicator();
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ranks that share this rank's machine (MPI_COMM_TYPE_SHARED), for the
  // default budget and thread count: they share its memory and cores.
  int ranks_on_this_machine() const { return local_size_; }

  void barrier();
  // Rank `root`'s value on every rank.
  std::uint64_t broadcast(std::uint64_t value, int root);
  std::string broadcast(const std::string& text, int root);
  // Sum over ranks below this one (0 on rank 0), and over all ranks.
  std::uint64_t exclusive_sum(std::uint64_t value);
  std::uint64_t sum(std::uint64_t value);
  std::uint64_t max(std::uint64_t value);
  std::uint64_t min(std::uint64_t value);
  // Every rank's `value`, in rank order; T is copied as bytes.
  template <class T>
  std::vector<T> all_gather(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> all(static_cast<std::size_t>(size_));
    all_gather_bytes(&value, sizeof(T), all.data());
    return all;
  }
  // Every rank's `count` values, rank after rank (count equal everywhere).
  std::vector<std::uint64_t> all_gather(const std::vector<std::uint64_t>& values);

  // Ends every rank of the job at once with `exit_code` (MPI_Abort): for a
  // failure after which the ranks can no longer agree. Not collective.
  [[noreturn]] void abort(int exit_code);

 private:
  void all_gather_bytes(const void* mine, std::size_t bytes, void* all);
  int rank_ = 0, size_ = 1, local_size_ = 1;
};

}  // namespace extshuffle::mpi

// The main() of the tests that mpirun runs as an MPI program (one process a
// rank, every rank running every test in step): MPI initialised first.
#include <gtest/gtest.h>

#include <iostream>

#include "extshuffle/mpi/communicator.hpp"

int main(int argc, char** argv) {
  extshuffle::mpi::Session session(argc, argv);
  std::cerr.rdbuf(nullptr);  // STXXL's notes on unaligned requests; gtest reports on stdout
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

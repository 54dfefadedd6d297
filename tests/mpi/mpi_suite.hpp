// A suite of extshuffle-mpi tests whose inputs a script of tests/mpi/
// writes once (Suite::kScript, run by /usr/bin/python3, which has numpy),
// into a directory the suite's tests share.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "mpi_support.hpp"

namespace extshuffle::testing {

template <class Suite>
class MpiSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    inputs_ = new TempDir;
    const auto made = run_command("/usr/bin/python3 " + extshuffle_source_dir() + "/tests/mpi/" + Suite::kScript +
                                  " " + inputs_->path().string());
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
  static void TearDownTestSuite() {
    delete inputs_;
    inputs_ = nullptr;
  }
  static std::string input(const std::string& name) { return (inputs_->path() / name).string(); }

  TempDir dir_;  // each test's own
  static inline TempDir* inputs_ = nullptr;
};

}  // namespace extshuffle::testing

// Typed errors of the library, below every layer (core excepted: it throws
// std::invalid_argument for precondition failures and knows no IO). Only the
// CLI's main() catches them; each carries a one-line message "<what>: <why>",
// and its class decides the exit code: 2 for a usage error (sort and grep do
// the same), 1 for everything else.
#pragma once

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace extshuffle {

// The common base: every error the library raises on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // The process exit code this error maps to.
  virtual int exit_code() const noexcept { return 1; }
};

// Bad arguments the user can fix (exit code 2).
class UsageError : public Error {
 public:
  using Error::Error;
  int exit_code() const noexcept override { return 2; }
};

// A memory budget (-S) too small for what the run must hold at once, thrown
// where the budget is found too small: a usage error (exit code 2).
class BudgetError : public UsageError {
 public:
  using UsageError::UsageError;
};

// Input whose content is not what the options say (exit code 1).
class InputError : public Error {
 public:
  using Error::Error;
};

// A failed system call: what was being done, on which path, and errno's text (exit code 1).
class IoError : public Error {
 public:
  IoError(const std::string& what, const std::string& path, int error_number)
      : Error(what + " '" + path + "': " + std::strerror(error_number)), error_number_(error_number) {}
  int error_number() const noexcept { return error_number_; }

 private:
  int error_number_;
};

}  // namespace extshuffle

// Typed errors of the library. Only main() catches them; each carries a
// one-line message "<what>: <why>" and maps to an exit code.
#pragma once

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace extshuffle {

// Bad input or arguments the user can fix (exit code 2 when it is a usage error).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Input whose content is not what the options say (exit code 1).
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failed system call: what was being done, on which path, and errno's text (exit code 1).
class IoError : public std::runtime_error {
 public:
  IoError(const std::string& what, const std::string& path, int error_number)
      : std::runtime_error(what + " '" + path + "': " + std::strerror(error_number)),
        error_number_(error_number) {}
  int error_number() const { return error_number_; }

 private:
  int error_number_;
};

}  // namespace extshuffle

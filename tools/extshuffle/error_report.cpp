#include "error_report.hpp"

#include <new>
#include <system_error>

#include "extshuffle/errors.hpp"

namespace extshuffle::cli {
namespace {

constexpr const char* kOutOfMemory = "out of memory: lower --memory or raise the process's memory limit";

ErrorReport report(int exit_code, const std::string& message, const char* what) {
  // ("input 'x' changed size ..." names its part already.)
  const bool named = message.find(": ") != std::string::npos || message.starts_with(std::string(what) + " ");
  std::string line = named ? message : std::string(what) + ": " + message;
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  return {exit_code, line};
}

}  // namespace

ErrorReport describe_error(const std::exception_ptr& error) noexcept {
  try {
    try {
      std::rethrow_exception(error);
    } catch (const UsageError& e) {
      return report(e.exit_code(), e.what(), "command line");
    } catch (const InputError& e) {
      return report(e.exit_code(), e.what(), "input");
    } catch (const Error& e) {
      return report(e.exit_code(), e.what(), "run");
    } catch (const std::bad_alloc&) {
      // Memory exhausted (a ulimit -v below --memory): exit 1, as shuf does.
      return report(1, kOutOfMemory, "run");
    } catch (const std::system_error& e) {
      // A thread that cannot be started for want of memory (EAGAIN under ulimit -v).
      const bool memory =
          e.code() == std::errc::resource_unavailable_try_again || e.code() == std::errc::not_enough_memory;
      return memory ? report(1, kOutOfMemory, "run") : report(1, e.what(), "internal error");
    } catch (const std::exception& e) {
      return report(1, e.what(), "internal error");
    } catch (...) {
      return {1, "internal error: an exception of unknown type"};
    }
  } catch (...) {
    return {1, "internal error: the error's message could not be formed"};  // memory exhausted while wording it
  }
}

}  // namespace extshuffle::cli

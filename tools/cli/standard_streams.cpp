#include "standard_streams.hpp"

#include "extshuffle/driver/error_report.hpp"
#include "extshuffle/io/cleanup_registry.hpp"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <new>
#include <streambuf>
#include <string>
#include <vector>

namespace extshuffle::cli {
namespace {

// Passes whole lines to `target`, except those holding one of `dropped`.
class LineFilter : public std::streambuf {
 public:
  LineFilter(std::streambuf* target, std::vector<std::string> dropped)
      : target_(target), dropped_(std::move(dropped)) {}

 protected:
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    line_ += static_cast<char>(c);
    if (c == '\n') flush_line();
    return c;
  }
  int sync() override {
    flush_line();
    return target_->pubsync();
  }

 private:
  void flush_line() {
    const bool drop = std::any_of(dropped_.begin(), dropped_.end(),
                                  [&](const std::string& d) { return line_.find(d) != std::string::npos; });
    if (!line_.empty() && !drop) {
      target_->sputn(line_.data(), static_cast<std::streamsize>(line_.size()));
    }
    line_.clear();
  }
  std::streambuf* target_;
  std::vector<std::string> dropped_;
  std::string line_;
};

}  // namespace

void hold_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    const int held = ::open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
    if (held >= 0 && held != fd) {
      ::dup2(held, fd);
      ::close(held);
    }
  }
}

namespace {

// The line describe_error gives, written by one writev(2): no memory is
// left to format it.
[[noreturn]] void out_of_memory() {
  char program[] = "extshuffle: ", end[] = "\n";
  char* reason = const_cast<char*>(driver::kOutOfMemory);
  const iovec parts[] = {{program, sizeof program - 1}, {reason, sizeof driver::kOutOfMemory - 1}, {end, 1}};
  (void)!::writev(2, parts, 3);
  io::remove_registered_paths();
  ::_exit(1);
}

}  // namespace

void end_on_memory_exhaustion() { std::set_new_handler(out_of_memory); }

void filter_library_chatter(bool verbose) {
  if (!verbose) {
    std::cerr.rdbuf(nullptr);
    return;
  }
  // Unaligned buffers and sizes: STXXL then copies through an aligned
  // buffer of its own, correctly; one line per block says so.
  // Never destroyed: std::cerr is flushed after every static object is
  // gone (ios_base::Init's destructor runs last), and a filter destroyed
  // before it would leave cerr writing through a dangling buffer (seen as a
  // SEGV at exit under AddressSanitizer with -v).
  static LineFilter* const filter = new LineFilter(std::cerr.rdbuf(), {"is not aligned", "is not a multiple of"});
  std::cerr.rdbuf(filter);
}

}  // namespace extshuffle::cli

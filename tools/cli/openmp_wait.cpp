#include "openmp_wait.hpp"

#include <unistd.h>

#include <cstdlib>

namespace extshuffle::cli {

void wait_passively(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  if (::setenv("OMP_WAIT_POLICY", "passive", 0) != 0) return;
  ::execv("/proc/self/exe", argv);
  ::unsetenv("OMP_WAIT_POLICY");  // not executed again: nothing changed
}

}  // namespace extshuffle::cli

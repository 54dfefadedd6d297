// The device layer's error type (docs/conventions.md, Errors and exit codes: typed errors, only main catches).
#pragma once

#include "extshuffle/errors.hpp"

namespace extshuffle::device {

// A failure of the device layer: a CUDA device requested where none is
// usable, a job the GPU cannot take, or a failed CUDA call (the message then
// carries the call and CUDA's text). An extshuffle::Error, so the CLI maps it
// like every other runtime failure: one line on stderr, exit code 1.
class DeviceError : public Error {
 public:
  using Error::Error;
};

}  // namespace extshuffle::device

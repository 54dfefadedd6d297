#pragma once

#include <stdexcept>
#include <string>

namespace extshuffle::device {

// A failure of the device layer: CUDA errors carry the CUDA text.
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace extshuffle::device

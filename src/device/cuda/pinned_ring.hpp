// A ring of pinned host slots through which the CUDA back end moves bytes
// between the caller's memory and the device (docs/conventions.md, Devices: pinned staging
// buffers of bounded size). A slot is taken, filled or emptied by a DMA
// queued on some stream, and marked with an event; taking it again waits for
// that event and first runs what was left to do with its bytes (copying a
// device-to-host piece on to the caller, announcing it). Slots are taken in
// ring order, so that deferred work runs in the order it was queued.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "device/cuda/cuda_resources.hpp"

namespace extshuffle::device::cuda {

class PinnedRing {
 public:
  struct Slot {
    std::byte* data = nullptr;
    Event done;                  // recorded after the DMA that uses the slot
    std::function<void()> then;  // run once `done` has passed, before reuse
    bool busy = false;
  };

  // `slots` slots of `slot_bytes` bytes each, pinned once for the life of the
  // ring. Throws DeviceError when pinned memory cannot be had.
  PinnedRing(std::size_t slots, std::size_t slot_bytes);

  std::size_t slot_bytes() const { return slot_bytes_; }

  // The next slot in ring order, free: its last DMA has finished and its
  // `then` has run. The caller queues a DMA, records `done` on its stream and
  // sets `busy` (and `then` if bytes are still to be moved on).
  Slot& take();

  // Waits for every busy slot and runs its `then`, in the order taken.
  void finish();

  // After a failure: waits for every DMA still in flight (no copy may touch
  // a caller's buffer once the call has thrown) and drops the pending work.
  void abandon() noexcept;

 private:
  std::size_t slot_bytes_;
  PinnedBuffer memory_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::size_t next_ = 0;
};

}  // namespace extshuffle::device::cuda

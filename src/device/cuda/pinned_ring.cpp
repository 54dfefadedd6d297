#include "device/cuda/pinned_ring.hpp"

#include <utility>

namespace extshuffle::device::cuda {

PinnedRing::PinnedRing(std::size_t slots, std::size_t slot_bytes)
    : slot_bytes_(slot_bytes), memory_(slots * slot_bytes) {
  for (std::size_t s = 0; s < slots; ++s) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->data = memory_.data() + s * slot_bytes;
  }
}

PinnedRing::Slot& PinnedRing::take() {
  Slot& slot = *slots_[next_];
  next_ = (next_ + 1) % slots_.size();
  if (slot.busy) {
    slot.done.wait();
    slot.busy = false;
    // Cleared before running: a `then` that throws is not run twice.
    if (std::function<void()> then = std::exchange(slot.then, nullptr)) then();
  }
  return slot;
}

void PinnedRing::finish() {
  for (std::size_t s = 0; s < slots_.size(); ++s) take();
}

void PinnedRing::abandon() noexcept {
  for (auto& slot : slots_) {
    if (slot->busy) cudaEventSynchronize(slot->done.get());
    slot->busy = false;
    slot->then = nullptr;
  }
  cudaGetLastError();
}

}  // namespace extshuffle::device::cuda

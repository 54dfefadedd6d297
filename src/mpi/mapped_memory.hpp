// Buffers of the exchange mapped straight from the kernel (mmap), not from
// malloc: freed, their pages leave the process at once, and release() gives
// back the pages of one that must stay mapped. The per-rank budget (-S) is a
// cap on resident memory, and glibc keeps freed blocks of up to 32 MiB in its
// heap, resident, once its mmap threshold has grown.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>

namespace extshuffle::mpi {

class MappedMemory {
 public:
  MappedMemory() = default;
  explicit MappedMemory(std::size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) throw std::bad_alloc();
    memory_ = static_cast<std::byte*>(at);
  }
  MappedMemory(MappedMemory&& other) noexcept : memory_(other.memory_), bytes_(other.bytes_) { other.memory_ = nullptr; }
  MappedMemory& operator=(MappedMemory&& other) noexcept {
    std::swap(memory_, other.memory_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  ~MappedMemory() {
    if (memory_) ::munmap(memory_, bytes_);
  }
  std::byte* get() const { return memory_; }
  // The pages go back to the kernel; the mapping stays (reads see zeros).
  void release() {
    if (memory_) (void)::madvise(memory_, bytes_, MADV_DONTNEED);
  }

 private:
  std::byte* memory_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace extshuffle::mpi

// Page-aligned byte buffers for file IO. STXXL checks the alignment of every
// request's buffer (the Debian build reports a misaligned one under -v), the
// kernel copies page-aligned buffers fastest, and O_DIRECT requires it.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace extshuffle::io {

inline constexpr std::size_t kPageBytes = 4096;

struct AlignedDelete {
  void operator()(std::byte* memory) const { ::operator delete[](memory, std::align_val_t{kPageBytes}); }
};
using AlignedBuffer = std::unique_ptr<std::byte[], AlignedDelete>;

// `bytes` uninitialised bytes starting on a page boundary; throws std::bad_alloc.
inline AlignedBuffer allocate_aligned(std::size_t bytes) {
  return AlignedBuffer(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{kPageBytes})));
}

}  // namespace extshuffle::io

#include "extshuffle/io/mapped_bytes.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/cleanup_registry.hpp"

namespace extshuffle::io {
namespace {

// What the SIGBUS handler knows of each live mapping, in fixed storage: a
// handler may not allocate or lock.
struct Mapping {
  std::atomic<bool> live{false};
  std::uintptr_t begin = 0, end = 0;  // of the mapping in memory
  int fd = -1;                        // a descriptor of the file, for its size now
  std::uint64_t file_bytes = 0;       // the file's size when mapped
  std::uint64_t mapped_end = 0;       // the end of the mapped bytes in the file
  std::array<char, 4096> name{};      // "'path'"
};
constexpr int kMappingSlots = 8;
std::array<Mapping, kMappingSlots> g_mappings;
std::mutex g_mappings_mutex;  // taken by map() and release(), never by the handler

// Appends `text` to [at, end), async-signal-safe.
char* append(char* at, const char* end, const char* text) {
  while (*text != '\0' && at < end) *at++ = *text++;
  return at;
}

char* append_number(char* at, const char* end, std::uint64_t value) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  while (n > 0 && at < end) *at++ = digits[--n];
  return at;
}

// The run cannot go on from a fault in its input's bytes: say what happened
// in the same words as InputSource::check_unchanged, leave nothing behind,
// exit 1. A fault anywhere else keeps SIGBUS's default action.
void on_sigbus(int signal_number, siginfo_t* info, void*) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (const Mapping& m : g_mappings) {
    if (!m.live.load() || address < m.begin || address >= m.end) continue;
    struct stat now {};
    const bool known = ::fstat(m.fd, &now) == 0;
    char line[4096 + 160];
    const char* end = line + sizeof line - 1;
    char* at = append(line, end, "extshuffle: input ");
    at = append(at, end, m.name.data());
    if (known && static_cast<std::uint64_t>(now.st_size) < m.mapped_end) {
      at = append(at, end, " changed size during the run (");
      at = append_number(at, end, m.file_bytes);
      at = append(at, end, " bytes at the start, ");
      at = append_number(at, end, static_cast<std::uint64_t>(now.st_size));
      at = append(at, end, " now)");
    } else {
      at = append(at, end, ": a page of it could not be read (I/O error)");
    }
    *at++ = '\n';
    (void)!::write(STDERR_FILENO, line, static_cast<std::size_t>(at - line));
    remove_registered_paths();
    ::_exit(1);
  }
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, nullptr);
  });
}

}  // namespace

std::optional<MappedBytes> MappedBytes::map(const BlockFile& file, std::uint64_t offset, std::uint64_t bytes,
                                            const std::string& display_name) {
  if (file.descriptor() < 0) return std::nullopt;
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  MappedBytes m;
  m.in_page_ = offset % page;
  m.bytes_ = bytes;
  const std::uint64_t file_span = m.in_page_ + bytes;
  m.length_ = static_cast<std::size_t>((file_span + 1 + page - 1) / page * page);
  // Reserve the whole span, then lay the file over its start: the byte after
  // the file's bytes is then always mapped, in the file's last page or in a
  // zero page after it.
  void* base = ::mmap(nullptr, m.length_, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return std::nullopt;
  m.base_ = static_cast<std::byte*>(base);
  if (file_span > 0 && ::mmap(base, static_cast<std::size_t>(file_span), PROT_READ, MAP_PRIVATE | MAP_FIXED,
                              file.descriptor(), static_cast<off_t>(offset - m.in_page_)) == MAP_FAILED) {
    return std::nullopt;  // m unmaps the reservation
  }
  // The byte after: its page writable, and private (a copy of the file's
  // page when it lies in one: the file is never written).
  std::byte* after_page = m.base_ + file_span / page * page;
  if (::mprotect(after_page, static_cast<std::size_t>(page), PROT_READ | PROT_WRITE) != 0) return std::nullopt;

  install_handler();
  struct stat st {};
  if (::fstat(file.descriptor(), &st) != 0) return std::nullopt;
  std::lock_guard lock(g_mappings_mutex);
  for (int k = 0; k < kMappingSlots; ++k) {
    Mapping& slot = g_mappings[k];
    if (slot.live.load()) continue;
    slot.fd = ::dup(file.descriptor());
    if (slot.fd < 0) return std::nullopt;
    slot.begin = reinterpret_cast<std::uintptr_t>(m.base_);
    slot.end = slot.begin + m.length_;
    slot.file_bytes = static_cast<std::uint64_t>(st.st_size);
    slot.mapped_end = offset + bytes;
    const std::size_t n = std::min(display_name.size(), slot.name.size() - 1);
    std::memcpy(slot.name.data(), display_name.data(), n);
    slot.name[n] = '\0';
    slot.live.store(true);
    m.slot_ = k;
    return m;
  }
  return std::nullopt;  // more inputs mapped at once than the handler tracks
}

MappedBytes::MappedBytes(MappedBytes&& other) noexcept
    : base_(other.base_), length_(other.length_), in_page_(other.in_page_), bytes_(other.bytes_),
      slot_(other.slot_) {
  other.base_ = nullptr;
  other.slot_ = -1;
}

MappedBytes& MappedBytes::operator=(MappedBytes&& other) noexcept {
  if (this != &other) {
    release();
    base_ = other.base_;
    length_ = other.length_;
    in_page_ = other.in_page_;
    bytes_ = other.bytes_;
    slot_ = other.slot_;
    other.base_ = nullptr;
    other.slot_ = -1;
  }
  return *this;
}

MappedBytes::~MappedBytes() { release(); }

void MappedBytes::release() noexcept {
  if (slot_ >= 0) {
    std::lock_guard lock(g_mappings_mutex);
    Mapping& slot = g_mappings[slot_];
    slot.live.store(false);
    ::close(slot.fd);
    slot.fd = -1;
    slot_ = -1;
  }
  if (base_ != nullptr) ::munmap(base_, length_);
  base_ = nullptr;
}

void MappedBytes::expect_sequential(bool sequential) {
  if (base_ != nullptr) (void)::madvise(base_, length_, sequential ? MADV_SEQUENTIAL : MADV_NORMAL);
}

void MappedBytes::drop_pages(std::uint64_t from, std::uint64_t to) {
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t first = (in_page_ + from + page - 1) / page * page;
  const std::uint64_t end = (in_page_ + std::min(to, bytes_)) / page * page;
  if (base_ != nullptr && first < end) (void)::madvise(base_ + first, end - first, MADV_DONTNEED);
}

}  // namespace extshuffle::io

namespace extshuffle::io {
namespace {

#ifndef MADV_POPULATE_READ
constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14
#endif

std::uintptr_t page_bytes() { return static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE)); }

}  // namespace

void MappedBytes::populate(const std::byte* at, std::uint64_t bytes) {
  if (bytes == 0) return;
  const std::uintptr_t page = page_bytes(), from = reinterpret_cast<std::uintptr_t>(at) / page * page;
  void* const start = reinterpret_cast<void*>(from);
  const std::size_t length = reinterpret_cast<std::uintptr_t>(at) + bytes - from;
  (void)::madvise(start, length, MADV_WILLNEED);
  if (::madvise(start, length, MADV_POPULATE_READ) == 0) return;
  // An older kernel, or a page that cannot be read: touch every page, so
  // that a fault raises SIGBUS and the handler names the input.
  for (std::uintptr_t p = from; p < reinterpret_cast<std::uintptr_t>(at) + bytes; p += page) {
    (void)*reinterpret_cast<const volatile char*>(std::max(p, reinterpret_cast<std::uintptr_t>(at)));
  }
}

}  // namespace extshuffle::io

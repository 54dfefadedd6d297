// The peer for fixed-size records: STXXL 1.4's own external random shuffle,
// stxxl::random_shuffle on an stxxl::vector, run on the same files and memory
// budget as extshuffle. Usage:
//   stxxl_random_shuffle IN OUT RECORD_SIZE MEMORY TMPDIR [SEED]
// RECORD_SIZE is 8 or 4096; MEMORY takes K/M/G suffixes (powers of 1024).
//
// How it runs (the cheapest use of the library we found):
//  1. STXXL's scratch disk is configured in code: one autogrowing syscall file
//     in TMPDIR, unlinked on open, page cache on (no O_DIRECT), as extshuffle's
//     scratch file; logs go to /dev/null. No .stxxl file is read.
//  2. IN is copied into OUT with plain read/write (one pass, as `cat in > out`).
//  3. OUT is mapped as an stxxl::vector (file-backed constructor) and
//     random_shuffle permutes it in place: one pass distributes the records to
//     k = M / (3 B) bucket stacks on the scratch disk (B = 2 MiB blocks), a
//     second shuffles each bucket in RAM and writes it back to OUT.
//  4. The vector's destructor truncates OUT to its exact size.
// So it moves the data three times (copy, distribute, collect) where
// extshuffle moves it twice; seconds_copy in the RESULT line says what step 2
// cost.
//
// Memory: random_shuffle's parameter M covers its k stack blocks and write
// buffers (the distribution phase), but not the in-RAM shuffle of a bucket of
// b = input / k bytes, which libstdc++'s parallel mode
// (__gnu_parallel::random_shuffle, what STXXL's Debian build calls) does out
// of place, with a bin index per record: about 2 b + 2 b / record_size, on
// top of the k stack blocks still alive (M / 3). Freed write buffers only
// leave the RSS if malloc returns them to the system, which glibc's dynamic
// mmap threshold prevents after the first 2 MiB block is freed; we therefore
// fix the threshold at 1 MiB (mallopt), so STXXL's blocks are always mapped
// and unmapped. The peak is then about
//   reserve + max(M, M / 3 + (2 + 2 / record_size) * input * 3 B / M)
// Which M: random_shuffle makes k = M / 3B buckets whatever the input size,
// so passing the whole budget is slow when the input is small against it
// (1 GiB with M = 12 GiB: 2004 buckets, 110 s, against 20 s with M = 100 MiB,
// on a busy machine). We pass the smallest M (in 4 MiB steps) for which the
// buckets fit in RAM (no recursion) and the predicted peak fits MEMORY; else
// the largest M whose peak fits; else the one with the smallest peak, with a
// warning. STXXL_SHUFFLE_M=BYTES in the environment forces M. The RESULT line
// carries M, k and the prediction; the benchmark measures the real peak RSS.
//
// Prints "RESULT records=.. bytes=.. seconds=.. seconds_copy=.. seconds_shuffle=..
// memory_param_bytes=.. buckets=.. predicted_peak_bytes=.." on stderr.
#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include <stxxl/io>
#include <stxxl/random_shuffle>
#include <stxxl/vector>

#include "size_text.hpp"

namespace {

constexpr std::uint64_t kBlockBytes = std::uint64_t{2} << 20;  // STXXL_DEFAULT_BLOCK_SIZE
// Outside M: the input and output block streams (2 + 2 blocks), the prefetch
// page of the bucket phase, a one-page vector cache (left untouched), thread
// stacks and the program itself. Measured: peak RSS = M + 6 MiB in the
// distribution phase (512 MiB of 8-byte records, M = 88 MiB).
constexpr std::uint64_t kReserveBytes = std::uint64_t{24} << 20;

// The predicted peak RSS (see the header) for parameter memory_param.
std::uint64_t predicted_peak_bytes(std::uint64_t memory_param, std::uint64_t input_bytes,
                                   std::uint64_t record_size) {
  const std::uint64_t buckets = std::max<std::uint64_t>(1, memory_param / (3 * kBlockBytes));
  const double bucket_bytes = static_cast<double>(input_bytes) / static_cast<double>(buckets) + kBlockBytes;
  const double shuffle_bytes = memory_param / 3.0 + (2.0 + 2.0 / static_cast<double>(record_size)) * bucket_bytes;
  return kReserveBytes + static_cast<std::uint64_t>(std::max(static_cast<double>(memory_param), shuffle_bytes));
}

// True when every bucket (the expected size plus 25% for the multinomial
// spread) fits random_shuffle's in-RAM space, M - (k + 4) B: no recursion.
bool buckets_fit(std::uint64_t memory_param, std::uint64_t input_bytes) {
  const std::uint64_t buckets = memory_param / (3 * kBlockBytes);
  if (buckets == 0 || memory_param < (buckets + 4) * kBlockBytes) return false;
  const double space_left = static_cast<double>(memory_param - (buckets + 4) * kBlockBytes);
  return 1.25 * static_cast<double>(input_bytes) / static_cast<double>(buckets) + kBlockBytes < space_left;
}

// The smallest M (in 4 MiB steps) whose buckets fit in RAM and whose
// predicted peak fits memory_bytes; else the largest M whose peak fits;
// else the M with the smallest predicted peak.
std::uint64_t choose_memory_param(std::uint64_t memory_bytes, std::uint64_t input_bytes,
                                  std::uint64_t record_size) {
  constexpr std::uint64_t kStep = std::uint64_t{4} << 20;
  constexpr std::uint64_t kMinimum = 12 * kBlockBytes;  // STXXL wants 6 blocks + 1 page
  const std::uint64_t top = (memory_bytes - kReserveBytes) / kStep * kStep;
  for (std::uint64_t m = kMinimum; m <= top; m += kStep) {
    if (buckets_fit(m, input_bytes) && predicted_peak_bytes(m, input_bytes, record_size) <= memory_bytes) {
      return m;
    }
  }
  std::uint64_t best = kMinimum, best_peak = ~std::uint64_t{0};
  for (std::uint64_t m = top; m >= kMinimum; m -= kStep) {
    const std::uint64_t peak = predicted_peak_bytes(m, input_bytes, record_size);
    if (peak <= memory_bytes) return m;
    if (peak < best_peak) best = m, best_peak = peak;
  }
  return best;
}

template <std::size_t Size>
struct Record {
  unsigned char bytes[Size];
};

// STXXL's verbose-logging macros stream every value they trace, compiled in
// even when the level is off.
template <std::size_t Size>
std::ostream& operator<<(std::ostream& out, const Record<Size>&) {
  return out << "record";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}


[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "stxxl_random_shuffle: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

// Step 2: IN -> OUT with 8 MiB reads and writes; returns the byte count.
std::uint64_t copy_file(const char* in_path, const char* out_path) {
  const int in = ::open(in_path, O_RDONLY | O_CLOEXEC);
  if (in < 0) fail(std::string("cannot open ") + in_path);
  const int out = ::open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) fail(std::string("cannot create ") + out_path);
  std::vector<char> buffer(std::size_t{8} << 20);
  std::uint64_t total = 0;
  for (;;) {
    const ssize_t got = ::read(in, buffer.data(), buffer.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(std::string("cannot read ") + in_path);
    }
    if (got == 0) break;
    for (ssize_t done = 0; done < got;) {
      const ssize_t put = ::write(out, buffer.data() + done, static_cast<std::size_t>(got - done));
      if (put < 0) {
        if (errno == EINTR) continue;
        fail(std::string("cannot write ") + out_path);
      }
      done += put;
    }
    total += static_cast<std::uint64_t>(got);
  }
  ::close(in);
  if (::close(out) != 0) fail(std::string("cannot write ") + out_path);
  return total;
}

template <std::size_t Size>
int run(const char* in_path, const char* out_path, std::uint64_t memory_bytes) {
  using RecordType = Record<Size>;
  // PageSize 4 blocks, one cached page: the vector's own cache is bypassed by
  // random_shuffle's vector specialisation (it streams the blocks itself).
  using Vector = typename stxxl::VECTOR_GENERATOR<RecordType, 4, 1, kBlockBytes>::result;
  const auto start = std::chrono::steady_clock::now();

  // 2. Copy.
  const std::uint64_t bytes = copy_file(in_path, out_path);
  if (bytes % Size != 0) {
    std::fprintf(stderr, "stxxl_random_shuffle: %s: %llu bytes is not a multiple of %zu\n", in_path,
                 static_cast<unsigned long long>(bytes), Size);
    return 1;
  }
  const double seconds_copy = seconds_since(start);
  const std::uint64_t records = bytes / Size;

  // 3. Shuffle OUT in place.
  const char* forced = std::getenv("STXXL_SHUFFLE_M");  // bytes: overrides the choice
  const std::uint64_t memory_param =
      forced ? std::strtoull(forced, nullptr, 10) : choose_memory_param(memory_bytes, bytes, Size);
  const std::uint64_t buckets = memory_param / (3 * kBlockBytes);
  const std::uint64_t predicted_peak = predicted_peak_bytes(memory_param, bytes, Size);
  if (predicted_peak > memory_bytes) {
    std::fprintf(stderr,
                 "stxxl_random_shuffle: warning: predicted peak RSS %llu bytes exceeds the budget\n",
                 static_cast<unsigned long long>(predicted_peak));
  }
  const auto shuffle_start = std::chrono::steady_clock::now();
  if (records > 0) {
    stxxl::syscall_file file(out_path, stxxl::file::RDWR | stxxl::file::NO_LOCK);
    {
      Vector v(&file, records, 1);
      stxxl::random_shuffle(v.begin(), v.end(), static_cast<stxxl::unsigned_type>(memory_param));
    }  // 4. flush and truncate to records * Size
  }
  const double seconds_shuffle = seconds_since(shuffle_start);
  std::fprintf(stderr,
               "RESULT records=%llu bytes=%llu seconds=%.3f seconds_copy=%.3f seconds_shuffle=%.3f "
               "memory_param_bytes=%llu buckets=%llu predicted_peak_bytes=%llu\n",
               static_cast<unsigned long long>(records), static_cast<unsigned long long>(bytes),
               seconds_since(start), seconds_copy, seconds_shuffle,
               static_cast<unsigned long long>(memory_param), static_cast<unsigned long long>(buckets),
               static_cast<unsigned long long>(predicted_peak));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr, "usage: stxxl_random_shuffle IN OUT RECORD_SIZE MEMORY TMPDIR [SEED]\n");
    return 2;
  }
  const std::uint64_t record_size = std::strtoull(argv[3], nullptr, 10);
  const std::uint64_t memory_bytes = parse_size("stxxl_random_shuffle", argv[4]);
  const std::string tmpdir = argv[5];
  const unsigned seed = argc == 7 ? static_cast<unsigned>(std::strtoul(argv[6], nullptr, 0)) : 1;
  if (memory_bytes < kReserveBytes + 8 * kBlockBytes) {
    std::fprintf(stderr, "stxxl_random_shuffle: MEMORY must be at least %llu bytes\n",
                 static_cast<unsigned long long>(kReserveBytes + 8 * kBlockBytes));
    return 2;
  }
  // Freed blocks must leave the RSS (see the header).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  struct stat st {};
  if (::stat(tmpdir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) fail("cannot use " + tmpdir);

  // 1. No log files (else stxxl.log in the cwd; an empty name cannot be
  //    opened, where /dev/null is created when missing), one private scratch disk.
  setenv("STXXLLOGFILE", "", 1);
  setenv("STXXLERRLOGFILE", "", 1);
  stxxl::disk_config disk;
  disk.path = tmpdir + "/stxxl-random-shuffle-" + std::to_string(::getpid()) + ".scratch";
  disk.size = 0;
  disk.io_impl = "syscall";
  disk.autogrow = true;
  disk.delete_on_exit = true;
  disk.unlink_on_open = true;
  disk.direct = stxxl::disk_config::DIRECT_OFF;
  stxxl::config::get_instance()->add_disk(disk);
  stxxl::set_seed(seed);

  try {
    switch (record_size) {
      case 8: return run<8>(argv[1], argv[2], memory_bytes);
      case 4096: return run<4096>(argv[1], argv[2], memory_bytes);
      default:
        std::fprintf(stderr, "stxxl_random_shuffle: RECORD_SIZE must be 8 or 4096\n");
        return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stxxl_random_shuffle: %s\n", e.what());
    return 1;
  }
}

// The random gather of the CPU shuffle, its alternatives side by side
// (docs/benchmarks.md, "Prefetched gathers"): CPU nanoseconds per record of
//   shuffle   device::cpu::shuffle_records_cpu (Philox, compaction, gather),
//             without prefetch (prefetch=0) and prefetching D records ahead;
//   indexed   the gather through a 32-bit permutation (index mode), plain,
//             prefetched, and routed: sources bucketed by block of the input
//             (a pass over the permutation), each block's records gathered
//             into staging while the block is in cache, then the staging read
//             back in output order (three passes; staging as large as a chunk).
// Jobs of 2^20 records (L) cycle through ARENA_MIB of input and of output so
// that every source is cold, as a leaf's is in a node of 1 GiB; 4 KiB pages
// (MADV_NOHUGEPAGE) and transparent huge pages (MADV_HUGEPAGE) in turn. The
// methods of a case alternate round by round (A B C A B C ...), and the
// median of the rounds is printed with the range.
// The first job of every method is checked against the plain loop first.
//   usage: gather_bench [--quick] [--sizes 8,32] [--threads 1,2] [--pages 4k,huge]
//                       [--distances 0,16,32,64] [--batches 256]
//   (--batches: values of f evaluated at a time by the shuffle path)
// Prints: BENCH gather path=P method=M prefetch=D record_bytes=R records=N threads=T
//         pages=4k|huge cpu_ns_per_record=X cpu_min= cpu_max= wall_ns_per_record=W rounds=K
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_random.hpp"
#include "device/cpu/record_gather.hpp"
#include "device/cpu/shuffle_records_cpu.hpp"
#include "extshuffle/core/variable_philox.hpp"
#include "extshuffle/device/permutation_indices.hpp"

using namespace extshuffle;

namespace {

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct Buffer {
  std::byte* data = nullptr;
  std::size_t bytes = 0;
  Buffer(std::size_t n, bool huge) : bytes((n + (2u << 20) - 1) / (2u << 20) * (2u << 20)) {
    data = static_cast<std::byte*>(std::aligned_alloc(2u << 20, bytes));
    (void)madvise(data, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    std::memset(data, 0x5a, bytes);  // faulted in before any timing
  }
  ~Buffer() { std::free(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// The routed alternative (not kept): 1. bucket the sources by input block of
// 2^block_bits records (counting, then appending), 2. per block, gather its
// records into staging in output order while the block is in cache, 3. walk
// the output in order, taking each record from its block's next staged one.
template <std::size_t kSize>
void routed_gather(const std::byte* from, const std::uint32_t* permutation, std::uint64_t n, int block_bits,
                   std::uint32_t* lists, std::byte* staging, std::byte* to) {
  const std::uint64_t blocks = ((n - 1) >> block_bits) + 1;
  std::vector<std::uint64_t> start(blocks + 1, 0), cursor(blocks);
  for (std::uint64_t k = 0; k < n; ++k) ++start[(permutation[k] >> block_bits) + 1];
  for (std::uint64_t b = 0; b < blocks; ++b) start[b + 1] += start[b];
  std::copy(start.begin(), start.end() - 1, cursor.begin());
  for (std::uint64_t k = 0; k < n; ++k) lists[cursor[permutation[k] >> block_bits]++] = permutation[k];
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const device::cpu::GatherIndices<std::uint32_t> g{lists + start[b], start[b + 1] - start[b]};
    device::cpu::gather_records<device::cpu::FixedCopy<kSize>>(from, g, kSize, staging + start[b] * kSize);
  }
  std::copy(start.begin(), start.end() - 1, cursor.begin());
  for (std::uint64_t k = 0; k < n; ++k) {
    std::memcpy(to + k * kSize, staging + cursor[permutation[k] >> block_bits]++ * kSize, kSize);
  }
}

struct Case {
  std::size_t record_bytes;
  int threads;
  bool huge;
  std::uint64_t arena_bytes;
  int rounds;
  std::vector<std::uint32_t> distances, batches;  // prefetch distances (0: none); Philox batch sizes
};

struct Method {
  std::string path, name;
  std::uint32_t prefetch;
  std::function<void(const std::byte*, std::byte*)> run_job;  // one job: 2^20 records
  std::vector<double> cpu, wall;
};

void report(const Case& c, const Method& m, std::uint64_t records) {
  std::vector<double> cpu = m.cpu, wall = m.wall;
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  const double scale = 1e9 / static_cast<double>(records);
  std::printf(
      "BENCH gather path=%s method=%s prefetch=%u record_bytes=%zu records=%llu threads=%d pages=%s "
      "cpu_ns_per_record=%.2f cpu_min=%.2f cpu_max=%.2f wall_ns_per_record=%.2f rounds=%zu\n",
      m.path.c_str(), m.name.c_str(), m.prefetch, c.record_bytes, static_cast<unsigned long long>(records), c.threads,
      c.huge ? "huge" : "4k", cpu[cpu.size() / 2] * scale, cpu.front() * scale, cpu.back() * scale,
      wall[wall.size() / 2] * scale, cpu.size());
  std::fflush(stdout);
}

template <std::size_t kSize>
void run_case(const Case& c) {
  constexpr std::uint64_t kJob = std::uint64_t{1} << 20;
  const std::uint64_t jobs = std::max<std::uint64_t>(c.arena_bytes / (kJob * kSize), 2);
  Buffer in(jobs * kJob * kSize, c.huge), out(jobs * kJob * kSize, c.huge);
  Buffer lists(4 * kJob, c.huge), staging(kJob * kSize, c.huge), reference(kJob * kSize, c.huge);
  bench::Xoshiro256 rng(1);
  for (std::size_t k = 0; k < in.bytes / 8; ++k) reinterpret_cast<std::uint64_t*>(in.data)[k] = rng.next();
  const core::VariablePhilox f = core::shuffle_bijection(1, core::StreamAddress{}, kJob);
  std::vector<std::uint32_t> permutation(kJob);
  device::shuffle_permutation(f, kJob, permutation.data(), 1);
  std::vector<Method> methods;
  auto shuffle = [&](std::uint32_t prefetch, std::uint32_t batch) {
    return [&f, prefetch, batch](const std::byte* from, std::byte* to) {
      const device::ShuffleJob job{from, to, kJob, f};
      device::cpu::shuffle_records_cpu({&job, 1}, kSize, 1, {prefetch, batch});
    };
  };
  auto indexed = [&](std::uint32_t prefetch) {
    return [&permutation, prefetch](const std::byte* from, std::byte* to) {
      device::cpu::gather_indexed(from, permutation.data(), kJob, kSize, to, prefetch);
    };
  };
  for (std::uint32_t batch : c.batches) {
    for (std::uint32_t d : c.distances) {
      methods.push_back(
          {"shuffle", (d ? "prefetch" : "plain") + std::string("_b") + std::to_string(batch), d, shuffle(d, batch)});
    }
  }
  for (std::uint32_t d : c.distances) methods.push_back({"indexed", d ? "prefetch" : "plain", d, indexed(d)});
  for (int block_kib : {256, 1024}) {
    const int bits = std::countr_zero(static_cast<std::uint64_t>(block_kib) * 1024 / kSize);
    methods.push_back({"indexed", "routed" + std::to_string(block_kib) + "k", device::cpu::kGatherPrefetchRecords,
                       [&, bits](const std::byte* from, std::byte* to) {
                         routed_gather<kSize>(from, permutation.data(), kJob, bits,
                                              reinterpret_cast<std::uint32_t*>(lists.data), staging.data, to);
                       }});
  }
  // Every method's output of the first job must equal the plain gather's.
  for (std::uint64_t k = 0; k < kJob; ++k) {
    std::memcpy(reference.data + k * kSize, in.data + std::uint64_t{permutation[k]} * kSize, kSize);
  }
  for (Method& m : methods) {
    m.run_job(in.data, out.data);
    if (std::memcmp(out.data, reference.data, kJob * kSize) != 0) {
      std::fprintf(stderr, "gather_bench: %s %s: output differs from the plain gather\n", m.path.c_str(),
                   m.name.c_str());
      std::exit(1);
    }
  }
  for (int round = -1; round < c.rounds; ++round) {  // round -1 warms up, unrecorded
    for (Method& m : methods) {
      const double cpu0 = process_cpu_seconds();
      const auto wall0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(dynamic, 1) num_threads(c.threads)
      for (std::int64_t j = 0; j < static_cast<std::int64_t>(jobs); ++j) {
        m.run_job(in.data + j * kJob * kSize, out.data + j * kJob * kSize);
      }
      if (round < 0) continue;
      m.wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count());
      m.cpu.push_back(process_cpu_seconds() - cpu0);
    }
  }
  for (const Method& m : methods) report(c, m, jobs * kJob);
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    items.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return items;
}

std::vector<std::uint32_t> numbers(const std::string& list) {
  std::vector<std::uint32_t> out;
  for (const std::string& item : split(list)) out.push_back(static_cast<std::uint32_t>(std::stoul(item)));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string sizes = "8,16,32,64", threads = "1,2", pages = "4k,huge", distances = "0,16,32,64", batches = "256";
  bool quick = false;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    const bool has_value = a + 1 < argc;
    if (arg == "--quick")
      quick = true;
    else if (arg == "--sizes" && has_value)
      sizes = argv[++a];
    else if (arg == "--threads" && has_value)
      threads = argv[++a];
    else if (arg == "--pages" && has_value)
      pages = argv[++a];
    else if (arg == "--distances" && has_value)
      distances = argv[++a];
    else if (arg == "--batches" && has_value)
      batches = argv[++a];
    else {
      std::fprintf(stderr,
                   "usage: gather_bench [--quick] [--sizes 8,32] [--threads 1,2] [--pages 4k,huge] "
                   "[--distances 0,16,32,64] [--batches 256]\n");
      return 2;
    }
  }
  const char* arena = std::getenv("ARENA_MIB");
  const std::uint64_t arena_bytes = (arena != nullptr ? std::strtoull(arena, nullptr, 10) : (quick ? 32 : 256)) << 20;
  for (const std::string& p : split(pages)) {
    for (const std::string& t : split(threads)) {
      for (const std::string& s : split(sizes)) {
        const Case c{std::stoul(s), std::stoi(t),       p == "huge",     arena_bytes,
                     quick ? 1 : 5, numbers(distances), numbers(batches)};
        switch (c.record_bytes) {
          case 8: run_case<8>(c); break;
          case 16: run_case<16>(c); break;
          case 32: run_case<32>(c); break;
          case 64: run_case<64>(c); break;
          case 128: run_case<128>(c); break;
          default: std::fprintf(stderr, "gather_bench: record size %zu not compiled in\n", c.record_bytes); return 2;
        }
      }
    }
  }
  return 0;
}

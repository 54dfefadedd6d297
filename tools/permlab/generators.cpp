#include "generators.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "butterfly.hpp"
#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/variable_philox.hpp"
#include "extshuffle/device/shuffle_records.hpp"
#include "extshuffle/ioperm/reference_shuffle.hpp"
#include "labstats/permutations.hpp"
#include "variable_philox_inverse.hpp"

namespace permlab {

namespace core = extshuffle::core;

namespace {

core::PlanConstants plan_constants(const GeneratorOptions& o) {
  core::PlanConstants c = core::kPlanV2;
  if (o.leaf_records != 0) c.leaf_records = o.leaf_records;
  if (o.fanout != 0) c.max_fanout = o.fanout;
  return c;
}

// Numbered records as the real shuffle sees them: record i holds i.
std::vector<std::byte> numbered_u64(std::uint64_t n) { return extshuffle::labstats::numbered_records(n, 8); }

void indices_to_order(std::span<const std::byte> records, std::size_t record_size, std::span<std::uint32_t> order) {
  const auto indices = extshuffle::labstats::record_indices(records, record_size);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(indices[i]);
}

// The project's bijective shuffle exactly as the permutation uses it
// (device::shuffle_records on the CPU, vectorised VariablePhilox), with the
// keys of sample s drawn from the lab stream s and a chosen number of rounds.
class BijectiveGenerator final : public Generator {
 public:
  BijectiveGenerator(const GeneratorOptions& o, std::uint64_t n)
      : o_(o), n_(n), input_(numbered_u64(n)), output_(input_.size()) {}
  void generate(std::uint64_t sample, std::span<std::uint32_t> order) override {
    if (o_.domain_bits != 0) {
      order_by_inverse(core::VariablePhilox(o_.domain_bits, sample_stream(o_.seed, sample), o_.rounds), order);
      return;
    }
    const core::VariablePhilox f(core::domain_bits_for(n_), sample_stream(o_.seed, sample), o_.rounds);
    extshuffle::device::shuffle_records(extshuffle::device::Device::kCpu,
                                        extshuffle::device::ShuffleJob{input_.data(), output_.data(), n_, f}, 8, 1);
    indices_to_order(output_, 8, order);
  }

 private:
  GeneratorOptions o_;
  std::uint64_t n_;
  std::vector<std::byte> input_, output_;
};

// The whole canonical plan in RAM (ioperm::shuffle_in_memory), one seed per sample.
class PlanGenerator final : public Generator {
 public:
  PlanGenerator(const GeneratorOptions& o, std::uint64_t n)
      : o_(o), constants_(plan_constants(o)), input_(numbered_u64(n)), output_(input_.size()) {}
  void generate(std::uint64_t sample, std::span<std::uint32_t> order) override {
    extshuffle::ioperm::shuffle_in_memory(input_, output_, 8, sample_seed(o_.seed, sample),
                                          extshuffle::ioperm::ReferenceOptions{constants_, extshuffle::device::Device::kCpu, 1});
    indices_to_order(output_, 8, order);
  }

 private:
  GeneratorOptions o_;
  core::PlanConstants constants_;
  std::vector<std::byte> input_, output_;
};

// Mitchell et al. 3.1: the LCG bijection x -> (a x + c) mod 2^k with a odd
// (so it is invertible mod 2^k) and c drawn per sample, on the same domain
// 2^k as the bijective shuffle, compacted the same way (Algorithm 1). At most
// 2^(2k-1) distinct bijections: the failing baseline of the statistical tests.
class LcgGenerator final : public Generator {
 public:
  LcgGenerator(const GeneratorOptions& o, std::uint64_t n) : o_(o), n_(n), bits_(core::domain_bits_for(n)) {}
  void generate(std::uint64_t sample, std::span<std::uint32_t> order) override {
    core::Stream stream = sample_stream(o_.seed, sample);
    const std::uint64_t mask = (std::uint64_t{1} << bits_) - 1;
    const std::uint64_t a = (stream.next_u64() | 1) & mask;
    const std::uint64_t c = stream.next_u64() & mask;
    std::uint64_t out = 0;
    for (std::uint64_t i = 0; i <= mask; ++i) {
      const std::uint64_t v = (a * i + c) & mask;
      if (v < n_) order[out++] = static_cast<std::uint32_t>(v);
    }
  }

 private:
  GeneratorOptions o_;
  std::uint64_t n_;
  std::uint32_t bits_;
};

class ButterflyGenerator final : public Generator {
 public:
  ButterflyGenerator(const GeneratorOptions& o, std::uint64_t n)
      : o_(o), shuffler_(n, parse_butterfly_variant(o.variant), o.iterations, o.shift_offset) {}
  void generate(std::uint64_t sample, std::span<std::uint32_t> order) override {
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    core::Stream bits = sample_stream(o_.seed, sample);
    shuffler_.shuffle(bits, order);
  }

 private:
  GeneratorOptions o_;
  ButterflyShuffler shuffler_;
};

// The real extshuffle binary, black box: one process per sample on a file of
// numbered records (index in the first 8 bytes) in a private scratch directory.
class CliGenerator final : public Generator {
 public:
  CliGenerator(const GeneratorOptions& o, std::uint64_t n) : o_(o), n_(n) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/permlab-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a scratch directory " + pattern + ": " + std::strerror(errno));
    }
    dir_ = pattern;
    // Snapshot the binary: every sample of the experiment then runs the same
    // build, even if build/extshuffle is relinked meanwhile (seen: exec
    // failing with 127 while the linker rewrote it).
    // The copy lies in bin/ beside a lib/ that links to the original's
    // ../lib: a bundle's binary finds its libraries at $ORIGIN/../lib
    // (scripts/bundle.sh), and a copy elsewhere would lose them.
    std::error_code error;
    std::filesystem::create_directory(dir_ / "bin", error);
    if (!error) std::filesystem::copy_file(o.binary, dir_ / "bin" / "extshuffle", error);
    if (error) {
      std::filesystem::remove_all(dir_, error);
      throw std::runtime_error("cannot copy " + o.binary + ": " + error.message());
    }
    const std::filesystem::path libraries =
        std::filesystem::absolute(o.binary, error).parent_path().parent_path() / "lib";
    if (!error && std::filesystem::is_directory(libraries, error)) {
      std::filesystem::create_directory_symlink(libraries, dir_ / "lib", error);
    }
    binary_ = (dir_ / "bin" / "extshuffle").string();
    const auto records = extshuffle::labstats::numbered_records(n, o.record_size_bytes);
    std::ofstream(dir_ / "in.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(records.data()), static_cast<std::streamsize>(records.size()));
  }
  ~CliGenerator() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  CliGenerator(const CliGenerator&) = delete;
  CliGenerator& operator=(const CliGenerator&) = delete;

  void generate(std::uint64_t sample, std::span<std::uint32_t> order) override {
    const std::string seed = std::to_string(sample_seed(o_.seed, sample));
    std::vector<std::string> args{binary_,       (dir_ / "in.bin").string(), (dir_ / "out.bin").string(),
                                  "--record-size", std::to_string(o_.record_size_bytes), "--seed", seed, "-q"};
    if (o_.leaf_records != 0) args.insert(args.end(), {"--leaf-records", std::to_string(o_.leaf_records)});
    if (o_.fanout != 0) args.insert(args.end(), {"--fanout", std::to_string(o_.fanout)});
    if (!o_.memory.empty()) args.insert(args.end(), {"-S", o_.memory});
    run(args, seed);
    std::ifstream in(dir_ / "out.bin", std::ios::binary);
    std::vector<std::byte> bytes(n_ * o_.record_size_bytes);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (static_cast<std::uint64_t>(in.gcount()) != bytes.size() || in.peek() != EOF) {
      throw std::runtime_error(o_.binary + " --seed " + seed + ": output is not " + std::to_string(bytes.size()) +
                               " bytes");
    }
    indices_to_order(bytes, o_.record_size_bytes, order);
    for (const std::uint32_t r : order) {
      if (r >= n_) throw std::runtime_error(o_.binary + " --seed " + seed + ": output holds an unknown record");
    }
  }

 private:
  void run(const std::vector<std::string>& args, const std::string& seed) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::string err_path = (dir_ / "stderr.txt").string();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      const int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd >= 0) {
        ::dup2(fd, 2);
        ::dup2(fd, 1);
      }
      ::execv(argv[0], argv.data());
      // Only async-signal-safe calls here: report errno as digits.
      char message[] = "exec failed: errno 000\n";
      const int e = errno;
      message[19] = static_cast<char>('0' + e / 100 % 10);
      message[20] = static_cast<char>('0' + e / 10 % 10);
      message[21] = static_cast<char>('0' + e % 10);
      [[maybe_unused]] const auto written = ::write(2, message, sizeof message - 1);
      ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::ifstream err(err_path);
      std::string first_line;
      std::getline(err, first_line);
      const std::string how = WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                                : "signal " + std::to_string(WTERMSIG(status));
      throw std::runtime_error(o_.binary + " --seed " + seed + " failed (" + how + ")" +
                               (first_line.empty() ? "" : ": " + first_line));
    }
  }

  GeneratorOptions o_;
  std::uint64_t n_;
  std::filesystem::path dir_;
  std::string binary_;  // the snapshot in dir_
};

}  // namespace

void check_options(const GeneratorOptions& o, std::uint64_t n) {
  if (n < 1 || n > (std::uint64_t{1} << 31)) {
    throw std::invalid_argument("--n " + std::to_string(n) + " outside 1..2^31");
  }
  if (o.kind == "bijective") {
    if (o.rounds < 1 || o.rounds > core::kVariablePhiloxMaxRounds) {
      throw std::invalid_argument("--rounds " + std::to_string(o.rounds) + " outside 1..32");
    }
    if (o.domain_bits != 0 && (o.domain_bits < 2 || o.domain_bits > 32 || n > 64 ||
                               (std::uint64_t{1} << o.domain_bits) < n)) {
      throw std::invalid_argument("--domain-bits " + std::to_string(o.domain_bits) +
                                  " needs 2..32 bits, n <= 64 and 2^bits >= n");
    }
  } else if (o.kind == "plan" || o.kind == "cli") {
    if (o.fanout == 1) throw std::invalid_argument("--fanout must be at least 2");
    core::check_plan(n, plan_constants(o));
    if (o.kind == "cli") {
      if (o.binary.empty()) throw std::invalid_argument("--generator cli needs --binary PATH");
      if (::access(o.binary.c_str(), X_OK) != 0) {
        throw std::invalid_argument("--binary " + o.binary + ": " + std::strerror(errno));
      }
      if (o.record_size_bytes < 4) throw std::invalid_argument("--record-size must be at least 4 bytes");
    }
  } else if (o.kind == "lcg") {
    if (core::domain_bits_for(n) > 32) throw std::invalid_argument("--generator lcg needs n <= 2^32");
  } else if (o.kind == "butterfly") {
    parse_butterfly_variant(o.variant);
    if (o.iterations < 1) throw std::invalid_argument("--iterations must be at least 1");
  } else {
    throw std::invalid_argument("unknown generator '" + o.kind + "': expected bijective, plan, lcg, butterfly or cli");
  }
}

GeneratorOptions resolve_options(GeneratorOptions o, std::uint64_t n) {
  check_options(o, n);
  if (o.kind == "butterfly" && o.best_shift) {
    o.shift_offset = best_shift_offset(butterfly_position_matrix(n, parse_butterfly_variant(o.variant)), o.iterations);
    o.best_shift = false;
  }
  return o;
}

std::string describe(const GeneratorOptions& o, std::uint64_t n) {
  std::ostringstream s;
  s << "generator=" << o.kind;
  if (o.kind == "bijective") {
    s << " rounds=" << o.rounds << " domain_bits=" << (o.domain_bits ? o.domain_bits : core::domain_bits_for(n));
  }
  if (o.kind == "plan" || o.kind == "cli") {
    const auto c = plan_constants(o);
    s << " leaf_records=" << c.leaf_records << " fanout=" << c.max_fanout;
  }
  if (o.kind == "cli") s << " record_size=" << o.record_size_bytes << " memory=" << (o.memory.empty() ? "default" : o.memory);
  if (o.kind == "butterfly") {
    s << " variant=" << o.variant << " iterations=" << o.iterations << " shift=" << o.shift_offset;
  }
  s << " seed=" << o.seed;
  return s.str();
}

std::unique_ptr<Generator> make_generator(const GeneratorOptions& o, std::uint64_t n) {
  check_options(o, n);
  if (o.kind == "bijective") return std::make_unique<BijectiveGenerator>(o, n);
  if (o.kind == "plan") return std::make_unique<PlanGenerator>(o, n);
  if (o.kind == "lcg") return std::make_unique<LcgGenerator>(o, n);
  if (o.kind == "butterfly") return std::make_unique<ButterflyGenerator>(o, n);
  return std::make_unique<CliGenerator>(o, n);
}

int worker_count(int threads, std::uint64_t samples) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(threads), std::max<std::uint64_t>(1, block_count(samples))));
}

void for_each_sample(const GeneratorOptions& options, std::uint64_t n, std::uint64_t samples, int threads,
                     const SampleVisitor& visit) {
  const GeneratorOptions o = resolve_options(options, n);
  const int workers = worker_count(threads, samples);
  const std::uint64_t blocks = block_count(samples);
  std::atomic<std::uint64_t> next_block{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  // All generators are made before any worker starts: the CLI generator
  // writes a copy of the binary, and a fork() in another thread while that
  // file is open for writing would leak the descriptor into the child and make
  // exec of the copy fail with ETXTBSY.
  std::vector<std::unique_ptr<Generator>> generators;
  for (int w = 0; w < workers; ++w) generators.push_back(make_generator(o, n));
  auto work = [&](int worker) {
    try {
      Generator* generator = generators[worker].get();
      std::vector<std::uint32_t> order(n);
      for (std::uint64_t block = next_block++; block < blocks && !failed; block = next_block++) {
        const std::uint64_t end = std::min(samples, (block + 1) * kSamplesPerBlock);
        for (std::uint64_t sample = block * kSamplesPerBlock; sample < end; ++sample) {
          generator->generate(sample, order);
          visit(worker, block, sample, order);
        }
      }
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace permlab

// The counting pass split across ranks (src/mpi/inputs/text_split.hpp) finds what
// the single-machine counting pass (dataset/text_input.hpp) finds: the same
// record count, header bytes and missing final terminator, the same error
// for an unterminated quoted field, and each rank's chunks exactly those
// whose first record follows a terminator in its byte range, at the bytes
// where they start, and (a spread root) each rank's held records those
// that follow a terminator in its byte range
// (checked against a plain sequential scan). Random CSV over its own syntax
// characters puts rank boundaries inside quoted fields, between the quotes
// of "" and right after terminators; each file is tried with several header
// counts and chunk sizes, and read in pieces of a few bytes, so the four
// scans of a range resume and merge at every kind of place. Run by ctest under mpirun on 3 and 4 ranks; every
// input is deterministic, so there is no false failure.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "extshuffle/dataset/text_input.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/mpi/communicator.hpp"
#include "mpi/distribution.hpp"
#include "mpi/inputs/text_split.hpp"
#include "support/command.hpp"

namespace extshuffle::mpi::mpi_text_split_test {
namespace {

std::string random_text(std::uint64_t trial) {
  std::uint64_t x = trial * 0x9E3779B97F4A7C15ULL + 1;
  const auto next = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(x >> 33);
  };
  const char alphabet[] = {'a', 'b', ',', '"', '"', '\n', '\n', 'c'};
  std::string text(next() % (trial % 10 == 0 ? 2000 : 120), ' ');
  for (char& c : text) c = alphabet[next() % sizeof alphabet];
  return text;
}

// Where each record starts, by a plain sequential scan from byte 0.
std::vector<std::uint64_t> record_starts(const std::string& text, const formats::RecordSyntax& syntax) {
  std::vector<std::uint64_t> starts;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (p < end) {
    starts.push_back(static_cast<std::uint64_t>(p - text.data()));
    const formats::RecordScan scan = formats::scan_record(p, end, syntax);
    p = scan.end ? scan.end : end;
  }
  return starts;
}

// Trials [FIRST_TRIAL, FIRST_TRIAL + TRIALS): CTest gives the runs on 3 and
// on 4 ranks halves of the first 80 texts, so that together they try every
// one at half the time (tests/mpi/CMakeLists.txt).
std::uint64_t environment_number(const char* name, std::uint64_t otherwise) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::stoull(value) : otherwise;
}
const std::uint64_t kFirstTrial = environment_number("FIRST_TRIAL", 0);
const std::uint64_t kTrials = environment_number("TRIALS", 80);

TEST(TextSplit, FindsWhatTheSingleMachineCountFinds) {
  Communicator comm;
  std::unique_ptr<testing::TempDir> dir;
  if (comm.rank() == 0) dir = std::make_unique<testing::TempDir>();
  const std::string path = comm.broadcast(dir ? (dir->path() / "input.txt").string() : std::string(), 0);
  const formats::RecordSyntax csv{'\n', true, ','}, lines{'\n', false, ','};
  for (std::uint64_t trial = kFirstTrial; trial < kFirstTrial + kTrials; ++trial) {
    const std::string text = random_text(trial);
    comm.barrier();  // every rank is done with the last file
    if (comm.rank() == 0) testing::write_file(path, text);
    comm.barrier();
    const auto file = io::BlockFile::open_input(path);
    for (const formats::RecordSyntax& syntax : {csv, lines}) {
      const std::vector<std::uint64_t> starts = record_starts(text, syntax);
      for (const std::uint64_t header : {0, 1, 3}) {
        for (const std::uint64_t leaf : {1, 3, 8, 1000}) {  // 1000: a leaf root, held by bytes
          std::string expected_error, error;
          dataset::TextCount expected;
          TextSplit split;
          try {
            expected = dataset::count_text_records(*file, 0, text.size(), syntax, header, false, "'x'");
          } catch (const InputError& e) {
            expected_error = e.what();
          }
          try {
            // Pieces of 1 to 13 bytes: the scans resume and merge everywhere.
            const core::PlanConstants constants{leaf, core::kPlanV2.max_fanout};
            split = split_text_input(*file, text.size(), syntax, header, constants, "'x'", comm, 1 + (trial + leaf) % 13);
          } catch (const InputError& e) {
            error = e.what();
          }
          const std::string where = "trial " + std::to_string(trial) + (syntax.quoted ? " csv" : " lines") +
                                    " header " + std::to_string(header) + " leaf " + std::to_string(leaf);
          ASSERT_EQ(error, expected_error) << where;
          if (!error.empty()) continue;
          ASSERT_EQ(split.records, expected.records) << where;
          ASSERT_EQ(split.header_bytes, expected.header_bytes) << where;
          ASSERT_EQ(split.add_terminator, expected.add_terminator) << where;
          ASSERT_EQ(split.longest_record_bytes, expected.longest_record_bytes) << where;
          ASSERT_NEAR(split.record_bytes_squared, expected.record_bytes_squared,
                      1e-9 * expected.record_bytes_squared) << where;
          const std::uint64_t chunks = (split.records + leaf - 1) / leaf;
          ASSERT_EQ(split.chunk_begin.front(), 0u) << where;
          ASSERT_EQ(split.chunk_begin.back(), chunks) << where;
          for (int r = 0; r < comm.size(); ++r) {
            const std::uint64_t begin = range_begin(text.size(), r, comm.size());
            const std::uint64_t end = range_begin(text.size(), r + 1, comm.size());
            for (std::uint64_t c = split.chunk_begin[r]; c < split.chunk_begin[r + 1]; ++c) {
              const std::uint64_t start = starts[header + c * leaf];
              // The terminator before it lies in the rank's range (byte 0: rank 0's).
              ASSERT_TRUE((start > begin && start <= end) || (r == 0 && start == 0)) << where << " chunk " << c;
            }
            if (split.chunk_begin[r] < split.chunk_begin[r + 1]) {
              ASSERT_EQ(split.data_begin[r], starts[header + split.chunk_begin[r] * leaf]) << where << " rank " << r;
            }
            const std::vector<std::uint64_t>& held = split.held_begin;
            const core::PlanConstants constants{leaf, core::kPlanV2.max_fanout};
            if (spread_root(split.records, constants, comm.size())) {
              // Held by bytes: the records whose terminator before lies in the rank's range.
              for (std::uint64_t k = held[r]; k < held[r + 1]; ++k) {
                const std::uint64_t start = starts[header + k];
                ASSERT_TRUE((start > begin && start <= end) || (r == 0 && start == 0)) << where << " record " << k;
              }
            } else {
              // Held as scattered: its chunks, which start in its range.
              ASSERT_EQ(held, chunk_first_records(split.chunk_begin, split.records, constants)) << where;
            }
            ASSERT_EQ(held.front(), 0u) << where;
            ASSERT_EQ(held.back(), split.records) << where;
            const std::uint64_t held_start = held[r] < split.records ? starts[header + held[r]] : text.size();
            ASSERT_EQ(split.held_byte_begin[r], held_start) << where << " held by rank " << r;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace extshuffle::mpi::mpi_text_split_test

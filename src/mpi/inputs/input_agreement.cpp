#include "input_agreement.hpp"

#include <sys/stat.h>

#include <cstdint>
#include <cstring>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/file_fingerprint.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {
namespace {

struct Seen {
  std::string path;
  std::int64_t bytes = -1;  // -1: missing
  std::uint64_t digest_low = 0, digest_high = 0;  // its fingerprint's digest (io/file_fingerprint.hpp)
};

// The listing: for each file, its size (8 bytes), its fingerprint's digest
// (16 bytes), its name's length (8 bytes) and its name.
constexpr std::size_t kFixedBytes = 32;

std::vector<Seen> parse(const std::string& listing) {
  std::vector<Seen> seen;
  for (std::size_t at = 0; at + kFixedBytes <= listing.size();) {
    Seen s;
    std::uint64_t length = 0;
    std::memcpy(&s.bytes, listing.data() + at, 8);
    std::memcpy(&s.digest_low, listing.data() + at + 8, 8);
    std::memcpy(&s.digest_high, listing.data() + at + 16, 8);
    std::memcpy(&length, listing.data() + at + 24, 8);
    s.path = listing.substr(at + kFixedBytes, length);
    at += kFixedBytes + length;
    seen.push_back(std::move(s));
  }
  return seen;
}

std::string size_words(std::int64_t bytes) {
  return bytes < 0 ? "missing" : std::to_string(bytes) + " bytes";
}

void append_u64(std::string& listing, std::uint64_t value) { listing.append(reinterpret_cast<const char*>(&value), 8); }

}  // namespace

std::string list_inputs(const std::vector<std::string>& paths, std::uint64_t seed) {
  std::string listing;
  for (const std::string& path : paths) {
    struct stat st {};
    const bool found = ::stat(path.c_str(), &st) == 0;
    // A missing file has no fingerprint: its absence is the difference.
    const io::FileFingerprint fingerprint = found ? io::fingerprint_path(path, seed) : io::FileFingerprint{};
    append_u64(listing, found ? static_cast<std::uint64_t>(st.st_size) : UINT64_MAX);
    append_u64(listing, fingerprint.digest_low);
    append_u64(listing, fingerprint.digest_high);
    append_u64(listing, path.size());
    listing += path;
  }
  return listing;
}

std::string input_difference(const std::string& rank0, const std::string& mine) {
  const std::vector<Seen> theirs = parse(rank0), ours = parse(mine);
  for (std::size_t k = 0; k < std::min(theirs.size(), ours.size()); ++k) {
    if (theirs[k].path != ours[k].path) {
      return "input file " + std::to_string(k + 1) + ": '" + ours[k].path + "' here, '" + theirs[k].path +
             "' on rank 0 (the ranks see different files)";
    }
    if (theirs[k].bytes != ours[k].bytes) {
      return "input '" + ours[k].path + "': " + size_words(ours[k].bytes) + " here, " + size_words(theirs[k].bytes) +
             " on rank 0 (the ranks see different files)";
    }
    if (theirs[k].digest_low != ours[k].digest_low || theirs[k].digest_high != ours[k].digest_high) {
      return "input '" + ours[k].path + "': " + size_words(ours[k].bytes) +
             " here and on rank 0, but other bytes in the blocks sampled (the ranks see different files)";
    }
  }
  if (theirs.size() != ours.size()) {
    const bool more = ours.size() > theirs.size();
    const Seen& extra = more ? ours[theirs.size()] : theirs[ours.size()];
    return "inputs: " + std::to_string(ours.size()) + " files here, " + std::to_string(theirs.size()) +
           " on rank 0 ('" + extra.path + "' is " + (more ? "not on rank 0" : "missing here") + ")";
  }
  return {};
}

void check_ranks_see_the_same_inputs(const std::vector<std::string>& paths, std::uint64_t seed, Communicator& comm) {
  std::string mine;
  checkpoint(comm, [&] { mine = list_inputs(paths, seed); });
  const std::string rank0 = comm.broadcast(mine, 0);
  checkpoint(comm, [&] {
    const std::string difference = input_difference(rank0, mine);
    if (!difference.empty()) throw InputError(difference);
  });
}

void check_ranks_see_the_same_format(const std::string& path, const std::string& format_name, Communicator& comm) {
  const std::string rank0 = comm.broadcast(format_name, 0);
  checkpoint(comm, [&] {
    if (rank0 != format_name) {
      throw InputError("input '" + path + "': " + format_name + " here, " + rank0 +
                       " on rank 0 (the ranks see different files)");
    }
  });
}

}  // namespace extshuffle::mpi

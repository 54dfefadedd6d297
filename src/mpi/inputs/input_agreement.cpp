#include "input_agreement.hpp"

#include <sys/stat.h>

#include <cstdint>
#include <cstring>

#include "extshuffle/errors.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {
namespace {

struct Seen {
  std::string path;
  std::int64_t bytes = -1;  // -1: missing
};

// The listing: for each file, its size (8 bytes), its name's length (8 bytes) and its name.
std::vector<Seen> parse(const std::string& listing) {
  std::vector<Seen> seen;
  for (std::size_t at = 0; at + 16 <= listing.size();) {
    Seen s;
    std::uint64_t length = 0;
    std::memcpy(&s.bytes, listing.data() + at, 8);
    std::memcpy(&length, listing.data() + at + 8, 8);
    s.path = listing.substr(at + 16, length);
    at += 16 + length;
    seen.push_back(std::move(s));
  }
  return seen;
}

std::string size_words(std::int64_t bytes) {
  return bytes < 0 ? "missing" : std::to_string(bytes) + " bytes";
}

}  // namespace

std::string list_inputs(const std::vector<std::string>& paths) {
  std::string listing;
  for (const std::string& path : paths) {
    struct stat st {};
    const std::int64_t bytes = ::stat(path.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_size) : -1;
    const std::uint64_t length = path.size();
    listing.append(reinterpret_cast<const char*>(&bytes), 8);
    listing.append(reinterpret_cast<const char*>(&length), 8);
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
  }
  if (theirs.size() != ours.size()) {
    const bool more = ours.size() > theirs.size();
    const Seen& extra = more ? ours[theirs.size()] : theirs[ours.size()];
    return "inputs: " + std::to_string(ours.size()) + " files here, " + std::to_string(theirs.size()) +
           " on rank 0 ('" + extra.path + "' is " + (more ? "not on rank 0" : "missing here") + ")";
  }
  return {};
}

void check_ranks_see_the_same_inputs(const std::vector<std::string>& paths, Communicator& comm) {
  const std::string mine = list_inputs(paths);
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

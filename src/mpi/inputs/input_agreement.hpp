// The ranks must see one input (docs/mpi.md, "What the cluster must
// provide": the same paths on a shared file system). Each rank lists what
// it sees (the expanded file names, their sizes on disk and their
// fingerprints: a digest of sampled blocks, io/file_fingerprint.hpp) and
// checks it against rank 0's, so that a rank with another mount, a stale
// cache, a directory being written or a file rewritten in place fails the
// job with one line naming the file and what differs, before any count
// built on it goes wrong. A difference outside every sampled block is
// --verify's to find (input_reads.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extshuffle/mpi/communicator.hpp"

namespace extshuffle::mpi {

// What this rank sees of `paths` against rank 0's, the fingerprints sampled
// with `seed` (the run's, the same on every rank): throws InputError on the
// rank that differs (its checkpoint names it), on every rank RankFailure;
// a file this rank cannot read fails it with IoError. Collective. Cost per
// rank: a stat and up to 10 reads of 64 KiB per file.
void check_ranks_see_the_same_inputs(const std::vector<std::string>& paths, std::uint64_t seed, Communicator& comm);

// The same for the format each rank detected in one input file.
void check_ranks_see_the_same_format(const std::string& path, const std::string& format_name, Communicator& comm);

// The first difference between rank 0's listing and this rank's (both from
// list_inputs), as words; empty when they agree.
std::string input_difference(const std::string& rank0, const std::string& mine);
std::string list_inputs(const std::vector<std::string>& paths, std::uint64_t seed);

}  // namespace extshuffle::mpi

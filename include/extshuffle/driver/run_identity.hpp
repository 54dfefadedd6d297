// What makes a run the one a checkpoint was taken of (docs/cli.md "Resuming
// a run"): the program and the permutation's version, every option that
// changes the output (the seed, the format options, -n, shards, splits,
// the manifest, --verify, --clean) and -S, and each input file as it is on
// disk: its path, size, modification time, device and inode and a
// fingerprint of sampled blocks (io/file_fingerprint.hpp). Threads, the
// device and -T change nothing and are not part of it. Then, once the
// records are counted, each dataset's plan: the records, their bytes, the
// longest, and the schedule -S gives them. Kept as "key<tab>value" lines, so
// that a difference is named by its key.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "extshuffle/ioperm/fixed_size_shuffle.hpp"
#include "extshuffle/job.hpp"

namespace extshuffle::driver {

// The Job's identity (reads each input's metadata and sampled blocks).
// Throws IoError for an input that cannot be opened.
std::string job_identity(const Job& job);

// A dataset's plan: its records and the schedule the walk follows.
std::string plan_identity(std::uint64_t records, std::uint64_t bytes, std::uint64_t longest_record_bytes,
                          const ioperm::Schedule& schedule);

// The value of `key` in an identity; nothing when it has none.
std::optional<std::string> identity_value(const std::string& identity, const std::string& key);

// The first line in which `now` differs from `then`, as "KEY is NOW, was
// THEN"; nothing when they are alike.
std::optional<std::string> first_difference(const std::string& now, const std::string& then);

}  // namespace extshuffle::driver

// The room left in the scratch directory's file system (docs/cli.md
// "Scratch space"): a run never fills it. Spooling stops before the free
// space falls below a reserve (1% of the file system, at most 1 GiB), and a
// run whose scratch need is known up front is refused when it does not fit.
#pragma once

#include <cstdint>
#include <string>

namespace extshuffle::io {

// The reserve kept free in a file system of `total_bytes`: 1% of it, at
// most 1 GiB.
std::uint64_t scratch_reserve_bytes(std::uint64_t total_bytes);

// Bytes that may still be written to the file system of `fd` (a scratch
// file) before its reserve: free space less the reserve, 0 if below it.
// UINT64_MAX when the file system cannot say.
std::uint64_t scratch_room_bytes(int fd);

// Refuses (Error, exit 1) a run that needs `needed_bytes` of scratch space
// in `directory` when its file system has less room than that, naming both
// figures. `what` names the run's part ("-i 1-N", "the shuffle").
void check_scratch_room(const std::string& directory, std::uint64_t needed_bytes, const std::string& what);

}  // namespace extshuffle::io

// The one error for bytes read back from scratch space that cannot be what
// was written there: a position tag, length or destination out of range, two
// records at one place, a bucket holding more or fewer records than were
// sent to it. Scratch space is checked, never trusted (docs/design.md, "IO
// and safety"): damage there (the disk, the page cache,
// memory) ends the run with this line and exit 1, never with a crash or a
// write outside the run's buffers. Record bytes themselves carry no check;
// --verify catches their damage (docs/reliability.md).
#pragma once

#include "extshuffle/errors.hpp"

namespace extshuffle::io {

// A runtime error (exit 1), not the input's: the input was read correctly.
inline constexpr const char* kScratchDamaged =
    "scratch space holds records that are not what was written: damaged on its disk or in memory";

// A checkpointed bucket read back with other bytes than its CRC-32C says
// (docs/cli.md "Resuming a run"): scratch kept in --checkpoint DIR damaged
// on its disk, in memory, or changed since the run that wrote it.
inline constexpr const char* kCheckpointRegionDamaged =
    "checkpoint: a bucket read back from scratch space fails its checksum (damaged on its disk or in memory, or "
    "changed since it was written): not trusted; remove the checkpoint directory's files to start over";

[[noreturn]] inline void throw_scratch_damaged() { throw Error(kScratchDamaged); }

}  // namespace extshuffle::io

// The standard streams of the command-line tools: descriptors 0-2 closed at
// start, and STXXL's messages on std::cerr.
#pragma once

namespace extshuffle::cli {

// A standard descriptor (0, 1 or 2) closed when the program starts is held
// by /dev/null opened the wrong way round (read-only for 1 and 2,
// write-only for 0), as coreutils do: no file the run opens can become
// standard output, and a write to a closed standard output fails with EBADF
// (exit 1) instead of going nowhere.
void hold_standard_descriptors();

// Memory exhausted anywhere, STXXL's queues included (whose requests abort
// on an assertion when an allocation fails between their creation and
// their submission): the documented line, the temporaries removed, exit 1.
void end_on_memory_exhaustion();

// STXXL writes its messages on std::cerr, which carries nothing of ours:
// muted unless `verbose`; with it, every line but STXXL's chatter about
// unaligned buffers, offsets and sizes (one per block of some IO paths) passes.
void filter_library_chatter(bool verbose);

}  // namespace extshuffle::cli

// How the command-line tools' OpenMP threads wait for work.
#pragma once

namespace extshuffle::cli {

// OpenMP threads that find no work sleep at once instead of spinning
// (libgomp spins 300000 pause instructions, milliseconds on this project's
// machines, before it sleeps): between the shuffle's parallel steps the
// driving thread waits for reads and for the output thread, and the idle
// thread spun through every such wait, on a machine with as many threads as
// cores taking the core from the very thread it waited for. 512 MiB of
// 8-byte records in RAM: 2.1-2.6 s of user CPU against 3.0-3.5 s
// (docs/benchmarks.md, "Half the CPU per record"). libgomp reads its
// environment as it is loaded, before main, and no OpenMP call changes the
// policy afterwards; so the program sets the variable and executes itself
// again, once, at its start: call it first in main, before any thread,
// descriptor or MPI state exists. A policy or spin count the user set wins;
// if the program cannot be executed again it runs on as it is.
void wait_passively(char** argv);

}  // namespace extshuffle::cli

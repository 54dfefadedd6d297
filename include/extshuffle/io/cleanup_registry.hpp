// Paths to remove if the process is stopped by SIGINT, SIGTERM, SIGHUP or
// SIGPIPE: the handlers unlink them (async-signal-safe) and re-raise the
// signal, so the destination is untouched and no scratch file remains.
#pragma once

#include <string>

namespace extshuffle::io {

// Installs the handlers once; later calls do nothing.
void install_cleanup_handlers();
// Registers a path; returns a slot for forget_cleanup_path. Thread-safe.
int register_cleanup_path(const std::string& path);
// The path no longer needs removing (renamed or removed by its owner).
void forget_cleanup_path(int slot);
// Unlinks every registered path; async-signal-safe, for other handlers that
// end the process (io/mapped_bytes.cpp's SIGBUS handler).
void remove_registered_paths() noexcept;

}  // namespace extshuffle::io

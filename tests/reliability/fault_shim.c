// An LD_PRELOAD shim that injects IO faults into the real extshuffle binary,
// for the reliability tests. Everything is driven by environment variables:
//
//   EXTSHUFFLE_FAULT              enospc      writes fail with ENOSPC
//                                 eio         reads fail with EIO
//                                 corrupt     one byte of one read is flipped (once)
//                                 fsync-eio   fsync/fdatasync fail with EIO
//                                 pause-read  the first read past the threshold waits
//                                 pause-write the first write past the threshold waits
//                                 direct-open opening with O_DIRECT fails with EINVAL,
//                                             as a file system without it does
//                                 direct-write writes on an O_DIRECT descriptor
//                                             fail with EINVAL (a file system
//                                             that opens with it but refuses it)
//                                 direct-note nothing fails: the marker is written
//                                             at the first write through an
//                                             O_DIRECT descriptor (proof that
//                                             the run wrote unbuffered)
//                                 no-locks    fcntl's record locks fail with
//                                             ENOLCK, as on a file system
//                                             mounted without locks (NFS nolock)
//                                 signal-rename a renameat(2) in a matching
//                                             directory (its descriptor's
//                                             path) sends the calling thread
//                                             EXTSHUFFLE_FAULT_SIGNAL (a
//                                             number) as the call begins, as
//                                             strace's -e inject=renameat:
//                                             signal=SIG:when=N delivers it
//                                             on entering the call, without
//                                             tracing every call of the run
//   EXTSHUFFLE_FAULT_PATH         only descriptors whose path (readlink of
//                                 /proc/self/fd/N) starts with this prefix;
//                                 required: without it the shim does nothing
//   EXTSHUFFLE_FAULT_AFTER_BYTES  bytes that pass (reads or writes, whichever
//                                 the fault targets, summed over matching
//                                 descriptors) before the fault fires; a call
//                                 that straddles the threshold is cut short
//                                 there, as a disk filling up does (default 0);
//                                 for signal-rename, the matching renames
//                                 that pass before the one signalled
//   EXTSHUFFLE_FAULT_MARKER       a file written when the fault first fires,
//                                 naming the fault and the path: the tests'
//                                 proof that the fault really happened
//   EXTSHUFFLE_FAULT_RELEASE      for pause-*: the call waits until this file
//                                 exists (at most 120 s), then goes on
//
// And a racing user, apart from the faults:
//
//   EXTSHUFFLE_RACE_DIR           an open(2) without O_CREAT of a name under
//   EXTSHUFFLE_RACE_VICTIM        this directory first finds the name
//                                 replaced by a symbolic link to the victim
//                                 file, as another user of a shared,
//                                 non-sticky -T could do between the run's
//                                 exclusive create and a second open by name
//
// Why these symbols: STXXL's syscall_file (all input, scratch and output
// file IO) calls lseek64 + read/write (libstxxl.so imports read@GLIBC and
// write@GLIBC, no pread/pwrite); extshuffle itself calls read(2) on standard
// input, write(2) on standard output and fsync(2) before the rename. The
// p*64, readv/writev variants are covered too so that a change of IO path in
// STXXL or in extshuffle is still intercepted. On x86-64 glibc exports pread
// and pread64 as distinct symbols (aliases of one function), so both are
// defined here.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum Fault {
  kNone,
  kEnospc,
  kEio,
  kCorrupt,
  kFsyncEio,
  kPauseRead,
  kPauseWrite,
  kDirectOpen,
  kDirectWrite,
  kDirectNote,
  kNoLocks,
  kSignalRename
};

static enum Fault g_fault = kNone;
static char g_prefix[4096];
static size_t g_prefix_bytes;
static uint64_t g_after_bytes;
static char g_marker[4096];
static char g_release[4096];
static _Atomic uint64_t g_seen_bytes;
static _Atomic int g_fired;
static int g_signal;
static _Atomic uint64_t g_renames;

typedef ssize_t (*read_fn)(int, void*, size_t);
typedef ssize_t (*write_fn)(int, const void*, size_t);
typedef ssize_t (*pread_fn)(int, void*, size_t, off_t);
typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);
typedef ssize_t (*readv_fn)(int, const struct iovec*, int);
typedef ssize_t (*pv_fn)(int, const struct iovec*, int, off_t);
typedef int (*sync_fn)(int);

// A libc without one of these symbols cannot be tested with this shim: stop
// loudly rather than run without the fault.
static void* next_symbol(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) abort();
  return f;
}

#define REAL(type, name) ((type)real_##name())
#define DEFINE_REAL(type, name)                     \
  static void* real_##name(void) {                  \
    static _Atomic(void*) cached;                   \
    void* f = atomic_load(&cached);                 \
    if (!f) {                                       \
      f = next_symbol(#name);                       \
      atomic_store(&cached, f);                     \
    }                                               \
    return f;                                       \
  }

DEFINE_REAL(read_fn, read)
DEFINE_REAL(write_fn, write)
DEFINE_REAL(pread_fn, pread)
DEFINE_REAL(pread_fn, pread64)
DEFINE_REAL(pwrite_fn, pwrite)
DEFINE_REAL(pwrite_fn, pwrite64)
DEFINE_REAL(readv_fn, readv)
DEFINE_REAL(readv_fn, writev)
DEFINE_REAL(pv_fn, preadv)
DEFINE_REAL(pv_fn, pwritev)
DEFINE_REAL(sync_fn, fsync)
DEFINE_REAL(sync_fn, fdatasync)

typedef int (*open_fn)(const char*, int, ...);
DEFINE_REAL(open_fn, open)
DEFINE_REAL(open_fn, open64)

static int refuse_direct_open(const char* path, int flags);

// The racing user: swaps the name for a link to the victim.
static void race(const char* path, int flags) {
  const char* dir = getenv("EXTSHUFFLE_RACE_DIR");
  const char* victim = getenv("EXTSHUFFLE_RACE_VICTIM");
  if (!dir || !victim || !path || (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) return;
  const size_t length = strlen(dir);
  if (strncmp(path, dir, length) != 0 || path[length] != '/') return;
  char link[4096];
  snprintf(link, sizeof link, "%s.race", path);
  if (symlink(victim, link) == 0) rename(link, path);
}

static mode_t mode_argument(int flags, va_list args) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(args, int) : 0;
}

int open(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_argument(flags, args);
  va_end(args);
  race(path, flags);
  if (refuse_direct_open(path, flags)) return -1;
  return REAL(open_fn, open)(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_argument(flags, args);
  va_end(args);
  race(path, flags);
  if (refuse_direct_open(path, flags)) return -1;
  return REAL(open_fn, open64)(path, flags, mode);
}

static void copy_env(const char* name, char* into, size_t size) {
  const char* value = getenv(name);
  if (value) snprintf(into, size, "%s", value);
}

__attribute__((constructor)) static void read_configuration(void) {
  const char* fault = getenv("EXTSHUFFLE_FAULT");
  copy_env("EXTSHUFFLE_FAULT_PATH", g_prefix, sizeof g_prefix);
  g_prefix_bytes = strlen(g_prefix);
  if (!fault || g_prefix_bytes == 0) return;
  if (strcmp(fault, "enospc") == 0) g_fault = kEnospc;
  else if (strcmp(fault, "eio") == 0) g_fault = kEio;
  else if (strcmp(fault, "corrupt") == 0) g_fault = kCorrupt;
  else if (strcmp(fault, "fsync-eio") == 0) g_fault = kFsyncEio;
  else if (strcmp(fault, "pause-read") == 0) g_fault = kPauseRead;
  else if (strcmp(fault, "pause-write") == 0) g_fault = kPauseWrite;
  else if (strcmp(fault, "direct-open") == 0)
    g_fault = kDirectOpen;
  else if (strcmp(fault, "direct-write") == 0)
    g_fault = kDirectWrite;
  else if (strcmp(fault, "direct-note") == 0)
    g_fault = kDirectNote;
  else if (strcmp(fault, "no-locks") == 0)
    g_fault = kNoLocks;
  else if (strcmp(fault, "signal-rename") == 0)
    g_fault = kSignalRename;
  const char* signal_number = getenv("EXTSHUFFLE_FAULT_SIGNAL");
  g_signal = signal_number ? atoi(signal_number) : 0;
  const char* after = getenv("EXTSHUFFLE_FAULT_AFTER_BYTES");
  g_after_bytes = after ? strtoull(after, NULL, 10) : 0;
  copy_env("EXTSHUFFLE_FAULT_MARKER", g_marker, sizeof g_marker);
  copy_env("EXTSHUFFLE_FAULT_RELEASE", g_release, sizeof g_release);
}

static const char* fault_name(void) {
  switch (g_fault) {
    case kEnospc: return "enospc";
    case kEio: return "eio";
    case kCorrupt: return "corrupt";
    case kFsyncEio: return "fsync-eio";
    case kPauseRead: return "pause-read";
    case kPauseWrite: return "pause-write";
    case kDirectOpen: return "direct-open";
    case kDirectWrite: return "direct-write";
    case kDirectNote: return "direct-note";
    case kNoLocks: return "no-locks";
    case kSignalRename: return "signal-rename";
    default: return "none";
  }
}

// Whether fd's path starts with the prefix; fills `path` for the marker.
static int matches(int fd, char* path, size_t size) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, size - 1);
  if (n < 0) return 0;
  path[n] = '\0';
  return (size_t)n >= g_prefix_bytes && memcmp(path, g_prefix, g_prefix_bytes) == 0;
}

// The first firing writes the marker (O_EXCL: one marker per run even when
// several IO threads fire at once).
static void fire(const char* path) {
  int expected = 0;
  if (!atomic_compare_exchange_strong(&g_fired, &expected, 1) || g_marker[0] == '\0') return;
  const int fd = open(g_marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char text[4200];
  const int n = snprintf(text, sizeof text, "%s %s\n", fault_name(), path);
  if (n > 0) (void)REAL(write_fn, write)(fd, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
  close(fd);
}

// direct-open: whether an open of `path` with `flags` is refused. The
// output is opened through /proc/self/fd/N: the file's own path is the
// link's target.
static int refuse_direct_open(const char* path, int flags) {
  if (g_fault != kDirectOpen || !(flags & O_DIRECT) || !path) return 0;
  char target[4096];
  const ssize_t n = readlink(path, target, sizeof target - 1);
  if (n >= 0) {
    target[n] = '\0';
  } else {
    snprintf(target, sizeof target, "%s", path);
  }
  if (strncmp(target, g_prefix, g_prefix_bytes) != 0) return 0;
  fire(target);
  errno = EINVAL;
  return 1;
}

static void wait_for_release(void) {
  const struct timespec step = {0, 5 * 1000 * 1000};
  struct stat st;
  for (int k = 0; k < 120 * 200 && g_release[0] != '\0'; ++k) {
    if (stat(g_release, &st) == 0) return;
    nanosleep(&step, NULL);
  }
}

// How many of `bytes` may pass before the threshold: `bytes` when it is not
// reached, fewer when this call crosses it, 0 once it has been crossed.
static size_t allowance(size_t bytes) {
  const uint64_t before = atomic_fetch_add(&g_seen_bytes, bytes);
  if (before >= g_after_bytes) return 0;
  const uint64_t left = g_after_bytes - before;
  return left < bytes ? (size_t)left : bytes;
}

// What a read of `bytes` on fd should do. Returns -1 (errno set) to fail,
// otherwise the bytes to request; *corrupt_at receives the offset of the
// byte to flip in what comes back, or SIZE_MAX.
static ssize_t before_read(int fd, size_t bytes, size_t* corrupt_at) {
  *corrupt_at = SIZE_MAX;
  if (g_fault != kEio && g_fault != kCorrupt && g_fault != kPauseRead) return (ssize_t)bytes;
  if (bytes == 0) return 0;
  char path[4096];
  if (!matches(fd, path, sizeof path)) return (ssize_t)bytes;
  if (g_fault == kCorrupt || g_fault == kPauseRead) {
    if (atomic_load(&g_fired)) return (ssize_t)bytes;
    const size_t pass = allowance(bytes);
    if (pass == bytes) return (ssize_t)bytes;
    fire(path);
    if (g_fault == kPauseRead) {
      wait_for_release();
    } else {
      *corrupt_at = pass;
    }
    return (ssize_t)bytes;
  }
  const size_t pass = allowance(bytes);
  if (pass > 0) return (ssize_t)pass;
  fire(path);
  errno = EIO;
  return -1;
}

static ssize_t before_write(int fd, size_t bytes) {
  if (g_fault != kEnospc && g_fault != kPauseWrite && g_fault != kDirectWrite && g_fault != kDirectNote) {
    return (ssize_t)bytes;
  }
  if (bytes == 0) return 0;
  char path[4096];
  if (!matches(fd, path, sizeof path)) return (ssize_t)bytes;
  if (g_fault == kDirectWrite || g_fault == kDirectNote) {
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || !(flags & O_DIRECT)) return (ssize_t)bytes;
    fire(path);
    if (g_fault == kDirectNote) return (ssize_t)bytes;
    errno = EINVAL;
    return -1;
  }
  if (g_fault == kPauseWrite) {
    if (atomic_load(&g_fired)) return (ssize_t)bytes;
    if (allowance(bytes) == bytes) return (ssize_t)bytes;
    fire(path);
    wait_for_release();
    return (ssize_t)bytes;
  }
  const size_t pass = allowance(bytes);
  if (pass > 0) return (ssize_t)pass;
  fire(path);
  errno = ENOSPC;
  return -1;
}

static void after_read(void* buffer, ssize_t got, size_t corrupt_at) {
  if (corrupt_at == SIZE_MAX || got <= 0) return;
  unsigned char* bytes = (unsigned char*)buffer;
  bytes[corrupt_at < (size_t)got ? corrupt_at : 0] ^= 0x5A;
}

ssize_t read(int fd, void* buffer, size_t bytes) {
  size_t corrupt_at;
  const ssize_t want = before_read(fd, bytes, &corrupt_at);
  if (want < 0) return -1;
  const ssize_t got = REAL(read_fn, read)(fd, buffer, (size_t)want);
  after_read(buffer, got, corrupt_at);
  return got;
}

static ssize_t shim_pread(pread_fn real, int fd, void* buffer, size_t bytes, off_t offset) {
  size_t corrupt_at;
  const ssize_t want = before_read(fd, bytes, &corrupt_at);
  if (want < 0) return -1;
  const ssize_t got = real(fd, buffer, (size_t)want, offset);
  after_read(buffer, got, corrupt_at);
  return got;
}

ssize_t pread(int fd, void* buffer, size_t bytes, off_t offset) {
  return shim_pread(REAL(pread_fn, pread), fd, buffer, bytes, offset);
}

ssize_t pread64(int fd, void* buffer, size_t bytes, off_t offset) {
  return shim_pread(REAL(pread_fn, pread64), fd, buffer, bytes, offset);
}

ssize_t write(int fd, const void* buffer, size_t bytes) {
  const ssize_t want = before_write(fd, bytes);
  if (want < 0) return -1;
  return REAL(write_fn, write)(fd, buffer, (size_t)want);
}

ssize_t pwrite(int fd, const void* buffer, size_t bytes, off_t offset) {
  const ssize_t want = before_write(fd, bytes);
  if (want < 0) return -1;
  return REAL(pwrite_fn, pwrite)(fd, buffer, (size_t)want, offset);
}

ssize_t pwrite64(int fd, const void* buffer, size_t bytes, off_t offset) {
  const ssize_t want = before_write(fd, bytes);
  if (want < 0) return -1;
  return REAL(pwrite_fn, pwrite64)(fd, buffer, (size_t)want, offset);
}

static size_t iov_bytes(const struct iovec* iov, int count) {
  size_t total = 0;
  for (int k = 0; k < count; ++k) total += iov[k].iov_len;
  return total;
}

// Vector calls fail whole or pass whole: nothing in extshuffle's IO path uses
// them today, they are here so that a future use is not silently missed.
ssize_t readv(int fd, const struct iovec* iov, int count) {
  size_t corrupt_at;
  const size_t bytes = iov_bytes(iov, count);
  if (before_read(fd, bytes, &corrupt_at) < 0) return -1;
  return REAL(readv_fn, readv)(fd, iov, count);
}

ssize_t writev(int fd, const struct iovec* iov, int count) {
  const size_t bytes = iov_bytes(iov, count);
  if (before_write(fd, bytes) < 0) return -1;
  return REAL(readv_fn, writev)(fd, iov, count);
}

ssize_t preadv(int fd, const struct iovec* iov, int count, off_t offset) {
  size_t corrupt_at;
  if (before_read(fd, iov_bytes(iov, count), &corrupt_at) < 0) return -1;
  return REAL(pv_fn, preadv)(fd, iov, count, offset);
}

ssize_t pwritev(int fd, const struct iovec* iov, int count, off_t offset) {
  if (before_write(fd, iov_bytes(iov, count)) < 0) return -1;
  return REAL(pv_fn, pwritev)(fd, iov, count, offset);
}

static int shim_sync(sync_fn real, int fd) {
  char path[4096];
  if (g_fault == kFsyncEio && matches(fd, path, sizeof path)) {
    fire(path);
    errno = EIO;
    return -1;
  }
  return real(fd);
}

int fsync(int fd) { return shim_sync(REAL(sync_fn, fsync), fd); }
int fdatasync(int fd) { return shim_sync(REAL(sync_fn, fdatasync), fd); }

// no-locks: fcntl's record locks (POSIX and open file description ones) on
// a matching descriptor fail with ENOLCK; every other fcntl passes. Its
// third argument is an int or a pointer: taken as a pointer, as glibc does.
typedef int (*fcntl_fn)(int, int, ...);
DEFINE_REAL(fcntl_fn, fcntl)
DEFINE_REAL(fcntl_fn, fcntl64)

static int refuse_lock(int fd, int command) {
  char path[4096];
  const int locking = command == F_SETLK || command == F_SETLKW || command == F_OFD_SETLK || command == F_OFD_SETLKW;
  if (g_fault != kNoLocks || !locking || !matches(fd, path, sizeof path)) return 0;
  fire(path);
  errno = ENOLCK;
  return 1;
}

static int shim_fcntl(fcntl_fn real, int fd, int command, void* argument) {
  return refuse_lock(fd, command) ? -1 : real(fd, command, argument);
}

#define FCNTL_WRAPPER(name)                                              \
  int name(int fd, int command, ...) {                                   \
    va_list args;                                                        \
    va_start(args, command);                                             \
    void* argument = va_arg(args, void*);                                \
    va_end(args);                                                        \
    return shim_fcntl(REAL(fcntl_fn, name), fd, command, argument);      \
  }

FCNTL_WRAPPER(fcntl)
FCNTL_WRAPPER(fcntl64)

// signal-rename: the renameat after EXTSHUFFLE_FAULT_AFTER_BYTES matching
// ones sends its own thread the signal (tgkill: a thread-directed signal, as
// strace's injection, not one any thread that leaves it unblocked could
// take), then renames. A signal the thread holds stays pending; one it does
// not is handled before the rename, as on entering the call under strace.
typedef int (*renameat_fn)(int, const char*, int, const char*);
DEFINE_REAL(renameat_fn, renameat)

int renameat(int from_directory, const char* from, int to_directory, const char* to) {
  char path[4096];
  if (g_fault == kSignalRename && g_signal > 0 && matches(from_directory, path, sizeof path) &&
      atomic_fetch_add(&g_renames, 1) == g_after_bytes) {
    fire(path);
    const int saved = errno;
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), g_signal);
    errno = saved;
  }
  return REAL(renameat_fn, renameat)(from_directory, from, to_directory, to);
}

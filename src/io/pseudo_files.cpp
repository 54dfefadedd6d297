// The kernel's pseudo file systems (io/pseudo_files.hpp).
#include "extshuffle/io/pseudo_files.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace extshuffle::io {

std::string pseudo_file_system(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return "";
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC: return "proc";
    case SYSFS_MAGIC: return "sysfs";
    case DEBUGFS_MAGIC: return "debugfs";
    case TRACEFS_MAGIC: return "tracefs";
    case SECURITYFS_MAGIC: return "securityfs";
    case CGROUP_SUPER_MAGIC: return "cgroup";
    case CGROUP2_SUPER_MAGIC: return "cgroup2";
    case BINFMTFS_MAGIC: return "binfmt_misc";
    case BPF_FS_MAGIC: return "bpf";
    case EFIVARFS_MAGIC: return "efivarfs";
    case PSTOREFS_MAGIC: return "pstore";
    case SELINUX_MAGIC: return "selinuxfs";
    case SMACK_MAGIC: return "smackfs";
    default: return "";
  }
}

bool size_is_length(int fd, const struct stat& st) {
  if (!pseudo_file_system(fd).empty()) return false;
  if (st.st_size > 0) return true;
  char byte;
  return ::pread(fd, &byte, 1, 0) == 0;  // empty indeed; a read error is for the reader to report
}

bool readable_in_place(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  const bool in_place =
      ::fstat(fd, &st) == 0 && (S_ISBLK(st.st_mode) || (S_ISREG(st.st_mode) && size_is_length(fd, st)));
  ::close(fd);
  return in_place;
}

}  // namespace extshuffle::io

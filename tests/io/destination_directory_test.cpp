// The destination directories' descriptors: one per directory for the life
// of the process, kept through a move, a swapped name or a removal (so a
// run's files never follow a name elsewhere), opened again after a removal
// once the next Job starts (forget_removed_directories(): a second job of
// one process writes where the first one's directory was made anew).
#include "extshuffle/io/destination_directory.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "extshuffle/errors.hpp"
#include "support/command.hpp"

namespace extshuffle::testing::destination_directory_test {
namespace {

namespace fs = std::filesystem;

std::pair<dev_t, ino_t> identity_of(int fd) {
  struct stat st {};
  EXPECT_EQ(::fstat(fd, &st), 0);
  return {st.st_dev, st.st_ino};
}

std::pair<dev_t, ino_t> identity_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return {st.st_dev, st.st_ino};
}

TEST(DestinationDirectory, TwoNamesOfOneDirectoryShareADescriptor) {
  TempDir dir;
  fs::create_directory(dir / "out");
  const int fd = io::directory_descriptor((dir / "out").string(), "out/x");
  EXPECT_EQ(io::directory_descriptor((dir / "out").string() + "//", "out/x"), fd);
  EXPECT_EQ(io::directory_descriptor((dir / "." / "out").string(), "out/x"), fd);
  EXPECT_EQ(identity_of(fd), identity_of(dir / "out"));
}

TEST(DestinationDirectory, AMovedDirectoryStaysTheOneGiven) {
  TempDir dir;
  fs::create_directory(dir / "out");
  const int fd = io::directory_descriptor((dir / "out").string(), "out/x");
  const auto before = identity_of(fd);
  fs::rename(dir / "out", dir / "moved");
  fs::create_directory(dir / "out");  // another directory takes the name
  EXPECT_EQ(io::directory_descriptor((dir / "out").string(), "out/x"), fd);
  EXPECT_EQ(identity_of(fd), before);
  EXPECT_EQ(identity_of(fd), identity_of(dir / "moved"));
}

TEST(DestinationDirectory, ARemovedDirectoryIsOpenedAgainUnderItsName) {
  TempDir dir;
  for (int job = 0; job < 3; ++job) {
    fs::create_directory(dir / "out");
    io::forget_removed_directories();  // as check_job_files() does
    const int fd = io::directory_descriptor((dir / "out").string(), "out/x");
    EXPECT_EQ(identity_of(fd), identity_of(dir / "out")) << "job " << job;
    // The job's file goes where the name leads.
    const int file = ::openat(fd, "x", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    ASSERT_GE(file, 0) << "job " << job;
    ::close(file);
    EXPECT_TRUE(fs::exists(dir / "out" / "x")) << "job " << job;
    fs::remove_all(dir / "out");
  }
}

TEST(DestinationDirectory, WithinARunARemovedDirectoryIsNotLookedUpAgain) {
  TempDir dir;
  fs::create_directory(dir / "out");
  const int fd = io::directory_descriptor((dir / "out").string(), "out/x");
  fs::remove_all(dir / "out");
  fs::create_directory(dir / "elsewhere");
  fs::create_directory_symlink(dir / "elsewhere", dir / "out");
  EXPECT_EQ(io::directory_descriptor((dir / "out").string(), "out/x"), fd);
  EXPECT_NE(identity_of(fd), identity_of(dir / "elsewhere"));
}

TEST(DestinationDirectory, AMissingDirectoryIsAnIoErrorNamingTheOutput) {
  TempDir dir;
  try {
    io::directory_descriptor((dir / "absent").string(), "absent/x");
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("absent/x"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace extshuffle::testing::destination_directory_test

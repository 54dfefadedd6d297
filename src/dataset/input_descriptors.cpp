#include "input_descriptors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "extshuffle/errors.hpp"

namespace extshuffle::dataset {

InputDescriptor::~InputDescriptor() { ::close(fd_); }

std::string changed_since_index(const std::string& path, const std::string& why) {
  return "input '" + path + "' changed since its index was made (" + why +
         "): rebuild the index (extshuffle --index-only '" + path + "')";
}

InputDescriptors::InputDescriptors(std::vector<std::string> paths, std::vector<IndexedFile> files)
    : paths_(std::move(paths)), files_(std::move(files)) {}

std::shared_ptr<InputDescriptor> InputDescriptors::get(std::uint32_t input) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (const auto at = open_.find(input); at != open_.end()) {
    recent_.splice(recent_.begin(), recent_, at->second.second);
    return at->second.first;
  }
  const std::string& path = paths_[input];
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open input", path, errno);
  auto descriptor = std::make_shared<InputDescriptor>(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError("cannot read input", path, errno);
  const IndexedFile& file = files_[input];
  const auto bytes = static_cast<std::uint64_t>(st.st_size);
  const std::int64_t mtime_ns = std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  if (bytes != file.bytes) {
    throw InputError(changed_since_index(
        path, "it holds " + std::to_string(bytes) + " bytes, the index says " + std::to_string(file.bytes)));
  }
  if (mtime_ns != file.mtime_ns)
    throw InputError(changed_since_index(path, "its modification time is not the index's"));
  if (open_.size() >= kOpenFiles) {
    open_.erase(recent_.back());
    recent_.pop_back();
  }
  recent_.push_front(input);
  open_.emplace(input, std::make_pair(descriptor, recent_.begin()));
  return descriptor;
}

}  // namespace extshuffle::dataset

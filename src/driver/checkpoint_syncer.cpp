#include "checkpoint_syncer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "extshuffle/errors.hpp"

namespace extshuffle::driver {
namespace {

// The journal is rewritten with only the records it needs once it passes
// this size: a point a few KiB, and a run makes thousands.
constexpr std::uint64_t kRewriteJournalBytes = std::uint64_t{4} << 20;

}  // namespace

CheckpointSyncer::CheckpointSyncer(io::CheckpointJournal& journal,
                                   std::vector<std::pair<std::string, io::JournalRecord>> kept)
    : journal_(journal), kept_(std::move(kept)), thread_([this] { run(); }) {}

CheckpointSyncer::~CheckpointSyncer() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return (queue_.empty() && !busy_) || failure_; });
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void CheckpointSyncer::offer(Point point) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_) std::rethrow_exception(failure_);
    if (point.droppable && !queue_.empty() && queue_.back().droppable && queue_.back().slot == point.slot) {
      // The waiting point says less than this one: this one replaces it,
      // and releases what it would have.
      for (auto& release : queue_.back().releases) point.releases.push_back(std::move(release));
      queue_.back() = std::move(point);
    } else {
      queue_.push_back(std::move(point));
    }
  }
  changed_.notify_all();
}

bool CheckpointSyncer::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
  return queue_.empty() && !busy_;
}

void CheckpointSyncer::settle() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return (queue_.empty() && !busy_) || failure_; });
  if (failure_) std::rethrow_exception(failure_);
}

void CheckpointSyncer::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stop_ || (!queue_.empty() && !failure_); });
    if (stop_) return;
    Point point = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    std::exception_ptr failure;
    try {
      make_durable(point);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    busy_ = false;
    if (failure && !failure_) failure_ = failure;
    changed_.notify_all();
  }
}

// Data first, then the record that claims it, then what it lets go.
void CheckpointSyncer::make_durable(Point& point) {
  for (const auto& [fd, name] : point.sync) {
    if (::fdatasync(fd) != 0) throw IoError("cannot sync", name, errno);
  }
  journal_.append(point.record.type, point.record.payload);
  const auto slot = std::find_if(kept_.begin(), kept_.end(), [&](const auto& k) { return k.first == point.slot; });
  if (slot == kept_.end()) {
    kept_.emplace_back(point.slot, point.record);
  } else {
    slot->second = point.record;
  }
  if (journal_.bytes() > kRewriteJournalBytes) {
    std::vector<io::JournalRecord> records;
    for (const auto& [name, record] : kept_) records.push_back(record);
    journal_.rewrite(records);
  }
  for (auto& release : point.releases) release();
}

}  // namespace extshuffle::driver

// Makes a checkpoint's points durable in the background while the walk goes
// on (docs/cli.md "Resuming a run"): for each point, in order, the files it
// claims are synced (fdatasync of the scratch file, the outputs), then its
// journal record is appended and synced, then what it releases runs (the
// scratch of buckets it says are output). A point that waits while a later
// one of the same slot comes is dropped for it when both are only progress
// (the later one says more: not so of another slot's, such as a dataset's
// counts and the progress of its next input's count), and its releases go
// with the later one. The first failure
// (a full disk, EIO) is kept: no later point is made durable or released,
// and the next offer() or settle() throws it, so the run ends with the
// journal at its last durable point.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "extshuffle/io/checkpoint_journal.hpp"

namespace extshuffle::driver {

class CheckpointSyncer {
 public:
  struct Point {
    io::JournalRecord record;
    std::string slot;  // the journal keeps the last record of each slot when it is rewritten
    std::vector<std::pair<int, std::string>> sync;  // descriptors (and names) synced before the record is written
    std::vector<std::function<void()>> releases;    // run once the record is durable
    bool droppable = false;  // progress only: a later droppable point may replace it while it waits
  };

  // Appends to `journal`, which must outlive the syncer; `kept`: the
  // records the journal already holds, by slot (what a rewrite keeps).
  CheckpointSyncer(io::CheckpointJournal& journal, std::vector<std::pair<std::string, io::JournalRecord>> kept);
  ~CheckpointSyncer();  // waits for the points offered, swallowing failures
  CheckpointSyncer(const CheckpointSyncer&) = delete;
  CheckpointSyncer& operator=(const CheckpointSyncer&) = delete;

  // Queues a point. Throws the first failure of an earlier one.
  void offer(Point point);
  // Nothing queued and nothing in progress.
  bool idle();
  // Waits until every point offered is durable and released. Throws the
  // first failure.
  void settle();

 private:
  void run();
  void make_durable(Point& point);

  io::CheckpointJournal& journal_;
  std::vector<std::pair<std::string, io::JournalRecord>> kept_;  // in the order of their slots' first record
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Point> queue_;
  bool busy_ = false, stop_ = false;
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace extshuffle::driver

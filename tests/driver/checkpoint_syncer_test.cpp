// The syncer of --checkpoint's points (src/driver/checkpoint_syncer.hpp), on
// a real journal in a temporary directory: while it is held busy (a
// release that waits), points of progress of one slot replace one another,
// but never a waiting point of another slot (a dataset's counts are not
// dropped for the progress of its next input's count, nor one dataset's
// point for another's); each point's releases run once, after its record
// is durable, those of a replaced point with the point that replaced it.
#include "driver/checkpoint_syncer.hpp"

#include <gtest/gtest.h>

#include <future>
#include <string>
#include <vector>

#include "extshuffle/io/checkpoint_directory.hpp"
#include "support/command.hpp"

namespace extshuffle::driver::checkpoint_syncer_test {
namespace {

CheckpointSyncer::Point point(std::uint32_t type, const std::string& slot, const std::string& payload, bool droppable,
                              std::function<void()> release = {}) {
  CheckpointSyncer::Point p;
  p.record = {type, payload};
  p.slot = slot;
  p.droppable = droppable;
  if (release) p.releases.push_back(std::move(release));
  return p;
}

TEST(CheckpointSyncer, ProgressReplacesOnlyAWaitingPointOfItsOwnSlot) {
  testing::TempDir dir;
  std::vector<std::string> payloads;
  {
    io::CheckpointDirectory directory((dir.path() / "ck").string());
    io::CheckpointJournal journal(directory, "journal");
    CheckpointSyncer syncer(journal, {});
    std::promise<void> go;
    std::shared_future<void> held = go.get_future().share();
    std::promise<void> busy;
    // Held busy after this point's record is appended: the next ones wait.
    syncer.offer(point(1, "plan 0", "plan", false, [&busy, held] {
      busy.set_value();
      held.wait();
    }));
    busy.get_future().wait();
    int released = 0;
    syncer.offer(point(7, "counts 0", "counts of 1 input", true, [&] { ++released; }));
    syncer.offer(point(8, "progress 0", "input 2 at 2 MiB", true, [&] { ++released; }));
    syncer.offer(point(8, "progress 0", "input 2 at 4 MiB", true, [&] { ++released; }));
    syncer.offer(point(8, "progress 1", "dataset 1: input 1 at 2 MiB", true, [&] { ++released; }));
    EXPECT_EQ(released, 0);
    go.set_value();
    syncer.settle();
    EXPECT_EQ(released, 4);
  }
  io::CheckpointDirectory directory((dir.path() / "ck").string());
  for (const io::JournalRecord& r : io::read_journal(directory, "journal").records) payloads.push_back(r.payload);
  EXPECT_EQ(payloads,
            (std::vector<std::string>{"plan", "counts of 1 input", "input 2 at 4 MiB", "dataset 1: input 1 at 2 MiB"}));
}

}  // namespace
}  // namespace extshuffle::driver::checkpoint_syncer_test

// The journal of --checkpoint DIR (docs/cli.md "Resuming a run"): records
// appended to one file of DIR and synced, each whole or not at all. A
// record is a magic word, its type, its length, its payload and a CRC-32C of
// them; reading keeps the records up to the first that is not whole. A
// torn last record (a write the process or the machine did not finish: the
// file ends inside it, or its checksum fails and nothing follows it) is
// dropped and cut off, and the run resumes from the record before; a
// record that fails its checksum with bytes after it is damage, reported
// and never trusted. Space for the next records is reserved ahead
// (fallocate), so a full disk stops the run at the reservation, between two
// records, never inside one; the file is rewritten whole (a new file synced,
// then renamed over it) when it grows past a few MiB, keeping the records
// the caller names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "extshuffle/io/checkpoint_directory.hpp"

namespace extshuffle::io {

struct JournalRecord {
  std::uint32_t type = 0;
  std::string payload;
};

// What a journal file holds, read without changing it (--dry-run).
struct JournalContents {
  std::vector<JournalRecord> records;
  std::uint64_t whole_bytes = 0;  // bytes of the whole records, from the start
  bool torn_tail = false;         // bytes after them that were dropped
};

// Reads the journal `name` of `directory` (empty when missing). Throws
// Error when a record in the middle is damaged.
JournalContents read_journal(const CheckpointDirectory& directory, const std::string& name);

class CheckpointJournal {
 public:
  // Opens (creates) the journal `name` of `directory` (which must outlive
  // it) and reads it; a torn tail is cut off. Throws as read_journal, and
  // IoError.
  CheckpointJournal(CheckpointDirectory& directory, const std::string& name);
  ~CheckpointJournal();
  CheckpointJournal(const CheckpointJournal&) = delete;
  CheckpointJournal& operator=(const CheckpointJournal&) = delete;

  // The records read when it was opened (appended ones are not added).
  const JournalContents& read() const { return read_; }
  // Appends one record and syncs it (fdatasync). Throws IoError (ENOSPC:
  // the run ends between two records; the file holds the ones before).
  void append(std::uint32_t type, std::string_view payload);
  // Replaces the whole journal by `records` (a new file synced, renamed
  // over the journal, DIR synced). Throws IoError.
  void rewrite(const std::vector<JournalRecord>& records);
  // Bytes of the journal written so far.
  std::uint64_t bytes() const { return end_; }

 private:
  void reserve(std::uint64_t bytes);
  CheckpointDirectory& directory_;
  std::string name_;
  int fd_ = -1;
  JournalContents read_;
  std::uint64_t end_ = 0;       // the whole records end here
  std::uint64_t reserved_ = 0;  // space allocated up to here
};

// Fields of a record's payload, little-endian, in order.
class FieldWriter {
 public:
  void u64(std::uint64_t value);
  void bytes(std::string_view value);  // its length, then its bytes
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

class FieldReader {
 public:
  explicit FieldReader(std::string_view payload) : rest_(payload) {}
  // Throws Error (a damaged checkpoint) when the payload is too short.
  std::uint64_t u64();
  std::string bytes();
  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

}  // namespace extshuffle::io

// Outputs put in place by the production commit (dataset/output_commit.hpp):
// the tests' one way to commit, with no lock (no destinations named) unless
// a test names them.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "extshuffle/dataset/output_commit.hpp"

namespace extshuffle::testing {

// Commits `participants` (and with `manifest`, the manifest of `entries`,
// each filled from its participant) as one. Throws what the commit throws.
inline dataset::CommitReport commit_outputs(const std::vector<dataset::CommitParticipant*>& participants,
                                            const std::optional<dataset::ManifestOptions>& manifest = std::nullopt,
                                            std::vector<dataset::ManifestEntry> entries = {},
                                            dataset::CommitScope scope = {}) {
  dataset::OutputCommit commit(std::move(scope), manifest);
  for (dataset::CommitParticipant* participant : participants) commit.add(*participant);
  return commit.commit(std::move(entries));
}

}  // namespace extshuffle::testing

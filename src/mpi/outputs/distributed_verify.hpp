// --verify across the ranks (dataset/verification.hpp): the digest of the
// records read is the merge of every rank's digest of the records it holds
// (held_data()), the digest of the records written the merge of every
// rank's digest of its output range; the digest is order-independent
// (record_digest.hpp), so the merges are exact.
#pragma once

#include "inputs/distributed_input.hpp"
#include "extshuffle/dataset/record_digest.hpp"
#include "extshuffle/mpi/communicator.hpp"

namespace extshuffle::mpi {

// The digest of the records this rank holds (`display_name`: the input's,
// for errors). Throws IoError.
dataset::RecordDigest digest_held_records(const DistributedInput::State& in, const std::string& display_name);

// Collective, inside no checkpoint: merges every rank's `read` and
// `written` and fails the job (verify failed: ...) on every rank unless the
// merges agree. Throws RankFailure.
void check_distributed_digests(const dataset::RecordDigest& read, const dataset::RecordDigest& written,
                               Communicator& comm);

}  // namespace extshuffle::mpi

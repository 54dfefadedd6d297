// --verify across the ranks (dataset/verification.hpp): the digest of the
// records read is the merge of every rank's digest of the records it holds
// (held_data()), the digest of the records written the merge of every
// rank's digest of its output range; the digest is order-independent
// (record_digest.hpp), so the merges are exact. Those digests come from
// what the ranks read, and so cannot see ranks that read other bytes under
// one name: the bytes each rank read in place are checked against the
// file's holder first.
#pragma once

#include "inputs/distributed_input.hpp"
#include "extshuffle/dataset/record_digest.hpp"
#include "extshuffle/mpi/communicator.hpp"

namespace extshuffle::mpi {

// The digest of the records this rank holds (`display_name`: the input's,
// for errors). Throws IoError.
dataset::RecordDigest digest_held_records(const DistributedInput::State& in, const std::string& display_name);

// Collective, inside no checkpoint: the bytes each rank read in place of
// a file another rank holds (in.reads, inputs/input_reads.hpp), checked a
// block of kCheckedBlockBytes at a time against the holder's: this rank
// digests (XXH3-128) each block it read any byte of, the holder the same
// block of its own view of the file, and they must agree. Fails the job
// naming the first rank whose bytes differ, the file and the block's bytes
// ("input 'a.txt': bytes 0-4194303 here differ from rank 0's, its holder
// (the ranks see different files)"). Throws RankFailure. Cost: each rank
// reads again the blocks it read in place; each holder, the blocks of its
// files that other ranks read, each once (one plain file, which rank 0
// holds: up to the whole file on rank 0).
void check_reads_against_holders(const DistributedInput::State& in, Communicator& comm);

// Collective, inside no checkpoint: merges every rank's `read` and
// `written` and fails the job (verify failed: ...) on every rank unless the
// merges agree. Throws RankFailure.
void check_distributed_digests(const dataset::RecordDigest& read, const dataset::RecordDigest& written,
                               Communicator& comm);

}  // namespace extshuffle::mpi

// --verify: the digest of the records read must equal the digest of the
// records written (record_digest.hpp), checked before the output is
// committed, so a lost, duplicated or corrupted record (a bug, a bad scratch
// disk) fails the run instead of producing a plausible file.
#pragma once

#include <cstddef>
#include <cstdint>

#include "extshuffle/dataset/record_digest.hpp"
#include "extshuffle/formats/record_syntax.hpp"

namespace extshuffle::io {
class BlockFile;
}

namespace extshuffle::dataset {

// Digest of the `bytes / record_size` fixed-size records at `offset` of
// `file`: one sequential read, double-buffered.
RecordDigest digest_fixed_records(io::BlockFile& file, std::uint64_t offset, std::uint64_t bytes,
                                  std::size_t record_size);

// Adds the text records in [data, data + bytes), which holds whole records.
void add_text_records(RecordDigest& digest, const std::byte* data, std::size_t bytes,
                      const formats::RecordSyntax& syntax);

// Throws Error (exit code 1) "verify failed: ..." when the digests differ.
void check_digests(const RecordDigest& read, const RecordDigest& written);

}  // namespace extshuffle::dataset

// Pieces an older run left beside this one's (docs/cli.md "Shards"): a run
// with --shards 8 after one with --shards 10 into the same pattern writes
// pieces 0-7; pieces 8 and 9 of the old run would still be there, and a
// reader globbing `train-*.tar` would take them as part of the new dataset.
// They are found by name, before the commit, in the directories this run
// writes into, and named in a warning and the manifest, or removed with
// --clean once this run's pieces are in place.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace extshuffle::dataset {

// Whether `path` is a name `pattern` gives (output_parts.hpp's
// output_file_name) for one of `split_names` (any, when the pattern has no
// {split}), a shard number and a shard count: {shard} and {shards} are
// digits, at least five, and padded as the pattern pads them. Pure.
bool matches_output_pattern(const std::string& pattern, const std::vector<std::string>& split_names,
                            const std::string& path);

// The files in the directories of `written` (this run's pieces, named as
// the pattern names them) that match `pattern` and are not among
// `written`, in byte-wise order of their names. Regular files and symbolic
// links only. Throws IoError when a directory cannot be listed.
std::vector<std::string> find_stale_pieces(const std::string& pattern, const std::vector<std::string>& split_names,
                                           const std::vector<std::string>& written);

// Removes `paths` (unlinkat through the directory's descriptor,
// io/destination_directory.hpp; a symbolic link itself, never its target).
// One that is among `inputs` (device, inode) is never removed: Error.
// Throws IoError naming the first that cannot be removed.
void remove_stale_pieces(const std::vector<std::string>& paths, const std::vector<std::pair<dev_t, ino_t>>& inputs);

// Leftovers of a run that was killed (kill -9, a lost node) inside its
// commit: a hidden temporary ".NAME.extshuffle-<16 hex digits>"
// (io/output_file.hpp; extshuffle-mpi's partial outputs are named so too),
// or ".NAME.extshuffle-mpi-partial", the fixed name earlier versions of
// extshuffle-mpi gave their partial outputs. leftover_of() gives the NAME a leftover
// stands for (empty: not a leftover's name). Pure.
std::string leftover_of(const std::string& name);
// The leftovers in `directories` (each "" or ending in '/', as the
// pattern's expansions spell them) whose NAME `pattern` gives, sorted: the
// kind of file a run leaves (a regular file of one name, or a second name
// of NAME's file) owned by this run's user or by NAME's owner; another
// user's file that merely bears such a name is none.
std::vector<std::string> find_leftovers(const std::string& pattern, const std::vector<std::string>& split_names,
                                        const std::vector<std::string>& directories);
// Removes those of `paths` that no running process holds (its owner keeps
// a lock on it: flock) and that are none of `inputs`; returns the removed.
std::vector<std::string> remove_leftovers(const std::vector<std::string>& paths,
                                          const std::vector<std::pair<dev_t, ino_t>>& inputs);

// The warning (or with `cleaned`, the note) that names the files of the
// output pattern `pattern` that this run did not write.
std::string stale_warning(const std::string& pattern, bool cleaned, const std::vector<std::string>& stale);

}  // namespace extshuffle::dataset

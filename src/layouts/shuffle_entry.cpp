// The library's shuffles (ioperm/fixed_size_shuffle.hpp,
// ioperm/text_shuffle.hpp): each builds its record layout and hands the plan
// to the one walk, PlanWalk.
#include <algorithm>
#include <stdexcept>

#include "extshuffle/ioperm/fixed_size_shuffle.hpp"
#include "extshuffle/ioperm/text_shuffle.hpp"
#include "extshuffle/io/bucket_store.hpp"
#include "fixed_records.hpp"
#include "ioperm/node_path.hpp"
#include "ioperm/plan_walk.hpp"
#include "ioperm/walk_support.hpp"
#include "text_records.hpp"

namespace extshuffle::ioperm {

std::uint64_t minimum_memory_bytes(const core::PlanConstants& constants, std::size_t record_size,
                                   std::uint64_t records) {
  WalkOptions options;
  options.record_size = record_size;
  options.run.constants = constants;
  options.run.threads = 0;  // all cores: the largest batch a run may take (memory_plan.hpp)
  return minimum_memory_bytes(FixedRecords(options), records, records * record_size, record_size);
}

std::uint64_t minimum_memory_bytes_text(const core::PlanConstants& constants, std::uint64_t records,
                                            std::uint64_t longest_record_bytes, std::uint64_t record_bytes) {
  TextOptions options;
  options.walk.run.constants = constants;
  options.walk.run.threads = 0;  // all cores, as above
  return minimum_memory_bytes(TextRecords(options), records, record_bytes, longest_record_bytes);
}

Schedule plan_schedule(std::uint64_t records, const WalkOptions& options) {
  const std::size_t record_size = options.record_size;
  if (record_size == 0) throw std::invalid_argument("record size must be positive");
  const FixedRecords layout(options);
  const std::uint64_t bytes = records * record_size;
  layout.check_budget(NodeFacts{records, bytes, false, record_size, 0}, options.run.memory_bytes);
  return plan_schedule(layout, records, bytes, record_size, options.run.memory_bytes);
}

Schedule plan_schedule_text(std::uint64_t records, std::uint64_t bytes, std::uint64_t longest_record_bytes,
                                const TextOptions& options, double record_bytes_variance) {
  const TextRecords layout(options);
  layout.check_budget(NodeFacts{records, bytes, false, longest_record_bytes, 0}, options.walk.run.memory_bytes);
  return plan_schedule(layout, records, bytes, longest_record_bytes, options.walk.run.memory_bytes,
                       record_bytes_variance);
}

bool maps_input(std::uint64_t input_bytes, std::uint64_t budget_bytes) { return input_bytes < budget_bytes / 20 * 19; }

namespace {

// Runs the plan of the root in `data` through `layout`, which reads its
// options from `sized`. An input that fits needs an arena of what its node
// takes in RAM, not the whole budget (by default half of RAM, which
// --device cuda would pin); the layout of memory never changes the output.
WalkStats walk_plan(const RecordLayout& layout, WalkOptions& sized, const NodeFacts& root, const io::ByteExtents& data,
                    io::BlockFile& scratch, std::uint64_t scratch_offset, const OutputSink& sink,
                    MappedRecords* mapped_records = nullptr) {
  core::check_plan(root.records, sized.run.constants);
  layout.check_budget(root, sized.run.memory_bytes);
  io::BucketStore store(scratch, scratch_offset);
  const std::uint64_t in_memory = layout.in_memory_bytes(root, sized.run.memory_bytes);
  const bool in_ram = in_memory <= sized.run.memory_bytes;
  if (in_ram) sized.run.memory_bytes = in_memory;
  const std::uint64_t arena =
      mapped_records != nullptr && in_ram ? layout.mapped_arena_bytes(root, in_memory) : UINT64_MAX;
  if (arena != UINT64_MAX) {
    // Records mapped: the run in RAM reads them where they lie, and its
    // arena holds only what the layout's way needs beside them (the budget
    // still counts the records: they are resident). A larger run, or a way
    // that cannot use them, reads `data`.
    PlanWalk walk(layout, store, sized, sink, device::allocate_host_memory(sized.run.device, arena), true);
    return walk.run(root, mapped_records->records);
  }
  if (mapped_records != nullptr) mapped_records->mapped.reset();
  PlanWalk walk(layout, store, sized, sink);
  return walk.run(root, data);
}

}  // namespace

WalkStats shuffle_fixed_size(const io::ByteExtents& data, std::uint64_t records, io::BlockFile& scratch,
                             std::uint64_t scratch_offset, const WalkOptions& options, const OutputSink& sink,
                             MappedRecords* mapped_records) {
  if (options.record_size == 0) throw std::invalid_argument("record size must be positive");
  WalkOptions sized = options;
  const FixedRecords layout(sized);
  return walk_plan(layout, sized, NodeFacts{records, data.bytes, false, options.record_size, 0}, data, scratch,
                   scratch_offset, sink, mapped_records);
}

WalkStats shuffle_fixed_size(io::BlockFile& input, std::uint64_t input_offset, std::uint64_t records,
                               io::BlockFile& scratch, std::uint64_t scratch_offset,
                               const WalkOptions& options, const OutputSink& sink) {
  io::ByteExtents data;
  data.append({&input, input_offset, records * options.record_size});
  return shuffle_fixed_size(data, records, scratch, scratch_offset, options, sink);
}

WalkStats shuffle_text(const io::ByteExtents& data, std::uint64_t records, std::uint64_t longest_record_bytes,
                       io::BlockFile& scratch, std::uint64_t scratch_offset, const TextOptions& options,
                       const OutputSink& sink, MappedRecords* mapped_records) {
  TextOptions sized = options;
  const TextRecords layout(sized);
  return walk_plan(layout, sized.walk, NodeFacts{records, data.bytes, false, longest_record_bytes, 0}, data, scratch,
                   scratch_offset, sink, mapped_records);
}

WalkStats shuffle_text(const TextInput& input, std::uint64_t records, io::BlockFile& scratch,
                               std::uint64_t scratch_offset, const TextOptions& options, const OutputSink& sink) {
  io::ByteExtents data;
  data.append({input.file, input.offset, input.bytes});
  static const std::byte kTerminators[2] = {std::byte{'\n'}, std::byte{'\0'}};
  if (input.add_terminator) data.append({nullptr, 0, 1, &kTerminators[options.syntax.terminator == '\n' ? 0 : 1]});
  return shuffle_text(data, records, input.longest_record_bytes, scratch, scratch_offset, options, sink);
}

}  // namespace extshuffle::ioperm

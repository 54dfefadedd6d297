#include "node_path.hpp"

#include <algorithm>
#include <cmath>

#include "bucket_windows.hpp"
#include "chunk_router.hpp"
#include "walk_support.hpp"
#include "extshuffle/errors.hpp"
#include "leaf_windows.hpp"
#include "position_tag.hpp"
#include "tuning.hpp"

namespace extshuffle::ioperm {

std::uint64_t stored_bytes(const RecordLayout& layout, const NodeFacts& node) {
  const std::uint64_t tags =
      node.tagged ? node.records * PositionTag::for_node(node.records, layout.framed()).width : 0;
  return node.record_bytes + tags;
}

void RecordLayout::check_budget(const NodeFacts& root, std::uint64_t budget) const {
  if (in_memory_bytes(root) <= budget) return;
  const std::uint64_t minimum = minimum_memory_bytes(*this, root.records, root.record_bytes, root.max_record_bytes);
  if (budget < minimum) {
    std::string what = framed() ? " text records" : " records of " + std::to_string(options().record_size) + " bytes";
    if (framed() && root.max_record_bytes > 0)
      what += " (the longest of " + std::to_string(root.max_record_bytes) + " bytes)";
    throw BudgetError("--memory must be at least " + std::to_string((minimum + 1023) >> 10) + "K for " +
                      std::to_string(root.records) + what);
  }
}

NodePath choose_path(const RecordLayout& layout, const NodeFacts& node, std::uint64_t budget) {
  if (layout.in_memory_bytes(node) <= budget) return NodePath::kInRam;
  if (core::is_leaf(node.records, layout.options().run.constants)) return NodePath::kLeafInWindows;
  if (!node.tagged && layout.chunks_fit(node, budget)) return NodePath::kChunksInMemory;
  return NodePath::kRouted;
}

std::uint64_t minimum_memory_bytes(const RecordLayout& layout, std::uint64_t records, std::uint64_t record_bytes,
                                   std::uint64_t longest_record_bytes) {
  const core::PlanConstants& c = layout.options().run.constants;
  const std::uint64_t longest = layout.framed() ? longest_record_bytes : layout.options().record_size;
  if (record_bytes == 0) record_bytes = records * std::max<std::uint64_t>(longest, 1);
  const std::uint64_t stream = minimum_stream_space(layout, longest_record_bytes) +
                               RecordStream::arrays_bytes(tuning::kMinRouteBatch) +
                               route_arrays_bytes(tuning::kMinRouteBatch, c.max_fanout);
  std::uint64_t leaf = records;
  std::uint32_t depth = 0;
  // A routed split at each depth, as many chunks open as routed splits
  // above it allow, buckets with the smallest buffers.
  std::uint64_t minimum = 0;
  for (; !core::is_leaf(leaf, c); ++depth) {
    const std::uint64_t p = core::bucket_count(leaf, c);
    minimum = std::max(minimum, minimum_routed_split_bytes(layout, p, depth + 1, longest_record_bytes));
    leaf = core::bucket_records(leaf, p, 0);
  }
  // A leaf larger than memory: its inverse permutation and a stream to route
  // it, then a window and a stream to read it back; and enough for one pass.
  minimum = std::max({kMinMemoryBytes, minimum, align_up(4 * leaf, 64) + 3 * stream});
  const auto leaf_bytes = static_cast<std::uint64_t>(static_cast<unsigned __int128>(record_bytes) * leaf /
                                                     std::max<std::uint64_t>(records, 1));
  const NodeFacts tagged_leaf{leaf, leaf_bytes, depth > 0, longest_record_bytes, depth};
  while (layout.in_memory_bytes(tagged_leaf) > minimum && !leaf_in_one_pass(layout, leaf, leaf_bytes, minimum)) {
    minimum += std::max<std::uint64_t>(4096, minimum / 16);
  }
  return align_up(minimum, 4096);
}

namespace {

// The share of the nodes of `node`'s size that run in RAM, when their bytes
// are normal with mean `mean` and deviation `deviation` (record sizes vary:
// a node's bytes are a sum of its records' sizes, drawn without replacement
// from the input's): the nodes whose bytes are at most the largest that
// fits, found by bisection (in_memory_bytes grows with the bytes).
double share_in_ram(const RecordLayout& layout, NodeFacts node, double mean, double deviation, std::uint64_t budget) {
  std::uint64_t low = 0, high = std::uint64_t{1} << 62;  // largest bytes that fit: in [low, high)
  node.record_bytes = 0;
  if (layout.in_memory_bytes(node) > budget) return 0;
  while (high - low > 1) {
    node.record_bytes = low + (high - low) / 2;
    (layout.in_memory_bytes(node) <= budget ? low : high) = node.record_bytes;
  }
  const double fits = static_cast<double>(low);
  if (deviation <= 0) return mean <= fits ? 1 : 0;
  return 0.5 * std::erfc((mean - fits) / (deviation * std::sqrt(2.0)));
}

// What the walk is expected to do, summed over its levels (fractions of
// nodes and bytes: the schedule rounds them).
struct ExpectedCounts {
  double read = 0, written = 0;  // bytes
  double in_ram = 0, on_disk = 0, routed_nodes = 0, windows = 0, into_windows_nodes = 0, orders_on_disk_nodes = 0;

  void round_into(Schedule& s, std::uint64_t output_bytes) const {
    auto whole = [](double x) { return static_cast<std::uint64_t>(std::llround(x)); };
    s.bytes_read = whole(read);
    s.bytes_written = whole(written) + output_bytes;  // and the output
    s.nodes_in_memory = whole(in_ram);
    s.nodes_on_disk = whole(on_disk);
    s.nodes_routed = whole(routed_nodes);
    s.nodes_into_windows = whole(into_windows_nodes);
    s.leaf_orders_on_disk = whole(orders_on_disk_nodes);
    s.nodes_in_windows = whole(windows);
  }
};

}  // namespace

Schedule plan_schedule(const RecordLayout& layout, std::uint64_t records, std::uint64_t record_bytes,
                       std::uint64_t max_record_bytes, std::uint64_t budget, double record_bytes_variance) {
  const core::PlanConstants& c = layout.options().run.constants;
  Schedule s;
  s.levels = core::plan_levels(records, c);
  s.passes = 1;
  const double total = static_cast<double>(records);
  const double mean = records > 0 ? static_cast<double>(record_bytes) / total : 0;
  // Expected counts: `active` nodes of this level run (the others finished
  // in RAM above); every record of an active node is read, and written
  // again by a split. Fixed-size records have no spread: each share is 0 or 1.
  // `share` is the share of the input's records in those nodes.
  double active = 1, share = 1;
  ExpectedCounts e;
  const double all_bytes = static_cast<double>(record_bytes);
  NodeFacts node{records, record_bytes, false, max_record_bytes, 0};
  double in_tag = 0;          // the tag before each record of this level's nodes
  bool into_windows = false;  // this level's leaves were routed into their windows by their split
  while (node.records > 0 && active > 1e-9) {
    const double n = static_cast<double>(node.records);
    const double node_mean = mean * n;
    const double deviation = std::sqrt(std::max(0.0, n * record_bytes_variance * (total - n) / std::max(total - 1, 1.0)));
    node.record_bytes = static_cast<std::uint64_t>(node_mean);
    e.read += share * (all_bytes + total * in_tag);
    if (into_windows) {  // placed window by window: no pass of their own
      e.windows += active;
      break;
    }
    const double fit = share_in_ram(layout, node, node_mean, deviation, budget);
    e.in_ram += active * fit;
    if (fit > 0) s.peak_memory_bytes = std::max(s.peak_memory_bytes, layout.in_memory_bytes(node, budget));
    const double rest = active * (1 - fit);
    if (rest <= 1e-9) break;
    s.peak_memory_bytes = budget;
    // A level counts as a pass when some node of it is likely to stream.
    const bool deeper = 1 - std::pow(fit, active) >= 0.5;
    if (core::is_leaf(node.records, c)) {
      // Written once into windows by output position, read back once.
      const std::uint64_t per_window = leaf_window_records(layout, node.records, node.record_bytes, budget);
      const double tag = PositionTag::for_node(per_window, layout.framed()).width;
      e.windows += rest;
      e.written += share * (1 - fit) * (all_bytes + total * tag);
      e.read += share * (1 - fit) * (all_bytes + total * tag);
      s.passes += deeper ? 1 : 0;
      break;
    }
    const bool routed = node.tagged || !layout.chunks_fit(node, budget);
    const std::uint64_t p = core::bucket_count(node.records, c);
    const std::uint64_t child = core::bucket_records(node.records, p, 0);
    const BucketWindows bucket_windows = routed ? plan_bucket_windows(layout, node, budget) : BucketWindows{};
    into_windows = !bucket_windows.empty();
    // Refused here as the run refuses it (run_split), so --dry-run agrees.
    if (routed && !into_windows) routed_split_memory(layout, p, routed_open_chunks(node), max_record_bytes, budget);
    const double out_tag =
        into_windows ? bucket_windows.tag.width : (routed ? PositionTag::for_node(child, layout.framed()).width : 0);
    e.on_disk += rest;
    e.routed_nodes += routed ? rest : 0;
    e.into_windows_nodes += into_windows ? rest : 0;
    e.orders_on_disk_nodes += bucket_windows.orders_on_disk ? rest : 0;
    e.written += share * (1 - fit) * (all_bytes + total * out_tag);
    if (bucket_windows.orders_on_disk) {  // 4 bytes a record written, then read back
      e.written += share * (1 - fit) * total * 4;
      e.read += share * (1 - fit) * total * 4;
    }
    s.passes += deeper ? 1 : 0;
    in_tag = out_tag;
    node.records = child;
    node.tagged = routed;
    ++node.depth;
    active = rest * static_cast<double>(p);
    share *= 1 - fit;
  }
  e.round_into(s, record_bytes);
  return s;
}

}  // namespace extshuffle::ioperm

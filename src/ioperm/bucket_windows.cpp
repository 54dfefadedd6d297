#include "bucket_windows.hpp"

#include "walk_support.hpp"
#include "extshuffle/errors.hpp"
#include "leaf_orders.hpp"
#include "leaf_windows.hpp"
#include "tuning.hpp"

namespace extshuffle::ioperm {

BucketWindows plan_bucket_windows(const RecordLayout& layout, const NodeFacts& node, std::uint64_t budget) {
  const core::PlanConstants& c = layout.options().run.constants;
  const std::uint64_t n = node.records;
  if (core::is_leaf(n, c)) return {};
  const std::uint64_t p = core::bucket_count(n, c);
  const std::uint64_t largest = core::bucket_records(n, p, 0);
  if (!core::is_leaf(largest, c)) return {};
  // A bucket's expected bytes: its share of the node's (exact for fixed-size
  // records; text buckets draw a uniform sample of the node's records).
  auto expected_bytes = [&](std::uint64_t m) {
    return static_cast<std::uint64_t>(static_cast<unsigned __int128>(node.record_bytes) * m / n);
  };
  // Leaves that fit in RAM are placed there, with no windows.
  if (layout.in_memory_bytes(NodeFacts{largest, expected_bytes(largest), true, node.max_record_bytes, node.depth + 1}) <=
      budget) {
    return {};
  }
  BucketWindows w;
  w.p = p;
  w.per_window.resize(p);
  w.first.assign(p + 1, 0);
  std::uint64_t widest = 1;
  for (std::uint64_t j = 0; j < p; ++j) {
    const std::uint64_t m = core::bucket_records(n, p, j);
    const std::uint64_t per_window = leaf_window_records(layout, m, expected_bytes(m), budget);
    w.per_window[j] = per_window;
    w.first[j + 1] = w.first[j] + (m + per_window - 1) / per_window;
    widest = std::max(widest, per_window);
  }
  w.tag = PositionTag::for_node(widest, layout.framed());
  // The router and a buffer per window must fit; the leaves' orders too, or
  // else they go to scratch space; otherwise each leaf goes through windows
  // on its own (leaf_windows.hpp).
  auto fits = [&] {
    try {
      const RoutedSplitMemory m =
          routed_split_memory(layout, p, routed_open_chunks(node), node.max_record_bytes, budget, &w);
      return m.bucket_buffer_bytes >= tuning::kMinBucketBufferBytes;
    } catch (const BudgetError&) {
      return false;
    }
  };
  w.orders_bytes = LeafOrders::memory_bytes(n);
  if (fits()) return w;
  w.orders_on_disk = true;
  w.orders_bytes = 0;
  if (LeafOrders::workspace_bytes(c, p) <= budget && fits()) return w;
  return {};
}

std::uint32_t run_bucket_windows(const RecordLayout& layout, const core::Node& node, const BucketWindows& windows,
                                 std::uint64_t longest_record_bytes, io::BucketStore::Split& split,
                                 io::BucketStore& store, RunContext& ctx, std::uint64_t first,
                                 const EmitPoint* points) {
  std::uint32_t deepest = 1;
  for (std::uint64_t j = 0; j < windows.p; ++j) {
    const core::Node leaf = core::bucket_node(node, windows.p, j);
    if (!ctx.output.wanted(leaf.id.first)) break;
    if (windows.first[j + 1] <= first) continue;  // output before a resumed run
    ++ctx.stats.nodes_in_windows;
    for (std::uint64_t d = std::max(first, windows.first[j]); d < windows.first[j + 1]; ++d) {
      const std::uint64_t w = d - windows.first[j];
      const std::uint64_t first_output = leaf.id.first + w * windows.per_window[j];
      if (!ctx.output.wanted(first_output)) break;
      deepest =
          std::max(deepest, emit_window(layout, split.checked_bucket(d), windows.window_records(j, w, leaf.records),
                                        windows.tag, first_output, longest_record_bytes, store, ctx));
      const auto release = [&split, d] { split.discard(d); };
      if (points) {
        (*points)(d + 1, release);
      } else {
        release();
      }
    }
  }
  return deepest;
}

}  // namespace extshuffle::ioperm

#include "dry_run_report.hpp"

#include <algorithm>
#include <cstdio>

#include "extshuffle/ioperm/text_shuffle.hpp"

namespace extshuffle::driver {

using dataset::InputLayout;
using ioperm::Schedule;

// The schedule of a dataset of `record_bytes` bytes of records. For text,
// from what the counting pass found: the longest record and the records'
// spread in size (node_path.hpp).
Schedule schedule_for(const JobOptions& options, const InputLayout& layout, std::uint64_t record_bytes) {
  if (layout.framed()) {
    const double n = static_cast<double>(std::max<std::uint64_t>(layout.records, 1));
    const double mean = static_cast<double>(record_bytes) / n;
    const double variance = std::max(0.0, layout.text_count.record_bytes_squared / n - mean * mean);
    return ioperm::plan_schedule_text(layout.records, record_bytes, layout.text_count.longest_record_bytes,
                                      dataset::text_options(options.run, options.input, layout), variance);
  }
  return ioperm::plan_schedule(layout.records, dataset::walk_options(options.run, layout));
}

namespace {

// The smallest budget, in whole MiB, above the configured one with which
// the run makes fewer than `passes` passes: bisection over the schedule (no
// IO), up to 2^60 bytes; 0 if none.
std::uint64_t mebibytes_for_fewer_passes(JobOptions options, const InputLayout& layout, std::uint64_t record_bytes,
                                         std::uint32_t passes) {
  auto passes_at = [&](std::uint64_t bytes) {
    options.run.memory_bytes = bytes;
    return schedule_for(options, layout, record_bytes).passes;
  };
  std::uint64_t low = options.run.memory_bytes, high = std::max<std::uint64_t>(1, low);
  while (passes_at(high) >= passes) {  // invariant: `low` makes as many passes
    low = high;
    if (high >= (std::uint64_t{1} << 60)) return 0;
    high *= 2;
  }
  while (high - low > 1024) {
    const std::uint64_t middle = low + (high - low) / 2;
    (passes_at(middle) < passes ? high : low) = middle;
  }
  const std::uint64_t mebibytes = (high + (std::uint64_t{1} << 20) - 1) >> 20;
  return passes_at(mebibytes << 20) < passes ? mebibytes : 0;
}

}  // namespace

std::string describe_schedule(const InputLayout& layout, const JobOptions& options, const Schedule& s) {
  char what[128];
  if (layout.framed()) {
    std::snprintf(what, sizeof what, "%llu text records", static_cast<unsigned long long>(layout.records));
  } else {
    std::snprintf(what, sizeof what, "%llu records of %zu bytes", static_cast<unsigned long long>(layout.records),
                  layout.record_size);
  }
  const bool shipped = options.run.constants.leaf_records == core::kPlanV2.leaf_records &&
                       options.run.constants.max_fanout == core::kPlanV2.max_fanout;
  const std::string version =
      shipped ? "permutation version " + std::to_string(core::kPermutationVersion) : "testing constants";
  auto u = [](std::uint64_t x) { return static_cast<unsigned long long>(x); };
  char routed[192] = "", windows[96] = "";
  if (s.nodes_routed > 0) {
    char into[96] = "";
    if (s.nodes_into_windows > 0) {
      std::snprintf(into, sizeof into, ", %llu into their leaves' windows%s", u(s.nodes_into_windows),
                    s.leaf_orders_on_disk > 0 ? " (leaf orders through scratch space)" : "");
    }
    std::snprintf(routed, sizeof routed, " (%llu routed record by record: chunks larger than memory%s)",
                  u(s.nodes_routed), into);
  }
  if (s.nodes_in_windows > 0) {
    std::snprintf(windows, sizeof windows, ", %llu lea%s larger than memory placed window by window",
                  u(s.nodes_in_windows), s.nodes_in_windows == 1 ? "f" : "ves");
  }
  char text[1280];
  std::snprintf(text, sizeof text,
                "plan: %s, %s (L = %llu, F = %llu), %u level%s\n"
                "schedule: memory %llu bytes, %u pass%s through disk, %llu node%s streamed through scratch "
                "space%s%s, %llu node%s in RAM\n"
                "expected IO: %llu bytes read, %llu bytes written%s; peak memory %llu bytes\n",
                what, version.c_str(), u(options.run.constants.leaf_records), u(options.run.constants.max_fanout),
                s.levels, s.levels == 1 ? "" : "s", u(options.run.memory_bytes), s.passes, s.passes == 1 ? "" : "es",
                u(s.nodes_on_disk), s.nodes_on_disk == 1 ? "" : "s", routed, windows, u(s.nodes_in_memory),
                s.nodes_in_memory == 1 ? "" : "s", u(s.bytes_read), u(s.bytes_written),
                layout.count_known ? " (the count of the records taken from --checkpoint's journal)"
                : layout.framed()  ? " (the count of the records included)"
                                   : "",
                u(s.peak_memory_bytes));
  return text;
}

std::string describe_scratch(const JobOptions& options, std::uint64_t spooled_bytes, std::uint64_t record_bytes,
                             const Schedule& s) {
  // The spool, then the buckets of each pass through disk but the last
  // (which writes the output): an upper estimate of the files at once.
  const std::uint64_t buckets = s.passes > 1 ? record_bytes * (s.passes - 1) : 0;
  const std::string where = options.run.tmpdir.empty() ? "the scratch directory" : "'" + options.run.tmpdir + "'";
  return "scratch space: up to " + std::to_string(spooled_bytes + buckets) + " bytes in " + where + " (" +
         std::to_string(spooled_bytes) + " bytes of spooled input)\n";
}

std::string describe_mode(const JobOptions& options) {
  const char* mode = options.input.repeat         ? "-r (draws with replacement)"
                     : options.mode.echo          ? "-e (the arguments)"
                     : options.mode.integer_range ? "-i (an integer range)"
                                                  : "-n 0";
  std::string text = std::string("plan: shuf mode ") + mode;
  if (options.mode.echo) text += ", " + std::to_string(options.mode.echo_items.size()) + " records";
  if (options.mode.integer_range) {
    const unsigned __int128 count =
        static_cast<unsigned __int128>(options.mode.range_high) + 1 - options.mode.range_low;
    text += ", " + (count > UINT64_MAX ? std::string("18446744073709551616") : std::to_string(static_cast<std::uint64_t>(count))) +
            " records";
  }
  return text + "; nothing is read from disk, no scratch space; the dry run writes nothing\n";
}

// What a larger budget would save: the budget of each smaller pass count.
std::string describe_fewer_passes(const InputLayout& layout, const JobOptions& options, std::uint64_t record_bytes,
                                  std::uint32_t passes) {
  std::string text;
  for (std::uint32_t p = passes; p > 1;) {
    const std::uint64_t mebibytes = mebibytes_for_fewer_passes(options, layout, record_bytes, p);
    if (mebibytes == 0) break;
    JobOptions larger = options;
    larger.run.memory_bytes = mebibytes << 20;
    p = schedule_for(larger, layout, record_bytes).passes;
    text += (text.empty() ? "fewer passes: " : ", ") + std::to_string(p) + (p == 1 ? " pass (in RAM)" : " passes") +
            " from -S " + std::to_string(mebibytes) + "M";
  }
  return text.empty() ? text : text + "\n";
}

}  // namespace extshuffle::driver

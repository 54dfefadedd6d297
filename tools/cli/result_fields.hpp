// The measured facts of a run as one list of named fields (RunStats): the
// RESULT line of --stats (extshuffle's, and extshuffle-mpi's, which adds the
// job's own fields after them) and the dict Python's shuffle() returns
// (python/src/shuffle_bindings.cpp) are both read from kResultFields, and
// extshuffle-mpi's RANK lines from a list of the same kind
// (tools/extshuffle-mpi/rank_fields.hpp). A field added to a stats struct
// and left out of its list fails to compile (lists_every_member), so every
// front end prints it, under one name.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <variant>

#include "extshuffle/run_result.hpp"

namespace extshuffle::cli {

// One member of `Stats` under the name printed for it.
template <class Stats>
struct StatField {
  const char* name;
  std::variant<std::uint64_t Stats::*, std::uint32_t Stats::*, double Stats::*> member;
};

namespace detail {
// Converts to any member's type; only named in unevaluated braces.
struct AnyValue {
  template <class T>
  operator T() const noexcept;
};
// The members of the aggregate T (plain fields, no base, no arrays): the
// most values its braces take.
template <class T, class... Values>
constexpr std::size_t member_count() {
  if constexpr (requires { T{Values{}..., AnyValue{}}; }) {
    return member_count<T, Values..., AnyValue>();
  } else {
    return sizeof...(Values);
  }
}
}  // namespace detail

// Whether `fields` has one entry for each member of Stats (that each names
// a different member is the tests' to check: tests/cli/result_fields_test.cpp).
template <class Stats, std::size_t N>
constexpr bool lists_every_member(const std::array<StatField<Stats>, N>&) {
  return N == detail::member_count<Stats>();
}

// RunStats in the RESULT line's order.
inline constexpr std::array<StatField<RunStats>, 13> kResultFields{{
    {"records", &RunStats::records},
    {"bytes", &RunStats::bytes},
    {"levels", &RunStats::levels},
    {"passes", &RunStats::passes},
    {"seconds", &RunStats::seconds},
    {"bytes_read", &RunStats::bytes_read},
    {"bytes_written", &RunStats::bytes_written},
    {"peak_rss_bytes", &RunStats::peak_rss_bytes},
    {"seconds_reading", &RunStats::seconds_reading},
    {"seconds_shuffling", &RunStats::seconds_shuffling},
    {"seconds_scattering", &RunStats::seconds_scattering},
    {"seconds_writing", &RunStats::seconds_writing},
    {"huge_page_bytes", &RunStats::huge_page_bytes},
}};
static_assert(lists_every_member(kResultFields), "a member of RunStats is missing from kResultFields");

// Calls `take(name, value)` for each of `fields` of `stats`, in order;
// value is the member's own type (std::uint64_t, std::uint32_t or double).
template <class Stats, std::size_t N, class Take>
void for_each_field(const std::array<StatField<Stats>, N>& fields, const Stats& stats, Take&& take) {
  for (const StatField<Stats>& field : fields) {
    std::visit([&](auto member) { take(field.name, stats.*member); }, field.member);
  }
}

// " name=value" for each of `fields` of `stats`, appended to `line`:
// counts whole, seconds with three decimals.
template <class Stats, std::size_t N>
void append_fields(std::string& line, const std::array<StatField<Stats>, N>& fields, const Stats& stats) {
  for_each_field(fields, stats, [&](const char* name, auto value) {
    char text[32];
    if constexpr (std::is_same_v<decltype(value), double>) {
      std::snprintf(text, sizeof text, "%.3f", value);
    } else {
      std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(value));
    }
    line.append(" ").append(name).append("=").append(text);
  });
}

}  // namespace extshuffle::cli

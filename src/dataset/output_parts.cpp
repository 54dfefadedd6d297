#include "extshuffle/dataset/output_parts.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "extshuffle/errors.hpp"

namespace extshuffle::dataset {
namespace {

constexpr unsigned kMaxDecimals = 18;

[[noreturn]] void bad_split(const std::string& text, const std::string& why) {
  throw UsageError("invalid --split '" + text + "': " + why);
}

std::uint64_t power_of_ten(unsigned exponent) {
  std::uint64_t value = 1;
  for (unsigned k = 0; k < exponent; ++k) value *= 10;
  return value;
}

bool valid_name(const std::string& name) {
  // "." and ".." would name directories, not files: -o '{split}/f' would write above the pattern's place.
  return !name.empty() && name != "." && name != ".." && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// SIZE of NAME=SIZE: digits (a count) or a fraction with one point.
SplitPart parse_size(const std::string& text, const std::string& name, const std::string& size) {
  SplitPart part;
  part.name = name;
  part.size_text = size;
  if (size == "rest") {
    part.is_rest = true;
    return part;
  }
  const std::size_t point = size.find('.');
  const std::string whole = size.substr(0, point);
  const std::string decimals = point == std::string::npos ? "" : size.substr(point + 1);
  const auto digits = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (size.empty() || !digits(whole) || !digits(decimals) || (whole.empty() && decimals.empty())) {
    bad_split(text, "size '" + size + "' of '" + name + "' is neither a record count nor a fraction such as 0.1");
  }
  if (point == std::string::npos) {
    if (whole.size() > 19 || (whole.size() == 19 && whole > "18446744073709551615")) {
      bad_split(text, "count '" + size + "' of '" + name + "' is too large");
    }
    part.count = std::stoull(whole);
    return part;
  }
  if (decimals.size() > kMaxDecimals) bad_split(text, "fraction '" + size + "' has more than 18 decimals");
  const std::uint64_t units = whole.empty() ? 0 : std::stoull(whole.substr(0, 2));
  if (whole.size() > 2 || units > 1 || (units == 1 && decimals.find_first_not_of('0') != std::string::npos)) {
    bad_split(text, "fraction '" + size + "' of '" + name + "' is more than 1");
  }
  part.is_fraction = true;
  part.decimals = static_cast<unsigned>(decimals.size());
  part.numerator = units * power_of_ten(part.decimals) + (decimals.empty() ? 0 : std::stoull(decimals));
  return part;
}

// The fraction of `part` scaled to 10^kMaxDecimals.
unsigned __int128 scaled(const SplitPart& part) {
  return static_cast<unsigned __int128>(part.numerator) * power_of_ten(kMaxDecimals - part.decimals);
}

std::string padded(std::uint64_t value, std::size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

}  // namespace

std::vector<SplitPart> parse_split_spec(const std::string& text) {
  std::vector<SplitPart> parts;
  std::set<std::string> names;
  unsigned __int128 fractions = 0;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t equals = item.find('=');
    if (equals == std::string::npos) bad_split(text, "expected NAME=SIZE pairs separated by commas, got '" + item + "'");
    const std::string name = item.substr(0, equals);
    if (!valid_name(name)) {
      bad_split(text, "split name '" + name + "' must be letters, digits, '_', '-' or '.' (and not '.' or '..')");
    }
    if (!names.insert(name).second) bad_split(text, "split '" + name + "' named twice");
    parts.push_back(parse_size(text, name, item.substr(equals + 1)));
    if (parts.back().is_rest && std::count_if(parts.begin(), parts.end(), [](const SplitPart& p) { return p.is_rest; }) > 1) {
      bad_split(text, "'rest' may size one split only");
    }
    if (parts.back().is_fraction) fractions += scaled(parts.back());
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (fractions > power_of_ten(kMaxDecimals)) bad_split(text, "its fractions add up to more than 1");
  return parts;
}

std::vector<std::uint64_t> split_ends(const std::vector<SplitPart>& splits, std::uint64_t records) {
  std::vector<std::uint64_t> ends;
  unsigned __int128 fractions = 0, counts = 0;
  for (const SplitPart& part : splits) {
    if (part.is_fraction) {
      fractions += scaled(part);
    } else if (!part.is_rest) {
      counts += part.count;
    }
    // floor(records x fractions / 10^18): at most 2^64 x 1, exact in 128 bits
    // as records x fractions < 2^64 x 10^18 < 2^124.
    const unsigned __int128 end = records * fractions / power_of_ten(kMaxDecimals) + counts;
    if (end > records) {
      throw UsageError("--split: its splits up to '" + part.name + "' need " +
                       std::to_string(static_cast<unsigned long long>(
                           std::min<unsigned __int128>(end, UINT64_MAX))) +
                       " records, but the input holds " + std::to_string(records));
    }
    ends.push_back(static_cast<std::uint64_t>(end));
  }
  // The rest: what the others leave, from the rest split on.
  const auto rest = std::find_if(splits.begin(), splits.end(), [](const SplitPart& p) { return p.is_rest; });
  if (rest != splits.end()) {
    const std::uint64_t left = records - (ends.empty() ? 0 : ends.back());
    for (auto k = static_cast<std::size_t>(rest - splits.begin()); k < ends.size(); ++k) ends[k] += left;
  }
  return ends;
}

std::uint64_t shard_records(std::uint64_t records, std::uint64_t shards, std::uint64_t shard) {
  return records / shards + (shard < records % shards ? 1 : 0);
}

void check_output_pattern(const std::string& pattern, std::uint64_t shard_count, std::uint64_t shard_bytes,
                          std::size_t splits) {
  if (pattern == "-") {
    throw UsageError("--shards, --shard-size and --split write files: name them with -o PATTERN, not standard output");
  }
  if ((shard_count > 1 || shard_bytes > 0) && pattern.find("{shard}") == std::string::npos) {
    throw UsageError("-o '" + pattern + "': several shards need {shard} in the name (e.g. -o 'train-{shard}-of-" +
                     "{shards}.jsonl')");
  }
  if (splits > 1 && pattern.find("{split}") == std::string::npos) {
    throw UsageError("-o '" + pattern + "': several splits need {split} in the name (e.g. -o '{split}.jsonl')");
  }
  // With --shard-size the pieces are known only at the end, so the names a
  // pattern may give are checked (against the inputs, the manifest, stale
  // pieces) in the directories known before any work: one directory per
  // split. {shard} or {shards} in a directory would make them unbounded.
  const std::size_t slash = pattern.rfind('/');
  if (shard_bytes > 0 && slash != std::string::npos && pattern.substr(0, slash).find("{shard") != std::string::npos) {
    throw UsageError("-o '" + pattern + "': with --shard-size the shard count is known only at the end: " +
                     "{shard} and {shards} cannot name a directory (put them in the file's name)");
  }
  for (std::size_t open = pattern.find('{'); open != std::string::npos; open = pattern.find('{', open + 1)) {
    const std::size_t close = pattern.find('}', open);
    if (close == std::string::npos) break;
    const std::string word = pattern.substr(open + 1, close - open - 1);
    const bool name_like = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (name_like && word != "split" && word != "shard" && word != "shards") {
      throw UsageError("-o '" + pattern + "': unknown placeholder {" + word + "}: a pattern knows {split}, {shard} " +
                       "and {shards}");
    }
  }
}

std::string output_file_name(const std::string& pattern, const std::string& split, std::uint64_t shard,
                             std::uint64_t shards) {
  const std::size_t width = std::max<std::size_t>(5, std::to_string(shards).size());
  std::string name = pattern;
  replace_all(name, "{split}", split);
  replace_all(name, "{shards}", padded(shards, width));
  replace_all(name, "{shard}", padded(shard, width));
  return name;
}

std::string left_out_warning(std::uint64_t left_out, std::uint64_t written) {
  return "--split: " + std::to_string(left_out) + " of the " + std::to_string(written + left_out) +
         " records are in no split and are not written (a split of size 'rest' takes them)";
}

void check_verify_takes_all(bool verify, std::uint64_t head_count, std::uint64_t records, std::uint64_t taken) {
  if (!verify || taken >= records) return;
  throw UsageError(head_count < records ? "--verify checks whole permutations: it cannot be combined with -n"
                                        : "--verify checks whole permutations: it cannot be combined with a --split "
                                          "that leaves records out");
}

void check_aligned_count(const std::string& first, std::uint64_t first_records, const std::string& other,
                         std::uint64_t other_records) {
  if (first_records == other_records) return;
  throw InputError("inputs differ in record count: '" + first + "' has " + std::to_string(first_records) + ", '" +
                   other + "' has " + std::to_string(other_records));
}

}  // namespace extshuffle::dataset

#include "extshuffle/dataset/record_index.hpp"

#include <nlohmann/json.hpp>

#include "extshuffle/errors.hpp"

namespace extshuffle::dataset {
namespace {

using json = nlohmann::ordered_json;

[[noreturn]] void malformed(const std::string& index_name, const std::string& why) {
  throw InputError("index '" + index_name + "': " + why);
}

// A field of `object` of the type asked, or malformed().
template <typename T>
T field(const json& object, const char* name, const std::string& index_name) {
  const auto at = object.find(name);
  if (at == object.end()) malformed(index_name, std::string("its header has no '") + name + "'");
  try {
    return at->template get<T>();
  } catch (const json::exception&) {
    malformed(index_name, std::string("its header's '") + name + "' is " + at->dump());
  }
}

}  // namespace

std::string index_path_beside(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return directory + "." + name + ".extshuffle-index";
}

std::string index_header_json(const IndexHeader& header) {
  json arrays = json::object();
  for (const auto& [name, array] : header.arrays) {
    arrays[name] = {{"dtype", array.dtype}, {"shape", array.shape}, {"offset", array.offset}, {"bytes", array.bytes}};
  }
  const IndexReading& r = header.reading;
  const json document = {
      {"index_version", kRecordIndexVersion},
      {"writer", std::string("extshuffle ") + EXTSHUFFLE_VERSION},
      {"input",
       {{"bytes", header.input.bytes}, {"mtime_ns", header.input.mtime_ns}, {"fingerprint", header.input.fingerprint}}},
      {"reading",
       {{"format", r.format},
        {"header_records", r.header_records},
        {"skip_empty", r.skip_empty},
        {"zero_terminated", r.zero_terminated},
        {"ignore_zeros", r.ignore_zeros},
        {"record_size", r.record_size}}},
      {"records", header.records},
      {"data_offset", header.data_offset},
      {"add_terminator", header.add_terminator},
      {"arrays", arrays}};
  return document.dump(-1, ' ', false, json::error_handler_t::replace);
}

IndexHeader parse_index_header(std::string_view text, const std::string& index_name) {
  json document;
  try {
    document = json::parse(text);
  } catch (const json::exception&) {
    malformed(index_name, "its header is not JSON (not an index, or a damaged one)");
  }
  if (!document.is_object()) malformed(index_name, "its header is not a JSON object");
  const auto version = field<int>(document, "index_version", index_name);
  if (version != kRecordIndexVersion) {
    malformed(index_name, "index version " + std::to_string(version) + ", this extshuffle reads version " +
                              std::to_string(kRecordIndexVersion) + " (rebuild it: extshuffle --index-only)");
  }
  IndexHeader header;
  const auto input = field<json>(document, "input", index_name);
  header.input.bytes = field<std::uint64_t>(input, "bytes", index_name);
  header.input.mtime_ns = field<std::int64_t>(input, "mtime_ns", index_name);
  header.input.fingerprint = field<std::string>(input, "fingerprint", index_name);
  const auto reading = field<json>(document, "reading", index_name);
  header.reading.format = field<std::string>(reading, "format", index_name);
  header.reading.header_records = field<std::uint64_t>(reading, "header_records", index_name);
  header.reading.skip_empty = field<bool>(reading, "skip_empty", index_name);
  header.reading.zero_terminated = field<bool>(reading, "zero_terminated", index_name);
  header.reading.ignore_zeros = field<bool>(reading, "ignore_zeros", index_name);
  header.reading.record_size = field<std::uint64_t>(reading, "record_size", index_name);
  header.records = field<std::uint64_t>(document, "records", index_name);
  header.data_offset = field<std::uint64_t>(document, "data_offset", index_name);
  header.add_terminator = field<bool>(document, "add_terminator", index_name);
  const auto arrays = field<json>(document, "arrays", index_name);
  if (!arrays.is_object()) malformed(index_name, "its header's 'arrays' is not an object");
  for (const auto& [name, value] : arrays.items()) {
    IndexArray array;
    array.dtype = field<std::string>(value, "dtype", index_name);
    array.shape = field<std::vector<std::uint64_t>>(value, "shape", index_name);
    array.offset = field<std::uint64_t>(value, "offset", index_name);
    array.bytes = field<std::uint64_t>(value, "bytes", index_name);
    header.arrays.emplace(name, std::move(array));
  }
  return header;
}

}  // namespace extshuffle::dataset

#include "extshuffle/formats/npy_header.hpp"

#include <cctype>
#include <cstring>
#include <utility>

#include "extshuffle/errors.hpp"

namespace extshuffle::formats {
namespace {

// A value of the Python literal subset numpy writes in .npy headers.
struct PyValue {
  enum class Kind { kString, kInteger, kBoolean, kNone, kTuple, kList, kDict } kind = Kind::kNone;
  std::string text;
  std::uint64_t integer = 0;
  bool boolean = false;
  std::vector<PyValue> items;
  // A dict's keys and values side by side: a std::pair of an incomplete
  // PyValue does not compile with clang and libstdc++ (the fuzz build).
  std::vector<std::string> keys;
  std::vector<PyValue> values;
};

class LiteralParser {
 public:
  LiteralParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  PyValue parse_whole() {
    PyValue value = parse_value();
    skip_space();
    if (at_ < text_.size()) fail("unexpected text after the header dict");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(name_ + ": malformed .npy header: " + why);
  }
  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  bool take_word(std::string_view word) {
    skip_space();
    if (text_.substr(at_, word.size()) == word) {
      at_ += word.size();
      return true;
    }
    return false;
  }

  PyValue parse_value() {
    skip_space();
    if (at_ >= text_.size()) fail("truncated");
    const char c = text_[at_];
    PyValue value;
    if (c == '\'' || c == '"') {
      value.kind = PyValue::Kind::kString;
      ++at_;
      while (at_ < text_.size() && text_[at_] != c) {
        if (text_[at_] == '\\' && at_ + 1 < text_.size()) ++at_;
        value.text += text_[at_++];
      }
      if (at_ >= text_.size()) fail("unterminated string");
      ++at_;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      value.kind = PyValue::Kind::kInteger;
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
        const std::uint64_t digit = static_cast<std::uint64_t>(text_[at_++] - '0');
        if (value.integer > (UINT64_MAX - digit) / 10) fail("number too large");
        value.integer = value.integer * 10 + digit;
      }
      take('L');  // Python 2 long suffix in old files
    } else if (take_word("True")) {
      value.kind = PyValue::Kind::kBoolean;
      value.boolean = true;
    } else if (take_word("False")) {
      value.kind = PyValue::Kind::kBoolean;
    } else if (take_word("None")) {
      value.kind = PyValue::Kind::kNone;
    } else if (c == '(' || c == '[') {
      const DepthGuard guard(*this);
      value.kind = c == '(' ? PyValue::Kind::kTuple : PyValue::Kind::kList;
      const char close = c == '(' ? ')' : ']';
      ++at_;
      while (!take(close)) {
        value.items.push_back(parse_value());
        if (!take(',')) {
          if (!take(close)) fail(std::string("expected ',' or '") + close + "'");
          break;
        }
      }
    } else if (c == '{') {
      const DepthGuard guard(*this);
      value.kind = PyValue::Kind::kDict;
      ++at_;
      while (!take('}')) {
        PyValue key = parse_value();
        if (key.kind != PyValue::Kind::kString) fail("dict keys must be strings");
        if (!take(':')) fail("expected ':'");
        value.keys.push_back(key.text);
        value.values.push_back(parse_value());
        if (!take(',')) {
          if (!take('}')) fail("expected ',' or '}'");
          break;
        }
      }
    } else {
      fail(std::string("unexpected character '") + c + "'");
    }
    return value;
  }

  // Nesting is recursion: without a bound, a header of a few thousand '['
  // overflowed the stack (found by fuzz/npy_header_fuzz; regression input
  // fuzz/corpus/npy_header_fuzz/regression_deep_nesting). numpy's own
  // headers nest a structured dtype's fields a few levels deep at most.
  static constexpr int kMaxDepth = 64;
  struct DepthGuard {
    explicit DepthGuard(LiteralParser& parser) : parser(parser) {
      if (++parser.depth_ > kMaxDepth) parser.fail("nested more than 64 levels deep");
    }
    ~DepthGuard() { --parser.depth_; }
    LiteralParser& parser;
  };

  std::string_view text_;
  const std::string& name_;
  std::size_t at_ = 0;
  int depth_ = 0;
};

std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, const std::string& name) {
  if (a != 0 && b > UINT64_MAX / a) throw InputError(name + ": .npy array too large");
  return a * b;
}

std::uint64_t item_bytes_of(const PyValue& descr, const std::string& name);

// A structured dtype: a list of (name, dtype) or (name, dtype, shape), packed.
std::uint64_t structured_item_bytes(const PyValue& fields, const std::string& name) {
  std::uint64_t total = 0;
  for (const PyValue& field : fields.items) {
    if (field.kind != PyValue::Kind::kTuple || field.items.size() < 2 || field.items.size() > 3) {
      throw InputError(name + ": unsupported .npy dtype field (expected (name, dtype[, shape]))");
    }
    std::uint64_t bytes = item_bytes_of(field.items[1], name);
    if (field.items.size() == 3) {
      const PyValue& shape = field.items[2];
      if (shape.kind == PyValue::Kind::kInteger) {
        bytes = checked_product(bytes, shape.integer, name);
      } else {
        for (const PyValue& extent : shape.items) bytes = checked_product(bytes, extent.integer, name);
      }
    }
    if (bytes > UINT64_MAX - total) throw InputError(name + ": .npy dtype too large");
    total += bytes;
  }
  return total;
}

std::uint64_t item_bytes_of(const PyValue& descr, const std::string& name) {
  if (descr.kind == PyValue::Kind::kList) return structured_item_bytes(descr, name);
  if (descr.kind != PyValue::Kind::kString) throw InputError(name + ": unsupported .npy dtype description");
  return npy_item_bytes(descr.text, name);
}

// A key's value as NumPy reads the header (ast.literal_eval of a dict
// literal): a key given twice takes its last value. Taking the first read
// rows of another size than NumPy's, so records came out cut across rows.
const PyValue* find(const PyValue& dict, const char* key) {
  for (std::size_t k = dict.keys.size(); k-- > 0;) {
    if (dict.keys[k] == key) return &dict.values[k];
  }
  return nullptr;
}

}  // namespace

bool starts_with_npy_magic(std::string_view head) { return head.substr(0, kNpyMagic.size()) == kNpyMagic; }

std::uint64_t parse_npy_header_size(std::string_view head) {
  if (head.size() < 10) return head.size();
  if (static_cast<unsigned char>(head[6]) == 1) {
    return 10 + (static_cast<unsigned char>(head[8]) | static_cast<unsigned>(static_cast<unsigned char>(head[9])) << 8);
  }
  if (head.size() < 12) return head.size();
  std::uint64_t dict_bytes = 0;
  for (int k = 3; k >= 0; --k) dict_bytes = dict_bytes << 8 | static_cast<unsigned char>(head[8 + k]);
  return 12 + dict_bytes;
}

std::uint64_t npy_item_bytes(std::string_view descr, const std::string& name) {
  std::string_view type = descr;
  if (!type.empty() && std::strchr("<>|=", type.front()) != nullptr) type.remove_prefix(1);
  if (type.empty()) throw InputError(name + ": empty .npy dtype");
  const char kind = type.front();
  type.remove_prefix(1);
  if (kind == 'O') throw InputError(name + ": .npy arrays of Python objects (dtype 'O') cannot be shuffled as records");
  std::uint64_t count = 0;
  std::size_t digits = 0;
  while (digits < type.size() && std::isdigit(static_cast<unsigned char>(type[digits]))) {
    const std::uint64_t digit = static_cast<std::uint64_t>(type[digits] - '0');
    if (count > (UINT64_MAX - digit) / 10) throw InputError(name + ": .npy dtype too large");
    count = count * 10 + digit;
    ++digits;
  }
  const std::string_view rest = type.substr(digits);
  const bool plain = rest.empty();
  switch (kind) {
    case '?':
      if (plain && digits == 0) return 1;
      break;
    case 'b': case 'i': case 'u': case 'f': case 'c': case 'S': case 'a': case 'V':
      if (plain && digits > 0) return count;
      break;
    case 'U':
      if (plain && digits > 0) return 4 * count;
      break;
    case 'M': case 'm':  // datetime64 / timedelta64: 8 bytes, with an optional [unit]
      if (digits > 0 && (rest.empty() || (rest.front() == '[' && rest.back() == ']'))) return count;
      break;
    default:
      break;
  }
  throw InputError(name + ": unsupported .npy dtype '" + std::string(descr) + "'");
}

NpyHeader parse_npy_header(std::string_view head, const std::string& name) {
  if (!starts_with_npy_magic(head)) throw InputError(name + ": not a .npy file (no \\x93NUMPY magic)");
  if (head.size() < 10) throw InputError(name + ": truncated .npy header");
  NpyHeader header;
  header.major_version = static_cast<unsigned char>(head[6]);
  if (header.major_version < 1 || header.major_version > 3) {
    throw InputError(name + ": unsupported .npy format version " + std::to_string(header.major_version));
  }
  if (header.major_version > 1 && head.size() < 12) throw InputError(name + ": truncated .npy header");
  const std::uint64_t prefix = header.major_version == 1 ? 10 : 12;  // the length field is 2 or 4 bytes
  header.header_bytes = parse_npy_header_size(head);
  const std::uint64_t dict_bytes = header.header_bytes - prefix;
  if (head.size() < header.header_bytes) throw InputError(name + ": truncated .npy header");
  const PyValue dict = LiteralParser(head.substr(prefix, dict_bytes), name).parse_whole();
  if (dict.kind != PyValue::Kind::kDict) throw InputError(name + ": malformed .npy header: not a dict");
  const PyValue* descr = find(dict, "descr");
  const PyValue* fortran = find(dict, "fortran_order");
  const PyValue* shape = find(dict, "shape");
  if (!descr || !fortran || !shape || fortran->kind != PyValue::Kind::kBoolean ||
      shape->kind != PyValue::Kind::kTuple) {
    throw InputError(name + ": malformed .npy header: needs 'descr', 'fortran_order' and 'shape'");
  }
  header.item_bytes = item_bytes_of(*descr, name);
  header.descr = descr->kind == PyValue::Kind::kString ? descr->text : "structured";
  for (const PyValue& extent : shape->items) {
    if (extent.kind != PyValue::Kind::kInteger) throw InputError(name + ": malformed .npy header: bad shape");
    header.shape.push_back(extent.integer);
  }
  if (header.shape.empty()) throw InputError(name + ": a 0-dimensional .npy array has no axis 0 to shuffle");
  if (fortran->boolean && header.shape.size() > 1) {
    throw InputError(name + ": Fortran-order .npy arrays are not supported (axis 0 is not contiguous); "
                            "save it in C order (numpy.ascontiguousarray)");
  }
  header.rows = header.shape[0];
  header.row_bytes = header.item_bytes;
  for (std::size_t d = 1; d < header.shape.size(); ++d) {
    header.row_bytes = checked_product(header.row_bytes, header.shape[d], name);
  }
  checked_product(header.rows, header.row_bytes, name);
  return header;
}

}  // namespace extshuffle::formats

// Whether the inputs of one dataset agree on their format (docs/conventions.md, Record formats).
#include "extshuffle/dataset/format_agreement.hpp"

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/npy_header.hpp"

namespace extshuffle::dataset {
namespace {

// A header for a message: printable, on one line, shortened.
std::string shown_header(const std::string& header) {
  std::string text;
  for (char c : header.substr(0, 60)) {
    text += c == '\n' ? std::string("\\n") : c == '\r' ? std::string("\\r") : c == '\0' ? std::string("\\0") : std::string(1, c);
  }
  return "'" + text + (header.size() > 60 ? "...'" : "'");
}

// The shape of one row, as Python writes a tuple: (), (3,), (3, 4).
std::string trailing_shape(const formats::NpyHeader& npy) {
  std::string text = "(";
  for (std::size_t k = 1; k < npy.shape.size(); ++k) text += (k > 1 ? ", " : "") + std::to_string(npy.shape[k]);
  return text + (npy.shape.size() == 2 ? ",)" : ")");
}

}  // namespace

void check_inputs_agree(const InputLayout& first, const std::string& first_path, const InputLayout& layout,
                  const std::string& path) {
  const std::string a = input_display_name(first_path), b = input_display_name(path);
  if (format_name(layout.format) != format_name(first.format)) {
    throw InputError("inputs differ in format: " + a + " is " + format_name(first.format) + ", " + b + " is " +
                     format_name(layout.format) + " (give --format to read them alike)");
  }
  if (layout.framed() && layout.header != first.header) {
    throw InputError("inputs differ in their header: " + a + " has " + shown_header(first.header) + ", " + b + " has " +
                     shown_header(layout.header));
  }
  if (layout.format.kind == formats::RecordKind::kNpy) {
    const formats::NpyHeader x = formats::parse_npy_header(first.header, a);
    const formats::NpyHeader y = formats::parse_npy_header(layout.header, b);
    if (x.descr != y.descr) {
      throw InputError("inputs differ in dtype: " + a + " holds '" + x.descr + "', " + b + " holds '" + y.descr + "'");
    }
    if (trailing_shape(x) != trailing_shape(y)) {
      throw InputError("inputs differ in the shape of a row: " + a + " has rows of shape " + trailing_shape(x) + ", " +
                       b + " of shape " + trailing_shape(y));
    }
  }
  if (!layout.framed() && layout.record_size != first.record_size) {
    throw InputError("inputs differ in record size: " + a + " has records of " + std::to_string(first.record_size) +
                     " bytes, " + b + " of " + std::to_string(layout.record_size));
  }
}


}  // namespace extshuffle::dataset

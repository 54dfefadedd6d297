// Output of permlab: one human-readable summary line and one machine-readable
// line per result, "LAB key=value key=value ...", which bench/quality/*.py
// parse (values never contain spaces).
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

namespace permlab {

class LabLine {
 public:
  explicit LabLine(const std::string& test) { text_ << "LAB test=" << test; }
  // Appends already formatted key=value fields (e.g. describe(options)).
  LabLine& fields(const std::string& key_values);
  LabLine& add(const std::string& key, const std::string& value);
  LabLine& add(const std::string& key, std::uint64_t value);
  LabLine& add(const std::string& key, int value);
  LabLine& add(const std::string& key, bool value);  // 1 or 0
  LabLine& add(const std::string& key, double value);  // 10 significant digits
  std::string str() const { return text_.str(); }

 private:
  std::ostringstream text_;
};

// 10 significant digits, "inf"/"nan" as such.
std::string format_number(double value, int digits = 10);

}  // namespace permlab

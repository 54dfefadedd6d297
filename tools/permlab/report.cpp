#include "report.hpp"

#include <cstdio>

namespace permlab {

std::string format_number(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
  return buffer;
}

LabLine& LabLine::fields(const std::string& key_values) {
  if (!key_values.empty()) text_ << ' ' << key_values;
  return *this;
}
LabLine& LabLine::add(const std::string& key, const std::string& value) {
  text_ << ' ' << key << '=' << value;
  return *this;
}
LabLine& LabLine::add(const std::string& key, std::uint64_t value) { return add(key, std::to_string(value)); }
LabLine& LabLine::add(const std::string& key, int value) { return add(key, std::to_string(value)); }
LabLine& LabLine::add(const std::string& key, bool value) { return add(key, std::string(value ? "1" : "0")); }
LabLine& LabLine::add(const std::string& key, double value) { return add(key, format_number(value)); }

}  // namespace permlab

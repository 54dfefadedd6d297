#include "long_option_prefixes.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>

namespace extshuffle::cli {

std::vector<std::string> expand_long_option_prefixes(const CLI::App& app, std::vector<std::string> words) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back(name);
  }
  for (std::string& arg : words) {
    if (arg == "--") break;
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) continue;
    const std::size_t equals = arg.find('=');
    const std::string typed = arg.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
    if (std::find(names.begin(), names.end(), typed) != names.end()) continue;
    const std::string* match = nullptr;
    std::size_t matches = 0;
    for (const std::string& name : names) {
      if (name.compare(0, typed.size(), typed) == 0) {
        match = &name;
        ++matches;
      }
    }
    if (matches == 1) arg = "--" + *match + (equals == std::string::npos ? "" : arg.substr(equals));
  }
  std::reverse(words.begin(), words.end());
  return words;
}

}  // namespace extshuffle::cli

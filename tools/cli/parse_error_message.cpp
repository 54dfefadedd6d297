#include "parse_error_message.hpp"

#include <regex>

namespace extshuffle::cli {
namespace {

// The option CLI11 names at the start of a message ("--threads: ..."), or "".
std::string leading_option(const std::string& text) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex("^(-[-A-Za-z0-9,]+):"))) return m[1];
  return "";
}

}  // namespace

std::string parse_error_message(const CLI::ParseError& error) {
  const std::string text = error.what();
  std::smatch m;
  // "Could not convert: --head-count = A"
  if (std::regex_search(text, m, std::regex("Could not convert: (\\S+) = (.*)$"))) {
    return "invalid " + m[1].str() + " '" + m[2].str() + "': expected a whole number";
  }
  // "--threads: Value x not in range 0.000000 to 1.79e308"
  if (std::regex_search(text, m, std::regex("^(\\S+): Value (.*) not in range"))) {
    return "invalid " + m[1].str() + " '" + m[2].str() + "': expected a whole number of at least 0";
  }
  // "--format: bogus not in {auto,binary,lines}"
  if (std::regex_search(text, m, std::regex("^(\\S+): (.*) not in \\{(.*)\\}$"))) {
    return "invalid " + m[1].str() + " '" + m[2].str() + "': expected one of " +
           std::regex_replace(m[3].str(), std::regex(","), ", ");
  }
  // "The following argument was not expected: --bogus" (or "arguments were": a list)
  if (std::regex_search(text, m, std::regex("not expected: (\\S+)"))) {
    const std::string word = m[1];
    if (!word.empty() && word[0] == '-' && word != "-") return word + ": unknown option (see --help)";
    return "'" + word + "': one argument too many (see --help)";
  }
  // "--memory: 1 required TEXT missing"
  if (std::regex_search(text, m, std::regex("^(\\S+): \\d+ required \\S+ missing"))) {
    return m[1].str() + ": needs a value";
  }
  // "--seed: At Most 1 required but received 2"
  if (std::regex_search(text, m, std::regex("^(\\S+): At Most \\d+ required but received (\\d+)"))) {
    return m[1].str() + ": given " + m[2].str() + " times, allowed once";
  }
  const std::string option = leading_option(text);
  if (!option.empty()) return option + ": " + text.substr(option.size() + 2);
  return "command line: " + text;
}

}  // namespace extshuffle::cli

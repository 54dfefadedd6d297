// GNU getopt accepts any unambiguous prefix of a long option (`shuf --rep`,
// `sort --buffer=1G`, `shuf --head=3`); CLI11 does not. shuf users type them,
// so the command line's long options are expanded to their full names before
// CLI11 parses it.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace extshuffle::cli {

// `words` (a command line after the program's name) with every "--PREFIX"
// and "--PREFIX=VALUE" whose PREFIX starts exactly one long option of `app`
// (and is not one itself) replaced by that option's full name; an ambiguous
// or unknown prefix stays as typed (CLI11 then reports it), and nothing after
// a bare "--" is touched. Returned in reverse order, as
// CLI::App::parse(std::vector<std::string>&&) takes them.
std::vector<std::string> expand_long_option_prefixes(const CLI::App& app, std::vector<std::string> words);

}  // namespace extshuffle::cli

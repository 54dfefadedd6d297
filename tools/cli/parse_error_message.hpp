// CLI11's parse errors in the tool's own words: "<what>: <why>", so that
// every message reads "extshuffle: <what>: <why>" and none of CLI11's
// wording ("Could not convert", "At Most 1 required", "not in {..}")
// reaches the user.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace extshuffle::cli {

std::string parse_error_message(const CLI::ParseError& error);

}  // namespace extshuffle::cli

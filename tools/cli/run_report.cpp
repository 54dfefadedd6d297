#include "run_report.hpp"

#include <cstdio>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "result_fields.hpp"
#include "standard_streams.hpp"

namespace extshuffle::cli {

void set_up_logging(const Options& options, const char* program, bool errors_only) {
  auto logger = spdlog::stderr_color_mt("extshuffle");
  logger->set_pattern(std::string(program) + ": %v");
  logger->set_level(options.quiet || errors_only ? spdlog::level::err
                    : options.verbose            ? spdlog::level::debug
                                                 : spdlog::level::warn);
  spdlog::set_default_logger(logger);
  // STXXL prints its warnings on std::cerr; our own messages go through
  // stdio and spdlog, so std::cerr carries nothing but STXXL: mute it unless
  // -v, and even then drop its chatter about buffer alignment.
  filter_library_chatter(options.verbose);
}

void say_messages(const std::vector<std::string>& notes, const std::vector<std::string>& warnings,
                  const std::vector<std::string>& output_warnings) {
  for (const std::string& note : notes) spdlog::debug("{}", note);
  for (const std::string& warning : warnings) spdlog::warn("warning: {}", warning);
  // At the level -q keeps: about the files on disk.
  for (const std::string& warning : output_warnings) spdlog::error("warning: {}", warning);
}

std::string result_line(const RunStats& stats, std::uint64_t seed) {
  std::string line = "RESULT";
  append_fields(line, kResultFields, stats);
  return line + " seed=" + std::to_string(seed);
}

}  // namespace extshuffle::cli

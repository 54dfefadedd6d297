#include "run_report.hpp"

#include <cstdio>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

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

std::string result_line(const RunStats& s, std::uint64_t seed) {
  char line[896];
  std::snprintf(line, sizeof line,
                "RESULT records=%llu bytes=%llu levels=%u passes=%u seconds=%.3f bytes_read=%llu "
                "bytes_written=%llu peak_rss_bytes=%llu seconds_reading=%.3f seconds_shuffling=%.3f "
                "seconds_scattering=%.3f seconds_writing=%.3f huge_page_bytes=%llu seed=%llu",
                static_cast<unsigned long long>(s.records), static_cast<unsigned long long>(s.bytes), s.levels,
                s.passes, s.seconds, static_cast<unsigned long long>(s.bytes_read),
                static_cast<unsigned long long>(s.bytes_written), static_cast<unsigned long long>(s.peak_rss_bytes),
                s.seconds_reading, s.seconds_shuffling, s.seconds_scattering, s.seconds_writing,
                static_cast<unsigned long long>(s.huge_page_bytes), static_cast<unsigned long long>(seed));
  return line;
}

}  // namespace extshuffle::cli

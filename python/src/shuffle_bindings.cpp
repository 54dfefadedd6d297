// extshuffle._native.run_job: the CLI's Job, built by the CLI's own
// make_job() from options named as the CLI's long options, run by the
// driver's public API (extshuffle/driver/run_job.hpp). The one place where
// Python's keyword arguments become the command line's options.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "extshuffle/driver/run_job.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/block_file.hpp"
#include "make_job.hpp"
#include "options.hpp"
#include "standard_streams.hpp"

namespace py = pybind11;
using namespace py::literals;

namespace extshuffle::python {
namespace {

// A number given for a size is bytes (the CLI's bare number is KiB for -S).
std::string size_text(const py::handle& value) {
  if (py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value)) return py::str(value).cast<std::string>() + "b";
  return py::str(value).cast<std::string>();
}

using Setter = std::function<void(cli::Options&, const py::handle&)>;

const std::map<std::string, Setter>& option_setters() {
  auto text = [](std::string cli::Options::*field) {
    return Setter([field](cli::Options& o, const py::handle& v) { o.*field = py::str(v).cast<std::string>(); });
  };
  auto size = [](std::string cli::Options::*field) {
    return Setter([field](cli::Options& o, const py::handle& v) { o.*field = size_text(v); });
  };
  auto flag = [](bool cli::Options::*field) {
    return Setter([field](cli::Options& o, const py::handle& v) { o.*field = v.cast<bool>(); });
  };
  static const std::map<std::string, Setter> setters{
      {"record_size", size(&cli::Options::record_size)},
      {"memory", size(&cli::Options::memory)},
      {"tmpdir", text(&cli::Options::tmpdir)},
      {"input_range", text(&cli::Options::input_range)},
      {"device", text(&cli::Options::device)},
      {"format", text(&cli::Options::format)},
      {"random_source", text(&cli::Options::random_source)},
      {"shards", text(&cli::Options::shards)},
      {"shard_size", size(&cli::Options::shard_size)},
      {"split", text(&cli::Options::split)},
      {"manifest", text(&cli::Options::manifest)},
      {"zero_terminated", flag(&cli::Options::zero_terminated)},
      {"skip_empty", flag(&cli::Options::skip_empty)},
      {"verify", flag(&cli::Options::verify)},
      {"dry_run", flag(&cli::Options::dry_run)},
      {"clean", flag(&cli::Options::clean)},
      {"repeat", flag(&cli::Options::repeat)},
      {"ignore_zeros", flag(&cli::Options::ignore_zeros)},
      {"index", flag(&cli::Options::index)},
      {"index_only", flag(&cli::Options::index_only)},
      {"threads", [](cli::Options& o, const py::handle& v) { o.threads = v.cast<int>(); }},
      {"leaf_records", [](cli::Options& o, const py::handle& v) { o.leaf_records = v.cast<std::uint64_t>(); }},
      {"fanout", [](cli::Options& o, const py::handle& v) { o.fanout = v.cast<std::uint64_t>(); }},
      {"head_count", [](cli::Options& o, const py::handle& v) { o.head_count = v.cast<std::uint64_t>(); }},
      {"header",
       [](cli::Options& o, const py::handle& v) {
         if (py::isinstance<py::bool_>(v)) {
           if (v.cast<bool>()) o.header = "1";
         } else {
           o.header = py::str(v).cast<std::string>();
         }
       }},
  };
  return setters;
}

cli::Options cli_options(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                         const std::string& seed, const py::dict& options) {
  cli::Options o;
  o.operands = inputs;
  o.outputs = outputs;
  o.seed = seed;
  o.quiet = true;  // warnings come back in the result
  for (const auto& [key, value] : options) {
    const std::string name = py::str(key).cast<std::string>();
    const auto setter = option_setters().find(name);
    if (setter == option_setters().end()) throw UsageError("unrecognized option '" + name + "'");
    if (value.is_none()) continue;
    try {
      setter->second(o, value);
    } catch (const py::cast_error&) {
      throw UsageError("invalid " + name + " '" + py::str(value).cast<std::string>() + "'");
    }
  }
  if (o.threads < 0) throw UsageError("invalid threads '" + std::to_string(o.threads) + "': expected a count");
  return o;
}

py::dict stats_dict(const RunStats& s) {
  return py::dict("records"_a = s.records, "bytes"_a = s.bytes, "levels"_a = s.levels, "passes"_a = s.passes,
                  "seconds"_a = s.seconds, "bytes_read"_a = s.bytes_read, "bytes_written"_a = s.bytes_written,
                  "peak_rss_bytes"_a = s.peak_rss_bytes, "seconds_reading"_a = s.seconds_reading,
                  "seconds_shuffling"_a = s.seconds_shuffling, "seconds_scattering"_a = s.seconds_scattering,
                  "seconds_writing"_a = s.seconds_writing);
}

py::dict result_dict(const RunResult& r) {
  py::dict d = stats_dict(r.stats);
  py::list inputs, outputs;
  for (const InputFileInfo& f : r.inputs) inputs.append(py::dict("path"_a = f.path, "bytes"_a = f.bytes, "records"_a = f.records));
  for (const OutputFileInfo& f : r.outputs) {
    outputs.append(py::dict("path"_a = f.path, "split"_a = f.split, "shard"_a = f.shard, "shards"_a = f.shards,
                            "records"_a = f.records, "bytes"_a = f.bytes, "xxh64"_a = f.xxh64));
  }
  d["inputs"] = inputs;
  d["outputs"] = outputs;
  d["format"] = r.format;
  d["records_written"] = r.records_written;
  d["dry_run_text"] = r.dry_run_text;
  d["notes"] = r.notes;
  std::vector<std::string> warnings = r.warnings;
  warnings.insert(warnings.end(), r.output_warnings.begin(), r.output_warnings.end());
  d["warnings"] = warnings;
  d["stale_pieces"] = r.stale_pieces;
  return d;
}

// The CLI's one-line message (tools/extshuffle/main.cpp), less its "extshuffle: ".
std::string message_line(const std::string& message, const char* what) {
  const bool named = message.find(": ") != std::string::npos || message.starts_with(std::string(what) + " ");
  std::string line = named ? message : std::string(what) + ": " + message;
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  return line;
}

// Progress as 17-byte records on `fd` ('P', done, total), atomic on a pipe.
ProgressCallback progress_to(int fd) {
  return [fd](std::uint64_t done, std::uint64_t total) {
    unsigned char record[17] = {'P'};
    std::memcpy(record + 1, &done, 8);
    std::memcpy(record + 9, &total, 8);
    while (::write(fd, record, sizeof record) < 0 && errno == EINTR) {
    }
  };
}

// (0, [one dict a dataset]) or (exit code, message). The GIL is released while the Job runs.
py::tuple run_job(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                  const std::string& seed, const py::dict& options, int progress_fd) {
  // As the tool's main(): STXXL's std::cerr chatter muted, its IO threads
  // started. run_job runs in a child process of its own (extshuffle/_shuffle.py).
  cli::filter_library_chatter(false);
  io::start_io_threads();
  try {
    Job job = cli::make_job(cli_options(inputs, outputs, seed, options));
    if (progress_fd >= 0) job.options.progress = progress_to(progress_fd);
    JobResult result;
    {
      py::gil_scoped_release release;
      result = driver::run_job(job);
    }
    py::list datasets;
    for (const RunResult& r : result.datasets) datasets.append(result_dict(r));
    return py::make_tuple(0, datasets);
  } catch (const UsageError& e) {
    return py::make_tuple(e.exit_code(), message_line(e.what(), "command line"));
  } catch (const InputError& e) {
    return py::make_tuple(e.exit_code(), message_line(e.what(), "input"));
  } catch (const Error& e) {
    return py::make_tuple(e.exit_code(), message_line(e.what(), "run"));
  } catch (const std::bad_alloc&) {
    return py::make_tuple(1, std::string("run: out of memory: lower --memory or raise the process's memory limit"));
  } catch (const py::error_already_set&) {
    throw;
  } catch (const std::exception& e) {
    return py::make_tuple(1, message_line(e.what(), "internal error"));
  }
}

}  // namespace

void bind_shuffle(py::module_& module) {
  module.def("run_job", &run_job, "inputs"_a, "outputs"_a, "seed"_a, "options"_a, "progress_fd"_a = -1);
}

}  // namespace extshuffle::python

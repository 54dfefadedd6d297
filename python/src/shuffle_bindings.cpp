// extshuffle._native.run_job: the CLI's Job from the command line that
// shuffle() made of its arguments (extshuffle/_shuffle.py), through the
// CLI's own parser, make_job() and error mapping (tools/cli), run by
// the driver's public API (extshuffle/driver/run_job.hpp); and
// end_with_parent, which ties the child that runs it to its caller.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "bindings.hpp"
#include "extshuffle/driver/error_report.hpp"
#include "extshuffle/driver/run_job.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/block_file.hpp"
#include "cli/make_job.hpp"
#include "cli/option_table.hpp"
#include "cli/options.hpp"
#include "cli/result_fields.hpp"
#include "cli/standard_streams.hpp"
#include "cli/worker_threads.hpp"

namespace py = pybind11;
using namespace py::literals;

namespace extshuffle::python {
namespace {

// Text of the run (paths, messages) as Python gives file names: undecodable
// bytes kept as surrogates (os.fsdecode), so that os.fsencode gives them back.
py::str fs_text(const std::string& text) {
  PyObject* decoded = PyUnicode_DecodeFSDefaultAndSize(text.data(), static_cast<Py_ssize_t>(text.size()));
  if (decoded == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(decoded);
}

py::list fs_texts(const std::vector<std::string>& texts) {
  py::list list;
  for (const std::string& text : texts) list.append(fs_text(text));
  return list;
}

// Whether `c` may be part of an option's name ("--shard-size", "-S").
bool name_character(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

// `line` with every "--NAME" or "-X" of an option of the CLI's parser, outside
// quotes ('...': values and paths), named as shuffle()'s keyword: "NAME=" with
// "_" for "-" ("invalid --memory ''" reads "invalid memory= ''").
std::string keyword_message(const std::string& line) {
  std::map<std::string, std::string> keywords;  // "--memory" and "-S" -> "memory="
  for (const cli::OptionNames& names : cli::option_names()) {
    std::string keyword = names.long_name + "=";
    std::replace(keyword.begin(), keyword.end(), '-', '_');
    keywords["--" + names.long_name] = keyword;
    for (const std::string& short_name : names.short_names) keywords["-" + short_name] = keyword;
  }
  std::string out;
  bool quoted = false;
  for (std::size_t at = 0; at < line.size();) {
    const bool starts_name = line[at] == '-' && !quoted && (at == 0 || !name_character(line[at - 1]));
    std::size_t end = at + 1;
    while (starts_name && end < line.size() && name_character(line[end])) ++end;
    const auto keyword = starts_name ? keywords.find(line.substr(at, end - at)) : keywords.end();
    if (keyword != keywords.end()) {
      out += keyword->second;
      at = end;
      continue;
    }
    // A quote opens after a space and closes before one, a colon or a comma
    // (an apostrophe inside a word, "process's", does neither).
    if (line[at] == '\'') {
      const bool opens = !quoted && (at == 0 || line[at - 1] == ' ' || line[at - 1] == '(');
      const bool closes = quoted && (at + 1 == line.size() || std::strchr(" :,)", line[at + 1]) != nullptr);
      if (opens || closes) quoted = !quoted;
    }
    out += line[at++];
  }
  return out;
}

// The RESULT line's fields (cli/result_fields.hpp), the seed aside: the caller gave it.
py::dict stats_dict(const RunStats& s) {
  py::dict d;
  cli::for_each_field(cli::kResultFields, s, [&](const char* name, auto value) { d[name] = value; });
  return d;
}

py::dict result_dict(const RunResult& r) {
  py::dict d = stats_dict(r.stats);
  py::list inputs, outputs;
  for (const InputFileInfo& f : r.inputs) {
    inputs.append(py::dict("path"_a = fs_text(f.path), "bytes"_a = f.bytes, "records"_a = f.records));
  }
  for (const OutputFileInfo& f : r.outputs) {
    outputs.append(py::dict("path"_a = fs_text(f.path), "split"_a = fs_text(f.split), "shard"_a = f.shard,
                            "shards"_a = f.shards, "records"_a = f.records, "bytes"_a = f.bytes, "xxh64"_a = f.xxh64));
  }
  d["inputs"] = inputs;
  d["outputs"] = outputs;
  d["format"] = r.format;
  d["records_written"] = r.records_written;
  d["dry_run_text"] = fs_text(r.dry_run_text);
  d["notes"] = fs_texts(r.notes);
  std::vector<std::string> warnings = r.warnings;
  warnings.insert(warnings.end(), r.output_warnings.begin(), r.output_warnings.end());
  d["warnings"] = fs_texts(warnings);
  d["stale_pieces"] = fs_texts(r.stale_pieces);
  return d;
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

// (0, [one dict a dataset]) or (exit code, message): `words` is the command
// line shuffle() made of its arguments (extshuffle/_shuffle.py), parsed and
// checked by the CLI's own parser and make_job, its errors worded by the
// library's describe_error with the options named as keywords. The GIL is
// released while the Job runs.
py::tuple run_job(const std::vector<std::string>& words, int progress_fd) {
  // As the tool's main(): STXXL's std::cerr chatter muted, its IO threads
  // started. run_job runs in a child process of its own (extshuffle/_shuffle.py).
  cli::filter_library_chatter(false);
  io::start_io_threads();
  try {
    cli::Options options;
    if (cli::parse_words(words, options)) throw UsageError("--help and --version are the program's");
    options.quiet = true;  // warnings come back in the result
    Job job = cli::make_job(options);
    cli::start_worker_threads(job.options.run.threads);
    if (progress_fd >= 0) job.options.run.progress = progress_to(progress_fd);
    JobResult result;
    {
      py::gil_scoped_release release;
      result = driver::run_job(job);
    }
    py::list datasets;
    for (const RunResult& r : result.datasets) datasets.append(result_dict(r));
    return py::make_tuple(0, datasets);
  } catch (const py::error_already_set&) {
    throw;
  } catch (...) {
    const driver::ErrorReport report = driver::describe_error(std::current_exception());
    return py::make_tuple(report.exit_code, fs_text(keyword_message(report.line)));
  }
}

// The child dies with its caller: SIGTERM (the library's cleanup, as for
// the tool) when the thread that started it ends. False when `caller` is
// no longer its parent: the caller ended before the request took hold.
bool end_with_parent(int caller) {
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) throw std::system_error(errno, std::generic_category(), "prctl");
  return ::getppid() == caller;
}

// The keywords shuffle() takes, from the options' table (cli/option_table.hpp):
// each long option's name with "_" for "-" -> "flag", "size" or "value".
py::dict option_keywords() {
  py::dict keywords;
  for (const cli::OptionRow& row : cli::option_table()) {
    if (row.keyword == cli::Keyword::kNone) continue;
    std::string name = cli::long_name(row);
    std::replace(name.begin(), name.end(), '-', '_');
    keywords[py::str(name)] = row.keyword == cli::Keyword::kFlag   ? "flag"
                              : row.keyword == cli::Keyword::kSize ? "size"
                                                                   : "value";
  }
  return keywords;
}

}  // namespace

void bind_shuffle(py::module_& module) {
  module.def("run_job", &run_job, "words"_a, "progress_fd"_a = -1);
  module.def("end_with_parent", &end_with_parent, "caller"_a);
  module.def("option_keywords", &option_keywords);
}

}  // namespace extshuffle::python

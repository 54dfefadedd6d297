// extshuffle._native's record reading (dataset/indexed_dataset.hpp): the
// files of a dataset opened through their record indexes, and batches of
// records read into Python objects allocated first, the reads themselves
// with the GIL released. The Python side (extshuffle/_dataset.py) finds or
// builds the indexes and shapes the records (dicts of tar members, rows).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "extshuffle/dataset/dataset_paths.hpp"
#include "extshuffle/dataset/index_identity.hpp"
#include "extshuffle/dataset/indexed_dataset.hpp"
#include "extshuffle/dataset/record_index.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/formats/tar.hpp"

namespace py = pybind11;
using namespace py::literals;

namespace extshuffle::python {
namespace {

using dataset::IndexedRecords;
using dataset::ReadPlan;
using dataset::RecordForm;

// The Dataset's reading options, named as the CLI's (format, header,
// skip_empty, zero_terminated, ignore_zeros, record_size).
dataset::DatasetOptions reading_options(const py::dict& options) {
  dataset::DatasetOptions o;
  for (const auto& [key, value] : options) {
    const std::string name = py::str(key).cast<std::string>();
    if (value.is_none()) continue;
    if (name == "format") {
      const std::string word = py::str(value).cast<std::string>();
      const std::optional<formats::Format> format = formats::format_named(word);
      if (!format) {
        std::string words = formats::kFormatWords;
        for (std::size_t comma = words.find(','); comma != std::string::npos; comma = words.find(',', comma + 2)) {
          words.replace(comma, 1, ", ");
        }
        throw UsageError("invalid format= '" + word + "': expected one of " + words);
      }
      o.format = *format;
    } else if (name == "header") {
      o.header_lines = value.cast<std::int64_t>();
    } else if (name == "skip_empty") {
      o.skip_empty = value.cast<bool>();
    } else if (name == "zero_terminated") {
      o.zero_terminated = value.cast<bool>();
    } else if (name == "ignore_zeros") {
      o.ignore_zeros = value.cast<bool>();
    } else if (name == "record_size") {
      o.record_size = value.cast<std::size_t>();
    } else {
      throw UsageError("unrecognized option '" + name + "'");
    }
  }
  return o;
}

// Python bytes objects of the plan's segment sizes, and where each one's
// bytes go (written before the object is shared, as CPython allows).
std::vector<py::bytes> allocate(const ReadPlan& plan, std::vector<std::byte*>& targets) {
  std::vector<py::bytes> objects;
  objects.reserve(plan.segment_bytes.size());
  targets.reserve(plan.segment_bytes.size());
  for (const std::uint64_t bytes : plan.segment_bytes) {
    PyObject* object = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(bytes));
    if (object == nullptr) throw py::error_already_set();
    objects.push_back(py::reinterpret_steal<py::bytes>(object));
    targets.push_back(reinterpret_cast<std::byte*>(PyBytes_AS_STRING(object)));
  }
  return objects;
}

py::str decoded(std::string_view bytes) {
  PyObject* text = PyUnicode_DecodeFSDefaultAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size()));
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

using Indices = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>;

std::span<const std::uint64_t> span_of(const Indices& indices) {
  if (indices.ndim() != 1) throw UsageError("record indices: expected a one-dimensional sequence");
  return {indices.data(), static_cast<std::size_t>(indices.shape(0))};
}

// Records `indices` as bytes (a list), or, tar samples read as records, as
// (key, [(member name, data), ...]) tuples.
py::list read_records(const IndexedRecords& records, const Indices& indices_array, bool raw) {
  const std::span<const std::uint64_t> indices = span_of(indices_array);
  const RecordForm form = raw ? RecordForm::kRaw : RecordForm::kRecord;
  const ReadPlan plan = records.plan(indices, form);
  std::vector<std::byte*> targets;
  std::vector<py::bytes> objects = allocate(plan, targets);
  {
    py::gil_scoped_release release;
    records.read(plan, targets);
  }
  py::list out(indices.size());
  const bool members = !plan.segment_names.empty();
  for (std::size_t r = 0; r < indices.size(); ++r) {
    const std::size_t first = plan.first_segment[r], last = plan.first_segment[r + 1];
    if (!members) {
      out[r] = objects[first];
      continue;
    }
    py::list fields;
    for (std::size_t s = first; s < last; ++s)
      fields.append(py::make_tuple(decoded(plan.segment_names[s]), objects[s]));
    out[r] = py::make_tuple(decoded(formats::tar_sample_key(plan.segment_names[first])), fields);
  }
  return out;
}

// Fixed-size records or .npy rows into one uint8 array (count, record size).
py::array_t<std::uint8_t> read_rows(const IndexedRecords& records, const Indices& indices_array,
                                    std::uint64_t record_size) {
  const std::span<const std::uint64_t> indices = span_of(indices_array);
  const ReadPlan plan = records.plan(indices, RecordForm::kRecord);
  py::array_t<std::uint8_t> rows({static_cast<py::ssize_t>(indices.size()), static_cast<py::ssize_t>(record_size)});
  std::vector<std::byte*> targets;
  auto* base = reinterpret_cast<std::byte*>(rows.mutable_data());
  for (std::size_t r = 0; r < indices.size(); ++r) {
    if (plan.segment_bytes[r] != record_size) throw UsageError("read_rows: records of another size");
    targets.push_back(base + r * record_size);
  }
  {
    py::gil_scoped_release release;
    records.read(plan, targets);
  }
  return rows;
}

py::dict input_facts(const dataset::IndexedInput& input) {
  const dataset::IndexHeader& l = input.layout;
  return py::dict("path"_a = input.path, "records"_a = l.records, "format"_a = l.reading.format,
                  "record_size"_a = l.reading.record_size, "data_offset"_a = l.data_offset,
                  "header"_a = py::bytes(input.header), "index"_a = input.index ? input.index->path() : std::string());
}

void translate(std::exception_ptr pointer) {
  try {
    if (pointer) std::rethrow_exception(pointer);
  } catch (const UsageError& e) {
    py::object error = py::module_::import("extshuffle._errors").attr("UsageError");
    PyErr_SetObject(error.ptr(), py::str(e.what()).ptr());
  } catch (const Error& e) {
    py::object error = py::module_::import("extshuffle._errors").attr("Error");
    PyErr_SetObject(error.ptr(), py::make_tuple(e.what(), e.exit_code()).ptr());
  }
}

}  // namespace

void bind_dataset(py::module_& module) {
  py::register_local_exception_translator(&translate);
  module.def("expand_paths", &dataset::expand_dataset_paths, "operands"_a);
  module.def("index_path_beside", &dataset::index_path_beside, "path"_a);
  module.def(
      "needs_index",
      [](const std::string& path, const py::dict& o) { return dataset::needs_index(reading_options(o), path); },
      "path"_a, "options"_a);
  module.def(
      "check_index_of",
      [](const std::string& path, const std::string& index, const py::dict& o) {
        dataset::check_index_of(reading_options(o), path, index);
      },
      "path"_a, "index"_a, "options"_a);
  py::class_<IndexedRecords>(module, "IndexedRecords")
      .def(py::init([](const std::vector<std::string>& files, const std::vector<std::string>& indexes,
                       const py::dict& options, bool check_fingerprints) {
             return dataset::open_indexed_dataset(files, indexes, reading_options(options), check_fingerprints);
           }),
           "files"_a, "indexes"_a, "options"_a, "check_fingerprints"_a = true)
      .def("__len__", &IndexedRecords::size)
      .def("inputs",
           [](const IndexedRecords& r) {
             py::list out;
             for (const dataset::IndexedInput& input : r.inputs()) out.append(input_facts(input));
             return out;
           })
      .def("read", &read_records, "indices"_a, "raw"_a = false)
      .def("read_rows", &read_rows, "indices"_a, "record_size"_a);
}

}  // namespace extshuffle::python

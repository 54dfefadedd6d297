// The parts of extshuffle._native, one file each.
#pragma once

#include <pybind11/pybind11.h>

namespace extshuffle::python {

// Permutation (modes/addressable_permutation.hpp) and epoch_seed.
void bind_permutation(pybind11::module_& module);
// run_job: the CLI's Job, built from the CLI's long options (cli::make_job).
void bind_shuffle(pybind11::module_& module);
// IndexedRecords and the record index helpers (extshuffle/dataset/indexed_dataset.hpp).
void bind_dataset(pybind11::module_& module);

}  // namespace extshuffle::python

// Whether the inputs of one dataset agree on their format (docs/conventions.md, Record formats):
// the same text format and identical header lines, .npy arrays of one dtype
// and row shape, or fixed-size records of one size. One definition for
// extshuffle (dataset_input.cpp) and extshuffle-mpi, whose ranks lay out the
// files apart and must refuse the same datasets with the same words.
#pragma once

#include <string>

#include "extshuffle/dataset/input_layout.hpp"

namespace extshuffle::dataset {

// Throws InputError naming both files unless the input at `path`, laid out
// as `layout`, can join the dataset whose first input (at `first_path`) is
// laid out as `first`. Reads only the layouts' format, header and record size.
void check_inputs_agree(const InputLayout& first, const std::string& first_path, const InputLayout& layout,
                        const std::string& path);

}  // namespace extshuffle::dataset

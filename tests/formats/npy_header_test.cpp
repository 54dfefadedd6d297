#include "extshuffle/formats/npy_header.hpp"

#include <gtest/gtest.h>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/npy_layout.hpp"
#include "support/npy_files.hpp"
#include "support/same_bytes.hpp"

namespace extshuffle::formats::npy_header_test {
namespace {

using testing::npy_file;

TEST(NpyHeader, ParsesEveryFormatVersion) {
  for (int version : {1, 2, 3}) {
    const std::string file = npy_file(version, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 3), }", "");
    const NpyHeader h = parse_npy_header(file, "x.npy");
    EXPECT_EQ(h.major_version, version);
    EXPECT_EQ(h.header_bytes, file.size());
    EXPECT_EQ(h.header_bytes % 64, 0u);
    EXPECT_EQ(h.rows, 1000u);
    EXPECT_EQ(h.item_bytes, 8u);
    EXPECT_EQ(h.row_bytes, 24u);
  }
}

TEST(NpyHeader, ItemSizesOfNumpyDtypes) {
  const std::pair<const char*, std::uint64_t> cases[] = {
      {"|b1", 1}, {"|?", 1}, {"|i1", 1}, {"<u2", 2}, {">i4", 4}, {"<f2", 2}, {"<f4", 4}, {"<f8", 8},
      {"<f16", 16}, {"<c8", 8}, {"<c16", 16}, {"|S10", 10}, {"<U3", 12}, {"|V16", 16}, {"<M8[ns]", 8},
      {"<m8[D]", 8}, {"<M8", 8}};
  for (const auto& [descr, bytes] : cases) EXPECT_EQ(npy_item_bytes(descr, "x"), bytes) << descr;
  EXPECT_THROW(npy_item_bytes("|O", "x"), InputError);
  EXPECT_THROW(npy_item_bytes("<q9z", "x"), InputError);
}

TEST(NpyHeader, StructuredDtypesArePacked) {
  const std::string file = npy_file(
      1, "{'descr': [('x', '<f4'), ('label', '<i8'), ('pad', '|V3'), ('v', '<f2', (2, 3))], "
         "'fortran_order': False, 'shape': (7,), }",
      "");
  const NpyHeader h = parse_npy_header(file, "s.npy");
  EXPECT_EQ(h.item_bytes, 4u + 8 + 3 + 2 * 6);
  EXPECT_EQ(h.row_bytes, h.item_bytes);
  EXPECT_EQ(h.rows, 7u);
}

TEST(NpyHeader, OneDimensionalFortranOrderIsCOrder) {
  const NpyHeader h = parse_npy_header(npy_file(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (5,), }", ""), "x");
  EXPECT_EQ(h.rows, 5u);
  EXPECT_EQ(h.row_bytes, 4u);
}

// NumPy reads the header with ast.literal_eval: a key given twice takes its
// last value. Shapes (20, 1) then (10, 2) are 16-byte rows to NumPy (they
// were read as 8-byte rows: records cut across NumPy's rows, exit 0).
TEST(NpyHeader, RepeatedKeysTakeTheirLastValueAsNumpyDoes) {
  const NpyHeader h = parse_npy_header(
      npy_file(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (20, 1), 'shape': (10, 2), }", ""), "x");
  EXPECT_EQ(h.rows, 10u);
  EXPECT_EQ(h.row_bytes, 16u);
  EXPECT_EQ(h.shape, (std::vector<std::uint64_t>{10, 2}));
  // Every key repeated: the dtype and the order are the last ones too (a
  // first fortran_order True of a 2-D array would be refused).
  const NpyHeader g = parse_npy_header(
      npy_file(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (4, 3), 'descr': '<f8', "
                  "'fortran_order': False, }", ""),
      "x");
  EXPECT_EQ(g.item_bytes, 8u);
  EXPECT_EQ(g.descr, "<f8");
  EXPECT_EQ(g.rows, 4u);
  EXPECT_EQ(g.row_bytes, 24u);
}

// The header of K rows (-n, shards) sets the shape NumPy reads: the last.
TEST(NpyHeader, RowsAreSetInTheLastShapeOfARepeatedKey) {
  const std::string header =
      npy_file(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (20, 1), 'shape': (10, 2), }", "");
  const NpyHeader h = parse_npy_header(npy_header_with_rows(header, 4, "x"), "x");
  EXPECT_EQ(h.rows, 4u);
  EXPECT_EQ(h.shape, (std::vector<std::uint64_t>{4, 2}));
  EXPECT_SAME_BYTES(npy_header_with_rows(header, 10, "x"), header);
}

TEST(NpyHeader, RejectsWhatCannotBeShuffledWithOneLineReasons) {
  const std::pair<std::string, std::string> cases[] = {
      {npy_file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }", ""), "Fortran-order"},
      {npy_file(1, "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", ""), "Python objects"},
      {npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", ""), "0-dimensional"},
      {npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", ""), "malformed"},
      {npy_file(1, "{'descr': '<f4', 'shape': (3,), }", ""), "needs 'descr', 'fortran_order' and 'shape'"},
      {npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", "").substr(0, 40), "truncated"},
      {std::string("\x93NUMPY\x01\x00", 8), "truncated"},
      {std::string("\x93NUMPY\x07\x00\x10\x00", 10), "unsupported .npy format version 7"},
      {"not an npy file", "not a .npy file"},
  };
  for (const auto& [file, reason] : cases) {
    try {
      parse_npy_header(file, "bad.npy");
      ADD_FAILURE() << "accepted: " << reason;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(reason), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_EQ(what.rfind("bad.npy", 0), 0u) << what;
    }
  }
}

}  // namespace
}  // namespace extshuffle::formats::npy_header_test

// Several inputs read as one dataset (src/dataset/dataset_input.hpp) on its
// own: the records of every input in the order given, as if concatenated (a
// last record without its terminator gets one), a shared header kept once,
// .npy arrays' rows summed into one header, and inputs that disagree refused
// naming both. Deterministic: no test here depends on chance.
#include "dataset/dataset_input.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "extshuffle/errors.hpp"
#include "support/command.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/io/input_set.hpp"
#include "support/npy_files.hpp"

namespace extshuffle::dataset::dataset_input_test {
namespace {

namespace fs = std::filesystem;

class DatasetInputTest : public ::testing::Test {
 protected:

  std::string file(const std::string& name, const std::string& bytes) const {
    testing::write_file(dir_ / name, bytes);
    return (dir_ / name).string();
  }
  // The dataset's records as one string, read through its extents.
  static std::string records_of(const DatasetInput& d) {
    io::AlignedBuffer buffer = io::allocate_aligned(std::max<std::uint64_t>(d.data.bytes, 1));
    io::ExtentReader reader(d.data);
    const std::uint64_t got = reader.read_now(buffer.get(), d.data.bytes);
    return std::string(reinterpret_cast<const char*>(buffer.get()), got);
  }
  DatasetInput read(const std::vector<std::string>& paths, const DatasetOptions& options = {}) {
    inputs_ = std::make_unique<io::InputSet>(paths, dir_.path().string());
    return read_dataset(options, *inputs_);
  }

  testing::TempDir dir_;
  std::unique_ptr<io::InputSet> inputs_;
};

// A .npy file of `rows` rows of `descr`, as numpy.save writes it.
std::string npy(const std::string& descr, std::uint64_t rows, const std::string& data) {
  return testing::npy_file(1, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ",), }",
                           data);
}

TEST_F(DatasetInputTest, TextInputsAreConcatenatedAndALastRecordGetsItsTerminator) {
  const DatasetInput d = read({file("a.txt", "a1\na2"), file("b.txt", "b1\n"), file("c.txt", "c1\nc2\nc3\n")});
  EXPECT_EQ(d.layout.records, 6u);
  EXPECT_TRUE(d.layout.framed());
  EXPECT_EQ(records_of(d), "a1\na2\nb1\nc1\nc2\nc3\n");
  ASSERT_EQ(d.files.size(), 3u);
  EXPECT_EQ(d.files[0].records, 2u);
  EXPECT_EQ(d.files[0].bytes, 5u);
  EXPECT_EQ(d.files[2].records, 3u);
  EXPECT_EQ(d.bytes, 5u + 3u + 9u);
}

TEST_F(DatasetInputTest, ASharedCsvHeaderIsKeptOnceAndADifferentOneIsRefused) {
  const DatasetInput d = read({file("a.csv", "id,x\n1,a\n2,b\n"), file("b.csv", "id,x\n3,c\n")});
  EXPECT_EQ(d.layout.header, "id,x\n");
  EXPECT_EQ(d.layout.records, 3u);
  EXPECT_EQ(records_of(d), "1,a\n2,b\n3,c\n");
  try {
    read({file("c.csv", "id,x\n1,a\n"), file("d.csv", "id,y\n2,b\n")});
    FAIL() << "different headers were accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("c.csv"), std::string::npos) << what;
    EXPECT_NE(what.find("d.csv"), std::string::npos) << what;
  }
}

TEST_F(DatasetInputTest, NpyArraysSumTheirRowsAndMustShareTheirDtype) {
  const DatasetInput d = read({file("a.npy", npy("<u4", 2, std::string(8, '\x01'))),
                               file("b.npy", npy("<u4", 3, std::string(12, '\x02')))});
  EXPECT_EQ(d.layout.records, 5u);
  EXPECT_EQ(d.layout.record_size, 4u);
  EXPECT_NE(d.layout.header.find("'shape': (5,)"), std::string::npos) << d.layout.header;
  EXPECT_SAME_BYTES(records_of(d), std::string(8, '\x01') + std::string(12, '\x02'));
  EXPECT_THROW(read({file("c.npy", npy("<u4", 1, std::string(4, '\0'))),
                     file("d.npy", npy("<f4", 1, std::string(4, '\0')))}),
               InputError);
}

TEST_F(DatasetInputTest, FixedSizeRecordsMustFillEveryInput) {
  DatasetOptions fixed;
  fixed.record_size = 4;
  const DatasetInput d = read({file("a.bin", std::string(8, 'a')), file("b.bin", std::string(4, 'b'))}, fixed);
  EXPECT_EQ(d.layout.records, 3u);
  EXPECT_EQ(records_of(d), "aaaaaaaabbbb");
  EXPECT_THROW(read({file("c.bin", std::string(8, 'a')), file("d.bin", std::string(5, 'b'))}, fixed), InputError);
}

TEST_F(DatasetInputTest, TextAndBinaryInputsDoNotMix) {
  EXPECT_THROW(read({file("a.txt", "x\n"), file("b.npy", npy("<u4", 1, std::string(4, '\0')))}), Error);
}

}  // namespace
}  // namespace extshuffle::dataset::dataset_input_test

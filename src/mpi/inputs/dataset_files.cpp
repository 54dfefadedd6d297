#include "dataset_files.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "extshuffle/dataset/format_agreement.hpp"
#include "extshuffle/dataset/input_layout.hpp"
#include "extshuffle/dataset/tar_dataset_checks.hpp"
#include "extshuffle/dataset/tar_frames.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/npy_header.hpp"
#include "extshuffle/formats/npy_rows.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {
namespace {

// What the holder of a file tells every rank of its layout (the header follows it).
struct FileFacts {
  std::uint64_t bytes = 0, data_offset = 0, record_size = 0, records = 0;
  std::uint64_t header_bytes = 0, longest_record_bytes = 0, tar_frame_bytes = 0;
  double record_bytes_squared = 0;
  std::uint8_t kind = 0, framed_format = 0, add_terminator = 0;
  // Set after the others: a tar archive's (tar_dataset_checks.hpp); the keys follow the header.
  std::uint64_t tar_hard_links = 0, tar_first_key_bytes = 0, tar_last_key_bytes = 0;
};

dataset::TarArchiveFacts tar_facts(const DatasetFile& f) {
  if (f.layout.tar_index) {
    const formats::TarIndex& index = *f.layout.tar_index;
    return {f.path, index.samples(), index.hard_links, index.first_key, index.last_key};
  }
  return {f.path, f.layout.records, f.tar_hard_links, f.tar_first_key, f.tar_last_key};
}

std::string encode(const DatasetFile& f) {
  FileFacts facts;
  const dataset::InputLayout& l = f.layout;
  facts = FileFacts{f.bytes,
                    l.data_offset,
                    l.record_size,
                    l.records,
                    l.text_count.header_bytes,
                    l.text_count.longest_record_bytes,
                    f.tar_frame_bytes,
                    l.text_count.record_bytes_squared,
                    static_cast<std::uint8_t>(l.format.kind),
                    static_cast<std::uint8_t>(l.format.framed_format),
                    static_cast<std::uint8_t>(l.text_count.add_terminator)};
  const dataset::TarArchiveFacts tar = f.tar() ? tar_facts(f) : dataset::TarArchiveFacts{};
  facts.tar_hard_links = tar.hard_links;
  facts.tar_first_key_bytes = tar.first_key.size();
  facts.tar_last_key_bytes = tar.last_key.size();
  std::string bytes(sizeof facts, '\0');
  std::memcpy(bytes.data(), &facts, sizeof facts);
  return bytes + l.header + tar.first_key + tar.last_key;
}

void decode(const std::string& bytes, const JobOptions& options, DatasetFile& f) {
  FileFacts facts;
  std::memcpy(&facts, bytes.data(), sizeof facts);
  dataset::InputLayout& l = f.layout;
  f.bytes = facts.bytes;
  f.tar_frame_bytes = facts.tar_frame_bytes;
  l.data_offset = facts.data_offset;
  l.record_size = facts.record_size;
  l.records = facts.records;
  l.format.kind = static_cast<formats::RecordKind>(facts.kind);
  l.format.framed_format = static_cast<formats::Format>(facts.framed_format);
  l.text_count = dataset::TextCount{facts.header_bytes, facts.records, facts.add_terminator != 0,
                                    facts.longest_record_bytes, facts.record_bytes_squared};
  if (l.framed()) l.syntax = formats::framed_syntax(l.format.framed_format, options.input.zero_terminated);
  const std::size_t keys = facts.tar_first_key_bytes + facts.tar_last_key_bytes;
  l.header = bytes.substr(sizeof facts, bytes.size() - sizeof facts - keys);
  f.tar_hard_links = facts.tar_hard_links;
  f.tar_first_key = bytes.substr(bytes.size() - keys, facts.tar_first_key_bytes);
  f.tar_last_key = bytes.substr(bytes.size() - facts.tar_last_key_bytes);
}

// The dataset's totals and header from every file's layout (as read_dataset sums them).
void add_up(DatasetFiles& d) {
  std::uint64_t npy_rows = 0;
  for (DatasetFile& f : d.files) {
    f.first_record = d.records;
    f.data_begin = d.data_bytes;
    d.records += f.layout.records;
    d.data_bytes += f.data_bytes();
    d.input_bytes += f.bytes;
    d.longest_record_bytes = std::max(d.longest_record_bytes, f.layout.text_count.longest_record_bytes);
    if (f.layout.format.kind == formats::RecordKind::kNpy) {
      npy_rows += formats::parse_npy_header(f.layout.header, dataset::input_display_name(f.path)).rows;
    }
  }
  d.header = d.files.front().layout.header;
  if (d.files.front().layout.format.kind == formats::RecordKind::kNpy) {
    d.header = formats::npy_header_with_rows(d.header, npy_rows);
  }
}

}  // namespace

bool DatasetFile::adds_terminator() const {
  return layout.framed() && layout.text_count.add_terminator && layout.data_offset < bytes;
}

std::uint64_t DatasetFile::file_data_bytes() const {
  if (tar()) return tar_frame_bytes;
  return layout.framed() ? bytes - layout.data_offset : layout.records * layout.record_size;
}

std::vector<int> assign_files_by_size(const std::vector<std::uint64_t>& stored_bytes, int ranks) {
  std::vector<std::size_t> order(stored_bytes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return stored_bytes[a] > stored_bytes[b]; });
  std::vector<std::uint64_t> load(static_cast<std::size_t>(ranks), 0);
  std::vector<int> holder(stored_bytes.size(), 0);
  for (const std::size_t k : order) {
    const auto least = std::min_element(load.begin(), load.end());  // the first of the least loaded
    holder[k] = static_cast<int>(least - load.begin());
    // A file of 0 bytes still costs an open and a look: count it as one byte.
    *least += std::max<std::uint64_t>(stored_bytes[k], 1);
  }
  return holder;
}

DatasetFiles lay_out_dataset(const JobOptions& options, const std::vector<std::string>& paths,
                             const std::string& scratch_directory, Communicator& comm) {
  DatasetFiles d;
  std::vector<std::uint64_t> sizes;
  for (const std::string& path : paths) {
    DatasetFile f;
    f.path = path;
    f.compressed = io::codec_for_path(path) != io::Codec::kNone;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) f.stored_bytes = static_cast<std::uint64_t>(st.st_size);
    sizes.push_back(f.stored_bytes);
    d.files.push_back(std::move(f));
  }
  const std::vector<int> holders = assign_files_by_size(sizes, comm.size());
  d.held.resize(d.files.size());
  checkpoint(comm, [&] {
    for (std::size_t k = 0; k < d.files.size(); ++k) {
      DatasetFile& f = d.files[k];
      f.holder = holders[k];
      if (f.holder != comm.rank()) continue;
      d.held[k] = std::make_unique<io::InputSource>(f.path, scratch_directory, options.run.memory_bytes);
      f.layout = dataset::read_input_layout(options.input, *d.held[k]);
      f.bytes = d.held[k]->bytes();
      d.layout_bytes_read += f.bytes + (f.compressed ? f.stored_bytes : 0);
      if (f.tar()) {
        f.tar_frame_begin = dataset::tar_frame_offsets(*f.layout.tar_index);
        f.tar_frame_bytes = f.tar_frame_begin.back();
      }
    }
  });
  for (DatasetFile& f : d.files) {
    const std::string facts = comm.broadcast(f.holder == comm.rank() ? encode(f) : std::string(), f.holder);
    if (f.holder != comm.rank()) decode(facts, options, f);
  }
  checkpoint(comm, [&] {
    for (std::size_t k = 1; k < d.files.size(); ++k) {
      dataset::check_inputs_agree(d.files[0].layout, d.files[0].path, d.files[k].layout, d.files[k].path);
    }
    add_up(d);
    if (d.files.front().tar()) {
      std::vector<dataset::TarArchiveFacts> archives;
      for (const DatasetFile& f : d.files) archives.push_back(tar_facts(f));
      d.warnings = dataset::tar_dataset_warnings(archives, options.input.verify);
    }
  });
  return d;
}

}  // namespace extshuffle::mpi

// Tar archives written by the tests' own ustar code (formats/tar.hpp's
// tests, the record index's): headers with their checksum, members padded
// to 512 bytes, pax extended headers, the two-block trailer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace extshuffle::testing {

inline std::string octal(std::uint64_t value, std::size_t width) {
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + value % 8));
    value /= 8;
  } while (value > 0);
  return std::string(width - 1 - digits.size(), '0') + digits + '\0';
}

struct HeaderFields {
  std::string name;
  std::uint64_t size = 0;
  char type = '0';
  std::string prefix;
  bool base256_size = false;
  bool gnu_magic = false;
};

inline std::string header(const HeaderFields& f) {
  std::string h(512, '\0');
  std::memcpy(h.data(), f.name.data(), std::min<std::size_t>(f.name.size(), 100));
  std::memcpy(h.data() + 100, octal(0644, 8).data(), 8);
  std::memcpy(h.data() + 108, octal(0, 8).data(), 8);
  std::memcpy(h.data() + 116, octal(0, 8).data(), 8);
  if (f.base256_size) {
    h[124] = static_cast<char>(0x80);
    for (int k = 0; k < 8; ++k) h[135 - k] = static_cast<char>((f.size >> (8 * k)) & 0xFF);
  } else {
    std::memcpy(h.data() + 124, octal(f.size, 12).data(), 12);
  }
  std::memcpy(h.data() + 136, octal(1700000000, 12).data(), 12);
  h[156] = f.type;
  if (f.gnu_magic) {
    std::memcpy(h.data() + 257, "ustar  \0", 8);
  } else {
    std::memcpy(h.data() + 257,
                "ustar\0"
                "00",
                8);
    std::memcpy(h.data() + 345, f.prefix.data(), f.prefix.size());
  }
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::memcpy(h.data() + 148, octal(sum, 7).data(), 7);
  h[155] = ' ';
  return h;
}

inline std::string padded(std::string data) {
  data.resize((data.size() + 511) / 512 * 512, '\0');
  return data;
}

inline std::string member(const std::string& name, const std::string& data, char type = '0') {
  HeaderFields f;
  f.name = name;
  f.size = data.size();
  f.type = type;
  return header(f) + padded(data);
}

inline std::string pax_record(const std::string& key, const std::string& value) {
  const std::string body = " " + key + "=" + value + "\n";
  std::size_t length = body.size() + 1;
  while (std::to_string(length).size() + body.size() != length) ++length;
  return std::to_string(length) + body;
}

inline std::string pax_member(const std::string& records) {
  HeaderFields f;
  f.name = "PaxHeader/x";
  f.size = records.size();
  f.type = 'x';
  return header(f) + padded(records);
}

inline const std::string kTrailer(1024, '\0');

// A Python script (run by /usr/bin/python3, argv[1] a directory) that
// writes two WebDataset shards of 1500 samples each (a .jpg of 16 B to
// 8 KiB and a .cls of 3 B) with Python's own tarfile: the --checkpoint
// sweeps' tar dataset.
inline constexpr const char* kTwoTarShardsPython = R"PY(
import io, random, sys, tarfile
random.seed(5)
for shard in range(2):
    with tarfile.open(sys.argv[1] + '/shard-%d.tar' % shard, 'w', format=tarfile.USTAR_FORMAT) as t:
        for i in range(1500):
            key = 's%d%05d' % (shard, i)
            for ext in ('jpg', 'cls'):
                data = random.randbytes(int(2 ** random.uniform(4, 13)) if ext == 'jpg' else 3)
                info = tarfile.TarInfo(key + '.' + ext); info.size = len(data)
                t.addfile(info, io.BytesIO(data))
)PY";

}  // namespace extshuffle::testing

// Reads a PNG screenshot (8-bit RGB or RGBA, not interlaced: what headless Chromium writes) and
// prints `width height dominant colourful distinct`: the share of pixels of the most common colour,
// the pixels that are clearly coloured (max - min channel > 60: data in the plots' palette, not
// black, white or grey) and the number of distinct colours.  Exit 2 on a file it cannot read.
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         p[3];
}

int fail(const std::string& why) {
  std::cerr << "png_stats: " << why << "\n";
  return 2;
}

/// PNG filter reconstruction (PNG specification, section 9) of one row in place.
void unfilter(int type, unsigned char* row, const unsigned char* prev, std::size_t n, int bpp) {
  for (std::size_t i = 0; i < n; ++i) {
    const int a = i >= static_cast<std::size_t>(bpp) ? row[i - bpp] : 0, b = prev ? prev[i] : 0,
              c = prev && i >= static_cast<std::size_t>(bpp) ? prev[i - bpp] : 0;
    int add = 0;
    if (type == 1) add = a;
    if (type == 2) add = b;
    if (type == 3) add = (a + b) / 2;
    if (type == 4) {
      const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
      add = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    }
    row[i] = static_cast<unsigned char>(row[i] + add);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return fail("usage: png_stats FILE.png");
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<unsigned char> f((std::istreambuf_iterator<char>(in)), {});
  if (f.size() < 33 || f[1] != 'P' || f[2] != 'N' || f[3] != 'G') return fail("not a PNG");
  const std::uint32_t w = be32(&f[16]), h = be32(&f[20]);
  const int depth = f[24], colour = f[25], interlace = f[28];
  if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0)
    return fail("unsupported PNG (want 8-bit RGB/RGBA, not interlaced)");
  std::vector<unsigned char> idat;
  for (std::size_t at = 8; at + 8 <= f.size();) {
    const std::uint32_t len = be32(&f[at]);
    const std::string type(f.begin() + at + 4, f.begin() + at + 8);
    if (at + 12 + len > f.size()) return fail("truncated chunk");
    if (type == "IDAT") idat.insert(idat.end(), f.begin() + at + 8, f.begin() + at + 8 + len);
    at += 12 + len;
  }
  const int bpp = colour == 6 ? 4 : 3;
  const std::size_t stride = std::size_t{w} * bpp;
  std::vector<unsigned char> raw((stride + 1) * h);
  uLongf size = raw.size();
  if (uncompress(raw.data(), &size, idat.data(), idat.size()) != Z_OK || size != raw.size())
    return fail("bad image data");
  std::unordered_map<std::uint32_t, std::size_t> counts;
  std::size_t colourful = 0;
  for (std::size_t y = 0; y < h; ++y) {
    unsigned char* row = &raw[y * (stride + 1) + 1];
    unfilter(row[-1], row, y ? &raw[(y - 1) * (stride + 1) + 1] : nullptr, stride, bpp);
    for (std::size_t x = 0; x < w; ++x) {
      const unsigned char* p = row + x * bpp;
      ++counts[(std::uint32_t{p[0]} << 16) | (std::uint32_t{p[1]} << 8) | p[2]];
      const int hi = std::max({p[0], p[1], p[2]}), lo = std::min({p[0], p[1], p[2]});
      if (hi - lo > 60) ++colourful;
    }
  }
  std::size_t top = 0;
  for (const auto& [c, n] : counts) top = std::max(top, n);
  std::printf("%u %u %.6f %zu %zu\n", w, h, static_cast<double>(top) / (double(w) * h), colourful,
              counts.size());
  return 0;
}

// A JPEG compressed in memory with libjpeg, for tests that need files OpenCV cannot write (CMYK, chosen chroma
// sampling, arithmetic coding). The libjpeg boilerplate lives here once; callers say what differs from its
// defaults and supply the rows.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <vector>

#include <jpeglib.h>

namespace test_jpeg {

/// `w` x `h` pixels of `components` samples in colour space `space`, compressed with libjpeg's defaults as
/// adjusted by `setup(c)`; `fill_row(y, row)` writes row y's samples (w * components of them).
template <class Setup, class FillRow>
std::vector<unsigned char> compress(int w, int h, int components, J_COLOR_SPACE space, Setup setup, FillRow fill_row) {
    jpeg_compress_struct c{};
    jpeg_error_mgr err{};
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    unsigned char* buf = nullptr;
    unsigned long size = 0;
    jpeg_mem_dest(&c, &buf, &size);
    c.image_width = static_cast<JDIMENSION>(w);
    c.image_height = static_cast<JDIMENSION>(h);
    c.input_components = components;
    c.in_color_space = space;
    jpeg_set_defaults(&c);
    setup(c);
    jpeg_start_compress(&c, TRUE);
    std::vector<unsigned char> row(static_cast<std::size_t>(w) * components);
    for (int y = 0; y < h; ++y) {
        fill_row(y, row.data());
        JSAMPROW r = row.data();
        jpeg_write_scanlines(&c, &r, 1);
    }
    jpeg_finish_compress(&c);
    std::vector<unsigned char> out(buf, buf + size);
    jpeg_destroy_compress(&c);
    std::free(buf);
    return out;
}

}  // namespace test_jpeg

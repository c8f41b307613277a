// JPEG through libjpeg-turbo's libjpeg API. Errors longjmp out of the library into an imghist::Error.
#include "codec_jpeg.hpp"

#include <csetjmp>
#include <cstdio>
#include <cstring>

#include <jpeglib.h>

#include "errors.hpp"

namespace cli {
namespace {

struct ErrorMgr {
    jpeg_error_mgr pub;
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

extern "C" void on_error(j_common_ptr cinfo) {
    auto* err = reinterpret_cast<ErrorMgr*>(cinfo->err);
    (*cinfo->err->format_message)(cinfo, err->message);
    std::longjmp(err->jump, 1);
}

// A corrupt-data warning (e.g. "premature end of data segment") is an error for us: the file is damaged.
extern "C" void on_warning(j_common_ptr cinfo, int level) {
    if (level < 0) on_error(cinfo);
}

std::string describe(const char* msg) {
    std::string m = msg;
    if (m.find("precision") != std::string::npos) return "unsupported sample depth (" + m + "; imghist reads 8-bit JPEG)";
    return "truncated or corrupt JPEG (" + m + ")";
}

// RAII for the two libjpeg structs; destroy is safe after a longjmp.
struct Decompress {
    jpeg_decompress_struct info{};
    ErrorMgr err{};
    Decompress() {
        info.err = jpeg_std_error(&err.pub);
        err.pub.error_exit = on_error;
        err.pub.emit_message = on_warning;
        jpeg_create_decompress(&info);
    }
    ~Decompress() { jpeg_destroy_decompress(&info); }
};

struct Compress {
    jpeg_compress_struct info{};
    ErrorMgr err{};
    unsigned char* buf = nullptr;
    unsigned long size = 0;
    Compress() {
        info.err = jpeg_std_error(&err.pub);
        err.pub.error_exit = on_error;
        jpeg_create_compress(&info);
    }
    ~Compress() {
        jpeg_destroy_compress(&info);
        std::free(buf);
    }
    Bytes take() { return Bytes(buf, buf + size); }
};

void read_header(Decompress& d, const Bytes& data, const std::string& name, const DecodeOptions& opt) {
    jpeg_mem_src(&d.info, data.data(), static_cast<unsigned long>(data.size()));
    jpeg_read_header(&d.info, TRUE);
    check_pixel_limit(d.info.image_width, d.info.image_height, opt, name);
    if (d.info.jpeg_color_space == JCS_CMYK || d.info.jpeg_color_space == JCS_YCCK)
        fail(ErrorCode::Unsupported, name, "unsupported channel count: a 4-channel CMYK/YCCK JPEG (imghist reads gray and colour JPEG)");
    if (d.info.num_components != 1 && d.info.num_components != 3)
        fail(ErrorCode::Unsupported, name, "unsupported channel count " + std::to_string(d.info.num_components));
}

}  // namespace

Image decode_jpeg(const Bytes& data, const std::string& name, const DecodeOptions& opt) {
    Decompress d;
    Image img;
    if (setjmp(d.err.jump)) fail(ErrorCode::InvalidArgument, name, describe(d.err.message));
    read_header(d, data, name, opt);
    d.info.out_color_space = d.info.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&d.info);
    img = Image(static_cast<int>(d.info.output_width), static_cast<int>(d.info.output_height),
                d.info.output_components, 8);
    while (d.info.output_scanline < d.info.output_height) {
        JSAMPROW rows[16];
        int n = 0;
        for (; n < 16 && d.info.output_scanline + n < d.info.output_height; ++n)
            rows[n] = img.row(static_cast<int>(d.info.output_scanline) + n);
        jpeg_read_scanlines(&d.info, rows, static_cast<JDIMENSION>(n));
    }
    jpeg_finish_decompress(&d.info);
    return img;
}

Bytes encode_jpeg(const Image& img, const EncodeOptions& opt, const std::string& name) {
    Compress c;
    if (setjmp(c.err.jump)) fail(ErrorCode::Io, name, std::string("cannot encode JPEG (") + c.err.message + ")");
    jpeg_mem_dest(&c.info, &c.buf, &c.size);
    c.info.image_width = static_cast<JDIMENSION>(img.width());
    c.info.image_height = static_cast<JDIMENSION>(img.height());
    c.info.input_components = img.channels();
    c.info.in_color_space = img.channels() == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c.info);
    jpeg_set_quality(&c.info, opt.jpeg_quality, TRUE);
    jpeg_start_compress(&c.info, TRUE);
    while (c.info.next_scanline < c.info.image_height) {
        JSAMPROW rows[16];
        int n = 0;
        for (; n < 16 && c.info.next_scanline + n < c.info.image_height; ++n)
            rows[n] = const_cast<JSAMPROW>(img.row(static_cast<int>(c.info.next_scanline) + n));
        jpeg_write_scanlines(&c.info, rows, static_cast<JDIMENSION>(n));
    }
    jpeg_finish_compress(&c.info);
    return c.take();
}

bool read_jpeg_header(const Bytes& data, JpegHeader& out) {
    Decompress d;
    if (setjmp(d.err.jump)) return false;
    jpeg_mem_src(&d.info, data.data(), static_cast<unsigned long>(data.size()));
    if (jpeg_read_header(&d.info, TRUE) != JPEG_HEADER_OK) return false;
    JpegHeader h;
    h.components = d.info.num_components;
    h.ycbcr = d.info.num_components == 3 && d.info.jpeg_color_space == JCS_YCbCr;
    h.width = static_cast<int>(d.info.image_width);
    h.height = static_cast<int>(d.info.image_height);
    for (int c = 0; c < 3 && c < d.info.num_components; ++c) {
        h.h_samp[c] = d.info.comp_info[c].h_samp_factor;
        h.v_samp[c] = d.info.comp_info[c].v_samp_factor;
    }
    h.progressive = d.info.progressive_mode != 0;
    h.arithmetic = d.info.arith_code != 0;
    out = h;
    return true;
}

int jpeg_planar_components(const Bytes& data) {
    Decompress d;
    if (setjmp(d.err.jump)) return 0;
    jpeg_mem_src(&d.info, data.data(), static_cast<unsigned long>(data.size()));
    if (jpeg_read_header(&d.info, TRUE) != JPEG_HEADER_OK) return 0;
    if (d.info.num_components == 1 && d.info.jpeg_color_space == JCS_GRAYSCALE) return 1;
    if (d.info.num_components == 3 && d.info.jpeg_color_space == JCS_YCbCr) return 3;
    return 0;
}

bool jpeg_planar_ok(const Bytes& data) { return jpeg_planar_components(data) != 0; }

JpegPlanes decode_jpeg_planes(const Bytes& data, const std::string& name, const DecodeOptions& opt) {
    Decompress d;
    JpegPlanes p;
    // Everything with a destructor lives above setjmp: a longjmp must not skip destructors.
    std::vector<std::vector<JSAMPROW>> comp_rows(MAX_COMPONENTS);
    JSAMPARRAY arrays[MAX_COMPONENTS];
    if (setjmp(d.err.jump)) fail(ErrorCode::InvalidArgument, name, describe(d.err.message));
    read_header(d, data, name, opt);
    if (!((d.info.num_components == 1 && d.info.jpeg_color_space == JCS_GRAYSCALE) ||
          (d.info.num_components == 3 && d.info.jpeg_color_space == JCS_YCbCr)))
        fail(ErrorCode::Unsupported, name, "JPEG colour space is neither gray nor YCbCr");
    d.info.raw_data_out = TRUE;
    d.info.out_color_space = d.info.jpeg_color_space;
    jpeg_start_decompress(&d.info);
    p.width = static_cast<int>(d.info.image_width);
    p.height = static_cast<int>(d.info.image_height);
    p.ycbcr = d.info.num_components == 3;
    p.max_v_samp = d.info.max_v_samp_factor;
    const int mcu_rows = d.info.max_v_samp_factor * DCTSIZE;
    const int imcu_count = static_cast<int>((d.info.image_height + mcu_rows - 1) / mcu_rows);
    p.planes.resize(static_cast<std::size_t>(d.info.num_components));
    for (int c = 0; c < d.info.num_components; ++c) {
        const jpeg_component_info& ci = d.info.comp_info[c];
        JpegPlane& pl = p.planes[static_cast<std::size_t>(c)];
        pl.width = static_cast<int>(ci.downsampled_width);
        pl.height = static_cast<int>(ci.downsampled_height);
        pl.h_samp = ci.h_samp_factor;
        pl.v_samp = ci.v_samp_factor;
        pl.stride = static_cast<int>(ci.width_in_blocks) * DCTSIZE;
        // Round the stride up to whole MCUs so the encoder's raw input covers every block it reads.
        int mcu_w = d.info.max_h_samp_factor * DCTSIZE;
        int full_w = ((p.width + mcu_w - 1) / mcu_w) * ci.h_samp_factor * DCTSIZE;
        if (full_w > pl.stride) pl.stride = full_w;
        pl.rows = imcu_count * ci.v_samp_factor * DCTSIZE;
        pl.data.resize(static_cast<std::size_t>(pl.stride) * pl.rows);
    }
    for (int imcu = 0; imcu < imcu_count; ++imcu) {
        for (int c = 0; c < d.info.num_components; ++c) {
            JpegPlane& pl = p.planes[static_cast<std::size_t>(c)];
            int n = pl.v_samp * DCTSIZE;
            auto& rows = comp_rows[static_cast<std::size_t>(c)];
            rows.resize(static_cast<std::size_t>(n));
            for (int r = 0; r < n; ++r)
                rows[static_cast<std::size_t>(r)] = pl.data.data() + static_cast<std::size_t>(imcu * n + r) * pl.stride;
            arrays[c] = rows.data();
        }
        if (jpeg_read_raw_data(&d.info, arrays, static_cast<JDIMENSION>(mcu_rows)) == 0)
            fail(ErrorCode::InvalidArgument, name, "truncated or corrupt JPEG (no data)");
    }
    jpeg_finish_decompress(&d.info);
    return p;
}

Bytes encode_jpeg_planes(const JpegPlanes& p, const EncodeOptions& opt, const std::string& name) {
    Compress c;
    std::vector<std::vector<JSAMPROW>> comp_rows(MAX_COMPONENTS);
    JSAMPARRAY arrays[MAX_COMPONENTS];
    if (setjmp(c.err.jump)) fail(ErrorCode::Io, name, std::string("cannot encode JPEG (") + c.err.message + ")");
    jpeg_mem_dest(&c.info, &c.buf, &c.size);
    c.info.image_width = static_cast<JDIMENSION>(p.width);
    c.info.image_height = static_cast<JDIMENSION>(p.height);
    c.info.input_components = p.ycbcr ? 3 : 1;
    c.info.in_color_space = p.ycbcr ? JCS_YCbCr : JCS_GRAYSCALE;
    jpeg_set_defaults(&c.info);
    jpeg_set_colorspace(&c.info, p.ycbcr ? JCS_YCbCr : JCS_GRAYSCALE);
    jpeg_set_quality(&c.info, opt.jpeg_quality, TRUE);
    for (std::size_t i = 0; i < p.planes.size(); ++i) {
        c.info.comp_info[i].h_samp_factor = p.planes[i].h_samp;
        c.info.comp_info[i].v_samp_factor = p.planes[i].v_samp;
    }
    c.info.raw_data_in = TRUE;
    jpeg_start_compress(&c.info, TRUE);
    const int mcu_rows = p.max_v_samp * DCTSIZE;
    for (int imcu = 0; c.info.next_scanline < c.info.image_height; ++imcu) {
        for (std::size_t ci = 0; ci < p.planes.size(); ++ci) {
            const JpegPlane& pl = p.planes[ci];
            int n = pl.v_samp * DCTSIZE;
            auto& rows = comp_rows[ci];
            rows.resize(static_cast<std::size_t>(n));
            for (int r = 0; r < n; ++r)
                rows[static_cast<std::size_t>(r)] =
                    const_cast<JSAMPROW>(pl.data.data() + static_cast<std::size_t>(imcu * n + r) * pl.stride);
            arrays[ci] = rows.data();
        }
        jpeg_write_raw_data(&c.info, arrays, static_cast<JDIMENSION>(mcu_rows));
    }
    jpeg_finish_compress(&c.info);
    return c.take();
}

}  // namespace cli

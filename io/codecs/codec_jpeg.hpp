// imghist_io — JPEG in its own colour space: the planes of a JPEG at their stored sampling (Y, Cb, Cr),
// read and written without colour conversion or resampling. Luma equalization of a JPEG into a JPEG
// changes only the Y plane, so this path skips the decoder's upsampling and colour conversion and the
// encoder's conversion and downsampling.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "io/codecs/codec.hpp"

namespace cli {

struct JpegPlane {
    int width = 0, height = 0;          ///< visible samples of this component
    int stride = 0, rows = 0;           ///< allocated: whole blocks and whole iMCU rows
    int h_samp = 1, v_samp = 1;
    Bytes data;                         ///< rows x stride
};

struct JpegPlanes {
    int width = 0, height = 0;
    int max_v_samp = 1;
    bool ycbcr = false;                 ///< 3 components in YCbCr (false: 1 gray component)
    std::vector<JpegPlane> planes;
    Metadata meta;
};

/// Decodes to planes; Error(Unsupported) for colour spaces other than gray and YCbCr.
JpegPlanes decode_jpeg_planes(const Bytes& data, const std::string& name, const DecodeOptions& opt);
/// Encodes the planes' visible samples: the blocks past a plane's width or height are filled with its edge
/// samples (not with what the planes' padding holds), so the file depends on the visible samples only and
/// the GPU's encoder (jobs/gpu/jpeg_encoder.hpp), which reads the visible samples, writes the same bytes.
Bytes encode_jpeg_planes(const JpegPlanes& p, const EncodeOptions& opt, const std::string& name);

/// What encode_jpeg_planes encodes YCbCr planes with at a quality: libjpeg-turbo's quantisation tables
/// (jpeg_set_quality, forced baseline; row-major) and its standard Huffman tables (as a DHT segment holds
/// them), [0] for luma, [1] for chroma. Another encoder that quantises with these tables as libjpeg-turbo's
/// integer DCT does and codes with them writes the entropy-coded segment encode_jpeg_planes writes.
struct JpegEncodingTables {
    struct Huffman {
        std::array<std::uint8_t, 17> bits{};  ///< bits[n]: codes of length n (bits[0] unused)
        std::vector<std::uint8_t> values;     ///< symbols in code order
    };
    std::array<std::array<std::uint16_t, 64>, 2> quant{};
    std::array<Huffman, 2> dc, ac;
};
/// Throws Error(InvalidArgument) for a quality outside 1-100.
JpegEncodingTables jpeg_encoding_tables(int quality);

/// A baseline YCbCr JPEG around an entropy-coded segment made with jpeg_encoding_tables(quality) (0xFF bytes
/// already stuffed, the last byte padded with 1 bits): SOI, DQT, SOF0, DHT, SOS, the segment, EOI — the
/// markers encode_jpeg_planes writes, without JFIF or metadata (jpeg_with_metadata adds those).
/// Component k has sampling h_samp[k] x v_samp[k].
Bytes baseline_jpeg(int width, int height, const int h_samp[3], const int v_samp[3], int quality,
                    const std::uint8_t* segment, std::size_t size);
/// True when the file is a JPEG that decode_jpeg_planes accepts (gray or YCbCr, 8-bit).
bool jpeg_planar_ok(const Bytes& data);
/// Components of a JPEG that decode_jpeg_planes accepts (1 gray, 3 YCbCr), 0 for anything else.
int jpeg_planar_components(const Bytes& data);

/// What a JPEG's header says (read by libjpeg-turbo, no pixels decoded).
struct JpegHeader {
    int components = 0;                  ///< 0: not read (or not a readable JPEG)
    bool ycbcr = false;                  ///< 3 components in YCbCr
    int width = 0, height = 0;
    int h_samp[3] = {}, v_samp[3] = {};  ///< sampling factors of the first three components
    bool progressive = false, arithmetic = false;
    std::uint64_t scans = 0;             ///< count_jpeg_scans
    Metadata meta;                       ///< EXIF, ICC, XMP, comments, density, estimated quality, as decode_jpeg
};
/// False (and `out` untouched) when libjpeg-turbo cannot read the header (or its metadata, or that is beyond
/// the default metadata limits).
bool read_jpeg_header(const Bytes& data, JpegHeader& out);

/// The scans (SOS markers) of a JPEG file, counted from its marker structure without decoding anything.
std::uint64_t count_jpeg_scans(const Bytes& data);
/// Refuses a JPEG of more than Limits::max_scans scans, naming `name` and --max-scans.
void check_jpeg_scans(std::uint64_t scans, const Limits& limits, const std::string& name);

/// A JPEG written by another encoder (the GPU's) with `m` added as the CPU encoder writes it: the same marker
/// segments in the same order and size limits, and the JFIF density. The encoder's own APPn and COM segments
/// are replaced. Throws Error(Io) naming `name` when `jpeg` does not start with SOI.
Bytes jpeg_with_metadata(const Bytes& jpeg, const Metadata& m, const std::string& name);

}  // namespace cli

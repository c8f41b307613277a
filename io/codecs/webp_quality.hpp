// imghist_io — the quality a lossy WebP was written at, estimated from its VP8 frame header, so a lossy
// input stays lossy at about its own quality (as a JPEG's is estimated from its quantisation tables).
#pragma once

#include <cstddef>
#include <cstdint>

namespace cli {

/// The estimated quality (1-100) of a lossy WebP file (its "VP8 " chunk); 0 for a lossless file, an
/// animation, or a header that cannot be read.
///
/// libwebp turns a quality q into a quantiser index per segment: c = q < 75 ? q·2/3 : 2q − 1 (q in [0, 1]),
/// then c^(1/3), raised for each segment to 1 − a·alpha (a = 0.9·sns/100/128, alpha the segment's
/// susceptibility in [−127, 127], zero on average over the macroblocks), and index = 127·(1 − that). This
/// inverts it from what the frame header stores: the segments' indices and, in the probabilities of the
/// segment tree, their shares of the macroblocks; the share-weighted geometric mean of 1 − index/127 (the
/// alphas' exponents averaging out), cubed, mapped back to q.
int webp_lossy_quality(const std::uint8_t* data, std::size_t size) noexcept;

}  // namespace cli

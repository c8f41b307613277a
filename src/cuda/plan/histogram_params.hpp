// Internal: the launch parameters of the histogram kernels (histogram_kernels.cuh) — what the plan layer
// (plan.hpp) fills and the kernels read. Plain types, so that the plan and the histogrammer need not see
// the kernels.
#pragma once

#include <cstdint>

namespace imghist::detail::cuda {

enum class Storage : std::uint8_t { Smem, Split, Global };
/// Kernel-side evaluation: BinMode, plus ShiftFull (a shift with no range test) and Direct (8-bit value = bin).
enum class KMode : std::uint8_t { Direct, ShiftFull, Shift, Arith, ScaleF32 };

/// The binning rule's fields as the kernels read them: binning.hpp's BinParams without the bin count and
/// the mode (bin_fields, plan.hpp, copies them).
struct BinFields {
    double low, high, a, b;  ///< Arith (and the fold of raw 8-bit values)
    int shift;               ///< Shift, ShiftFull
    unsigned int limit;      ///< Shift
    float scale, high_f;     ///< ScaleF32
};

struct Desc {
    const unsigned char* base;     ///< first sample of row 0
    unsigned long long pitch;      ///< bytes between rows
    unsigned long long row_len;    ///< samples per row (rows of a contiguous image are merged into one)
    unsigned int rows;
    unsigned int tile_rows;        ///< > 0: each tile is tile_rows whole rows
    unsigned int chunks_per_row;   ///< tile_rows == 0: each tile is one chunk of one row
    unsigned int chunk_vecs;       ///< 16-byte vectors per chunk
    unsigned long long tile_begin; ///< index of this image's first tile in the launch
    unsigned long long tiles;
    const unsigned char* mask;     ///< null: no mask (masked images keep rows of `width` pixels)
    unsigned long long mask_pitch;
    unsigned int width;            ///< pixels per row (masked images)
    void* counts;                  ///< output counters (u32 or u64, see Params::count_u64)
    unsigned long long ch_stride;  ///< counters between channel starts
    unsigned long long* oor;       ///< output out-of-range counters, one per channel, or null
};

/// A batch of images of one geometry at equal distances, with outputs at equal distances (Params::descs
/// null, ndesc > 1): image d is Params::one moved by d strides, so no descriptor array goes to the device.
struct BatchStrides {
    long long image;   ///< bytes between two images' first samples
    long long counts;  ///< bytes between two outputs' counts
    long long oor;     ///< bytes between two outputs' out-of-range counters
};

/// The last-block merge: the blocks add their counts into workspace counters that are zero between launches,
/// and the last block to finish copies them to the output with plain stores (so the output may be the
/// caller's page-locked host memory) and zeroes them again.
struct MergeRef {
    void* counts;             ///< C * bins, zero between launches; 32-bit when u64 == 0
    unsigned long long* oor;  ///< C, zero between launches
    unsigned int* ticket;     ///< zero between launches
    int u64;                  ///< 0: the image has fewer than 2^32 samples, 32-bit counters
    /// 0, or (u64 == 0, 64-bit output) the call's tag: every output word is stored as (tag << 32) | count,
    /// so a host waiting on page-locked output knows each word is this launch's when it carries the tag —
    /// one 8-byte store per word, no fence and no separate word to order behind the counts.
    unsigned int tag;
};

struct Params {
    const Desc* descs;  ///< device array of ndesc entries, or null: `one`, moved by `strides` per image
    unsigned int ndesc;
    unsigned long long total_tiles;
    Desc one;
    BatchStrides strides;
    int bins;
    int copies_log2;
    int vectors;
    int splits;                  ///< Split: sibling blocks per tile range (1 otherwise)
    unsigned int split_slots;    ///< Split: flat slots (c * (bins + 1) + slot) owned by each sibling
    BinFields rule;              ///< the binning rule's fields (the mode is the kernel's template argument)
    int fold;        ///< 1: the kernel counts raw 8-bit values (256 slots per channel) and maps each to
                     ///< its bin (binning.hpp's arith_slot, the rule itself) when it flushes: every 8-bit
                     ///< request runs the Direct loop. No table travels with the launch: the parameters
                     ///< stay small, and a launch's time grows with their size (docs/DESIGN.md section 5)
    // output
    int count_u64;
    int direct;                      ///< 1: add straight into Desc::counts; 0: into `merge`, the last block finishes
    /// A batch overwrite: a block that holds every tile of an image stores that image's counts (its output
    /// needs no zeroing); images shared between blocks are added into zeroed outputs. Set only where each
    /// counted slot is one output counter (Smem storage; 8-bit values only with the identity fold).
    int store_whole;
    /// With direct: the launch overwrites the one output — the first block to arrive zeroes it (and its
    /// out-of-range counters) and publishes that, and every block waits for the publication before its
    /// first addition. sync[0] counts the arrivals, sync[1] holds the blocks yet to pass the publication;
    /// both are zero between launches (the last arrival and the last block to pass restore that).
    int zero_first;
    unsigned int* sync;
    unsigned int* overflow_flag;     ///< set when a 32-bit output counter wraps (direct mode only)
    MergeRef merge;                  ///< direct == 0
};

/// Where a launch that overwrites one output writes (the one-pass overwrite's zeroing, Params::zero_first).
struct OutputRef {
    void* counts;
    unsigned long long ch_stride;
    unsigned long long* oor;
    int bins;
    int count_u64;
    unsigned int* sync;  ///< Params::sync
};

/// The parameters of contiguous_kernel: one image (8-bit, 16-bit or float samples) small enough for one range
/// of vectors per block, overwritten in one pass (`out`, zeroed by the first block to arrive). A few words
/// instead of Params, and the other cases' fields (below) only in their own instances, so that the launch
/// carries little: the one-pass kernel of a contiguous image takes these alone (120 bytes), and a launch's
/// time grows with its parameters (docs/DESIGN.md section 5).
struct ContiguousParams {
    const unsigned char* base;  ///< first sample (of row 0)
    unsigned int head;          ///< samples before the first 16-byte boundary (of each row; < 16 bytes' worth)
    unsigned int vectors;       ///< 16-byte vectors from there (in all rows)
    unsigned int tail;          ///< samples after them (at the end of each row; < 16 bytes' worth)
    int copies_log2;
    BinFields rule;  ///< the counting mode's fields, and for raw 8-bit counts the fold at the flush (arith_slot)
    int identity;  ///< 8-bit samples with 256 bins over [0, 256): every raw value is its own bin
    OutputRef out;  ///< the output (its sync words: the one-pass overwrite only)
};

/// An image in rows that all start at the same 16-byte alignment (a pitch that is a multiple of 16:
/// cudaMallocPitch's images, OpenCV's GpuMats): vectors = rows x row_vectors.
struct ContiguousRows {
    unsigned int row_vectors;  ///< vectors per row
    unsigned long long pitch;  ///< bytes between rows
    /// floor(2^40 / row_vectors) + 1, so that i / row_vectors = (i * row_magic) >> 40 for every vector index
    /// i: exact while i < 2^24 and 2 <= row_vectors < 2^16 (the error i / 2^40 < 2^-16 stays below the
    /// 1 / row_vectors that separates i / row_vectors from the next integer; the product fits 64 bits).
    unsigned long long row_magic;
};

/// contiguous_kernel's parameters for each case: Rows (ContiguousRows), Merged (the last-block merge into
/// `merge` and its copy to `out`: blocking calls, whose output is page-locked host memory, and histograms
/// wider than the one-pass zeroing). Each instance carries only the fields it reads.
template <bool Merged, bool Rows>
struct ContiguousArgs : ContiguousParams {};
template <>
struct ContiguousArgs<false, true> : ContiguousParams {
    ContiguousRows rows;
};
template <>
struct ContiguousArgs<true, false> : ContiguousParams {
    MergeRef merge;
};
template <>
struct ContiguousArgs<true, true> : ContiguousParams {
    ContiguousRows rows;
    MergeRef merge;
};

}  // namespace imghist::detail::cuda

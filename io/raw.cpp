#include "io/raw.hpp"

#include "io/errors.hpp"

namespace cli {

imghist::SampleType parse_dtype(const std::string& s) {
    if (s == "u8") return imghist::SampleType::U8;
    if (s == "u16") return imghist::SampleType::U16;
    if (s == "i32") return imghist::SampleType::I32;
    if (s == "f32") return imghist::SampleType::F32;
    fail_usage("--dtype: expected u8, u16, i32 or f32, got '" + s + "'");
}

imghist::ImageView raw_view(const void* data, std::size_t count, imghist::SampleType type, imghist::ImageView& tail) {
    const std::size_t ss = imghist::sample_size(type);
    std::size_t width = 1 << 16;
    if (count < width) width = count;
    std::size_t rows = count / width;
    std::size_t rest = count - rows * width;
    while (rows > 0x7fffffffu) {  // keep height in an int
        width *= 2;
        rows = count / width;
        rest = count - rows * width;
    }
    const auto* base = static_cast<const std::uint8_t*>(data);
    tail = rest ? imghist::ImageView::host(base + rows * width * ss, static_cast<int>(rest), 1, type)
                : imghist::ImageView{};
    return imghist::ImageView::host(base, static_cast<int>(width), static_cast<int>(rows), type);
}

HistResult raw_histogram(const std::string& path, imghist::SampleType type, const imghist::BinSpec& spec,
                         const imghist::Options& options, std::uint64_t max_input) {
    return raw_histogram(read_file(path, max_input), display_name(path), type, spec, options);
}

HistResult raw_histogram(const Bytes& data, const std::string& name, imghist::SampleType type,
                         const imghist::BinSpec& spec, const imghist::Options& options) {
    const std::size_t ss = imghist::sample_size(type);
    if (data.empty()) fail(ErrorCode::InvalidArgument, name, "empty file");
    if (data.size() % ss != 0)
        fail(ErrorCode::InvalidArgument, name, "size " + std::to_string(data.size()) + " bytes is not a multiple of the " +
                                                   std::to_string(ss) + "-byte " + imghist::to_string(type) + " sample");
    const std::size_t count = data.size() / ss;
    imghist::ImageView tail;
    imghist::ImageView body = raw_view(data.data(), count, type, tail);
    imghist::Histogram h = imghist::Histogram::zeros(spec, 1);
    if (!body.empty()) imghist::accumulate_hist(body, h, options);
    if (!tail.empty()) imghist::accumulate_hist(tail, h, options);
    HistResult r = HistResult::from(h, {"gray"});
    r.file = name;
    r.width = static_cast<std::int64_t>(count);
    r.height = 1;
    r.dtype = imghist::to_string(type);
    return r;
}

}  // namespace cli

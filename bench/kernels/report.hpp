// imghist-bench — the output: the device header, the table rows and the JSON record.
#pragma once

#include <string>

#include "json.hpp"
#include "measure.hpp"

namespace bench {

/// GB/s of `bytes` at t's median, right-aligned in `width`; "n/a" / "err" when not measured.
std::string fmt(const Timing& t, double bytes, int width = 7);
void print_header_row();
void print_row(const Row& r);
/// The device and how it is timed, printed before any table.
void print_device(const Context& cx);

void json_shape(Json& j, const char* key, const imghist::detail::LaunchShape& sh);
void json_timing(Json& j, const char* key, const Timing& t, double bytes);
/// The run's record: tool, version, date, command, device, peers, options.
void json_header(Json& j, const Context& cx);
void write_file(const std::string& path, const std::string& text);

}  // namespace bench

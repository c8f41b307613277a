// imghist CLI — histogram plots as PNG pictures: one colour per channel, axes with ticks and labels, a
// legend, optional log scale. Text uses stb_easy_font (a tiny segment font drawn as rectangles).
#pragma once

#include "histio.hpp"
#include "image.hpp"

namespace cli {

struct PlotOptions {
    int width = 960, height = 540;
    bool log = false;
    std::string title;  ///< default: the file name and the binning
};

/// An 8-bit RGB picture of the histogram.
Image render_plot(const HistResult& r, const PlotOptions& opt);

}  // namespace cli

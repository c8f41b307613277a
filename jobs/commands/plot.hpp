// imghist_jobs — histogram plots as pictures (PNG or any raster format the program writes) or as SVG: one
// colour per channel, axes with ticks and labels, a legend, optional log scale. Both are drawn by the same
// layout code. Raster text uses stb_easy_font (a tiny ASCII segment font drawn as rectangles): Latin-1
// letters are drawn as their base letter and any other character as an outlined box; SVG carries the UTF-8
// text itself.
#pragma once

#include <string>

#include "io/histio.hpp"
#include "io/image.hpp"

namespace cli {

struct PlotOptions {
    int width = 960, height = 540;
    bool log = false;
    std::string title;  ///< default: the file name and the binning
};

/// An 8-bit RGB picture of the histogram.
Image render_plot(const HistResult& r, const PlotOptions& opt);
/// The same plot as an SVG document (UTF-8).
std::string render_plot_svg(const HistResult& r, const PlotOptions& opt);

}  // namespace cli

// The rules between a command's options (jobs/commands/image_tasks.hpp), which the program and the Python module
// share: the parameters they give and the messages they refuse with, in the front end's spelling.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>

#include "commands/image_tasks.hpp"
#include "io/errors.hpp"
#include "pipeline/pipeline.hpp"

namespace {

// A spelling unlike both front ends', so that every name in a message is seen to come from it.
const cli::OptionSpelling& test_spelling() {
    static const cli::OptionSpelling s{[](const std::string& k) { return "<" + k + ">"; },
                                       [](const std::string& k) { return "<" + k + " on>"; },
                                       [](const std::string& k, const std::string& v) { return "<" + k + " " + v + ">"; }};
    return s;
}

cli::StretchChoice stretch(std::optional<double> low, std::optional<double> high, bool normalize = false, bool auto_level = false) {
    cli::StretchChoice c;
    c.low = low;
    c.high = high;
    c.normalize = normalize;
    c.auto_level = auto_level;
    return c;
}

}  // namespace

TEST_CASE("stretch's options: defaults, presets, and the combinations refused", "[cli][options]") {
    struct Case {
        cli::StretchChoice choice;
        double low, high;  // the parameters, where accepted
        const char* refused;
    };
    const std::optional<double> none;
    for (const Case& c : {Case{stretch(none, none), 2, 1, nullptr},  // ImageMagick's -normalize
                          Case{stretch(5.0, none), 5, 1, nullptr}, Case{stretch(none, 0.5), 2, 0.5, nullptr},
                          Case{stretch(0.0, 100.0), 0, 100, nullptr}, Case{stretch(none, none, true), 2, 1, nullptr},
                          Case{stretch(none, none, false, true), 0, 0, nullptr},
                          Case{stretch(60.0, 50.0), 0, 0, "<low> + <high> must not exceed 100 (percent)"},
                          Case{stretch(none, 99.5), 0, 0, "<low> + <high> must not exceed 100 (percent)"},
                          Case{stretch(none, none, true, true), 0, 0, "<normalize on> and <auto_level on> exclude each other"},
                          Case{stretch(3.0, none, true), 0, 0, "<normalize on> sets low and high: give <low> / <high> or it, not both"},
                          Case{stretch(none, 0.0, false, true), 0, 0, "<auto_level on> sets low and high"}}) {
        INFO("low " << c.choice.low.value_or(-1) << " high " << c.choice.high.value_or(-1) << " normalize "
                    << c.choice.normalize << " auto_level " << c.choice.auto_level);
        if (c.refused) {
            CHECK_THROWS_AS(cli::stretch_params(c.choice, test_spelling()), cli::UsageError);
            CHECK_THROWS_WITH(cli::stretch_params(c.choice, test_spelling()), Catch::Contains(c.refused));
        } else {
            const cli::StretchParams p = cli::stretch_params(c.choice, test_spelling());
            CHECK(p.low == c.low);
            CHECK(p.high == c.high);
        }
    }
    cli::StretchChoice per_channel = stretch(1.0, 1.0);
    per_channel.mode = cli::StretchMode::PerChannel;
    CHECK(cli::stretch_params(per_channel, test_spelling()).mode == cli::StretchMode::PerChannel);
}

TEST_CASE("threshold's options: which go with which method", "[cli][options]") {
    cli::ImageJob job;
    job.paths = {"in.png", "out.png"};
    auto choice = [](const char* method, std::optional<double> value, bool invert, std::optional<int> classes) {
        cli::ThresholdChoice c;
        c.method = method;
        c.value = value;
        c.invert = invert;
        c.classes = classes;
        return c;
    };
    const std::optional<double> no_value;
    const std::optional<int> no_classes;
    struct Case {
        cli::ThresholdChoice choice;
        const char* refused;  // or, where accepted, the note the task leaves on a file: its start and word count
        int words = 0;
    };
    for (const Case& c : {Case{choice("otsu", no_value, false, no_classes), "threshold: ", 2},
                          Case{choice("triangle", no_value, true, no_classes), "threshold: ", 2},
                          Case{choice("value", 100.0, true, no_classes), "threshold: 100", 2},
                          Case{choice("multiotsu", no_value, false, 4), "thresholds: ", 4},   // classes - 1 thresholds
                          Case{choice("multiotsu", no_value, false, no_classes), "thresholds: ", 3},
                          Case{choice("value", no_value, false, no_classes), "<method value> needs <value>"},
                          Case{choice("otsu", 3.0, false, no_classes), "<value> is only used with <method value>"},
                          Case{choice("triangle", no_value, false, 3), "<classes> is only used with <method multiotsu>"},
                          Case{choice("multiotsu", 3.0, false, no_classes), "<value> and <invert on> do not apply to <method multiotsu>"},
                          Case{choice("multiotsu", no_value, true, no_classes), "do not apply to <method multiotsu>"},
                          Case{choice("mean", no_value, false, no_classes), "<method mean>: expected otsu, triangle, value or multiotsu"}}) {
        INFO(c.choice.method);
        if (c.words == 0) {
            CHECK_THROWS_AS(cli::threshold_command_task(job, c.choice, test_spelling()), cli::UsageError);
            CHECK_THROWS_WITH(cli::threshold_command_task(job, c.choice, test_spelling()), Catch::Contains(c.refused));
            continue;
        }
        // Five gray levels in equal parts: enough for four classes.
        cli::Item it;
        it.image = cli::Image(10, 4, 1, 8);
        for (int i = 0; i < 40; ++i) it.image.data()[i] = static_cast<std::uint8_t>(40 * (i % 5) + 9);
        cli::threshold_command_task(job, c.choice, test_spelling()).process(it, cli::Device{});
        INFO(it.note);
        CHECK(it.note.rfind(c.refused, 0) == 0);
        std::istringstream words(it.note);
        int n = 0;
        for (std::string w; words >> w;) ++n;
        CHECK(n == c.words);
    }
}

// imghist threshold IN... OUT --method otsu|triangle|value|multiotsu [--value T] [--invert] [--classes K]
#include <string>

#include "options/commands.hpp"
#include "commands/image_tasks.hpp"

namespace cli {

Command add_threshold(CLI::App& app) {
    auto* sub = app.add_subcommand("threshold", "Binary threshold of the gray image (pixel > T); prints 'threshold: T'. "
                                                "Multi-level Otsu: a label image; prints 'thresholds: T1 T2 ...'");
    auto job = std::make_shared<ImageJob>();
    auto choice = std::make_shared<ThresholdChoice>();
    auto value = std::make_shared<double>(128);
    add_image_options(*sub, *job);
    auto classes = std::make_shared<int>(3);
    sub->add_option("--method", choice->method,
                    "otsu, triangle (both as OpenCV's THRESH_OTSU / THRESH_TRIANGLE), value, or multiotsu "
                    "(scikit-image's threshold_multiotsu)")
        ->check(CLI::IsMember(threshold_methods()))
        ->default_str("otsu");
    auto* value_opt = sub->add_option("--value", *value, "The threshold T for --method value");
    sub->add_flag("--invert", choice->invert, "Pixels > T become 0, the others the maximum value");
    auto* classes_opt = sub->add_option("--classes", *classes,
                                        "multiotsu: number of classes; pixel v gets the class of thresholds <= v "
                                        "(np.digitize), written scaled to 0..max (3 classes: 0, 128, 255)")
                            ->check(CLI::Range(2, 5))
                            ->default_str("3");
    sub->footer("Examples:\n  imghist threshold scan.png scan-bw.png --method otsu\n"
                "  imghist threshold in.png out.png --method value --value 100 --invert\n"
                "  imghist threshold cells.png cells-labels.png --method multiotsu --classes 3");
    return image_command(sub, [job, choice, value, value_opt, classes, classes_opt] {
        ThresholdChoice c = *choice;
        if (value_opt->count() != 0) c.value = *value;
        if (classes_opt->count() != 0) c.classes = *classes;
        return threshold_command_task(*job, c, program_spelling());
    });
}

}  // namespace cli

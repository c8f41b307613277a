#include "suggest.hpp"

#include <algorithm>

namespace cli {

std::size_t edit_distance(const std::string& a, const std::string& b) {
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
    for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[n][m];
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
    const std::size_t limit = word.size() >= 9 ? 3 : word.size() >= 5 ? 2 : 1;
    std::string best;
    std::size_t best_d = limit + 1;
    bool tie = false;
    for (const std::string& c : candidates) {
        const std::size_t dist = edit_distance(word, c);
        if (dist < best_d) {
            best = c;
            best_d = dist;
            tie = false;
        } else if (dist == best_d && c != best) {
            tie = true;
        }
    }
    return best_d <= limit && !tie ? best : std::string();
}

namespace {

std::vector<std::string> command_names(const CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
    return names;
}

const CLI::App* command_named(const CLI::App& app, const std::string& name) {
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        if (sub->get_name() == name) return sub;
    return nullptr;
}

}  // namespace

std::string unknown_command(const CLI::App& app, int argc, char** argv) {
    if (argc < 2 || argv[1][0] == '-' || argv[1][0] == '\0') return {};
    const std::string word = argv[1];
    const std::vector<std::string> names = command_names(app);
    if (std::find(names.begin(), names.end(), word) != names.end()) return {};
    std::string msg = "unknown command '" + word + "'";
    const std::string near = nearest_name(word, names);
    if (!near.empty()) return msg + "; did you mean '" + near + "'?";
    msg += " (the commands are";
    for (std::size_t i = 0; i < names.size(); ++i) msg += (i ? ", " : " ") + names[i];
    return msg + ")";
}

std::string unknown_options(const CLI::App& app, int argc, char** argv) {
    if (argc < 2) return {};
    const CLI::App* sub = command_named(app, argv[1]);
    if (!sub) return {};
    std::vector<std::string> known;
    for (const CLI::Option* o : sub->get_options())
        for (const std::string& l : o->get_lnames()) known.push_back("--" + l);
    std::string lines;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") break;
        if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) continue;
        const std::string name = arg.substr(0, arg.find('='));
        if (std::find(known.begin(), known.end(), name) != known.end()) continue;
        lines += (lines.empty() ? "" : "\n") + std::string("unknown option '") + name + "' of '" + sub->get_name() + "'";
        const std::string near = nearest_name(name, known);
        lines += near.empty() ? "; see 'imghist " + sub->get_name() + " --help'" : "; did you mean " + near + "?";
    }
    return lines;
}

}  // namespace cli

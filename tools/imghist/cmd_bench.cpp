// imghist bench [args] — runs the kernel benchmark, the imghist-bench executable found next to this
// program (or, in a build tree, in ../../bench), else on PATH; arguments pass through unchanged.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "program_commands.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"

namespace cli {

Command add_bench(CLI::App& app) {
    auto* sub = app.add_subcommand("bench", "Run the kernel benchmark (imghist-bench); arguments pass through");
    sub->prefix_command();
    sub->allow_extras();
    return Command{sub, [sub]() -> int {
        std::vector<std::string> args = sub->remaining();
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        std::vector<std::string> candidates;
        if (n > 0) {
            self[n] = '\0';
            std::string dir = parent_dir(self);
            candidates.push_back(dir + "/imghist-bench");
            candidates.push_back(dir + "/../../bench/imghist-bench");
        }
        std::vector<char*> argv;
        std::string prog = "imghist-bench";
        argv.push_back(prog.data());
        for (auto& s : args) argv.push_back(s.data());
        argv.push_back(nullptr);
        std::fflush(stdout);
        for (auto& c : candidates)
            if (access(c.c_str(), X_OK) == 0) {
                execv(c.c_str(), argv.data());
                throw Error(ErrorCode::Io, c + ": cannot run: " + std::strerror(errno));
            }
        execvp("imghist-bench", argv.data());
        throw Error(ErrorCode::Unsupported,
                    std::string("the benchmark program imghist-bench was not found next to imghist or on PATH ") +
                        (imghist::built_with_cuda()
                             ? "(build it with -DIMGHIST_BUILD_BENCH=ON, target imghist-bench)"
                             : "(it times CUDA kernels: this imghist was built without CUDA, IMGHIST_WITH_CUDA=OFF)"));
    }};
}

}  // namespace cli

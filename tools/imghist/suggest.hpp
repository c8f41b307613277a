// imghist — "did you mean" for a mistyped command or option, as git and cargo answer: the nearest name
// by edit distance, when it is near enough to be a typo.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace cli {

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbours
/// each count one ("equalise" -> "equalize" 1, "--bnis" -> "--bins" 1).
std::size_t edit_distance(const std::string& a, const std::string& b);
/// The candidate nearest to `word`, when at most 1 edit away (2 for words of 5 characters or more, 3 from 9)
/// and nearer than the rest; empty otherwise.
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);

/// Before parsing: when the first argument names no command, the message that says so and suggests the
/// nearest ("unknown command 'equalise'; did you mean 'equalize'?"); empty when it names one (or is an
/// option).
std::string unknown_command(const CLI::App& app, int argc, char** argv);
/// After the parser refused extra arguments: one line per unknown long option of the command named by the
/// first argument, with the nearest option of that command; empty when no extra argument is an option.
std::string unknown_options(const CLI::App& app, int argc, char** argv);

}  // namespace cli

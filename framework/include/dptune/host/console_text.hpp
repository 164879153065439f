#pragma once

#include <string>
#include <vector>

#include "dptune/privacy.hpp"
#include "dptune/traits.hpp"

namespace dptune::host {

/// Every decimal number in `text` written with more than 5 significant digits, at 5
/// (0.0071111111111111115 -> 0.0071111, 7.1490643697127165 -> 7.1491).  Integers, numbers with at
/// most 5 significant digits and version-like tokens (1.2.3) stay as they are.  For text a person
/// reads; the files keep full precision.
std::string short_numbers(const std::string& text);

/// `text` with every nested event dump ({a: {b: ...}} longer than 60 characters) replaced by
/// "{...}"; `elided` (when given) is set when something was replaced.
std::string elide_event_dumps(const std::string& text, bool* elided = nullptr);

/// `text` with every bracketed list of more than 10 numbers summarised as its length and its
/// largest entries with their 0-based positions: "[100 values; largest: #77 30.529, #6 30.011,
/// #51 26.836]".  `summarised` (when given) is set when something was replaced.
std::string summarise_long_vectors(const std::string& text, bool* summarised = nullptr);

/// A note as the console shows it without --verbose: short numbers, event dumps elided, long
/// vectors summarised, and " (in full: summary.json)" appended when anything was left out.
std::string console_note(const std::string& note);

/// `notes` with every passage of more than 80 characters that an earlier note holds (without its
/// up to two leading labels, "DP output: released model: ") replaced by "as above": a block of
/// provenance printed once.
std::vector<std::string> without_repeated_passages(const std::vector<std::string>& notes);

/// The first part of `note` (console_note'd) that fits on one console line of `width` characters:
/// up to its first clause ("; ", or ". " before a capital) when that ends past a third of the
/// width, else cut at a space, with " ..." appended.
std::string note_headline(const std::string& note, std::size_t width);

/// At most this many lines of notes on the console without --verbose (report.html and
/// summary.json hold every note in full).
inline constexpr std::size_t kConsoleNoteLines = 8;

/// Whether a note is a warning, read in full on the console ("WARNING", "INSECURE NOISE",
/// "NOMINAL").
bool is_warning_note(const std::string& note);

/// The console's block of notes: with `verbose` every note in full; otherwise the warnings first,
/// in full (console_note'd, wrapped at 100 characters), then one headline per other note while
/// fewer than kConsoleNoteLines lines are used, then one line counting what was left out and
/// saying where every note is in full.  Warnings are never left out, even past the budget.
std::string console_notes(const std::vector<std::string>& notes, bool verbose);

/// `text` broken at spaces into lines of at most `width` characters: the first after `first`,
/// the others after `indent` (a word longer than a line stays whole).
std::string wrapped(const std::string& text, const std::string& first, const std::string& indent,
                    std::size_t width = 100);

/// The (ε, δ) guarantee in words, for the console and the top of report.html ("whatever is
/// released, changing any one record of the data changes the probability of any outcome by at
/// most a factor e^epsilon = 9.3, except with probability at most delta = 1e-05.").
std::string guarantee_in_words(const dptune::PrivacyGuarantee& g, dptune::GuaranteeUnit unit);

}  // namespace dptune::host

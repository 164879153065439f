// The console's text for people: numbers at 5 significant digits, event dumps elided, long
// vectors summarised, one-line headlines of notes (framework/src/report/console_text.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dptune/host/console_text.hpp"

using dptune::host::console_note;
using dptune::host::elide_event_dumps;
using dptune::host::guarantee_in_words;
using dptune::host::note_headline;
using dptune::host::short_numbers;
using dptune::host::summarise_long_vectors;
using dptune::host::without_repeated_passages;

TEST_CASE("short_numbers writes long decimals at 5 significant digits and nothing else") {
  CHECK(short_numbers("rate: 0.0071111111111111115") == "rate: 0.0071111");
  CHECK(short_numbers("epsilon: 7.1490643697127165, clipping_norm: 1.428787938734943") ==
        "epsilon: 7.1491, clipping_norm: 1.4288");
  CHECK(short_numbers("noise_multiplier: 7.999999999999998}") == "noise_multiplier: 8}");
  CHECK(short_numbers("E[K] = 9.999999999999993") == "E[K] = 10");
  CHECK(short_numbers("gamma = 0.026918259600680245") == "gamma = 0.026918");
  CHECK(short_numbers("1.2345678e-07 and 2.5e-05") == "1.2346e-07 and 2.5e-05");
  // Left alone: at most 5 digits, integers, versions, digits inside words and hashes.
  CHECK(short_numbers("0.0051949, 155300 bytes, 4194304.0") == "0.0051949, 155300 bytes, 4194304");
  CHECK(short_numbers("dptune 0.1.0, GF(2^61-1), sha256 a83c0370d91532c96d40") ==
        "dptune 0.1.0, GF(2^61-1), sha256 a83c0370d91532c96d40");
  CHECK(short_numbers("x1.234567 v2") == "x1.234567 v2");
}

TEST_CASE("elide_event_dumps replaces nested maps longer than 60 characters") {
  bool elided = false;
  const std::string dump =
      "guarantee: the accountant's cost of {repeat_and_select: {mean: 5.0, shape: .inf, event: "
      "{gaussian: {noise_multiplier: 4.0}}}}; more";
  CHECK(elide_event_dumps(dump, &elided) == "guarantee: the accountant's cost of {...}; more");
  CHECK(elided);
  elided = false;
  // A flat map (a candidate) and a short nested one stay.
  const std::string flat = "selected {clipping_norm: 0.137, epochs: 1, learning_rate: 0.0956}";
  CHECK(elide_event_dumps(flat, &elided) == flat);
  CHECK(elide_event_dumps("{a: {b: 1}}", &elided) == "{a: {b: 1}}");
  CHECK_FALSE(elided);
}

TEST_CASE("summarise_long_vectors keeps the length and the 3 largest entries with positions") {
  std::string votes = "noisy votes: [";
  for (int i = 0; i < 100; ++i) votes += (i ? ", " : "") + std::to_string(i % 7 == 3 ? i : -i);
  votes += "] end";
  bool summarised = false;
  CHECK(summarise_long_vectors(votes, &summarised) ==
        "noisy votes: [100 values; largest: #94 94, #87 87, #80 80] end");
  CHECK(summarised);
  summarised = false;
  const std::string short_list = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
  CHECK(summarise_long_vectors(short_list, &summarised) == short_list);
  CHECK(summarise_long_vectors("[a, b, c, d, e, f, g, h, i, j, k, l]") ==
        "[a, b, c, d, e, f, g, h, i, j, k, l]");
  CHECK_FALSE(summarised);
}

TEST_CASE("console_note says where the full text is when it left something out") {
  CHECK(console_note("epsilon 1.23456789") == "epsilon 1.2346");
  CHECK(console_note("cost of {a: {b: {c: 1, d: 2, e: 3, f: 4, g: 5, h: 6, i: 7, j: 8, k: 9}}}") ==
        "cost of {...} (in full: summary.json)");
}

TEST_CASE("note_headline fits one line, cut at a clause or a space") {
  const std::string note =
      "candidates: uniform over the 3125-point grid of the search space; the base event is the "
      "worst of its 125 distinct event(s)";
  CHECK(note_headline(note, 94) ==
        "candidates: uniform over the 3125-point grid of the search space ...");
  CHECK(note_headline("short note", 94) == "short note");
  // "et al. 2017" ends no clause; ". " before a capital does.
  CHECK(note_headline(
            "secure aggregation (Bonawitz et al. 2017, pairwise masks) with many more words "
            "than fit on one console line of fifty",
            50) == "secure aggregation (Bonawitz et al. 2017, ...");
  CHECK(note_headline("A first sentence is here. Then a second one that is long enough to cut",
                      50) == "A first sentence is here ...");
  const std::string no_clause(200, 'x');
  CHECK(note_headline("word " + no_clause, 50) == "word ...");
  for (const auto& line : {note_headline(note, 94), note_headline("a b " + no_clause, 50)})
    CHECK(line.size() <= 94);
}

TEST_CASE("without_repeated_passages says a long passage of an earlier note once") {
  const std::string provenance =
      "model model.npy of the external program `/usr/bin/python3 train.py`; program sha256 "
      "a83c0370d91532c96d4060a0e7c107d1f2889dad8a98e03395e86ef0373fd467";
  const auto notes = without_repeated_passages(
      {"DP output: released model: " + provenance,
       "the released model (" + provenance + ") cannot be exported by its plugin", "short one",
       "short one again: short one"});
  REQUIRE(notes.size() == 4);
  CHECK(notes[0] == "DP output: released model: " + provenance);
  CHECK(notes[1] == "the released model (as above) cannot be exported by its plugin");
  // Passages of 80 characters or fewer are never replaced.
  CHECK(notes[3] == "short one again: short one");
}

TEST_CASE("guarantee_in_words states e^epsilon to 3 digits and delta, per record or per client") {
  dptune::PrivacyGuarantee g;
  g.epsilon = 2.23;  // e^2.23 = 9.2999...
  g.delta = 1e-5;
  CHECK(guarantee_in_words(g, dptune::GuaranteeUnit::Record) ==
        "whatever is released, changing any one record of the data changes the probability of any "
        "outcome by at most a factor e^epsilon = 9.3, except with probability at most delta = "
        "1e-05.");
  g.epsilon = 1;
  CHECK(guarantee_in_words(g, dptune::GuaranteeUnit::Client)
            .find("changing all the records of any one client changes the probability of any "
                  "outcome by "
                  "at most a factor e^epsilon = 2.72,") != std::string::npos);
}

TEST_CASE("console_notes: at most 8 lines, warnings first and whole, the rest counted") {
  using dptune::host::console_notes;
  using dptune::host::kConsoleNoteLines;
  std::vector<std::string> notes;
  for (int i = 0; i < 12; ++i) notes.push_back("note number " + std::to_string(i) + " 0.123456789");
  notes.insert(notes.begin() + 5,
               "WARNING: the vote noise swamps the votes: noise stddev sigma = 12.792612 on each "
               "candidate's count of 50 clients' votes, so a candidate that half the clients vote "
               "for more is still ranked below another with probability 0.084");
  const std::string out = console_notes(notes, false);
  const auto lines = static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n'));
  CHECK(lines == kConsoleNoteLines);
  // The warning first, whole (3 lines of 100), its numbers at 5 digits; then 4 headlines; then the
  // count.
  CHECK(out.rfind("note: WARNING: the vote noise swamps the votes: noise stddev sigma = 12.793",
                  0) == 0);
  CHECK(out.find("probability 0.084\n") != std::string::npos);
  CHECK(out.find("note: note number 0 0.12346\n") != std::string::npos);
  CHECK(out.find("note: note number 3 0.12346\n") != std::string::npos);
  CHECK(out.find("note number 4") == std::string::npos);
  CHECK(out.find("  (8 more notes; every note in full: report.html, summary.json, or dptune run "
                 "--verbose)\n") != std::string::npos);
  // Few notes: all of them, and where they are in full.
  CHECK(console_notes({"a", "b"}, false) ==
        "note: a\nnote: b\n  (every note in full: report.html, summary.json, or dptune run "
        "--verbose)\n");
  CHECK(console_notes({}, false).empty());
  // --verbose: every note in full, at full precision.
  const std::string verbose = console_notes(notes, true);
  CHECK(verbose.find("note: note number 11 0.123456789\n") != std::string::npos);
  CHECK(verbose.find("12.792612") != std::string::npos);
}

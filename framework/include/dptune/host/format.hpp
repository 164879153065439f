// dptune host: the one home of number formatting for the host and the `dptune` command.  Every
// number a report, a diagnostic or a command prints goes through one of these functions, so that
// the same number reads the same everywhere and the tests that pin the output pin one rule each.
#pragma once

#include <string>

namespace dptune::host {

/// `digits` significant figures, printf's %.<digits>g (and std::ostream's default notation with
/// setprecision(digits)): 0.1, 1e-05, 12346; "inf", "-inf", "nan" for the non-finite.  The
/// default, 5, is the one format of every number a person reads (the console, messages,
/// derivations, report.html, `dptune audit`, `ledger show`); machine files use full_precision or
/// shortest.  digits = 17 (max_digits10) reads back as the same double.
std::string significant(double x, int digits = 5);

/// The shortest text that reads back as the same double (std::to_chars), kept a float when read
/// as YAML (3.0, .inf, -.inf, .nan): the SDK's text of a float parameter (dptune::to_string of a
/// Value), for resolved configs, CSV cells and anything a reader parses back.
std::string full_precision(double x);

/// The shortest text that reads back as the same finite double (std::to_chars): 3, 0.1, 1e-07;
/// JSON numbers.  Non-finite values have no such text; the caller decides (JSON writes strings).
std::string shortest(double x);

/// `digits` significant figures with the exponent written short (1e-05 -> 1e-5, 1e+06 -> 1e6):
/// plot tick labels.
std::string significant_short_exponent(double x, int digits);

/// One significant figure in scientific notation with a short exponent (2e-5, 1e6): the ticks of
/// a log axis outside 0.001 … 1e5.
std::string scientific_one_figure(double x);

/// `decimals` digits after the point, printf's %.<decimals>f: linear tick labels.
std::string fixed_decimals(double x, int decimals);

/// A duration as the progress line shows it: 42s, 3m07s, 2h05m (seconds, minutes and hours,
/// truncated below the largest unit).
std::string duration(double seconds);

}  // namespace dptune::host

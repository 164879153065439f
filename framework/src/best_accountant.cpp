// The `best` accountant: see best_accountant.hpp.
#include "best_accountant.hpp"

#include <exception>

#include "dptune/errors.hpp"
#include "dptune/params.hpp"

namespace dptune::host {

namespace {
std::string num(double x) { return to_string(dptune::Value{x}); }
}  // namespace

BestAccountant::BestAccountant(std::vector<Member> members) : members_(std::move(members)) {
  if (members_.empty()) throw dptune::InvalidArgument("the best accountant needs a member");
}

std::string BestAccountant::unsupported_reason(const DpEvent& event) const {
  std::string reasons;
  for (const auto& m : members_) {
    const std::string why = m.accountant->unsupported_reason(event);
    if (why.empty()) return {};
    reasons += (reasons.empty() ? "" : "; ") + m.name + ": " + why;
  }
  return reasons;
}

PrivacyGuarantee BestAccountant::epsilon(const DpEvent& event, double delta) const {
  return smallest(event, delta, Ask::Epsilon);
}

PrivacyGuarantee BestAccountant::delta(const DpEvent& event, double epsilon) const {
  return smallest(event, epsilon, Ask::Delta);
}

PrivacyGuarantee BestAccountant::smallest(const DpEvent& event, double given, Ask ask) const {
  std::vector<std::pair<const Member*, PrivacyGuarantee>> answers;
  std::vector<std::string> notes;
  std::exception_ptr first_failure;
  for (const auto& m : members_) {
    if (const auto why = m.accountant->unsupported_reason(event); !why.empty()) {
      notes.push_back(m.name + " cannot price it (" + why + ")");
      continue;
    }
    try {
      answers.emplace_back(&m, ask == Ask::Epsilon ? m.accountant->epsilon(event, given)
                                                   : m.accountant->delta(event, given));
    } catch (const dptune::Error& e) {
      if (!first_failure) first_failure = std::current_exception();
      notes.push_back(m.name + " failed (" + e.what() + ")");
    }
  }
  if (answers.empty()) {
    if (first_failure) std::rethrow_exception(first_failure);
    throw dptune::PrivacyError("no accountant of best can price " + event.to_string() + ": " +
                               unsupported_reason(event));
  }
  auto value = [ask](const PrivacyGuarantee& g) {
    return ask == Ask::Epsilon ? g.epsilon : g.delta;
  };
  std::size_t win = 0;
  for (std::size_t i = 1; i < answers.size(); ++i)
    if (value(answers[i].second) < value(answers[win].second)) win = i;
  const char* what = ask == Ask::Epsilon ? "eps" : "delta";
  std::string summary = "best of";
  for (std::size_t i = 0; i < answers.size(); ++i)
    summary += (i == 0 ? " " : ", ") + answers[i].first->name + " (" + what + " " +
               num(value(answers[i].second)) + ")";
  for (const auto& n : notes) summary += "; " + n;
  PrivacyGuarantee g = answers[win].second;
  g.derivation = summary + "; " + answers[win].first->name + " wins: " + g.derivation;
  g.accountant = kName;
  return g;
}

}  // namespace dptune::host

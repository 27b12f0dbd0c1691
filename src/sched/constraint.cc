// Feature constraints; see constraint.h. Brackets ("[a|b]") are read as plain '|'.
#include "sched/constraint.h"

#include <algorithm>
#include <cctype>

#include "common/text.h"

namespace drover::sched {
namespace {

bool Has(const std::vector<std::string>& features, const std::string& feature) {
  return std::find(features.begin(), features.end(), feature) != features.end();
}

Error Invalid(std::string_view text) {
  return MakeError("invalid constraint '" + std::string(text) +
                   "' (expected features joined by & or |, e.g. a100&ib, with optional counts "
                   "like a100*2)");
}

}  // namespace

bool Constraint::NodeMatches(const std::vector<std::string>& features) const {
  if (terms.empty()) return true;
  bool any_match = false;
  for (const Term& term : terms) {
    bool has = Has(features, term.feature);
    if (!any && term.count == 0 && !has) return false;
    any_match = any_match || has;
  }
  return !any || any_match;
}

bool Constraint::CountsMet(const std::vector<const std::vector<std::string>*>& nodes) const {
  for (const Term& term : terms) {
    if (term.count == 0) continue;
    int with = 0;
    for (const auto* features : nodes) with += Has(*features, term.feature);
    if (with < term.count) return false;
  }
  return true;
}

Result<Constraint> ParseConstraint(std::string_view text) {
  Constraint constraint;
  std::string plain;
  for (char c : text)
    if (c != '[' && c != ']' && c != '"') plain += c;
  if (Trim(plain).empty()) return constraint;
  bool has_and = plain.find('&') != std::string::npos || plain.find(',') != std::string::npos;
  bool has_or = plain.find('|') != std::string::npos;
  if (has_and && has_or) return Invalid(text);
  constraint.any = has_or;
  for (char& c : plain)
    if (c == '|' || c == ',') c = '&';
  for (const std::string& item : Split(plain, '&')) {
    std::string_view term = Trim(item);
    Constraint::Term parsed;
    size_t star = term.find('*');
    parsed.feature = std::string(Trim(term.substr(0, star)));
    if (star != std::string_view::npos) {
      auto count = ParseInt64(Trim(term.substr(star + 1)));
      if (!count || *count < 1 || *count > 1 << 20) return Invalid(text);
      parsed.count = static_cast<int>(*count);
    }
    bool valid = !parsed.feature.empty() &&
                 std::all_of(parsed.feature.begin(), parsed.feature.end(), [](char c) {
                   return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                          c == '.' || c == ':' || c == '=';
                 });
    if (!valid) return Invalid(text);
    constraint.terms.push_back(std::move(parsed));
  }
  return constraint;
}

}  // namespace drover::sched

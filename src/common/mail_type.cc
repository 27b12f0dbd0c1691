// Slurm's --mail-type words and the order Slurm prints them in.
#include "common/mail_type.h"

#include <array>
#include <utility>
#include <vector>

#include "common/text.h"

namespace drover {
namespace {

constexpr uint32_t kMailAll =
    kMailInvalidDepend | kMailBegin | kMailEnd | kMailFail | kMailRequeue | kMailStageOut;

// Slurm's print order (print_mail_type).
constexpr std::array<std::pair<std::string_view, uint32_t>, 11> kNames = {{
    {"ARRAY_TASKS", kMailArrayTasks},
    {"INVALID_DEPEND", kMailInvalidDepend},
    {"BEGIN", kMailBegin},
    {"END", kMailEnd},
    {"FAIL", kMailFail},
    {"REQUEUE", kMailRequeue},
    {"STAGE_OUT", kMailStageOut},
    {"TIME_LIMIT", kMailTimeLimit},
    {"TIME_LIMIT_90", kMailTimeLimit90},
    {"TIME_LIMIT_80", kMailTimeLimit80},
    {"TIME_LIMIT_50", kMailTimeLimit50},
}};

}  // namespace

std::optional<uint32_t> ParseMailTypes(std::string_view text) {
  uint32_t types = 0;
  bool any = false;
  for (const std::string& word : Split(text, ',')) {
    if (word.empty()) continue;  // Slurm's strtok skips empty words
    any = true;
    if (EqualsIgnoreCase(word, "NONE")) return 0u;
    if (EqualsIgnoreCase(word, "ALL")) {
      types |= kMailAll;
      continue;
    }
    bool known = false;
    for (const auto& [name, bit] : kNames)
      if (EqualsIgnoreCase(word, name)) {
        types |= bit;
        known = true;
      }
    if (!known) return std::nullopt;
  }
  if (!any) return std::nullopt;
  return types;
}

std::string MailTypeText(uint32_t types) {
  std::vector<std::string> names;
  for (const auto& [name, bit] : kNames)
    if (types & bit) names.emplace_back(name);
  return names.empty() ? "NONE" : Join(names, ",");
}

}  // namespace drover

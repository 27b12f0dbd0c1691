// --mail-type as Slurm reads and prints it: a set of events (BEGIN, END, FAIL, ...) that the
// controller mails the job's user about. Parsing and printing only; the controller decides when
// an event happens and runs MailProg.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace drover {

enum MailType : uint32_t {
  kMailBegin = 1u << 0,
  kMailEnd = 1u << 1,
  kMailFail = 1u << 2,
  kMailRequeue = 1u << 3,
  kMailTimeLimit = 1u << 4,
  kMailTimeLimit90 = 1u << 5,
  kMailTimeLimit80 = 1u << 6,
  kMailTimeLimit50 = 1u << 7,
  kMailStageOut = 1u << 8,
  kMailArrayTasks = 1u << 9,
  kMailInvalidDepend = 1u << 10,
};

// "END,FAIL" -> the set; "NONE" ends the list with nothing (as in Slurm, NONE empties it);
// nullopt for a word Slurm does not know. Case does not matter.
std::optional<uint32_t> ParseMailTypes(std::string_view text);

// The set as Slurm prints it (scontrol's MailType=): "INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,
// STAGE_OUT" for ALL; "NONE" when empty.
std::string MailTypeText(uint32_t types);

}  // namespace drover

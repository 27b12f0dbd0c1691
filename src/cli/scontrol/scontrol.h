// scontrol's pieces shared by its command files: the global options, and `show`/`ping`
// (scontrol_show.cc). The dispatch and the actions (update, hold, requeue, ...) are in
// scontrol.cc.
#pragma once

#include <span>
#include <string>

namespace drover::cli::scontrol {

struct Flags {
  bool one_liner = false;  // -o
  bool details = false;    // -d
  bool json = false;       // --json
  bool all = false;        // -a: hidden partitions too
  bool quiet = false;      // -Q
  std::string version;     // Drover's, for Version= of nodes
};

int RunShow(const Flags& flags, std::span<const std::string> words);
int RunPing(const Flags& flags);

}  // namespace drover::cli::scontrol

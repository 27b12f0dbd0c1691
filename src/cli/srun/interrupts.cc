// Signal handlers for srun and salloc; see interrupts.h.
#include "cli/srun/interrupts.h"

namespace drover::cli {

volatile sig_atomic_t g_interrupted = 0;
volatile sig_atomic_t g_forward = 0;

namespace {

void OnInterrupt(int) {
  g_interrupted = g_interrupted + 1;
}
void OnForward(int signal) {
  g_forward = signal;
}

}  // namespace

void CatchInterrupts() {
  struct sigaction interrupt {};
  interrupt.sa_handler = OnInterrupt;
  ::sigaction(SIGINT, &interrupt, nullptr);
}

void ForwardSignals(std::initializer_list<int> signals) {
  struct sigaction forward {};
  forward.sa_handler = OnForward;
  for (int s : signals) ::sigaction(s, &forward, nullptr);
}

}  // namespace drover::cli

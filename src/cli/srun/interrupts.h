// The signals srun and salloc act on: their handlers only note them (Ctrl-C presses, and the
// last signal to pass on) for the main loop to act on. Async-signal-safe; nothing else here.
#pragma once

#include <csignal>
#include <initializer_list>

namespace drover::cli {

extern volatile sig_atomic_t g_interrupted;  // Ctrl-C presses not yet handled
extern volatile sig_atomic_t g_forward;      // another signal to pass on to the tasks

// SIGINT counts into g_interrupted.
void CatchInterrupts();
// Each of `signals` is noted in g_forward.
void ForwardSignals(std::initializer_list<int> signals);

}  // namespace drover::cli

// Messages for many nodes passed down a tree of agents, as Slurm forwards them with TreeWidth:
// the sender splits the targets into at most `width` spans and sends each span one Relay call,
// to the agent of its first node; that agent acts for the nodes it serves and relays the rest
// of its span the same way. The controller is the tree's root.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proto/drover.grpc.pb.h"

namespace drover::wire {

inline constexpr int kMostRelayTargets = 100000;

// `count` items in at most `width` consecutive spans of sizes differing by one at most, as
// Slurm's route plugin splits a hostlist: [begin, end) of each.
std::vector<std::pair<size_t, size_t>> SplitSpans(size_t count, size_t width);

// The stub for an agent's address (null when none can be made).
using AgentStubFor = std::function<std::shared_ptr<v1::Agent::Stub>(const std::string& address)>;

// Sends `message` (its targets replaced span by span) down the tree: one Relay call per span,
// all at once, each within `timeout`; returns every target that was not reached or refused.
std::vector<v1::RelayReply::Failure> RelaySpans(const std::vector<v1::RelayTarget>& targets,
                                                const v1::RelayRequest& message,
                                                const AgentStubFor& stub_for,
                                                std::chrono::milliseconds timeout);

}  // namespace drover::wire

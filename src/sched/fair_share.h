// Fair share over the association tree: Fair Tree (Slurm's default) and the classic
// 2^(-EffectiveUsage/NormShares) formula, plus usage decay by PriorityDecayHalfLife. Pure
// arithmetic over the tree it is given; sshare prints what this computes.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/model.h"

namespace drover::sched {

// Per association (same indexes as the input), what sshare shows.
struct FairShare {
  std::vector<double> norm_shares;      // shares / siblings' shares, times the parent's
  std::vector<double> norm_usage;       // usage / all usage (0 when there is none)
  std::vector<double> effective_usage;  // classic: usage propagated from the parent
  std::vector<double> level_fs;         // Fair Tree: (shares/siblings) / (usage/siblings)
  std::vector<double> factor;           // the fair-share factor in [0, 1]; users' are used
};

// Fair Tree: siblings ranked by level fair share (infinite when unused), depth first; users
// get ranks in that order, and a user's factor is rank / number of users (the first user has
// 1.0; ties share a rank). Accounts with equal level fair share have their children ranked
// together, as Slurm does.
FairShare ComputeFairTree(const std::vector<Association>& associations);

// Classic: factor = 2^(-effective_usage / norm_shares); an unused association gets 1.0.
FairShare ComputeClassicFairShare(const std::vector<Association>& associations);

// Usage decayed over `elapsed_seconds` with the given half-life (0: no decay).
double DecayUsage(double usage, int64_t elapsed_seconds, int64_t half_life_seconds);

// The association of `user` under `account`; -1 when there is none.
int FindUserAssociation(const std::vector<Association>& associations, const std::string& account,
                        const std::string& user);

}  // namespace drover::sched

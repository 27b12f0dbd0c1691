// Fair share over the association tree: Fair Tree ranks users by level fair share, depth first;
// classic propagates effective usage from the root down. Usage here is an account's own usage
// plus everything below it, so callers may record usage on users only (as Slurm charges jobs).
#include "sched/fair_share.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace drover::sched {
namespace {

// The tree's shape, and the per-subtree sums both algorithms start from.
struct Tree {
  std::vector<std::vector<int>> children;  // the last entry holds the roots (parent -1)
  std::vector<int> preorder;               // every association reachable from a root
  std::vector<double> usage;               // own usage plus the subtree's
  std::vector<double> sibling_shares;      // shares summed over the association and its siblings
  std::vector<double> sibling_usage;       // the same for usage
  double total_usage = 0;                  // over the roots
  int user_count = 0;

  const std::vector<int>& roots() const { return children.back(); }
};

bool IsUser(const Association& association) {
  return !association.user.empty();
}

// Parents are looked up by index, so a malformed parent (out of range) makes a root rather
// than a crash; input is validated upstream, this only keeps the arithmetic total.
int ParentSlot(const std::vector<Association>& associations, int index) {
  int parent = associations[index].parent;
  int count = static_cast<int>(associations.size());
  return parent >= 0 && parent < count && parent != index ? parent : count;
}

// Only what hangs from a root is walked, so a cycle in bad input is left out, not looped on.
void OrderPreorder(Tree& tree) {
  std::vector<int> stack(tree.roots().rbegin(), tree.roots().rend());
  while (!stack.empty()) {
    int index = stack.back();
    stack.pop_back();
    tree.preorder.push_back(index);
    const std::vector<int>& kids = tree.children[index];
    stack.insert(stack.end(), kids.rbegin(), kids.rend());
  }
}

void SumSiblings(const std::vector<Association>& associations, Tree& tree) {
  int count = static_cast<int>(associations.size());
  tree.sibling_shares.assign(count, 0);
  tree.sibling_usage.assign(count, 0);
  for (const std::vector<int>& family : tree.children) {
    double shares = 0, usage = 0;
    for (int index : family) {
      shares += associations[index].shares;
      usage += tree.usage[index];
    }
    for (int index : family) {
      tree.sibling_shares[index] = shares;
      tree.sibling_usage[index] = usage;
    }
  }
}

Tree BuildTree(const std::vector<Association>& associations) {
  int count = static_cast<int>(associations.size());
  Tree tree;
  tree.children.resize(count + 1);
  for (int index = 0; index < count; ++index) {
    tree.children[ParentSlot(associations, index)].push_back(index);
    tree.user_count += IsUser(associations[index]);
  }
  OrderPreorder(tree);
  tree.usage.assign(count, 0);
  // Children come after their parent in preorder, so a reverse walk has every subtree summed
  // before it is added to its parent.
  for (auto it = tree.preorder.rbegin(); it != tree.preorder.rend(); ++it) {
    tree.usage[*it] += associations[*it].usage;
    int parent = ParentSlot(associations, *it);
    if (parent < count) tree.usage[parent] += tree.usage[*it];
  }
  for (int root : tree.roots()) tree.total_usage += tree.usage[root];
  SumSiblings(associations, tree);
  return tree;
}

double Ratio(double part, double whole) {
  return whole > 0 ? part / whole : 0;
}

// norm_shares and norm_usage, common to both algorithms; `factor` and the rest start at 0.
FairShare Normalise(const std::vector<Association>& associations, const Tree& tree) {
  size_t count = associations.size();
  FairShare result;
  result.norm_shares.assign(count, 0);
  result.norm_usage.assign(count, 0);
  result.effective_usage.assign(count, 0);
  result.level_fs.assign(count, 0);
  result.factor.assign(count, 0);
  for (int index : tree.preorder) {
    int parent = ParentSlot(associations, index);
    double parent_shares = parent < static_cast<int>(count) ? result.norm_shares[parent] : 1.0;
    result.norm_shares[index] =
        Ratio(associations[index].shares, tree.sibling_shares[index]) * parent_shares;
    result.norm_usage[index] = Ratio(tree.usage[index], tree.total_usage);
  }
  return result;
}

// Level FS = (shares / siblings' shares) / (usage / siblings' usage). No shares: no claim (0),
// as in Slurm; no usage: infinitely under-served, so it ranks first.
double LevelFairShare(const Association& association, const Tree& tree, int index) {
  double shares = Ratio(association.shares, tree.sibling_shares[index]);
  if (shares == 0) return 0;
  double usage = Ratio(tree.usage[index], tree.sibling_usage[index]);
  if (usage == 0) return std::numeric_limits<double>::infinity();
  return shares / usage;
}

// The depth-first ranking walk. `rank` counts down from the number of users, one per user
// visited; users tied with the user just before them keep that user's rank.
class FairTreeRanker {
 public:
  FairTreeRanker(const std::vector<Association>& associations, const Tree& tree, FairShare& result)
      : associations_(associations), tree_(tree), result_(result), rank_(tree.user_count) {}

  void Visit(std::vector<int> siblings) {
    std::stable_sort(siblings.begin(), siblings.end(),
                     [&](int a, int b) { return result_.level_fs[a] > result_.level_fs[b]; });
    for (size_t i = 0; i < siblings.size();) {
      if (IsUser(associations_[siblings[i]])) {
        RankUser(siblings, i++);
        continue;
      }
      // Sibling accounts with equal level fair share are one account as far as ranking goes:
      // their children are merged and sorted together.
      std::vector<int> merged;
      size_t end = i;
      for (; end < siblings.size() && IsTiedAccount(siblings[i], siblings[end]); ++end) {
        const std::vector<int>& kids = tree_.children[siblings[end]];
        merged.insert(merged.end(), kids.begin(), kids.end());
      }
      Visit(std::move(merged));
      i = end;
    }
  }

 private:
  bool IsTiedAccount(int first, int other) const {
    return !IsUser(associations_[other]) && result_.level_fs[other] == result_.level_fs[first];
  }

  void RankUser(const std::vector<int>& siblings, size_t i) {
    int user = siblings[i];
    bool tied = i > 0 && IsUser(associations_[siblings[i - 1]]) &&
                result_.level_fs[siblings[i - 1]] == result_.level_fs[user];
    if (!tied) tie_rank_ = rank_;
    result_.factor[user] = static_cast<double>(tie_rank_) / tree_.user_count;
    --rank_;
  }

  const std::vector<Association>& associations_;
  const Tree& tree_;
  FairShare& result_;
  int rank_;
  int tie_rank_ = 0;
};

}  // namespace

FairShare ComputeFairTree(const std::vector<Association>& associations) {
  Tree tree = BuildTree(associations);
  FairShare result = Normalise(associations, tree);
  int count = static_cast<int>(associations.size());
  for (int index : tree.preorder) {
    result.level_fs[index] = LevelFairShare(associations[index], tree, index);
    // Fair Tree's EffectvUsage: the usage against its parent's (0 for root, as Slurm's).
    int parent = ParentSlot(associations, index);
    if (parent < count)
      result.effective_usage[index] = Ratio(tree.usage[index], tree.usage[parent]);
  }
  FairTreeRanker(associations, tree, result).Visit(tree.roots());
  return result;
}

FairShare ComputeClassicFairShare(const std::vector<Association>& associations) {
  Tree tree = BuildTree(associations);
  FairShare result = Normalise(associations, tree);
  int count = static_cast<int>(associations.size());
  for (int index : tree.preorder) {
    double own = result.norm_usage[index];
    int parent = ParentSlot(associations, index);
    // UE = UA + (UE_parent - UA) * S / S_siblings; a root's effective usage is its own.
    double effective = own;
    if (parent < count) {
      double share = Ratio(associations[index].shares, tree.sibling_shares[index]);
      effective = own + (result.effective_usage[parent] - own) * share;
    }
    result.effective_usage[index] = effective;
    double norm_shares = result.norm_shares[index];
    result.factor[index] = norm_shares > 0 ? std::exp2(-effective / norm_shares) : 0;
  }
  return result;
}

double DecayUsage(double usage, int64_t elapsed_seconds, int64_t half_life_seconds) {
  if (half_life_seconds <= 0 || elapsed_seconds <= 0) return usage;
  return usage * std::exp2(-static_cast<double>(elapsed_seconds) / half_life_seconds);
}

int FindUserAssociation(const std::vector<Association>& associations, const std::string& account,
                        const std::string& user) {
  for (size_t index = 0; index < associations.size(); ++index) {
    const Association& association = associations[index];
    if (!association.user.empty() && association.user == user && association.account == account)
      return static_cast<int>(index);
  }
  return -1;
}

}  // namespace drover::sched

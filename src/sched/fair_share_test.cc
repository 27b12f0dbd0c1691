// Fair share as users see it in sshare and in job order: busier accounts rank lower, shares
// offset usage, decay lets a busy account back up, unused associations rank first, and both
// Fair Tree and the classic formula agree on the simple cases.
#include "sched/fair_share.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace drover::sched {
namespace {

// Builds an association tree a line per association; index 0 is root.
struct Tree {
  std::vector<Association> associations = {Make("root", "", -1, 1, 0)};

  static Association Make(const std::string& account, const std::string& user, int parent,
                          uint32_t shares, double usage) {
    Association association;
    association.account = account;
    association.user = user;
    association.parent = parent;
    association.shares = shares;
    association.usage = usage;
    return association;
  }
  int Account(const std::string& name, int parent, uint32_t shares) {
    associations.push_back(Make(name, "", parent, shares, 0));
    return static_cast<int>(associations.size()) - 1;
  }
  int User(const std::string& user, int account, uint32_t shares, double usage) {
    associations.push_back(Make(associations[account].account, user, account, shares, usage));
    return static_cast<int>(associations.size()) - 1;
  }
};

// Users from highest fair-share factor to lowest; equal factors keep tree order.
std::vector<std::string> UsersByFactor(const std::vector<Association>& associations,
                                       const FairShare& fair_share) {
  std::vector<int> users;
  for (size_t i = 0; i < associations.size(); ++i)
    if (!associations[i].user.empty()) users.push_back(static_cast<int>(i));
  std::stable_sort(users.begin(), users.end(),
                   [&](int a, int b) { return fair_share.factor[a] > fair_share.factor[b]; });
  std::vector<std::string> names;
  for (int user : users) names.push_back(associations[user].user);
  return names;
}

struct Algorithm {
  const char* name;
  FairShare (*compute)(const std::vector<Association>&);
};
const Algorithm kAlgorithms[] = {{"fair tree", ComputeFairTree},
                                 {"classic", ComputeClassicFairShare}};

using Names = std::vector<std::string>;

TEST(FairShare, BusierAccountRanksLower) {
  Tree tree;
  tree.User("alice", tree.Account("a", 0, 1), 1, 100);
  tree.User("bob", tree.Account("b", 0, 1), 1, 10);
  for (const Algorithm& algorithm : kAlgorithms) {
    SCOPED_TRACE(algorithm.name);
    FairShare fair_share = algorithm.compute(tree.associations);
    EXPECT_EQ(UsersByFactor(tree.associations, fair_share), (Names{"bob", "alice"}));
  }
}

TEST(FairShare, FairTreeEffectiveUsageIsTheUsageAgainstTheParents) {
  Tree tree;
  int a = tree.Account("a", 0, 1);
  int alice = tree.User("alice", a, 1, 30);
  int carol = tree.User("carol", a, 1, 10);
  int b = tree.Account("b", 0, 1);
  tree.User("bob", b, 1, 60);
  FairShare fair_share = ComputeFairTree(tree.associations);
  EXPECT_DOUBLE_EQ(fair_share.effective_usage[0], 0.0);       // root has no parent
  EXPECT_DOUBLE_EQ(fair_share.effective_usage[a], 0.4);       // 40 of 100
  EXPECT_DOUBLE_EQ(fair_share.effective_usage[alice], 0.75);  // 30 of a's 40
  EXPECT_DOUBLE_EQ(fair_share.effective_usage[carol], 0.25);
  EXPECT_DOUBLE_EQ(fair_share.effective_usage[b], 0.6);
}

TEST(FairShare, OrderFlipsAsTheBusyAccountsUsageDecays) {
  constexpr int64_t kDay = 86400;
  for (const Algorithm& algorithm : kAlgorithms) {
    SCOPED_TRACE(algorithm.name);
    Tree tree;
    int alice = tree.User("alice", tree.Account("a", 0, 1), 1, 1000);  // used a lot, long ago
    tree.User("bob", tree.Account("b", 0, 1), 1, 100);                 // used a little, today
    int days = 0;
    while (UsersByFactor(tree.associations, algorithm.compute(tree.associations))[0] != "alice" &&
           days < 30) {
      tree.associations[alice].usage = DecayUsage(tree.associations[alice].usage, kDay, kDay);
      ++days;
    }
    EXPECT_EQ(days, 4);  // 1000 halves to 125 after 3 days, still above bob's 100; 62.5 after 4
  }
}

TEST(FairShare, ThreeTimesTheSharesOutweighTwiceTheUsage) {
  Tree tree;
  tree.User("alice", tree.Account("a", 0, 3), 1, 200);
  tree.User("bob", tree.Account("b", 0, 1), 1, 100);
  for (const Algorithm& algorithm : kAlgorithms) {
    SCOPED_TRACE(algorithm.name);
    FairShare fair_share = algorithm.compute(tree.associations);
    EXPECT_EQ(UsersByFactor(tree.associations, fair_share), (Names{"alice", "bob"}));
    EXPECT_DOUBLE_EQ(fair_share.norm_shares[1], 0.75);
    EXPECT_DOUBLE_EQ(fair_share.norm_usage[1], 2.0 / 3);
    EXPECT_DOUBLE_EQ(fair_share.norm_usage[0], 1.0);
  }
}

TEST(FairShare, NoUsageAnywhereGivesEveryoneOne) {
  Tree tree;
  int a = tree.Account("a", 0, 1);
  tree.User("alice", a, 1, 0);
  tree.User("bob", a, 5, 0);
  for (const Algorithm& algorithm : kAlgorithms) {
    SCOPED_TRACE(algorithm.name);
    FairShare fair_share = algorithm.compute(tree.associations);
    EXPECT_DOUBLE_EQ(fair_share.factor[2], 1.0);
    EXPECT_DOUBLE_EQ(fair_share.factor[3], 1.0);
    EXPECT_DOUBLE_EQ(fair_share.norm_usage[2], 0.0);
  }
}

TEST(FairShare, EmptyTreeIsEmpty) {
  for (const Algorithm& algorithm : kAlgorithms) {
    FairShare fair_share = algorithm.compute({});
    EXPECT_TRUE(fair_share.factor.empty()) << algorithm.name;
  }
}

TEST(FairTree, UnusedUsersRankFirstAndShareTheirRank) {
  Tree tree;
  int a = tree.Account("a", 0, 1);
  int busy = tree.User("busy", a, 1, 10);
  int idle1 = tree.User("idle1", a, 1, 0);
  int idle2 = tree.User("idle2", a, 1, 0);
  FairShare fair_share = ComputeFairTree(tree.associations);
  EXPECT_EQ(fair_share.level_fs[idle1], std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(fair_share.factor[idle1], 1.0);  // rank 3 of 3
  EXPECT_DOUBLE_EQ(fair_share.factor[idle2], 1.0);  // tied: rank 3 too
  EXPECT_DOUBLE_EQ(fair_share.factor[busy], 1.0 / 3);
}

TEST(FairTree, TiedAccountsRankTheirChildrenTogether) {
  Tree tree;
  int a = tree.Account("a", 0, 1);
  int b = tree.Account("b", 0, 1);
  tree.User("a_heavy", a, 1, 90);
  tree.User("a_light", a, 1, 10);
  tree.User("b_one", b, 1, 50);
  tree.User("b_two", b, 1, 50);
  FairShare fair_share = ComputeFairTree(tree.associations);
  ASSERT_EQ(fair_share.level_fs[a], fair_share.level_fs[b]);
  // Level FS: a_light 5, b_one and b_two 1, a_heavy 0.56; without merging a's users would both
  // come before b's.
  EXPECT_EQ(UsersByFactor(tree.associations, fair_share),
            (Names{"a_light", "b_one", "b_two", "a_heavy"}));
  std::vector<double> factors(fair_share.factor.begin() + 3, fair_share.factor.end());
  EXPECT_EQ(factors, (std::vector<double>{0.25, 1.0, 0.75, 0.75}));
}

// root -> physics, chemistry; physics -> theory, experiment.
struct ThreeLevels : Tree {
  int physics = Account("physics", 0, 1);
  int chemistry = Account("chemistry", 0, 1);
  int theory = Account("theory", physics, 1);
  int experiment = Account("experiment", physics, 1);
  int theorist = User("theorist", theory, 1, 40);
  int experimenter1 = User("experimenter1", experiment, 1, 10);
  int experimenter2 = User("experimenter2", experiment, 1, 10);
  int chemist = User("chemist", chemistry, 1, 30);
};

TEST(FairTree, ThreeLevelsRankWholeSubtreesFirst) {
  ThreeLevels tree;
  FairShare fair_share = ComputeFairTree(tree.associations);
  // chemistry (30 of 90) is under-served next to physics (60 of 90), so the chemist ranks above
  // every physicist, even those who used less; within physics, experiment beats theory.
  EXPECT_DOUBLE_EQ(fair_share.level_fs[tree.chemistry], 0.5 / (30.0 / 90));
  EXPECT_DOUBLE_EQ(fair_share.level_fs[tree.physics], 0.5 / (60.0 / 90));
  EXPECT_DOUBLE_EQ(fair_share.factor[tree.chemist], 1.0);
  EXPECT_DOUBLE_EQ(fair_share.factor[tree.experimenter1], 0.75);
  EXPECT_DOUBLE_EQ(fair_share.factor[tree.experimenter2], 0.75);
  EXPECT_DOUBLE_EQ(fair_share.factor[tree.theorist], 0.25);
  EXPECT_DOUBLE_EQ(fair_share.norm_shares[tree.experimenter1], 0.125);
  EXPECT_DOUBLE_EQ(fair_share.norm_usage[tree.physics], 60.0 / 90);  // sum of its users
}

TEST(ClassicFairShare, ThreeLevelsPropagateEffectiveUsage) {
  ThreeLevels tree;
  FairShare fair_share = ComputeClassicFairShare(tree.associations);
  // UE = UA + (UE_parent - UA) * S / S_siblings, from root (UE 1) down.
  double physics = 60.0 / 90 + (1 - 60.0 / 90) * 0.5;
  double experiment = 20.0 / 90 + (physics - 20.0 / 90) * 0.5;
  double experimenter = 10.0 / 90 + (experiment - 10.0 / 90) * 0.5;
  EXPECT_DOUBLE_EQ(fair_share.effective_usage[0], 1.0);
  EXPECT_DOUBLE_EQ(fair_share.effective_usage[tree.physics], physics);
  EXPECT_DOUBLE_EQ(fair_share.effective_usage[tree.experimenter1], experimenter);
  EXPECT_DOUBLE_EQ(fair_share.factor[tree.experimenter1], std::exp2(-experimenter / 0.125));
  // chemistry is under-served here too: its one user outranks every physicist.
  double chemist = 30.0 / 90 + (1 - 30.0 / 90) * 0.5;
  EXPECT_DOUBLE_EQ(fair_share.factor[tree.chemist], std::exp2(-chemist / 0.5));
  EXPECT_EQ(UsersByFactor(tree.associations, fair_share)[0], "chemist");
}

TEST(ClassicFairShare, NoSharesMeansFactorZero) {
  Tree tree;
  int none = tree.User("none", tree.Account("a", 0, 0), 1, 0);
  tree.User("bob", tree.Account("b", 0, 1), 1, 10);
  EXPECT_EQ(ComputeClassicFairShare(tree.associations).factor[none], 0.0);
}

TEST(DecayUsage, HalvesEveryHalfLife) {
  struct Case {
    double usage;
    int64_t elapsed, half_life;
    double expected;
  };
  const Case cases[] = {
      {100, 0, 10, 100}, {100, 10, 10, 50}, {100, 20, 10, 25}, {100, 5, 10, 100 / std::sqrt(2.0)},
      {100, 50, 0, 100},  // half-life 0: no decay
  };
  for (const Case& c : cases)
    EXPECT_DOUBLE_EQ(DecayUsage(c.usage, c.elapsed, c.half_life), c.expected)
        << c.elapsed << "s, half-life " << c.half_life << "s";
}

TEST(FindUserAssociation, MatchesAccountAndUser) {
  Tree tree;
  int a = tree.Account("a", 0, 1);
  int b = tree.Account("b", 0, 1);
  int alice_a = tree.User("alice", a, 1, 0);
  int alice_b = tree.User("alice", b, 1, 0);
  EXPECT_EQ(FindUserAssociation(tree.associations, "a", "alice"), alice_a);
  EXPECT_EQ(FindUserAssociation(tree.associations, "b", "alice"), alice_b);
  EXPECT_EQ(FindUserAssociation(tree.associations, "c", "alice"), -1);
  EXPECT_EQ(FindUserAssociation(tree.associations, "a", "bob"), -1);
  EXPECT_EQ(FindUserAssociation(tree.associations, "a", ""), -1);  // the account itself
}

}  // namespace
}  // namespace drover::sched

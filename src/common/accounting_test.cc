#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/accounting.h"
#include "common/accounting_change.h"
#include "common/accounting_settings.h"

namespace drover::acct {
namespace {

class AccountingTest : public ::testing::Test {
 protected:
  Result<ChangeOutcome> Run(Verb verb, Entity entity, std::vector<std::string> words) {
    return ApplyChange(database_, {verb, entity, std::move(words)});
  }
  void Ok(Verb verb, Entity entity, std::vector<std::string> words) {
    auto outcome = Run(verb, entity, words);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    ASSERT_TRUE(outcome->changed) << outcome->text;
  }
  Database database_ = Database::Initial("linux");
};

TEST_F(AccountingTest, StartsAsSlurmsDatabaseDoes) {
  ASSERT_NE(database_.FindCluster("linux"), nullptr);
  ASSERT_NE(database_.FindAssociation("linux", "root"), nullptr);
  ASSERT_NE(database_.FindAssociation("linux", "root", "root"), nullptr);
  EXPECT_EQ(database_.AdminLevelOf("root"), AdminLevel::kAdministrator);
  ASSERT_NE(database_.FindQos("normal"), nullptr);
  EXPECT_EQ(database_.FindAssociation("linux", "root")->default_qos, "normal");
}

TEST_F(AccountingTest, AddsAccountsUnderTheirParentsAndUsersUnderAccounts) {
  auto added = Run(Verb::kAdd, Entity::kAccount,
                   {"science", "Description=Science dept", "Organization=Uni"});
  ASSERT_TRUE(added.ok()) << added.error();
  EXPECT_EQ(added->text,
            " Adding Account(s)\n  science\n Settings\n  Description     = science dept\n"
            "  Organization    = uni\n Associations\n  A = science    C = linux     \n");
  auto physics_added =
      Run(Verb::kAdd, Entity::kAccount, {"Physics", "parent=science", "fairshare=40"});
  ASSERT_TRUE(physics_added.ok()) << physics_added.error();
  EXPECT_EQ(physics_added->text,
            " Adding Account(s)\n  physics\n Settings\n  Description     = Account Name\n"
            "  Organization    = Parent/Account Name\n Associations\n"
            "  A = physics    C = linux     \n Settings\n  Fairshare     = 40\n"
            "  Parent        = science\n");
  auto bob_added = Run(Verb::kAdd, Entity::kUser, {"bob", "account=physics"});
  ASSERT_TRUE(bob_added.ok()) << bob_added.error();
  EXPECT_EQ(
      bob_added->text,
      " Adding User(s)\n  bob\n Associations =\n  U = bob       A = physics    C = linux     \n"
      " Non Default Settings\n");
  auto modified = Run(Verb::kModify, Entity::kUser, {"where", "name=bob", "set", "maxjobs=5"});
  ASSERT_TRUE(modified.ok()) << modified.error();
  EXPECT_EQ(
      modified->text,
      " Modified user associations...\n  C = linux      A = physics              U = bob      \n");
  const Association* physics = database_.FindAssociation("linux", "physics");
  ASSERT_NE(physics, nullptr);
  EXPECT_EQ(physics->parent, "science");
  EXPECT_EQ(physics->shares, 40u);
  EXPECT_EQ(database_.FindAccount("physics")->organization, "science");
  ASSERT_NE(database_.FindUser("bob"), nullptr);
  EXPECT_EQ(database_.FindUser("bob")->default_account, "physics");
  EXPECT_NE(database_.FindAssociation("linux", "physics", "bob"), nullptr);
  EXPECT_EQ(database_.FindAssociation("linux", "science", "bob"), nullptr);

  auto again = Run(Verb::kAdd, Entity::kAccount, {"physics"});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed);
  EXPECT_EQ(again->text, " Nothing new added.\n");
}

TEST_F(AccountingTest, RefusesWhatCannotBeAddedAndChangesNothing) {
  Database before = database_;
  auto orphan = Run(Verb::kAdd, Entity::kAccount, {"chem", "parent=nowhere"});
  ASSERT_FALSE(orphan.ok());
  EXPECT_NE(orphan.error().find("Parent account 'nowhere' doesn't exist"), std::string::npos);
  auto user = Run(Verb::kAdd, Entity::kUser, {"alice", "account=nowhere"});
  ASSERT_FALSE(user.ok());
  EXPECT_NE(user.error().find("This account 'nowhere' doesn't exist"), std::string::npos);
  auto bad_limit = Run(Verb::kAdd, Entity::kAccount, {"chem", "GrpTRES=gpu=x"});
  ASSERT_FALSE(bad_limit.ok());
  auto unknown = Run(Verb::kAdd, Entity::kAccount, {"chem", "Colour=blue"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error(),
            " Unknown option: Colour=blue\n Use keyword 'where' to modify condition");
  auto no_account = Run(Verb::kAdd, Entity::kUser, {"alice"});
  ASSERT_FALSE(no_account.ok());
  auto bad_qos = Run(Verb::kAdd, Entity::kAccount, {"chem", "QOS=gold"});
  ASSERT_FALSE(bad_qos.ok());
  EXPECT_EQ(database_.accounts.size(), before.accounts.size());
  EXPECT_EQ(database_.associations.size(), before.associations.size());
}

TEST_F(AccountingTest, LimitsAreSetMergedAndClearedAsSacctmgrDoes) {
  Ok(Verb::kAdd, Entity::kAccount, {"ml", "GrpTRES=cpu=64,gres/gpu=8", "MaxWall=2-00:00:00"});
  const Association* ml = database_.FindAssociation("linux", "ml");
  EXPECT_EQ(FormatTres(ml->limits.grp_tres), "cpu=64,gres/gpu=8");
  EXPECT_EQ(ml->limits.max_wall_minutes, 2 * 24 * 60);
  Ok(Verb::kModify, Entity::kAccount, {"where", "name=ml", "set", "GrpTRES=gres/gpu=16,mem=1T"});
  EXPECT_EQ(FormatTres(database_.FindAssociation("linux", "ml")->limits.grp_tres),
            "cpu=64,mem=1T,gres/gpu=16");
  Ok(Verb::kModify, Entity::kAccount, {"where", "name=ml", "set", "GrpTRES=cpu=-1", "MaxWall=-1"});
  ml = database_.FindAssociation("linux", "ml");
  EXPECT_EQ(FormatTres(ml->limits.grp_tres), "mem=1T,gres/gpu=16");
  EXPECT_EQ(ml->limits.max_wall_minutes, kUnset);
}

TEST_F(AccountingTest, UsersInheritTheirAccountsMaxLimitsAndQos) {
  Ok(Verb::kAdd, Entity::kQos, {"urgent", "Priority=100"});
  Ok(Verb::kAdd, Entity::kAccount, {"ml", "MaxJobs=4", "QOS=normal,urgent"});
  Ok(Verb::kAdd, Entity::kUser, {"bob", "account=ml"});
  const Association* bob = database_.FindAssociation("linux", "ml", "bob");
  Association effective = database_.Effective(*bob);
  EXPECT_EQ(effective.limits.max_jobs, 4);
  EXPECT_EQ(effective.qos, (std::vector<std::string>{"normal", "urgent"}));
  EXPECT_EQ(effective.default_qos, "normal");  // root's
  Ok(Verb::kModify, Entity::kUser, {"bob", "set", "MaxJobs=2", "QOS-=urgent"});
  effective = database_.Effective(*database_.FindAssociation("linux", "ml", "bob"));
  EXPECT_EQ(effective.limits.max_jobs, 2);
  EXPECT_EQ(effective.qos, (std::vector<std::string>{"normal"}));
}

TEST_F(AccountingTest, QosSettingsAndDeletionLeaveNoDanglingNames) {
  Ok(Verb::kAdd, Entity::kQos, {"scavenger", "Priority=0", "PreemptMode=requeue"});
  Ok(Verb::kAdd, Entity::kQos,
     {"urgent", "Priority=1000", "Preempt=scavenger", "GraceTime=120", "Flags=DenyOnLimit",
      "MaxTRESPerUser=gres/gpu=8", "UsageFactor=2"});
  const Qos* urgent = database_.FindQos("urgent");
  ASSERT_NE(urgent, nullptr);
  EXPECT_EQ(urgent->preempt, (std::vector<std::string>{"scavenger"}));
  EXPECT_EQ(urgent->grace_seconds, 120);
  EXPECT_EQ(FormatQosFlags(urgent->flags), "DenyOnLimit");
  EXPECT_EQ(urgent->max_tres_per_user.Get("gres/gpu"), 8u);
  EXPECT_DOUBLE_EQ(urgent->usage_factor, 2.0);
  auto unknown = Run(Verb::kModify, Entity::kQos, {"urgent", "set", "Preempt+=gold"});
  ASSERT_FALSE(unknown.ok());
  Ok(Verb::kAdd, Entity::kAccount, {"ml", "QOS=normal,scavenger"});
  Ok(Verb::kDelete, Entity::kQos, {"where", "name=scavenger"});
  EXPECT_TRUE(database_.FindQos("urgent")->preempt.empty());
  EXPECT_EQ(database_.FindAssociation("linux", "ml")->qos, (std::vector<std::string>{"normal"}));
}

TEST_F(AccountingTest, DeletingAnAccountTakesItsSubtreeButNotADefaultAccountInUse) {
  Ok(Verb::kAdd, Entity::kAccount, {"science"});
  Ok(Verb::kAdd, Entity::kAccount, {"physics", "parent=science"});
  Ok(Verb::kAdd, Entity::kAccount, {"ml"});
  Ok(Verb::kAdd, Entity::kUser, {"bob", "account=ml"});
  Ok(Verb::kAdd, Entity::kUser, {"bob", "account=physics"});
  auto refused = Run(Verb::kDelete, Entity::kAccount, {"where", "name=ml"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("default account"), std::string::npos);
  auto deleted = Run(Verb::kDelete, Entity::kAccount, {"where", "name=science"});
  ASSERT_TRUE(deleted.ok()) << deleted.error();
  EXPECT_EQ(database_.FindAccount("physics"), nullptr);
  EXPECT_EQ(database_.FindAssociation("linux", "physics", "bob"), nullptr);
  ASSERT_NE(database_.FindUser("bob"), nullptr);
  Ok(Verb::kDelete, Entity::kUser, {"bob"});
  EXPECT_EQ(database_.FindUser("bob"), nullptr);
  auto root = Run(Verb::kDelete, Entity::kAccount, {"root"});
  ASSERT_FALSE(root.ok());
  auto nothing = Run(Verb::kDelete, Entity::kAccount, {});
  ASSERT_FALSE(nothing.ok());
}

TEST_F(AccountingTest, ModifyingAUsersAdminLevelAndDefaultAccount) {
  Ok(Verb::kAdd, Entity::kAccount, {"ml"});
  Ok(Verb::kAdd, Entity::kAccount, {"hpc"});
  Ok(Verb::kAdd, Entity::kUser, {"bob", "account=ml,hpc", "AdminLevel=Operator"});
  EXPECT_EQ(database_.AdminLevelOf("bob"), AdminLevel::kOperator);
  Ok(Verb::kModify, Entity::kUser,
     {"where", "name=bob", "set", "adminlevel=admin", "defaultaccount=hpc"});
  EXPECT_EQ(database_.AdminLevelOf("bob"), AdminLevel::kAdministrator);
  EXPECT_EQ(database_.FindUser("bob")->default_account, "hpc");
  auto stranger = Run(Verb::kModify, Entity::kUser, {"bob", "set", "defaultaccount=root"});
  ASSERT_FALSE(stranger.ok());
  auto level = Run(Verb::kModify, Entity::kUser, {"bob", "set", "adminlevel=king"});
  ASSERT_FALSE(level.ok());
  auto condition = Run(Verb::kModify, Entity::kUser, {"where", "maxjobs=3"});
  ASSERT_FALSE(condition.ok());
  EXPECT_NE(condition.error().find("Use keyword 'set'"), std::string::npos);
}

TEST_F(AccountingTest, ParentChangesMayNotMakeACycle) {
  Ok(Verb::kAdd, Entity::kAccount, {"a"});
  Ok(Verb::kAdd, Entity::kAccount, {"b", "parent=a"});
  auto cycle = Run(Verb::kModify, Entity::kAccount, {"a", "set", "parent=b"});
  ASSERT_FALSE(cycle.ok());
  Ok(Verb::kAdd, Entity::kAccount, {"c"});
  Ok(Verb::kModify, Entity::kAccount, {"b", "set", "parent=c"});
  EXPECT_EQ(database_.FindAssociation("linux", "b")->parent, "c");
}

TEST_F(AccountingTest, FoundByFuzzing) {
  // "account=" names no account: no user without one (it read past an empty list).
  auto no_account = Run(Verb::kAdd, Entity::kUser, {"u", "account="});
  ASSERT_FALSE(no_account.ok());
  EXPECT_EQ(no_account.error(), " Need name of account to add user to.");
  // Names the store could not keep (protobuf strings are UTF-8) or a terminal could not show.
  EXPECT_FALSE(Run(Verb::kAdd, Entity::kCluster, {std::string("other\0x", 7)}).ok());
  EXPECT_FALSE(Run(Verb::kAdd, Entity::kAccount, {"a", "Description=\xff\xfe"}).ok());
  EXPECT_TRUE(Run(Verb::kAdd, Entity::kAccount, {"caf\xc3\xa9"}).ok());
}

TEST(AccountingWords, SplitsKeysOperatorsAndQuotes) {
  Word plain = SplitWord("physics");
  EXPECT_EQ(plain.key, "");
  EXPECT_EQ(plain.value, "physics");
  Word add = SplitWord("QOS+=urgent");
  EXPECT_EQ(add.key, "QOS");
  EXPECT_EQ(add.op, "+=");
  Word quoted = SplitWord("Description=\"a b\"");
  EXPECT_EQ(quoted.value, "a b");
  EXPECT_FALSE(ParseVerb("frobnicate").ok());
  EXPECT_FALSE(ParseEntity(Verb::kAdd, "wckey").ok());
}

}  // namespace
}  // namespace drover::acct

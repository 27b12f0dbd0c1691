#include <gtest/gtest.h>

#include "common/accounting_change.h"
#include "wire/accounting_codec.h"

namespace drover::wire {
namespace {

TEST(AccountingCodec, RoundTripsEveryRecord) {
  acct::Database database = acct::Database::Initial("tux");
  const std::vector<acct::ChangeRequest> changes = {
      {acct::Verb::kAdd,
       acct::Entity::kQos,
       {"urgent", "Priority=100", "Preempt=normal", "GraceTime=60", "Flags=DenyOnLimit",
        "MaxTRESPerUser=gres/gpu=8", "UsageFactor=1.5", "MaxWall=1-00:00:00"}},
      {acct::Verb::kAdd,
       acct::Entity::kAccount,
       {"ml", "Description=Machine Learning", "Fairshare=40", "GrpTRES=cpu=64,gres/gpu=16",
        "GrpTRESMins=gres/gpu=6000", "MaxJobs=10", "QOS=normal,urgent", "DefaultQOS=normal"}},
      {acct::Verb::kAdd, acct::Entity::kUser, {"bob", "Account=ml", "AdminLevel=Operator"}},
  };
  for (const acct::ChangeRequest& change : changes) {
    auto outcome = acct::ApplyChange(database, change);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
  }
  v1::AccountingDatabase record;
  ToProto(database, &record);
  v1::AccountingDatabase parsed;
  ASSERT_TRUE(parsed.ParseFromString(record.SerializeAsString()));
  auto back = FromProto(parsed);
  ASSERT_TRUE(back.ok()) << back.error();
  v1::AccountingDatabase again;
  ToProto(*back, &again);
  EXPECT_EQ(again.SerializeAsString(), record.SerializeAsString());
  ASSERT_NE(back->FindQos("urgent"), nullptr);
  EXPECT_EQ(back->FindQos("urgent")->max_tres_per_user.Get("gres/gpu"), 8u);
  EXPECT_EQ(back->AdminLevelOf("bob"), acct::AdminLevel::kOperator);
  EXPECT_EQ(back->FindAssociation("tux", "ml")->shares, 40u);
  EXPECT_EQ(back->next_association_id, database.next_association_id);
}

TEST(AccountingCodec, AnUnreadableRecordSaysWhich) {
  v1::AccountingDatabase record;
  record.add_users()->set_admin_level(7);
  EXPECT_FALSE(FromProto(record).ok());
  v1::AccountingDatabase tres;
  auto* association = tres.add_associations();
  association->set_id(3);
  association->mutable_limits()->set_grp_tres("bogus=1");
  auto read = FromProto(tres);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().find("association 3"), std::string::npos);
}

}  // namespace
}  // namespace drover::wire

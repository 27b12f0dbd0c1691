// sacctmgr dump and load: Slurm's cluster file written and read back, its syntax (comments,
// continuations, quotes) and its errors.
#include "common/accounting_dump.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/accounting_change.h"

namespace drover::acct {
namespace {

class DumpTest : public ::testing::Test {
 protected:
  void Ok(Verb verb, Entity entity, std::vector<std::string> words) {
    auto outcome = ApplyChange(database_, {verb, entity, std::move(words)});
    ASSERT_TRUE(outcome.ok()) << outcome.error();
  }
  // A site: two levels of accounts, users with limits, QOS, an administrator.
  void Populate() {
    Ok(Verb::kAdd, Entity::kQos, {"urgent", "priority=100"});
    Ok(Verb::kAdd, Entity::kAccount,
       {"science", "Description=Science Dept", "Organization=uni", "fairshare=60",
        "GrpTRESMins=gres/gpu=6000", "GrpJobs=40"});
    Ok(Verb::kAdd, Entity::kAccount,
       {"physics", "parent=science", "fairshare=40", "GrpTRES=gres/gpu:h100=8,cpu=256",
        "MaxWall=2-00:00:00", "qos=normal,urgent", "defaultqos=normal"});
    Ok(Verb::kAdd, Entity::kAccount, {"chemistry", "parent=science"});
    Ok(Verb::kAdd, Entity::kUser, {"alice", "account=physics", "MaxJobs=5", "Priority=10"});
    Ok(Verb::kAdd, Entity::kUser, {"bob", "account=physics,chemistry", "AdminLevel=Operator"});
    Ok(Verb::kModify, Entity::kUser,
       {"where", "name=bob", "account=chemistry", "set", "MaxTRESPerNode=gres/gpu=2",
        "MaxSubmitJobs=20", "MaxTRESMins=cpu=600", "GrpSubmitJobs=30", "GrpWall=600",
        "GrpTRESRunMins=cpu=1000"});
  }
  Database database_ = Database::Initial("tux");
};

TEST_F(DumpTest, WritesSlurmsLinesInSlurmsOrder) {
  Populate();
  std::string text = FormatDumpFile(database_, "tux");
  size_t body = text.find("\nCluster - ");
  ASSERT_NE(body, std::string::npos);
  ++body;
  EXPECT_EQ(text.rfind("# To edit this file start with a cluster line for the new cluster\n", 0),
            0u);
  EXPECT_EQ(text.substr(body),
            "Cluster - 'tux':DefaultQOS='normal':Fairshare=1:QOS='normal'\n"
            "Parent - 'root'\n"
            "User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1\n"
            "Account - 'science':Description='science dept':Organization='uni':Fairshare=60:"
            "GrpTRESMins=gres/gpu=6000:GrpJobs=40\n"
            "Parent - 'science'\n"
            "Account - 'chemistry':Description='chemistry':Organization='science':Fairshare=1\n"
            "Account - 'physics':Description='physics':Organization='science':"
            "DefaultQOS='normal':Fairshare=40:GrpTRES='cpu=256,gres/gpu:h100=8':"
            "MaxWallDurationPerJob=2880:QOS='normal,urgent'\n"
            "Parent - 'chemistry'\n"
            "User - 'bob':DefaultAccount='physics':AdminLevel='Operator':Fairshare=1:"
            "GrpTRESRunMins=cpu=1000:GrpSubmitJobs=30:GrpWall=600:MaxTRESMinsPerJob=cpu=600:"
            "MaxTRESPerNode=gres/gpu=2:MaxSubmitJobs=20\n"
            "Parent - 'physics'\n"
            "User - 'alice':DefaultAccount='physics':Fairshare=1:MaxJobs=5:Priority=10\n"
            "User - 'bob':DefaultAccount='physics':AdminLevel='Operator':Fairshare=1\n");
}

TEST_F(DumpTest, LoadIntoAnEmptyDatabaseRoundTrips) {
  Populate();
  std::string dumped = FormatDumpFile(database_, "tux");
  auto file = ParseDumpFile(dumped);
  ASSERT_TRUE(file.ok()) << file.error();
  EXPECT_EQ(file->cluster, "tux");
  Database fresh = Database::Initial("tux");
  fresh.qos = database_.qos;  // QOS are not in the file, as in Slurm
  auto loaded = LoadDumpFile(fresh, *file, {});
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_TRUE(loaded->changed);
  EXPECT_EQ(loaded->text,
            "For cluster tux\n Accounts added: science, chemistry, physics\n"
            " Users added: bob, alice\n Associations added: 6\n");
  EXPECT_EQ(FormatDumpFile(fresh, "tux"), dumped);
  // Loading it again adds and changes nothing.
  auto again = LoadDumpFile(fresh, *file, {});
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_FALSE(again->changed);
  EXPECT_EQ(again->text, "For cluster tux\n Nothing new added.\n");
}

TEST_F(DumpTest, LoadChangesExistingSettingsAndCleanStartsOver) {
  Populate();
  auto file = ParseDumpFile(
      "Cluster - tux\n"
      "Parent - root\n"
      "Account - science:Fairshare=10\n"
      "Account - extra\n");
  ASSERT_TRUE(file.ok()) << file.error();
  Database kept = database_;
  auto loaded = LoadDumpFile(kept, *file, {});
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(loaded->text,
            "For cluster tux\n Accounts added: extra\n Associations added: 1\n"
            " Associations changed: 1\n");
  EXPECT_EQ(kept.FindAssociation("tux", "science")->shares, 10u);
  EXPECT_NE(kept.FindAssociation("tux", "physics"), nullptr);  // nothing is removed
  LoadOptions clean;
  clean.clean = true;
  auto cleaned = LoadDumpFile(kept, *file, clean);
  ASSERT_TRUE(cleaned.ok()) << cleaned.error();
  EXPECT_EQ(kept.FindAssociation("tux", "physics"), nullptr);
  EXPECT_NE(kept.FindAssociation("tux", "extra"), nullptr);
  EXPECT_NE(kept.FindAssociation("tux", "root", "root"), nullptr);
  // Cluster= loads the file as another cluster.
  LoadOptions other;
  other.cluster = "Linux";
  ASSERT_TRUE(LoadDumpFile(kept, *file, other).ok());
  EXPECT_NE(kept.FindAssociation("linux", "science"), nullptr);
}

TEST(DumpFile, ReadsCommentsContinuationsAndQuotes) {
  auto file = ParseDumpFile(
      "# a comment\n"
      "Cluster - \"tux\"   # trailing\n"
      "Parent - 'root'\n"
      "Account - 'lab\\#1':Description='A \\\n"
      "long one':Fairshare=3\n"
      "User -\tbob:DefaultAccount=lab#1\n");
  ASSERT_TRUE(file.ok()) << file.error();
  ASSERT_EQ(file->entries.size(), 2u);
  EXPECT_EQ(file->entries[0].name, "lab#1");
  EXPECT_EQ(*file->entries[0].description, "A long one");
  EXPECT_EQ(file->entries[0].line, 4);
  EXPECT_EQ(file->entries[1].parent, "root");
  EXPECT_EQ(*file->entries[1].default_account, "lab");
}

TEST(DumpFile, ErrorsNameTheLineAndWhatToDo) {
  auto error = [](std::string_view text) {
    auto file = ParseDumpFile(text);
    EXPECT_FALSE(file.ok());
    return file.ok() ? std::string() : file.error();
  };
  EXPECT_EQ(error("Account - a\n"),
            " You need to specify a cluster name first with 'Cluster - $NAME' in your file\n"
            " Problem with line(1)");
  EXPECT_EQ(error("Cluster - a\nAccount - b:Colour=blue\n"),
            " Unknown option: Colour=blue\n Problem with line(2)");
  EXPECT_EQ(error("Cluster - a\nGarbage line\n"), " Misformatted line(2): Garbage line");
  EXPECT_EQ(error("Cluster - a\nAccount -\n"), " Nothing after object name 'Account'. line(2)");
  EXPECT_EQ(error("Cluster - a\nCluster - b\n"),
            " You can only add one cluster at a time.\n Problem with line(2)");
  EXPECT_EQ(error(""),
            " You need to specify a cluster name first with 'Cluster - $NAME' in your "
            "file");
  EXPECT_NE(error("Cluster - a\nUser - u:WCKeys=x\n").find("WCKeys is not supported"),
            std::string::npos);
  EXPECT_EQ(error("Cluster - a\nAccount - b:Description='\xff'\n"),
            " The line is not printable UTF-8 text\n Problem with line(2)");
  // Load: a parent that is not there, and a QOS that does not exist.
  Database database = Database::Initial("a");
  auto orphan = ParseDumpFile("Cluster - a\nParent - nowhere\nAccount - b\n");
  ASSERT_TRUE(orphan.ok());
  auto refused = LoadDumpFile(database, *orphan, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("You need to add this parent (nowhere) as a child"),
            std::string::npos);
  auto qos = ParseDumpFile("Cluster - a\nAccount - b:QOS='gold'\n");
  ASSERT_TRUE(qos.ok());
  auto missing = LoadDumpFile(database, *qos, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(),
            " QOS gold (named by b) does not exist: add it first with sacctmgr add qos gold");
  EXPECT_EQ(database.FindAccount("b"), nullptr);  // nothing changed
  LoadOptions sim;
  sim.add_missing_qos = true;
  ASSERT_TRUE(LoadDumpFile(database, *qos, sim).ok());
  EXPECT_NE(database.FindQos("gold"), nullptr);
}

}  // namespace
}  // namespace drover::acct

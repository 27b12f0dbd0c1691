// sprio and sshare output as Slurm 22.05's print.c and print_fields.c lay it out: headers,
// widths, justification, factor columns that follow the weights, tree order, parsable lines.
#include "cli/formats/priority_formats.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace drover::cli {
namespace {

// ---------- sprio ----------

// The demo cluster's weights: QOS and association weighted 0, so without columns by default.
SprioOptions DemoWeights() {
  SprioOptions options;
  options.factor_weights = {{"age", 100},        {"fairshare", 1000}, {"jobsize", 100},
                            {"partition", 1000}, {"qos", 0},          {"assoc", 0}};
  return options;
}

v1::JobPriority Job(uint64_t id, int64_t priority) {
  v1::JobPriority job;
  job.set_job_id(id);
  job.set_user("alice");
  job.set_account("physics");
  job.set_partition("gpu");
  job.set_priority(priority);
  job.set_age(0.5);
  job.set_fairshare(1.0);
  job.set_job_size(0.02);
  job.set_partition_factor(0.05);
  return job;
}

constexpr std::string_view kSprioHeader =
    "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  PARTITION\n";

TEST(Sprio, DefaultShowsTheWeightedFactorsInJobIdOrder) {
  std::vector<v1::JobPriority> jobs = {Job(13, 1150), Job(12, 1150)};
  EXPECT_EQ(FormatSprio(jobs, DemoWeights()),
            std::string(kSprioHeader) +
                "             12 gpu             1150          0         50       1000          2"
                "         50\n"
                "             13 gpu             1150          0         50       1000          2"
                "         50\n");
}

TEST(Sprio, SortKeysFirstKeyDecidesMinusReverses) {
  SprioOptions options = DemoWeights();
  options.format = "%i %u %Y";
  options.no_header = true;
  v1::JobPriority a = Job(1, 10), b = Job(2, 30), c = Job(3, 20);
  c.set_user("bob");
  std::vector<v1::JobPriority> jobs = {a, b, c};
  options.sort = "-y";
  EXPECT_EQ(FormatSprio(jobs, options), "2 alice 30\n3 bob 20\n1 alice 10\n");
  options.sort = "u,y";
  EXPECT_EQ(FormatSprio(jobs, options), "1 alice 10\n2 alice 30\n3 bob 20\n");
}

TEST(Sprio, QosColumnOnlyWhenWeighted) {
  SprioOptions options = DemoWeights();
  options.factor_weights["qos"] = 500;
  std::string header = FormatSprio({}, options);
  EXPECT_EQ(header, std::string(kSprioHeader.substr(0, kSprioHeader.size() - 1)) + "        QOS\n");
}

TEST(Sprio, NoHeaderAndUserColumnWithMinusU) {
  SprioOptions options = DemoWeights();
  options.no_header = true;
  options.show_user = true;
  std::vector<v1::JobPriority> jobs = {Job(12, 1150)};
  EXPECT_EQ(FormatSprio(jobs, options),
            "             12 gpu          alice       1150          0         50       1000"
            "          2         50\n");
}

TEST(Sprio, NormalizedFactorsAreLeftJustifiedFractions) {
  SprioOptions options = DemoWeights();
  options.normalized = true;
  std::vector<v1::JobPriority> jobs = {Job(12, 1150)};
  EXPECT_EQ(FormatSprio(jobs, options),
            "          JOBID PARTITION PRIORITY   AGE        FAIRSHARE  JOBSIZE    PARTITION \n"
            "             12 gpu       0.00000026 0.5000000  1.0000000  0.0200000  0.0500000 \n");
}

TEST(Sprio, WeightsLineReplacesTheJobs) {
  SprioOptions options = DemoWeights();
  options.weights = true;
  std::vector<v1::JobPriority> jobs = {Job(12, 1150)};
  EXPECT_EQ(FormatSprio(jobs, options),
            std::string(kSprioHeader) +
                "        Weights                               1        100       1000        100"
                "       1000\n");
}

TEST(Sprio, LongFormatHasEveryFactorAndNice) {
  SprioOptions options = DemoWeights();
  options.long_format = true;
  v1::JobPriority job = Job(7, 1100);
  job.set_nice(50);
  std::vector<v1::JobPriority> jobs = {job};
  EXPECT_EQ(FormatSprio(jobs, options),
            "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC"
            "  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES\n"
            "              7 gpu          alice       1100          0         50          0"
            "       1000          2         50          0          50                     \n");
}

TEST(Sprio, FormatFieldsWidthsAndSuffixes) {
  SprioOptions options = DemoWeights();
  options.format = "id=%i|%.6Y|%u|%o|%N|%5r";  // %.6Y: a header is cut too
  std::vector<v1::JobPriority> jobs = {Job(12, 1150)};
  EXPECT_EQ(FormatSprio(jobs, options),
            "id=JOBID|PRIORI|USER|ACCOUNT|NICE|PARTI\n"
            "id=12|  1150|alice|physics|0|gpu  \n");
}

TEST(Sprio, UnknownFieldIsReportedAndLeftOut) {
  EXPECT_EQ(SprioFormatErrors("%i %!x %Y"),
            std::vector<std::string>{"Invalid job format specification: !"});
  EXPECT_TRUE(SprioFormatErrors("%.15i %9r %.10Y").empty());
  SprioOptions options = DemoWeights();
  options.format = "%i %! %Y";
  std::vector<v1::JobPriority> jobs = {Job(12, 1150)};
  EXPECT_EQ(FormatSprio(jobs, options), "JOBID PRIORITY\n12 1150\n");
}

TEST(Sprio, NoMatchingJobsForMinusJ) {
  SprioOptions options = DemoWeights();
  options.jobs_given = true;
  EXPECT_EQ(FormatSprio({}, options), "Unable to find jobs matching user/id(s) specified\n");
  options.jobs_given = false;
  EXPECT_EQ(FormatSprio({}, options), kSprioHeader);
}

TEST(Sprio, TresFactorsWeightedAndNormalized) {
  SprioOptions options = DemoWeights();
  options.tres_weights = {{"cpu", 1000}, {"gres/gpu", 1000}};
  v1::JobPriority job = Job(12, 1150);
  (*job.mutable_tres())["cpu"] = 0.25;
  (*job.mutable_tres())["gres/gpu"] = 0.5;
  (*job.mutable_tres())["mem"] = 0;
  std::vector<v1::JobPriority> jobs = {job};
  options.format = "%T|%t";
  EXPECT_EQ(FormatSprio(jobs, options), "TRES|TRES\ncpu=250,gres/gpu=500|cpu=0.25,gres/gpu=0.50\n");
  options.format.clear();
  options.no_header = true;
  std::string line = FormatSprio(jobs, options);
  EXPECT_NE(line.find("         50 cpu=250,gres/gpu=500\n"), std::string::npos) << line;
}

TEST(Sprio, JsonCarriesFactorsAndWeights) {
  std::vector<v1::JobPriority> jobs = {Job(12, 1150)};
  std::string json = SprioJson(jobs, DemoWeights());
  EXPECT_NE(json.find("\"job_id\": 12"), std::string::npos) << json;
  EXPECT_NE(json.find("\"weighted\": 1000.0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"fairshare\": 1000"), std::string::npos) << json;
}

// ---------- sshare ----------

v1::Share Share(std::string account, std::string user, std::string parent, uint32_t raw,
                double norm_shares, double usage, double effective, double fairshare) {
  v1::Share share;
  share.set_account(std::move(account));
  share.set_user(std::move(user));
  share.set_parent(std::move(parent));
  share.set_raw_shares(raw);
  share.set_norm_shares(norm_shares);
  share.set_raw_usage(usage);
  share.set_norm_usage(effective);
  share.set_effective_usage(effective);
  share.set_fairshare(fairshare);
  share.set_level_fs(fairshare * 2);
  return share;
}

// In the controller's order (creation), not tree order.
std::vector<v1::Share> Tree() {
  return {Share("root", "", "", 1, 1.0, 3600.4, 1.0, 0),
          Share("physics", "", "root", 2, 0.666667, 3000, 0.833333, 0),
          Share("physics", "alice", "physics", 1, 0.5, 3000, 0.833333, 0.333333),
          Share("chem", "", "root", 1, 0.333333, 600, 0.166667, 0),
          Share("chem", "carol", "chem", 1, 1.0, 600, 0.166667, 0.666667),
          Share("physics", "bob", "physics", 1, 0.5, 0, 0, 1.0),
          Share("root", "zed", "root", 1, 0.333333, 0, 0, 1.0)};
}

constexpr std::string_view kSshareHeader =
    "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n"
    "-------------------- ---------- ---------- ----------- ----------- ------------- ---------- "
    "\n";

TEST(Sshare, TreeOrderIndentationAndFairTreeBlanks) {
  std::vector<v1::Share> shares = Tree();
  auto text = FormatSshare(shares, SshareOptions());
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(*text,
            std::string(kSshareHeader) +
                "root                                          1.000000        3600      1.000000  "
                "          \n"
                " root                       zed          1    0.333333           0      0.000000  "
                " 1.000000 \n"
                " chem                                    1    0.333333         600      0.166667  "
                "          \n"
                "  chem                    carol          1    1.000000         600      0.166667  "
                " 0.666667 \n"
                " physics                                 2    0.666667        3000      0.833333  "
                "          \n"
                "  physics                 alice          1    0.500000        3000      0.833333  "
                " 0.333333 \n"
                "  physics                   bob          1    0.500000           0      0.000000  "
                " 1.000000 \n");
}

TEST(Sshare, UsersFilterKeepsEveryAccountLine) {
  std::vector<v1::Share> shares = Tree();
  SshareOptions options;
  options.users = {"alice"};
  options.no_header = true;
  options.fields = "Account,User";
  auto text = FormatSshare(shares, options);
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(*text,
            "root                            \n"
            " chem                           \n"
            " physics                        \n"
            "  physics                 alice \n");
}

TEST(Sshare, AccountsFilterDropsRootAndReindents) {
  std::vector<v1::Share> shares = Tree();
  SshareOptions options;
  options.accounts = {"physics"};
  options.parsable2 = true;
  options.fields = "Account,User,RawShares";
  auto text = FormatSshare(shares, options);
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(*text, "Account|User|RawShares\nphysics||2\n physics|alice|1\n physics|bob|1\n");
}

TEST(Sshare, ParsableEndsEveryFieldAndUsersOnly) {
  std::vector<v1::Share> shares = Tree();
  SshareOptions options;
  options.parsable = true;
  options.users_only = true;
  options.users = {"carol"};
  auto text = FormatSshare(shares, options);
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(*text,
            "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare|\n"
            "  chem|carol|1|1.000000|600|0.166667|0.666667|\n");
}

TEST(Sshare, PartitionOptionAddsThePartitionColumn) {
  SshareOptions options;
  options.parsable2 = true;
  options.partitions = true;
  options.users_only = true;
  options.users = {"carol"};
  auto text = FormatSshare(Tree(), options);
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(text->substr(0, text->find('\n')),
            "Account|User|Partition|RawShares|NormShares|RawUsage|EffectvUsage|FairShare");
}

TEST(Sshare, LongFormatColumns) {
  std::vector<v1::Share> shares = {Tree()[0]};
  SshareOptions options;
  options.long_format = true;
  auto text = FormatSshare(shares, options);
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(text->substr(0, text->find('\n')),
            "Account                    User  RawShares  NormShares    RawUsage   NormUsage  "
            "EffectvUsage  FairShare    LevelFS                    GrpTRESMins                "
            "    TRESRunMins ");
}

TEST(Sshare, FieldPrefixesWidthsAndCutText) {
  std::vector<v1::Share> shares = {
      Share("averyveryverylongaccountname", "", "", 1, 1, 0, 123456.5, 0)};
  SshareOptions options;
  options.fields = "a%8,eff%9,id";
  auto text = FormatSshare(shares, options);
  ASSERT_TRUE(text) << text.error();
  // A width given makes even Account right-justified, as in Slurm; a number too wide for its
  // column turns to as much of %e as fits.
  EXPECT_EQ(*text,
            " Account EffectvUs     ID \n"
            "-------- --------- ------ \n"
            "averyve+ 1.235e+05      1 \n");
}

TEST(Sshare, UnknownFieldFails) {
  SshareOptions options;
  options.fields = "Account,Bogus";
  auto text = FormatSshare({}, options);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error(), "Invalid field requested: \"Bogus\"");
}

TEST(Sshare, ClassicFairShareOnAccountsToo) {
  std::vector<v1::Share> shares = Tree();
  SshareOptions options;
  options.fair_tree = false;
  options.fields = "Account,FairShare";
  options.no_header = true;
  options.users = {"nobody"};
  auto text = FormatSshare(shares, options);
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(text->substr(0, text->find('\n')), "root                   0.000000 ");
}

TEST(Sshare, JsonListsTheSameRows) {
  std::vector<v1::Share> shares = Tree();
  SshareOptions options;
  options.users = {"bob"};
  std::string json = SshareJson(shares, options);
  EXPECT_NE(json.find("\"name\": \"bob\""), std::string::npos) << json;
  EXPECT_EQ(json.find("\"name\": \"alice\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"ASSOCIATION\""), std::string::npos) << json;
}

}  // namespace
}  // namespace drover::cli

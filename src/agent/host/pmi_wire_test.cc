// The PMI-1 and PMI-2 wire protocols as MPI libraries speak them, two nodes' servers joined by
// hand the way srun joins them.
#include "agent/host/pmi_wire.h"

#include <gtest/gtest.h>

namespace drover::agent {
namespace {

PmiStep TwoByTwo() {
  PmiStep step;
  step.size = 4;
  step.universe_size = 4;
  step.kvsname = "7.0";
  step.process_mapping = PmiProcessMapping({0, 0, 1, 1});
  return step;
}

std::string V2(std::string_view body) {
  char header[8];
  std::snprintf(header, sizeof header, "%-6zu", body.size());
  return std::string(header) + std::string(body);
}

TEST(PmiWire, ProcessMappingJoinsEqualRunsOnConsecutiveNodes) {
  EXPECT_EQ(PmiProcessMapping({0, 0, 1, 1}), "(vector,(0,2,2))");
  EXPECT_EQ(PmiProcessMapping({0, 1, 0, 1}), "(vector,(0,2,1),(0,2,1))");
  EXPECT_EQ(PmiProcessMapping({0, 0, 0, 1}), "(vector,(0,1,3),(1,1,1))");
  EXPECT_EQ(PmiProcessMapping({0}), "(vector,(0,1,1))");
}

TEST(PmiWire, PairsRoundTripAndMalformedPartsAreRefused) {
  std::vector<std::pair<std::string, std::string>> pairs = {{"a", "1"}, {"key", ""}};
  std::vector<std::pair<std::string, std::string>> back;
  ASSERT_TRUE(DecodePmiPairs(EncodePmiPairs(pairs), back));
  EXPECT_EQ(back, pairs);
  back.clear();
  EXPECT_FALSE(DecodePmiPairs("\x05\x00\x00\x00ab", back));
  EXPECT_FALSE(DecodePmiPairs("\xff", back));
}

// MPICH's simple PMI (PMI-1) on two nodes: init, maxes, put, barrier across the nodes, get of the
// other node's key and of PMI_process_mapping.
TEST(PmiWire, Pmi1ClientsOnTwoNodesSeeEachOthersKeysAfterTheBarrier) {
  PmiWireServer first(TwoByTwo(), {0, 1}), second(TwoByTwo(), {2, 3});
  first.Receive(0, "cmd=init pmi_version=1 pmi_subversion=1\n");
  EXPECT_EQ(first.TakeReplies(0), "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
  first.Receive(0, "cmd=get_maxes\ncmd=get_my_kvsname\ncmd=get_universe_size\n");
  EXPECT_EQ(first.TakeReplies(0),
            "cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=1024\n"
            "cmd=my_kvsname rc=0 kvsname=7.0\ncmd=universe_size rc=0 size=4\n");
  // A command split across reads is answered once whole.
  first.Receive(0, "cmd=put kvsname=7.0 key=bc-0 va");
  EXPECT_EQ(first.TakeReplies(0), "");
  first.Receive(0, "lue=tcp://a\n");
  EXPECT_EQ(first.TakeReplies(0), "cmd=put_result rc=0\n");
  second.Receive(0, "cmd=put kvsname=7.0 key=bc-2 value=tcp://b\n");
  first.Receive(0, "cmd=barrier_in\n");
  EXPECT_FALSE(first.TakeFencePart());  // task 1 is not in yet
  first.Receive(1, "cmd=barrier_in\n");
  second.Receive(0, "cmd=barrier_in\n");
  second.Receive(1, "cmd=barrier_in\n");
  std::optional<std::string> a = first.TakeFencePart(), b = second.TakeFencePart();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(first.TakeFencePart());  // once per fence
  EXPECT_TRUE(first.FenceDone({*a, *b}));
  EXPECT_TRUE(second.FenceDone({*a, *b}));
  EXPECT_EQ(first.TakeReplies(1), "cmd=barrier_out rc=0\n");
  second.TakeReplies(0);
  EXPECT_EQ(second.TakeReplies(1), "cmd=barrier_out rc=0\n");
  second.Receive(1, "cmd=get kvsname=7.0 key=bc-0\ncmd=get kvsname=7.0 key=PMI_process_mapping\n");
  EXPECT_EQ(second.TakeReplies(1),
            "cmd=get_result rc=0 value=tcp://a\ncmd=get_result rc=0 value=(vector,(0,2,2))\n");
  second.Receive(1, "cmd=get kvsname=7.0 key=nothing\ncmd=finalize\n");
  EXPECT_EQ(second.TakeReplies(1),
            "cmd=get_result rc=-1 msg=key_not_found\ncmd=finalize_ack rc=0\n");
}

// PMI-2: init asks for version 2, then length-framed commands; ';' in a value is doubled.
TEST(PmiWire, Pmi2ClientsFullinitPutFenceGetAndJobAttributes) {
  PmiWireServer server(TwoByTwo(), {0, 1});
  server.Receive(1, "cmd=init pmi_version=2 pmi_subversion=0\n");
  EXPECT_EQ(server.TakeReplies(1), "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
  server.Receive(1, V2("cmd=fullinit;pmirank=1;threaded=FALSE;"));
  std::string reply = server.TakeReplies(1);
  EXPECT_EQ(reply.substr(6),
            "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=1;size=4;appnum=0;"
            "debugged=FALSE;pmiverbose=FALSE;");
  EXPECT_EQ(std::stoul(reply.substr(0, 6)), reply.size() - 6);
  server.Receive(1, V2("cmd=info-getjobattr;key=PMI_process_mapping;"));
  EXPECT_EQ(server.TakeReplies(1).substr(6),
            "cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,2,2));");
  server.Receive(1, V2("cmd=kvs-put;key=k;value=a;;b;"));
  EXPECT_EQ(server.TakeReplies(1).substr(6), "cmd=kvs-put-response;rc=0;");
  server.Receive(0, "cmd=init pmi_version=1 pmi_subversion=1\ncmd=barrier_in\n");
  server.Receive(1, V2("cmd=kvs-fence;"));
  std::optional<std::string> part = server.TakeFencePart();
  ASSERT_TRUE(part);
  EXPECT_TRUE(server.FenceDone({*part, EncodePmiPairs({{"other", "x"}})}));
  EXPECT_EQ(server.TakeReplies(1).substr(6), "cmd=kvs-fence-response;rc=0;");
  server.Receive(1, V2("cmd=kvs-get;jobid=7.0;srcid=-1;key=k;"));
  EXPECT_EQ(server.TakeReplies(1).substr(6), "cmd=kvs-get-response;rc=0;found=TRUE;value=a;;b;");
  server.Receive(1, V2("cmd=kvs-get;jobid=7.0;srcid=-1;key=other;"));
  EXPECT_EQ(server.TakeReplies(1).substr(6), "cmd=kvs-get-response;rc=0;found=TRUE;value=x;");
  server.Receive(1, V2("cmd=name-publish;name=a;port=b;"));
  EXPECT_NE(server.TakeReplies(1).find("rc=-1"), std::string::npos);
}

TEST(PmiWire, NodeAttributesWaitForTheirPut) {
  PmiWireServer server(TwoByTwo(), {0, 1});
  for (size_t i : {0, 1}) {
    server.Receive(i, "cmd=init pmi_version=2 pmi_subversion=0\n");
    server.TakeReplies(i);
  }
  server.Receive(1, V2("cmd=info-getnodeattr;key=shm;wait=TRUE;"));
  EXPECT_EQ(server.TakeReplies(1), "");
  server.Receive(0, V2("cmd=info-putnodeattr;key=shm;value=/dev/shm/x;"));
  EXPECT_EQ(server.TakeReplies(1).substr(6),
            "cmd=info-getnodeattr-response;rc=0;found=TRUE;value=/dev/shm/x;");
}

TEST(PmiWire, OversizedAndMalformedInputIsRefused) {
  PmiWireServer server(TwoByTwo(), {0});
  server.Receive(0, "cmd=put kvsname=7.0 key=k value=" + std::string(2000, 'v') + "\n");
  std::string refused = server.TakeReplies(0);
  EXPECT_EQ(refused.substr(0, 24), "cmd=put_result rc=-1 msg");
  EXPECT_EQ(refused.find(' ', 25), std::string::npos) << refused;  // one word, as PMI-1 reads it
  server.Receive(0, std::string(PmiWireServer::kBufferMost + 1, 'x'));
  EXPECT_TRUE(server.Broken(0));
  PmiWireServer framed(TwoByTwo(), {0});
  framed.Receive(0, "cmd=init pmi_version=2 pmi_subversion=0\n");
  framed.Receive(0, "abcdefcmd=fullinit;");
  EXPECT_TRUE(framed.Broken(0));
  // A malformed part from another node fails the fence, and the task hears so.
  PmiWireServer fenced(TwoByTwo(), {0});
  fenced.Receive(0, "cmd=barrier_in\n");
  ASSERT_TRUE(fenced.TakeFencePart());
  EXPECT_FALSE(fenced.FenceDone({"\xff"}));
  EXPECT_EQ(fenced.TakeReplies(0), "cmd=barrier_out rc=-1\n");
}

// A task that ends leaves the fences of the others; one that sends commands and never reads
// the replies is cut off.
TEST(PmiWire, ClosedTasksLeaveFencesAndUnreadRepliesAreBounded) {
  PmiWireServer server(TwoByTwo(), {0, 1});
  server.Receive(0, "cmd=barrier_in\n");
  EXPECT_FALSE(server.TakeFencePart());
  server.Closed(1);
  EXPECT_TRUE(server.TakeFencePart());
  PmiWireServer flood(TwoByTwo(), {0});
  std::string commands;
  for (int i = 0; i < 4000; ++i) commands += "cmd=get_my_kvsname\n";
  for (int i = 0; i < 10 && !flood.Broken(0); ++i) flood.Receive(0, commands);
  EXPECT_TRUE(flood.Broken(0));
}

TEST(PmiWire, AbortIsReported) {
  PmiWireServer server(TwoByTwo(), {0});
  server.Receive(0, "cmd=abort exitcode=7\n");
  ASSERT_TRUE(server.abort());
  EXPECT_EQ(server.abort()->first, 7);
}

}  // namespace
}  // namespace drover::agent

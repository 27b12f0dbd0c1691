// The PMI-1 and PMI-2 wire protocols of one node's tasks. See pmi_wire.h.
#include "agent/host/pmi_wire.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace drover::agent {
namespace {

void AppendLength(std::string& out, size_t n) {
  uint32_t value = static_cast<uint32_t>(n);
  char bytes[4] = {static_cast<char>(value & 0xff), static_cast<char>((value >> 8) & 0xff),
                   static_cast<char>((value >> 16) & 0xff), static_cast<char>(value >> 24)};
  out.append(bytes, 4);
}

bool ReadLength(std::string_view& in, size_t& n) {
  if (in.size() < 4) return false;
  auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(in[i])); };
  n = byte(0) | (byte(1) << 8) | (byte(2) << 16) | (byte(3) << 24);
  in.remove_prefix(4);
  return n <= in.size();
}

const std::string* Find(const std::vector<std::pair<std::string, std::string>>& fields,
                        std::string_view key) {
  for (const auto& [name, value] : fields)
    if (name == key) return &value;
  return nullptr;
}

std::string Or(const std::string* value, std::string fallback = "") {
  return value ? *value : fallback;
}

// A PMI-1 value is one word: its spaces become underscores.
std::string NoSpaces(std::string text) {
  for (char& c : text)
    if (c == ' ' || c == '\n') c = '_';
  return text;
}

}  // namespace

std::string PmiProcessMapping(const std::vector<uint32_t>& node_of_rank) {
  // Runs of consecutive ranks on one node.
  std::vector<std::pair<uint32_t, uint32_t>> runs;  // node, ranks
  for (uint32_t node : node_of_rank) {
    if (!runs.empty() && runs.back().first == node)
      ++runs.back().second;
    else
      runs.emplace_back(node, 1);
  }
  // Runs of equal length on consecutive nodes make one block: (first node, nodes, ranks each).
  struct Block {
    uint32_t node, nodes, ranks;
  };
  std::vector<Block> blocks;
  for (const auto& [node, ranks] : runs) {
    if (!blocks.empty()) {
      Block& last = blocks.back();
      if (last.ranks == ranks && last.node + last.nodes == node) {
        ++last.nodes;
        continue;
      }
    }
    blocks.push_back({node, 1, ranks});
  }
  std::string mapping = "(vector";
  for (const Block& block : blocks)
    mapping += fmt::format(",({},{},{})", block.node, block.nodes, block.ranks);
  return mapping + ")";
}

std::string EncodePmiPairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out;
  for (const auto& [key, value] : pairs) {
    AppendLength(out, key.size());
    out += key;
    AppendLength(out, value.size());
    out += value;
  }
  return out;
}

bool DecodePmiPairs(std::string_view part, std::vector<std::pair<std::string, std::string>>& out) {
  while (!part.empty()) {
    size_t n = 0;
    if (!ReadLength(part, n)) return false;
    std::string key(part.substr(0, n));
    part.remove_prefix(n);
    if (!ReadLength(part, n)) return false;
    out.emplace_back(std::move(key), std::string(part.substr(0, n)));
    part.remove_prefix(n);
  }
  return true;
}

PmiWireServer::PmiWireServer(PmiStep step, std::vector<uint32_t> ranks) : step_(std::move(step)) {
  clients_.resize(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) clients_[i].rank = ranks[i];
}

void PmiWireServer::Receive(size_t local, std::string_view bytes) {
  Client& client = clients_.at(local);
  if (client.broken) return;
  client.in.append(bytes);
  Parse(client);
  if (!client.broken && client.in.size() > kBufferMost)
    Break(client, fmt::format("a command of more than {} bytes", kBufferMost));
  if (!client.broken && client.out.size() > kBufferMost)
    Break(client, fmt::format("more than {} bytes of replies it does not read", kBufferMost));
}

void PmiWireServer::Closed(size_t local) {
  Client& client = clients_.at(local);
  if (!client.broken) Break(client, "it closed its socket (or ended)");
}

std::string PmiWireServer::TakeReplies(size_t local) {
  std::string out;
  out.swap(clients_.at(local).out);
  return out;
}

void PmiWireServer::Break(Client& client, std::string why) {
  client.broken = true;
  client.why = std::move(why);
  client.in.clear();
}

// Every whole command in the client's buffer, in order.
void PmiWireServer::Parse(Client& client) {
  while (!client.broken) {
    if (client.version == 2) {
      if (client.in.size() < 6) return;
      size_t length = 0;
      std::string_view header(client.in.data(), 6);
      size_t first = header.find_first_not_of(' ');
      if (first == std::string_view::npos ||
          std::from_chars(header.data() + first, header.data() + 6, length).ec != std::errc())
        return Break(client, fmt::format("a PMI-2 length of '{}'", header));
      if (length > kBufferMost) return Break(client, "a PMI-2 command too long");
      if (client.in.size() < 6 + length) return;
      std::string body = client.in.substr(6, length);
      client.in.erase(0, 6 + length);
      // key=value; pairs, a ';' inside a value doubled.
      Fields fields;
      size_t i = 0;
      while (i < body.size()) {
        size_t equals = body.find('=', i);
        if (equals == std::string::npos) break;
        std::string key = body.substr(i, equals - i), value;
        size_t j = equals + 1;
        for (; j < body.size(); ++j) {
          if (body[j] == ';') {
            if (j + 1 < body.size() && body[j + 1] == ';') {
              value += ';';
              ++j;
              continue;
            }
            break;
          }
          value += body[j];
        }
        fields.emplace_back(std::move(key), std::move(value));
        i = j + 1;
      }
      HandleV2(client, fields);
      continue;
    }
    size_t newline = client.in.find('\n');
    if (newline == std::string::npos) return;
    std::string line = client.in.substr(0, newline);
    client.in.erase(0, newline + 1);
    Fields fields;
    size_t i = 0;
    while (i < line.size()) {
      size_t end = line.find(' ', i);
      if (end == std::string::npos) end = line.size();
      std::string_view word(line.data() + i, end - i);
      if (!word.empty()) {
        size_t equals = word.find('=');
        if (equals == std::string_view::npos)
          fields.emplace_back(std::string(word), "");
        else
          fields.emplace_back(std::string(word.substr(0, equals)),
                              std::string(word.substr(equals + 1)));
      }
      i = end + 1;
    }
    if (fields.empty()) continue;
    HandleV1(client, fields);
  }
}

void PmiWireServer::ReplyV1(Client& client, std::string_view text) {
  client.out += text;
  client.out += '\n';
}

void PmiWireServer::ReplyV2(Client& client, const Fields& fields) {
  std::string body;
  for (const auto& [key, value] : fields) {
    body += key;
    body += '=';
    for (char c : value) {
      body += c;
      if (c == ';') body += ';';
    }
    body += ';';
  }
  client.out += fmt::format("{:<6}", body.size());
  client.out += body;
}

bool PmiWireServer::Put(const std::string& key, const std::string& value, std::string& error) {
  if (key.empty() || key.size() > kKeyMost) {
    error = fmt::format("a key must be 1 to {} characters", kKeyMost);
    return false;
  }
  if (value.size() > kValueMost) {
    error = fmt::format("a value must be at most {} characters", kValueMost);
    return false;
  }
  if (put_bytes_ + key.size() + value.size() > kPartMost) {
    error = fmt::format("more than {} bytes put between two fences", kPartMost);
    return false;
  }
  if (kvs_bytes_ + key.size() + value.size() > kSpaceMost) {
    error = fmt::format("the step's key-value space is full ({} bytes)", kSpaceMost);
    return false;
  }
  put_bytes_ += key.size() + value.size();
  kvs_bytes_ += key.size() + value.size();
  puts_.emplace_back(key, value);
  kvs_[key] = value;  // visible here at once; elsewhere after the fence
  return true;
}

std::optional<std::string> PmiWireServer::JobAttribute(const std::string& key) const {
  if (key == "PMI_process_mapping") return step_.process_mapping;
  if (key == "universeSize") return std::to_string(step_.universe_size);
  if (key == "hasNameServ") return std::string("FALSE");
  return std::nullopt;
}

std::optional<std::string> PmiWireServer::TakeFencePart() {
  if (part_taken_ || clients_.empty()) return std::nullopt;
  for (const Client& client : clients_)
    if (!client.in_fence && !client.broken) return std::nullopt;
  // A fence nobody here is in (every client broken) is not ours to start.
  if (std::none_of(clients_.begin(), clients_.end(), [](const Client& c) { return c.in_fence; }))
    return std::nullopt;
  part_taken_ = true;
  std::string part = EncodePmiPairs(puts_);
  puts_.clear();
  put_bytes_ = 0;
  return part;
}

bool PmiWireServer::FenceDone(const std::vector<std::string>& parts) {
  bool ok = true;
  for (const std::string& part : parts) {
    std::vector<std::pair<std::string, std::string>> pairs;
    if (!DecodePmiPairs(part, pairs)) ok = false;
    for (auto& [key, value] : pairs) {
      // Every node's keys together are bounded too: a node past it fails the fence.
      if (kvs_bytes_ + key.size() + value.size() > kSpaceMost) {
        ok = false;
        break;
      }
      kvs_bytes_ += key.size() + value.size();
      kvs_[key] = std::move(value);
    }
  }
  part_taken_ = false;
  for (Client& client : clients_) {
    if (!client.in_fence) continue;
    client.in_fence = false;
    if (client.version == 2)
      ReplyV2(client, {{"cmd", "kvs-fence-response"}, {"rc", ok ? "0" : "-1"}});
    else
      ReplyV1(client, fmt::format("cmd=barrier_out rc={}", ok ? 0 : -1));
  }
  return ok;
}

void PmiWireServer::HandleV1(Client& client, const Fields& fields) {
  const std::string& command = fields.front().second;
  if (fields.front().first == "mcmd") {
    // PMI_Spawn_multiple: its lines up to "endcmd" are skipped; spawning is refused.
    if (command == "spawn") client.version = client.version == 0 ? 1 : client.version;
    ReplyV1(client, "cmd=spawn_result rc=-1");
    return;
  }
  if (fields.front().first != "cmd") {
    if (fields.front().first == "endcmd") return;
    // A line of a spawn's arguments, or noise: skipped as Slurm's server skips what it cannot read.
    return;
  }
  auto value = [&](std::string_view key) { return Or(Find(fields, key)); };
  if (command == "init") {
    int version = value("pmi_version") == "2" ? 2 : 1;
    ReplyV1(client, version == 2 ? "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0"
                                 : "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
    client.version = version;
    return;
  }
  if (client.version == 0) client.version = 1;  // a client that skips init (PMI_ID's initack)
  if (command == "initack") {
    ReplyV1(client, "cmd=initack rc=0");
    ReplyV1(client, fmt::format("cmd=set size={}", step_.size));
    ReplyV1(client, fmt::format("cmd=set rank={}", client.rank));
    ReplyV1(client, "cmd=set debug=0");
  } else if (command == "get_maxes") {
    ReplyV1(client, fmt::format("cmd=maxes rc=0 kvsname_max={} keylen_max={} vallen_max={}",
                                kKvsNameMost, kKeyMost, kValueMost));
  } else if (command == "get_appnum") {
    ReplyV1(client, fmt::format("cmd=appnum rc=0 appnum={}", step_.appnum));
  } else if (command == "get_universe_size") {
    ReplyV1(client, fmt::format("cmd=universe_size rc=0 size={}", step_.universe_size));
  } else if (command == "get_my_kvsname") {
    ReplyV1(client, fmt::format("cmd=my_kvsname rc=0 kvsname={}", step_.kvsname));
  } else if (command == "barrier_in") {
    client.in_fence = true;
  } else if (command == "put") {
    std::string error;
    if (Put(value("key"), value("value"), error))
      ReplyV1(client, "cmd=put_result rc=0");
    else
      ReplyV1(client, fmt::format("cmd=put_result rc=-1 msg={}", NoSpaces(error)));
  } else if (command == "get") {
    std::string key = value("key");
    auto found = kvs_.find(key);
    std::optional<std::string> attribute =
        found == kvs_.end() ? JobAttribute(key) : std::optional<std::string>(found->second);
    if (attribute)
      ReplyV1(client, fmt::format("cmd=get_result rc=0 value={}", *attribute));
    else
      ReplyV1(client, "cmd=get_result rc=-1 msg=key_not_found");
  } else if (command == "finalize") {
    client.finalized = true;
    ReplyV1(client, "cmd=finalize_ack rc=0");
  } else if (command == "abort") {
    abort_ = {std::atoi(value("exitcode").c_str()), "PMI_Abort"};
  } else if (command == "get_ranks2hosts" || command == "publish_name" ||
             command == "unpublish_name" || command == "lookup_name") {
    ReplyV1(client, fmt::format("cmd={}_result rc=-1 msg=not_supported", command));
  } else {
    ReplyV1(client, fmt::format("cmd={} rc=-1 msg=unknown_command", command));
  }
}

void PmiWireServer::HandleV2(Client& client, const Fields& fields) {
  const std::string* command_value = Find(fields, "cmd");
  if (!command_value) return Break(client, "a PMI-2 command without cmd=");
  const std::string& command = *command_value;
  auto value = [&](std::string_view key) { return Or(Find(fields, key)); };
  if (command == "fullinit") {
    ReplyV2(client, {{"cmd", "fullinit-response"},
                     {"rc", "0"},
                     {"pmi-version", "2"},
                     {"pmi-subversion", "0"},
                     {"rank", std::to_string(client.rank)},
                     {"size", std::to_string(step_.size)},
                     {"appnum", std::to_string(step_.appnum)},
                     // No spawner-jobid: its presence tells MPICH's client the step was spawned.
                     {"debugged", "FALSE"},
                     {"pmiverbose", "FALSE"}});
  } else if (command == "job-getid") {
    ReplyV2(client, {{"cmd", "job-getid-response"}, {"rc", "0"}, {"jobid", step_.kvsname}});
  } else if (command == "job-getinfo" || command == "info-getjobattr") {
    std::optional<std::string> attribute = JobAttribute(value("key"));
    Fields reply = {{"cmd", command + "-response"}, {"rc", "0"}};
    reply.emplace_back("found", attribute ? "TRUE" : "FALSE");
    if (attribute) reply.emplace_back("value", *attribute);
    ReplyV2(client, reply);
  } else if (command == "kvs-put") {
    std::string error;
    if (Put(value("key"), value("value"), error))
      ReplyV2(client, {{"cmd", "kvs-put-response"}, {"rc", "0"}});
    else
      ReplyV2(client, {{"cmd", "kvs-put-response"}, {"rc", "-1"}, {"errmsg", error}});
  } else if (command == "kvs-fence") {
    client.in_fence = true;
  } else if (command == "kvs-get") {
    auto found = kvs_.find(value("key"));
    if (found == kvs_.end())
      ReplyV2(client, {{"cmd", "kvs-get-response"}, {"rc", "0"}, {"found", "FALSE"}});
    else
      ReplyV2(
          client,
          {{"cmd", "kvs-get-response"}, {"rc", "0"}, {"found", "TRUE"}, {"value", found->second}});
  } else if (command == "info-putnodeattr") {
    std::string key = value("key"), attribute = value("value");
    if (key.empty() || key.size() > kKeyMost || attribute.size() > kValueMost ||
        node_attributes_.size() >= 4096) {
      ReplyV2(client, {{"cmd", "info-putnodeattr-response"},
                       {"rc", "-1"},
                       {"errmsg", "key, value or count out of bounds"}});
    } else {
      node_attributes_[key] = attribute;
      ReplyV2(client, {{"cmd", "info-putnodeattr-response"}, {"rc", "0"}});
      // Those that wait for this key get it now.
      for (auto waiter = node_waiters_.begin(); waiter != node_waiters_.end();) {
        if (waiter->second != key) {
          ++waiter;
          continue;
        }
        ReplyV2(clients_[waiter->first], {{"cmd", "info-getnodeattr-response"},
                                          {"rc", "0"},
                                          {"found", "TRUE"},
                                          {"value", attribute}});
        waiter = node_waiters_.erase(waiter);
      }
    }
  } else if (command == "info-getnodeattr") {
    auto found = node_attributes_.find(value("key"));
    if (found == node_attributes_.end() && value("wait") == "TRUE" && node_waiters_.size() < 4096) {
      node_waiters_.emplace_back(static_cast<size_t>(&client - clients_.data()), value("key"));
      return;
    }
    Fields reply = {{"cmd", "info-getnodeattr-response"}, {"rc", "0"}};
    reply.emplace_back("found", found != node_attributes_.end() ? "TRUE" : "FALSE");
    if (found != node_attributes_.end()) reply.emplace_back("value", found->second);
    ReplyV2(client, reply);
  } else if (command == "finalize") {
    client.finalized = true;
    ReplyV2(client, {{"cmd", "finalize-response"}, {"rc", "0"}});
  } else if (command == "abort") {
    abort_ = {1, value("msg")};
  } else {
    ReplyV2(client, {{"cmd", command + "-response"},
                     {"rc", "-1"},
                     {"errmsg", "Drover's PMI-2 server does not support " + command}});
  }
}

}  // namespace drover::agent

// sacctmgr: accounts, users, QOS, associations and clusters, from and to the controller's
// accounting (its Accounting service). show/list print with sacctmgr_format.h; add, modify and
// delete go to the controller, which applies sacctmgr's rules (common/accounting_change.h):
// asked first as a dry run so the change can be shown and confirmed, as sacctmgr asks, unless
// -i. With no command, sacctmgr reads commands from its input, one a line.
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/formats/sacctmgr_format.h"
#include "cli/query/query_common.h"
#include "cli/scontrol/scontrol_keywords.h"
#include "common/accounting_change.h"
#include "common/accounting_dump.h"
#include "common/accounting_settings.h"
#include "common/getopt.h"
#include "common/text.h"
#include "proto/accounting.grpc.pb.h"
#include "wire/accounting_codec.h"

namespace drover::cli {
namespace {

constexpr const char* kSacctmgrUsage =
    "Usage: sacctmgr [-hinpPQrsvV] [--oneliner] [command [entity [specs...]]]\n";

constexpr const char* kSacctmgrHelp =
    "sacctmgr [<OPTION>] [<COMMAND>]\n"
    "    Valid <OPTION> values are:\n"
    "     -h or --help: equivalent to \"help\" command\n"
    "     -i or --immediate: commit changes immediately\n"
    "     -n or --noheader: no header will be added to the beginning of output\n"
    "     --oneliner: equivalent to \"oneliner\" command\n"
    "     -p or --parsable: output will be '|' delimited with a '|' at the end\n"
    "     -P or --parsable2: output will be '|' delimited without a '|' at the end\n"
    "     -Q or --quiet: equivalent to \"quiet\" command\n"
    "     -r or --readonly: equivalent to \"readonly\" command\n"
    "     -s or --associations: equivalent to \"associations\" command\n"
    "     -v or --verbose: equivalent to \"verbose\" command\n"
    "     -V or --version: equivalent to \"version\" command\n"
    "\n"
    "  <keyword> may be omitted from the execute line and sacctmgr will execute\n"
    "  in interactive mode. It will process commands as entered until explicitly\n"
    "  terminated.\n"
    "\n"
    "    Valid <COMMAND> values are:\n"
    "     add <ENTITY> <SPECS>     add entity (also create)\n"
    "     delete <ENTITY> where <SPECS>  delete the specified entity(s) (also remove)\n"
    "     dump <CLUSTER> [File=FILENAME]  dump database information of the\n"
    "                              specified cluster to the flat file.\n"
    "     exit                     terminate sacctmgr (also quit)\n"
    "     help                     print this description of use.\n"
    "     list <ENTITY> [<SPECS>]  display info of identified entity, default\n"
    "                              is display all (also show).\n"
    "     load <FILE> [clean] [Cluster=NAME]  read in the file to update\n"
    "                              the database with the file contents.\n"
    "     modify <ENTITY> where <SPECS> set <SPECS>  modify entity (also update)\n"
    "     version                  display tool version number.\n"
    "\n"
    "  <ENTITY> may be \"account\", \"association\", \"cluster\", \"qos\" or \"user\".\n"
    "  Drover keeps its accounting in the controller: no slurmdbd is needed.\n";

constexpr OptionSpec kSacctmgrOptions[] = {
    {'h', "help", OptionSpec::kNone},         {'i', "immediate", OptionSpec::kNone},
    {'n', "noheader", OptionSpec::kNone},     {0, "oneliner", OptionSpec::kNone},
    {'p', "parsable", OptionSpec::kNone},     {'P', "parsable2", OptionSpec::kNone},
    {'Q', "quiet", OptionSpec::kNone},        {'r', "readonly", OptionSpec::kNone},
    {'s', "associations", OptionSpec::kNone}, {'v', "verbose", OptionSpec::kNone},
    {'V', "version", OptionSpec::kNone},      {0, "usage", OptionSpec::kNone}};

struct Session {
  bool immediate = false, no_header = false, parsable = false, parsable2 = false;
  bool quiet = false, readonly = false, with_associations = false, verbose = false;
  std::optional<Connection> connection;
  std::unique_ptr<v1::Accounting::Stub> stub;
};

// Slurm's keyword matching: `word` is a prefix of `keyword` at least `shortest` long.
bool Keyword(std::string_view word, std::string_view keyword, size_t shortest) {
  return scontrol::MatchesKeyword(word, keyword, shortest);
}

Status Connected(Session& session) {
  if (session.stub) return OkStatus();
  auto connection = Connect();
  if (!connection) return std::move(connection).take_error();
  session.connection = std::move(*connection);
  session.stub = v1::Accounting::NewStub(session.connection->channel);
  return OkStatus();
}

void AddValues(std::vector<std::string>& list, std::string_view value, bool lower = true) {
  for (const std::string& item : Split(value, ','))
    if (!Trim(item).empty()) list.push_back(lower ? acct::NameOf(item) : std::string(Trim(item)));
}

// show's words: flags, conditions and format=; an error in sacctmgr's words.
Status ReadShowWords(const std::vector<std::string>& words, SacctmgrShowOptions& options) {
  bool association = options.listing == AccountingListing::kAssociation;
  for (const std::string& text : words) {
    if (EqualsIgnoreCase(text, "where") || EqualsIgnoreCase(text, "set")) continue;
    acct::Word word = acct::SplitWord(text);
    std::string_view key = word.key;
    if (key.empty()) {
      std::string_view flag = word.value;
      if (Keyword(flag, "withassoc", 5)) {
        options.with_associations = true;
      } else if (Keyword(flag, "tree", 4) && association) {
        options.tree = true;
      } else if (Keyword(flag, "onlydefaults", 2) && association) {
        options.only_defaults = true;
      } else if (Keyword(flag, "wolimits", 3) || Keyword(flag, "woplimits", 4)) {
        options.without_limits = true;
      } else if (Keyword(flag, "withdeleted", 5)) {
        // Drover removes what is deleted: there is nothing more to show.
      } else if (association) {
        if (!ParseInt64(flag))
          return MakeError(fmt::format("sacctmgr: error: Invalid value for AssocId ({})", flag));
        AddValues(options.ids, flag);
      } else {
        AddValues(options.names, flag);
      }
      continue;
    }
    if (word.op != "=") return MakeError(fmt::format(" Unknown condition: {}", text));
    if (Keyword(key, "format", 1)) {
      options.format.push_back(word.value);
    } else if (Keyword(key, "names", 1) ||
               (options.listing == AccountingListing::kUser && Keyword(key, "users", 1))) {
      AddValues(options.names, word.value);
    } else if (Keyword(key, "accounts", 2) || Keyword(key, "acct", 4)) {
      AddValues(options.listing == AccountingListing::kAccount ? options.names : options.accounts,
                word.value);
    } else if (Keyword(key, "users", 1)) {
      AddValues(options.users, word.value);
    } else if (Keyword(key, "clusters", 1)) {
      AddValues(options.listing == AccountingListing::kCluster ? options.names : options.clusters,
                word.value);
    } else if (Keyword(key, "partitions", 3)) {
      AddValues(options.partitions, word.value);
    } else if (Keyword(key, "parents", 4)) {
      AddValues(options.parents, word.value);
    } else if (Keyword(key, "qoslevel", 1)) {
      AddValues(options.listing == AccountingListing::kQos ? options.names : options.qos,
                word.value);
    } else if (Keyword(key, "ids", 1) || Keyword(key, "associations", 2)) {
      AddValues(options.ids, word.value);
    } else if (Keyword(key, "descriptions", 1)) {
      AddValues(options.descriptions, word.value, false);
    } else if (Keyword(key, "organizations", 1)) {
      AddValues(options.organizations, word.value, false);
    } else if (Keyword(key, "adminlevel", 2)) {
      AddValues(options.admin_levels, word.value, false);
    } else if (Keyword(key, "defaultaccount", 8)) {
      AddValues(options.default_accounts, word.value);
    } else {
      return MakeError(association ? fmt::format(" Unknown condition: {}", text)
                                   : fmt::format(" Unknown condition: {}\n Use keyword 'set' to "
                                                 "modify value",
                                                 text));
    }
  }
  return OkStatus();
}

std::optional<AccountingListing> ListingOf(std::string_view word) {
  if (Keyword(word, "accounts", 2) || Keyword(word, "acct", 4)) return AccountingListing::kAccount;
  if (Keyword(word, "associations", 2)) return AccountingListing::kAssociation;
  if (Keyword(word, "clusters", 2)) return AccountingListing::kCluster;
  if (Keyword(word, "qos", 1)) return AccountingListing::kQos;
  if (Keyword(word, "users", 1)) return AccountingListing::kUser;
  return std::nullopt;
}

int Show(Session& session, const std::vector<std::string>& words) {
  if (words.size() < 2) {
    std::fputs(
        "No valid entity in list command\nInput line must include \"Account\", "
        "\"Association\", \"Cluster\", \"QOS\", or \"User\"\n",
        stderr);
    return 1;
  }
  std::optional<AccountingListing> listing = ListingOf(words[1]);
  if (!listing) {
    std::fprintf(stderr,
                 "No valid entity in list command\nInput line must include \"Account\", "
                 "\"Association\", \"Cluster\", \"QOS\", or \"User\"\n"
                 "(Drover's sacctmgr does not list '%s')\n",
                 words[1].c_str());
    return 1;
  }
  SacctmgrShowOptions options;
  options.listing = *listing;
  options.no_header = session.no_header;
  options.parsable = session.parsable;
  options.parsable2 = session.parsable2;
  options.with_associations = session.with_associations;
  if (Status read = ReadShowWords({words.begin() + 2, words.end()}, options); !read) {
    std::fprintf(stderr, "%s\n", read.error().c_str());
    return 1;
  }
  if (Status connected = Connected(session); !connected) return Fail("sacctmgr", connected.error());
  const ClusterSettings& settings = session.connection->cluster.settings;
  if (!settings.controller_hosts.empty()) {
    const ControllerHost& host = settings.controller_hosts.front();
    options.control_host = host.address.empty() ? host.name : host.address;
  }
  options.control_port = settings.controller_port;
  auto database = FetchAccounting(session.connection->channel);
  if (!database) return Fail("sacctmgr", database.error());
  auto text = FormatAccounting(*database, options);
  if (!text) {
    std::fprintf(stderr, "%s\n", text.error().c_str());
    return 1;
  }
  std::fputs(text->c_str(), stdout);
  return 0;
}

// sacctmgr's question: y or Y commits; n, N, a blank line, the end of input or 30 s say no.
bool Confirm(const std::string& question) {
  std::printf("%s (You have 30 seconds to decide)\n", question.c_str());
  for (;;) {
    std::printf("(N/y): ");
    std::fflush(stdout);
    pollfd input{STDIN_FILENO, POLLIN, 0};
    if (::poll(&input, 1, 30'000) <= 0) {
      std::printf("timeout\n");
      return false;
    }
    std::string answer;
    if (!std::getline(std::cin, answer)) return std::printf("\n"), false;
    if (!::isatty(STDIN_FILENO)) std::printf("\n");  // a terminal echoed the answer's newline
    std::string_view trimmed = Trim(answer);
    if (trimmed == "y" || trimmed == "Y") return true;
    if (trimmed.empty() || trimmed == "n" || trimmed == "N") return false;
    std::printf("Y or N please\n");
  }
}

std::string EntityPlural(acct::Entity entity) {
  switch (entity) {
    case acct::Entity::kAccount:
      return "accounts";
    case acct::Entity::kUser:
      return "users";
    case acct::Entity::kQos:
      return "QOS";
    case acct::Entity::kCluster:
      return "clusters";
  }
  return "";
}

// True when a modify names no condition (no words before "set" but "where").
bool NoConditions(const std::vector<std::string>& words) {
  for (const std::string& word : words) {
    if (EqualsIgnoreCase(word, "set")) return true;
    if (!EqualsIgnoreCase(word, "where")) return false;
  }
  return true;
}

int Change(Session& session, acct::Verb verb, const std::vector<std::string>& words,
           const std::string& file = "") {
  if (session.readonly) {
    std::fputs("Can't run this command in readonly mode.\n", stderr);
    return 1;
  }
  std::string_view verb_name = verb == acct::Verb::kAdd      ? "add"
                               : verb == acct::Verb::kModify ? "modify"
                               : verb == acct::Verb::kLoad   ? "load"
                                                             : "delete";
  if (words.size() < 2) {
    auto entity = acct::ParseEntity(verb, "");
    std::fprintf(stderr, "%s\n", entity.error().c_str());
    return 1;
  }
  auto entity = acct::ParseEntity(verb, words[1]);
  if (!entity) {
    std::fprintf(stderr, "%s\n", entity.error().c_str());
    return 1;
  }
  std::vector<std::string> specs(words.begin() + 2, words.end());
  if (Status connected = Connected(session); !connected) return Fail("sacctmgr", connected.error());
  auto call = [&](bool dry_run, v1::AccountingChangeReply& reply) {
    v1::AccountingChangeRequest request;
    request.set_verb(std::string(verb_name));
    request.set_entity(words[1]);
    for (const std::string& spec : specs) request.add_words(spec);
    request.set_dry_run(dry_run);
    request.set_file(file);
    if (session.verbose)
      std::fprintf(stderr, "sacctmgr: %s %s %s%s\n", std::string(verb_name).c_str(),
                   words[1].c_str(), Join(specs, " ").c_str(), dry_run ? " (asking first)" : "");
    grpc::ClientContext context;
    SetDeadline(context);
    return session.stub->Change(&context, request, &reply);
  };
  auto failed = [&](const grpc::Status& status) {
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
        status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
      return Fail("sacctmgr", "Problem talking to the database: " + Unreachable(status));
    std::string message = status.error_message();
    if (message == "Access/permission denied")
      message = verb == acct::Verb::kAdd
                    ? " Problem adding " + EntityPlural(*entity) + ": " + message
                : verb == acct::Verb::kLoad ? " Your user does not have sufficient privileges to "
                                              "load files."
                                            : " Error with request: " + message;
    std::fprintf(stderr, "%s\n", message.c_str());
    return 1;
  };
  if (verb == acct::Verb::kModify && !session.immediate && NoConditions(specs) &&
      !Confirm("You didn't set any conditions with 'WHERE'.\nAre you sure you want to continue?")) {
    std::printf("Aborted\n");
    return 0;
  }
  v1::AccountingChangeReply reply;
  grpc::Status status = call(!session.immediate, reply);
  if (!status.ok()) return failed(status);
  if (!session.quiet || !reply.changed()) std::fputs(reply.text().c_str(), stdout);
  for (const std::string& warning : reply.warnings())
    std::fprintf(stderr, "sacctmgr: warning: %s\n", warning.c_str());
  if (!reply.changed()) return 1;  // " Nothing new added.", as sacctmgr: exit 1
  if (session.immediate) return 0;
  if (!Confirm("Would you like to commit changes?")) {
    std::printf(" Changes Discarded\n");
    return 0;
  }
  reply.Clear();
  status = call(false, reply);
  if (!status.ok()) return failed(status);
  return 0;
}

// The file at `path`, refused when larger than `cap` bytes.
Result<std::string> ReadCapped(const std::string& path, size_t cap) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > cap) return MakeError(fmt::format("larger than {} bytes", cap));
  }
  if (in.bad()) return MakeError("read error");
  return text;
}

// sacctmgr dump <cluster> [File=<path>]: the cluster file of accounting_dump.h.
int Dump(Session& session, const std::vector<std::string>& words) {
  std::string cluster, path;
  for (size_t i = 1; i < words.size(); ++i) {
    acct::Word word = acct::SplitWord(words[i]);
    if (word.key.empty()) {
      cluster = acct::NameOf(word.value);
    } else if (word.op == "=" && Keyword(word.key, "cluster", 1)) {
      cluster = acct::NameOf(word.value);
    } else if (word.op == "=" && Keyword(word.key, "file", 1)) {
      path = word.value;
    } else {
      std::fprintf(stderr, " Unknown option: %s\n", words[i].c_str());
      return 1;
    }
  }
  if (cluster.empty()) {
    std::fputs(" We need a cluster to dump.\n", stderr);
    return 1;
  }
  if (Status connected = Connected(session); !connected) return Fail("sacctmgr", connected.error());
  auto database = FetchAccounting(session.connection->channel);
  if (!database) return Fail("sacctmgr", database.error());
  if (!database->FindCluster(cluster)) {
    std::fprintf(stderr, " Cluster %s doesn't exist.\n", cluster.c_str());
    return 1;
  }
  if (path.empty()) {
    path = "./" + cluster + ".cfg";
    std::printf(" No filename given, using %s.\n", path.c_str());
  }
  std::string text = acct::FormatDumpFile(*database, cluster);
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) return Fail("sacctmgr", fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  if (std::fclose(out) != 0 || !written)
    return Fail("sacctmgr", fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  return 0;
}

// sacctmgr load [File=]<file> [clean] [Cluster=<name>]: asked of the controller as a dry run,
// shown, then committed as add is.
int Load(Session& session, const std::vector<std::string>& words) {
  std::string path;
  std::vector<std::string> change = {"load", "cluster"};
  bool clean = false;
  for (size_t i = 1; i < words.size(); ++i) {
    acct::Word word = acct::SplitWord(words[i]);
    if (word.key.empty() && Keyword(word.value, "clean", 3)) {
      clean = true;
      change.push_back("clean");
    } else if (word.key.empty()) {
      path = word.value;
    } else if (word.op == "=" && Keyword(word.key, "file", 1)) {
      path = word.value;
    } else if (word.op == "=" && Keyword(word.key, "cluster", 1)) {
      change.push_back("cluster=" + word.value);
    } else {
      std::fprintf(stderr, " Unknown option: %s\n", words[i].c_str());
      return 1;
    }
  }
  if (path.empty()) {
    std::fputs(" No filename given, specify one with file=''\n", stderr);
    return 1;
  }
  auto file = ReadCapped(path, 4 << 20);
  if (!file) {
    std::fprintf(stderr, " Unable to read \"%s\": %s\n", path.c_str(), file.error().c_str());
    return 1;
  }
  if (clean && !session.immediate &&
      !Confirm("You requested to flush the cluster before adding it again.\nAre you sure you "
               "want to continue?")) {
    std::printf("Aborted\n");
    return 0;
  }
  return Change(session, acct::Verb::kLoad, change, *file);
}

int RunWords(Session& session, const std::vector<std::string>& words) {
  if (words.empty()) return 0;
  std::string_view command = words.front();
  if (Keyword(command, "show", 3) || Keyword(command, "list", 3)) return Show(session, words);
  if (Keyword(command, "add", 3) || Keyword(command, "create", 3))
    return Change(session, acct::Verb::kAdd, words);
  if (Keyword(command, "modify", 1) || Keyword(command, "update", 1))
    return Change(session, acct::Verb::kModify, words);
  if (Keyword(command, "delete", 3) || Keyword(command, "remove", 3))
    return Change(session, acct::Verb::kDelete, words);
  if (Keyword(command, "dump", 3)) return Dump(session, words);
  if (Keyword(command, "load", 2)) {
    if (session.readonly)
      return std::fputs("Can't run this command in readonly mode.\n", stderr), 1;
    return Load(session, words);
  }
  if (Keyword(command, "help", 2)) return std::fputs(kSacctmgrHelp, stdout), 0;
  if (Keyword(command, "version", 4)) return PrintSlurmVersion();
  if (Keyword(command, "associations", 3)) return session.with_associations = true, 0;
  if (Keyword(command, "quiet", 4)) return session.quiet = true, 0;
  if (Keyword(command, "verbose", 4)) return session.verbose = true, 0;
  if (Keyword(command, "readonly", 4)) return session.readonly = true, 0;
  if (Keyword(command, "oneliner", 1)) return 0;  // every record is one line already
  for (std::string_view later : {"archive", "reconfigure", "shutdown", "rollup", "clear"}) {
    if (EqualsIgnoreCase(command, later)) {
      std::fprintf(stderr, "sacctmgr: error: '%.*s' is not supported by Drover's sacctmgr yet\n",
                   static_cast<int>(command.size()), command.data());
      return 1;
    }
  }
  std::fprintf(stderr, "invalid keyword: %.*s\n", static_cast<int>(command.size()), command.data());
  return 1;
}

int Interactive(Session& session) {
  bool tty = ::isatty(STDIN_FILENO);
  int code = 0;
  std::string line;
  for (;;) {
    if (tty) std::printf("sacctmgr: "), std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    auto split = scontrol::SplitCommandLine(line);
    if (!split) {
      std::fprintf(stderr, "sacctmgr: error: %s\n", split.error().c_str());
      code = 1;
      continue;
    }
    std::vector<std::string>& words = *split;
    if (words.empty()) continue;
    if (Keyword(words.front(), "exit", 4) || Keyword(words.front(), "quit", 4) ||
        words.front() == "\\q")
      break;
    if (int result = RunWords(session, words); result != 0) code = result;
  }
  return code;
}

}  // namespace

std::vector<OptionSpec> SacctmgrOptionTable() {
  return {std::begin(kSacctmgrOptions), std::end(kSacctmgrOptions)};
}

int RunSacctmgr(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  // Options come before the command: a word after it ("maxjobs=-1") is the command's.
  size_t first = 0;
  while (first < words.size() && words[first].size() > 1 && words[first][0] == '-') ++first;
  std::vector<std::string> option_words(words.begin(), words.begin() + first);
  auto parsed = ParseOptions(option_words, kSacctmgrOptions);
  if (!parsed) {
    std::fprintf(stderr, "sacctmgr: %s\nTry \"sacctmgr --help\" for more information\n",
                 parsed.error().c_str());
    return 1;
  }
  if (auto code = HelpUsageVersion(*parsed, kSacctmgrHelp, kSacctmgrUsage)) return *code;
  Session session;
  for (const auto& [option, value] : parsed->options) {
    if (option == "immediate") session.immediate = true;
    if (option == "noheader") session.no_header = true;
    if (option == "parsable") session.parsable = true;
    if (option == "parsable2") session.parsable2 = true;
    if (option == "quiet") session.quiet = true;
    if (option == "readonly") session.readonly = true;
    if (option == "associations") session.with_associations = true;
    if (option == "verbose") session.verbose = true;
  }
  std::vector<std::string> command(words.begin() + first, words.end());
  if (command.empty()) return Interactive(session);
  return RunWords(session, command);
}

}  // namespace drover::cli

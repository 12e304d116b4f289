// What a person reads, on real stores made through the executable (hook events as an
// agent sends them, snapshots, runs): `log` one row per tool call with what became of
// it and the reference the next command takes, `runs` newest last, both within 100
// columns (`--checkpoints`, `--wide` and `--json` for the rest), `states RUN` the run's
// own moves, and every reading command quiet when its reader stops reading.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

constexpr std::size_t kWidth = 100;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The lines of text wider than kWidth columns, each with its width ("" if none).
std::string too_wide(const std::string& text) {
  std::string out;
  for (const std::string& line : lines_of(text)) {
    std::size_t columns = 0;
    for (char c : line) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (columns > kWidth) out += std::to_string(columns) + ": " + line + "\n";
  }
  return out;
}

// The line of text holding part ("" if none).
std::string line_with(const std::string& text, const std::string& part) {
  for (const std::string& line : lines_of(text)) {
    if (line.find(part) != std::string::npos) return line;
  }
  return "";
}

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++n;
  }
  return n;
}

class ReadableOutputTest : public ::testing::Test {
 protected:
  ReadableOutputTest() {
    fs::create_directories(ws_);
    ws_ = fs::canonical(ws_);
  }

  CommandResult shadowbox(std::vector<std::string> args) const {
    std::vector<std::string> argv = {SHADOWBOX_BIN,   "--workspace", ws_.string(),    "--store",
                                     store_.string(), "--config",    config_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  }
  std::string ok(std::vector<std::string> args) const {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }
  // A Claude Code hook event for run r1, answered by `shadowbox hook` as its hooks run it.
  CommandResult send(const std::string& name, const std::string& tool, const std::string& id,
                     const std::string& input, const std::string& more = "") const {
    std::string event = "{\"hook_event_name\":\"" + name +
                        "\",\"session_id\":\"sess-1\",\"cwd\":\"" + ws_.string() +
                        "\",\"tool_name\":\"" + tool + "\",\"tool_use_id\":\"" + id +
                        "\",\"tool_input\":" + input + more + "}";
    return run_command({SHADOWBOX_BIN, "--store", store_.string(), "--config", config_.string(),
                        "hook", "claude-code", "--run", "r1"},
                       ws_, {"CLAUDE_PROJECT_DIR=" + ws_.string(), "SHADOWBOX_CONFIG="}, event);
  }
  void expect_sent(const std::string& name, const std::string& tool, const std::string& id,
                   const std::string& input, const std::string& more = "") const {
    CommandResult r = send(name, tool, id, input, more);
    EXPECT_EQ(r.exit_code, 0) << name << " " << id << ": " << r.err;
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
  fs::path config_ = temp_ / "config.yaml";
};

TEST_F(ReadableOutputTest, LogShowsOneRowPerCallWithItsOutcomeAndItsReference) {
  write_file(config_, "policy:\n  max_steps: 4\n");
  write_file(ws_ / "a.txt", "a\n");
  // ok: a shell command.
  expect_sent("PreToolUse", "Bash", "toolu_ok", R"({"command":"npm test","description":"x"})");
  expect_sent("PostToolUse", "Bash", "toolu_ok", R"({"command":"npm test"})",
              R"(,"tool_response":{"stdout":"passed"})");
  // ok: a Write, its content longer than the records keep (its path comes after it).
  std::string content(6000, 'c');
  std::string write_input =
      R"({"content":")" + content + R"(","file_path":")" + (ws_ / "src/main.c").string() + R"("})";
  expect_sent("PreToolUse", "Write", "toolu_write", write_input);
  write_file(ws_ / "src/main.c", content);
  expect_sent("PostToolUse", "Write", "toolu_write", write_input, R"(,"tool_response":{})");
  // rolled back: a failed command.
  expect_sent("PreToolUse", "Bash", "toolu_fail", R"({"command":"make"})");
  write_file(ws_ / "a.txt", "broken\n");
  expect_sent("PostToolUseFailure", "Bash", "toolu_fail", R"({"command":"make"})",
              R"(,"error":"Exit code 2")");
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n");
  // A call that never reports an outcome, then one the step limit refuses.
  expect_sent("PreToolUse", "Bash", "toolu_open", R"({"command":"sleep 100"})");
  CommandResult refused = send("PreToolUse", "Bash", "toolu_refused", R"({"command":"ls"})");
  ASSERT_EQ(refused.exit_code, 0) << refused.err;
  EXPECT_NE(refused.out.find("\"deny\""), std::string::npos) << refused.out;
  // The agent's session ends: the open call has no outcome.
  expect_sent("SessionEnd", "", "", "{}", R"(,"reason":"other")");

  std::string log = ok({"log", "--run", "r1"});
  EXPECT_EQ(too_wide(log), "") << log;
  EXPECT_EQ(log.rfind("run r1\nTIME (UTC)      CALL/CHECKPOINT   TOOL   OUTCOME      WHAT\n", 0),
            0u)
      << log;
  // One row each, with the id that `undo`, `restore pre:` and `rewind --to pre:` take.
  for (const char* id : {"toolu_ok", "toolu_write", "toolu_fail", "toolu_open", "toolu_refused"}) {
    EXPECT_EQ(occurrences(log, std::string("  ") + id + " "), 1u) << id << "\n" << log;
  }
  EXPECT_NE(line_with(log, "toolu_ok ").find("  toolu_ok          Bash   ok           npm test"),
            std::string::npos)
      << log;
  EXPECT_NE(line_with(log, "toolu_write").find("  Write  ok           src/main.c"),
            std::string::npos)
      << log;
  EXPECT_NE(line_with(log, "toolu_fail").find("  Bash   rolled back  make"), std::string::npos)
      << log;
  EXPECT_NE(log.find("  rolled back  make\n                Exit code 2\n"), std::string::npos)
      << "why, under the row\n"
      << log;
  EXPECT_NE(line_with(log, "toolu_open").find("  Bash   no outcome   sleep 100"), std::string::npos)
      << log;
  EXPECT_NE(log.find("  refused      ls\n                the step limit is reached: 4 calls"),
            std::string::npos)
      << log;
  // Newest first, by when each call began; the checkpoints of no call between them.
  EXPECT_LT(log.find("toolu_refused"), log.find("toolu_open"));
  EXPECT_LT(log.find("toolu_fail"), log.find("toolu_write"));
  EXPECT_LT(log.find("toolu_write"), log.find("toolu_ok"));
  EXPECT_NE(line_with(log, "agent session ended (other)").find(" checkpoint "), std::string::npos)
      << log;
  // The references work.
  EXPECT_EQ(shadowbox({"show", "pre:toolu_fail"}).exit_code, 0);
  EXPECT_EQ(ok({"diff", "--name-status", "pre:toolu_write", "post:toolu_write"}),
            "A  src/\nA  src/main.c\n");

  // -n counts rows.
  std::string two = ok({"log", "--run", "r1", "-n", "2"});
  EXPECT_EQ(lines_of(two).size(), 5u) << "run, header, two rows, one detail\n" << two;
  EXPECT_NE(two.find("toolu_refused"), std::string::npos) << two;

  // --checkpoints: a line per checkpoint, as --json lists them.
  std::string each = ok({"log", "--run", "r1", "--checkpoints"});
  EXPECT_NE(each.find("  pre_tool Bash toolu_ok ok "), std::string::npos) << each;
  EXPECT_NE(each.find("  post_tool Bash toolu_ok ok "), std::string::npos) << each;
  Poco::JSON::Parser parser;
  auto json = parser.parse(ok({"--json", "log", "--run", "r1"})).extract<Poco::JSON::Array::Ptr>();
  EXPECT_EQ(json->size(), lines_of(each).size() - occurrences(each, "\n    "));
  EXPECT_EQ(json->getObject(0)->getValue<std::string>("phase"), "checkpoint");
}

TEST_F(ReadableOutputTest, ACallThatHasNotEndedSaysSoAndARowOfNoCallCarriesItsCheckpoint) {
  write_file(config_, "");
  std::string tagged = ok({"snapshot", "--tag", "before"});
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c1", "--tool-name", "Bash", "--input",
      "make\ttest\x1b[2J"});
  std::string log = ok({"log"});
  EXPECT_NE(log.find("  c1                Bash  not ended  make test?[2J\n"), std::string::npos)
      << "a tab is a space, an escape is not sent to the terminal\n"
      << log;
  std::string id = tagged.substr(0, 16);  // what `restore` takes
  EXPECT_NE(line_with(log, "tag:before").find("  " + id + "        manual     tag:before"),
            std::string::npos)
      << log;
  EXPECT_EQ(ok({"log", "--checkpoints"}).find("\x1b"), std::string::npos);
}

TEST_F(ReadableOutputTest, TheNewestRowsAreReadFromAsMuchHistoryAsTheyNeed) {
  write_file(config_, "");
  // A call that began long before it ended: -n reads back to its start, so it is shown
  // where it began, with its outcome, not as the newest row.
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "long", "--tool-name", "Bash", "--input",
      "sleep 1000"});
  for (int i = 0; i < 24; ++i) ok({"snapshot", "--tag", "t" + std::to_string(i)});
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "long", "--result", "done"});
  std::string newest = ok({"log", "-n", "1"});
  EXPECT_EQ(lines_of(newest).size(), 3u) << newest;
  EXPECT_NE(newest.find("manual   tag:t23"), std::string::npos) << newest;
  std::string all = ok({"log"});
  EXPECT_NE(all.find("  long              Bash  ok       sleep 1000\n"), std::string::npos) << all;
  EXPECT_EQ(ok({"log", "-n", "26"}), all);
}

TEST_F(ReadableOutputTest, RunsAreListedNewestLastWithin100Columns) {
  write_file(config_, "");
  // Started in this order: by name they would be the other way round.
  ok({"snapshot", "--run", "zeta"});
  ok({"snapshot", "--run", "alpha"});
  CommandResult agent =
      shadowbox({"run", "--agent", "claude-sdk", "--run-id",
                 "run-with-a-long-name-20261126-101500-3f2a", "--", "sh", "-c", "exit 0"});
  ASSERT_EQ(agent.exit_code, 0) << agent.err;
  std::string runs = ok({"runs"});
  EXPECT_EQ(too_wide(runs), "") << runs;
  std::vector<std::string> lines = lines_of(runs);
  ASSERT_EQ(lines.size(), 4u) << runs;
  EXPECT_EQ(lines[0].rfind("STARTED (UTC)     STATUS    CALLS  FAILED  COST-USD  RUN", 0), 0u)
      << runs;
  EXPECT_NE(lines[1].find("  zeta"), std::string::npos) << runs;
  EXPECT_NE(lines[2].find("  alpha"), std::string::npos) << runs;
  EXPECT_NE(lines[3].find("  complete      0       0    0.0000  "
                          "run-with-a-long-name-20261126-101500-3f2a"),
            std::string::npos)
      << runs;
  // --wide: every column; --json: the same order, with when each started.
  std::string wide = ok({"runs", "--wide"});
  EXPECT_NE(wide.find("AGENT-SESSION"), std::string::npos) << wide;
  EXPECT_LT(wide.find("zeta"), wide.find("alpha"));
  Poco::JSON::Parser parser;
  auto json = parser.parse(ok({"--json", "runs"})).extract<Poco::JSON::Array::Ptr>();
  ASSERT_EQ(json->size(), 3u);
  EXPECT_EQ(json->getObject(0)->getValue<std::string>("run"), "zeta");
  EXPECT_LT(json->getObject(0)->getValue<std::string>("started_at"),
            json->getObject(1)->getValue<std::string>("started_at"));
}

TEST_F(ReadableOutputTest, StatesOfARunAreItsMovesWithinTheWidthAndNothingLost) {
  write_file(config_, "");
  std::string words;  // 150 characters: the record keeps 200
  for (int i = 0; i < 22; ++i)
    words += (i == 0 ? "" : " ") + std::string("word") + std::to_string(i);
  CommandResult agent =
      shadowbox({"run", "--agent", "claude-sdk", "--run-id", "r", "--", "sh", "-c", "true", words});
  ASSERT_EQ(agent.exit_code, 0) << agent.err;
  std::string states = ok({"states", "r"});
  EXPECT_EQ(too_wide(states), "") << states;
  EXPECT_EQ(states.find("transitions:"), std::string::npos) << "not the machine\n" << states;
  // The long reason goes on below itself, every word of it.
  std::string reason;
  for (const std::string& line : lines_of(states)) {
    std::size_t at = line.find("run started: ");
    if (at != std::string::npos) {
      reason = line.substr(at);
    } else if (!reason.empty() && line.rfind("     ", 0) == 0) {
      reason += " " + line.substr(line.find_first_not_of(' '));
    } else if (!reason.empty()) {
      break;
    }
  }
  EXPECT_EQ(reason, "run started: sh -c true " + words) << states;
}

// A reader that stops reading (`shadowbox show X | head`) is no error for any command that
// prints: each ends quietly with the status a death by SIGPIPE gives, as git does.
TEST_F(ReadableOutputTest, EveryCommandIsQuietWhenItsReaderStopsReading) {
  write_file(config_, "");
  for (int i = 0; i < 50; ++i) write_file(ws_ / ("f" + std::to_string(i)), std::string(100, 'x'));
  ok({"snapshot", "--tag", "one"});
  for (int i = 0; i < 50; ++i) write_file(ws_ / ("f" + std::to_string(i)), std::string(100, 'y'));
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c1", "--tool-name", "Bash"});
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "c1", "--result", "done"});
  CommandResult agent =
      shadowbox({"run", "--agent", "claude-sdk", "--run-id", "r", "--", "sh", "-c", "true"});
  ASSERT_EQ(agent.exit_code, 0) << agent.err;
  std::vector<std::vector<std::string>> commands = {
      {"log"},
      {"log", "--checkpoints"},
      {"--json", "log"},
      {"show", "one"},
      {"show", "post:c1"},
      {"--json", "show", "one"},
      {"diff", "one", "post:c1"},
      {"diff", "--name-status", "one"},
      {"diff", "one"},
      {"runs"},
      {"runs", "--wide"},
      {"--json", "runs"},
      {"states"},
      {"states", "r"},
      {"states", "--mermaid"},
      {"path"},
      {"help"},
      {"help", "log"},
      {"log", "--help"},
      {"--version"},
      {"restore", "one", "--dry-run"},
  };
  for (const std::vector<std::string>& args : commands) {
    std::string name;
    for (const std::string& a : args) name += " " + a;
    fs::path err = temp_ / "stderr";
    std::vector<std::string> argv = {SHADOWBOX_BIN,   "--workspace", ws_.string(),    "--store",
                                     store_.string(), "--config",    config_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    int status = testing_support::run_with_reader_gone(argv, err);
    ASSERT_TRUE(WIFEXITED(status)) << name << ": ended by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 128 + SIGPIPE) << name;
    EXPECT_EQ(testing_support::read_file(err), "") << name;
  }
}

}  // namespace

// Gemini's conversation cut before a tool call (gemini_cut_session), over chats the
// pinned Gemini CLI wrote against the scripted mock (fixtures/mock-gemini): a BeforeTool
// hook copies .gemini/tmp and projects.json at every call, as shadowbox preserves the
// HOME just before it records the call. One run: a prompt, read_file a.txt, a turn of two
// parallel calls (read_file b.txt, list_directory), a turn that says something then reads
// c.txt, "done"; and a session resumed once (its chat rewritten with a "$set" of every
// message). The cut is a new chat under a new session id holding the messages before the
// model turn that made the call; the original is left as it was; what cannot be cut is
// an error and writes nothing. (tests/e2e/gemini_cli_test.cpp resumes a cut session with
// the real CLI.)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem/operations.hpp>

#include "../e2e/agent_harness.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/gemini_adapter.hpp"
#include "sandbox/errors.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using Poco::JSON::Array;
using Poco::JSON::Object;
using testing_support::read_file;
using testing_support::write_file;

constexpr const char* kNewSession = "5eb1a0c4-0000-4000-8000-0000000000aa";

Object::Ptr parse_line(const std::string& line) {
  Poco::JSON::Parser parser;
  return parser.parse(line).extract<Object::Ptr>();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// What the model turns of a chat called, in order: "<tool> <file_path or dir_path>".
std::vector<std::string> calls(const std::string& chat) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> by_turn;
  for (const std::string& line : lines_of(chat)) {
    Object::Ptr record = parse_line(line);
    if (record->optValue<std::string>("type", "") != "gemini") continue;
    std::string id = record->getValue<std::string>("id");
    if (by_turn.count(id) == 0) order.push_back(id);
    by_turn[id].clear();
    auto add = [&](const Object::Ptr& call) {
      Object::Ptr args = call->getObject("args");
      by_turn[id].push_back(call->getValue<std::string>("name") + " " +
                            args->optValue<std::string>("file_path", "") +
                            args->optValue<std::string>("dir_path", ""));
    };
    // The calls the turn made: functionCall parts of its content (as a resume rewrites
    // it) or else, as the CLI reads it, its toolCalls (once they are done).
    Array::Ptr parts = record->getArray("content");
    for (std::size_t i = 0; parts && i < parts->size(); ++i) {
      Object::Ptr part = parts->getObject(static_cast<unsigned>(i));
      if (part && part->getObject("functionCall")) add(part->getObject("functionCall"));
    }
    Array::Ptr tool_calls = by_turn[id].empty() ? record->getArray("toolCalls") : nullptr;
    for (std::size_t i = 0; tool_calls && i < tool_calls->size(); ++i) {
      add(tool_calls->getObject(static_cast<unsigned>(i)));
    }
  }
  std::vector<std::string> out;
  for (const std::string& id : order) out.insert(out.end(), by_turn[id].begin(), by_turn[id].end());
  return out;
}

// The chats under home/.gemini/tmp.
std::vector<fs::path> chats(const fs::path& home) {
  std::vector<fs::path> out;
  for (fs::recursive_directory_iterator it(home / ".gemini" / "tmp"), end; it != end; ++it) {
    if (it->path().filename().string().starts_with("session-")) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The chat of session in home whose header names it and that holds a model turn.
fs::path chat_of(const fs::path& home, const std::string& session) {
  for (const fs::path& file : chats(home)) {
    std::string text = read_file(file);
    if (parse_line(lines_of(text).front())->optValue<std::string>("sessionId", "") == session &&
        text.find("\"type\":\"gemini\"") != std::string::npos) {
      return file;
    }
  }
  return {};
}

// Runs the pinned CLI in ws with HOME home against a mock playing steps; args after
// `gemini`. Its output, or a failure.
testing_support::CommandResult run_gemini(const fs::path& dir, const fs::path& home,
                                          const std::string& steps, std::vector<std::string> args) {
  write_file(dir / "scenario.json", "{\"steps\":[" + steps + "]}");
  e2e::MockServer server(dir / "scenario.json", dir / "mock.log", e2e::MockApi::kGemini);
  std::vector<std::string> argv = {e2e::gemini_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  for (const char* a : {"-y", "-o", "stream-json", "-m", "gemini-2.5-flash"}) argv.push_back(a);
  return testing_support::run_command(
      argv, dir / "ws",
      {"HOME=" + home.string(), "GEMINI_API_KEY=test-key",
       "GOOGLE_API_KEY=", "GOOGLE_GEMINI_BASE_URL=" + server.base_url(),
       "GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_CLI_NO_RELAUNCH=true"},
      "", std::chrono::seconds(120));
}

// A step calling read_file of path; with say, the model says it first.
std::string read_step(const std::string& path, const std::string& say = "") {
  return "{\"tool\":\"read_file\"," + (say.empty() ? "" : "\"say\":\"" + say + "\",") +
         "\"input\":{\"file_path\":\"" + path + "\"}}";
}

// A directory where the CLI runs with a BeforeTool hook taking snapshots.
struct GeminiRun {
  explicit GeminiRun(const fs::path& dir)
      : dir(dir),
        home(dir / "home"),
        snapshots(dir / "snapshots",
                  {{home / ".gemini" / "tmp", ".gemini/tmp"},
                   {home / ".gemini" / "projects.json", ".gemini/projects.json"}}) {
    for (const char* name : {"a.txt", "b.txt", "c.txt"}) write_file(dir / "ws" / name, name);
    write_file(home / ".gemini" / "settings.json",
               "{\"security\":{\"auth\":{\"selectedType\":\"gemini-api-key\"}},"
               "\"general\":{\"sessionRetention\":{\"enabled\":false}},"
               "\"hooks\":{\"BeforeTool\":[{\"matcher\":\".*\",\"hooks\":[{\"name\":\"snapshot\","
               "\"type\":\"command\",\"command\":\"" +
                   snapshots.command() + "\",\"timeout\":30000}]}]}}");
  }
  // The session id of a run's output (its "init" line), "" if it failed.
  static std::string session_of(const testing_support::CommandResult& r) {
    if (r.exit_code != 0) return "";
    return parse_line(r.out.substr(0, r.out.find('\n')))->optValue<std::string>("session_id", "");
  }

  fs::path dir;
  fs::path home;
  e2e::SessionSnapshots snapshots;
  std::string session;
  std::string failure;  // what went wrong running the CLI
};

class GeminiSessionCutTest : public ::testing::Test {
 protected:
  // A run of three steps, the second of two parallel calls: once for the suite.
  static void SetUpTestSuite() {
    suite_ = new testing_support::TempDir("shadowbox-gemini-cut");
    run_ = new GeminiRun(suite_->path());
    if (!fs::exists(e2e::gemini_binary())) return;
    testing_support::CommandResult r =
        run_gemini(run_->dir, run_->home,
                   read_step("a.txt") + ",{\"tools\":[" + read_step("b.txt") +
                       ",{\"tool\":\"list_directory\",\"input\":{\"dir_path\":\".\"}}]}," +
                       read_step("c.txt", "Now the third file.") + ",{\"text\":\"done\"}",
                   {"-p", "do three things"});
    run_->session = GeminiRun::session_of(r);
    if (run_->session.empty()) run_->failure = r.out + r.err;
  }
  static void TearDownTestSuite() {
    delete run_;
    delete suite_;
    run_ = nullptr;
    suite_ = nullptr;
  }

  void SetUp() override {
    ASSERT_TRUE(fs::exists(e2e::gemini_binary())) << "run scripts/setup.sh";
    ASSERT_FALSE(run_->session.empty()) << run_->failure;
  }

  // A HOME of this test: the chats as they were when the BeforeTool hook of the call
  // whose input held text ran.
  fs::path home_at(const std::string& text, const std::string& name) {
    fs::path snapshot = run_->snapshots.home_where(text);
    EXPECT_FALSE(snapshot.empty()) << "no snapshot at " << text;
    fs::path home = temp_ / name;
    testing_support::CommandResult copy =
        testing_support::run_command({"cp", "-R", snapshot.string(), home.string()});
    EXPECT_EQ(copy.exit_code, 0) << copy.err;
    return home;
  }
  hooks::SessionCutPoint point(const std::string& tool) const {
    return hooks::SessionCutPoint{run_->session, "sbx_1_2_3", tool, ""};
  }

  static testing_support::TempDir* suite_;
  static GeminiRun* run_;
  testing_support::TempDir temp_{"shadowbox-gemini-cut-test"};
};

testing_support::TempDir* GeminiSessionCutTest::suite_ = nullptr;
GeminiRun* GeminiSessionCutTest::run_ = nullptr;

TEST_F(GeminiSessionCutTest, ANewChatHoldsTheMessagesBeforeTheCallsTurnAndTheOriginalStays) {
  fs::path home = home_at("c.txt", "at-c");
  fs::path original = chat_of(home, run_->session);
  ASSERT_FALSE(original.empty());
  std::string before = read_file(original);
  // As preserved at pre:c.txt, the chat ends with the model turn that made the call,
  // which does not name its calls yet (they are added when done).
  ASSERT_EQ(calls(before),
            (std::vector<std::string>{"read_file a.txt", "read_file b.txt", "list_directory ."}));

  hooks::SessionCut cut = hooks::gemini_cut_session(home, point("read_file"), kNewSession);
  EXPECT_EQ(cut.session_id, kNewSession);
  EXPECT_TRUE(cut.resume_args.empty());
  EXPECT_EQ(read_file(original), before) << "the original chat must stay as it was";
  fs::path forked = chat_of(home, kNewSession);
  ASSERT_FALSE(forked.empty());
  EXPECT_EQ(forked.parent_path(), original.parent_path());
  EXPECT_TRUE(forked.filename().string().ends_with("-5eb1a0c4.jsonl")) << forked;
  std::string text = read_file(forked);
  EXPECT_EQ(calls(text),
            (std::vector<std::string>{"read_file a.txt", "read_file b.txt", "list_directory ."}));
  std::vector<std::string> lines = lines_of(text);
  Object::Ptr header = parse_line(lines.front());
  Object::Ptr original_header = parse_line(lines_of(before).front());
  EXPECT_EQ(header->getValue<std::string>("sessionId"), kNewSession);
  EXPECT_EQ(header->getValue<std::string>("projectHash"),
            original_header->getValue<std::string>("projectHash"));
  EXPECT_EQ(header->getValue<std::string>("kind"), "main");
  // Each message is the original's record, as last written; the last is what the model
  // was sent after the parallel calls (their responses), not the turn that read c.txt.
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_NE(before.find(lines[i]), std::string::npos) << lines[i];
  }
  EXPECT_EQ(parse_line(lines.back())->getValue<std::string>("type"), "user");
  EXPECT_NE(before.find("Now the third file."), std::string::npos);
  EXPECT_EQ(text.find("Now the third file."), std::string::npos);
  EXPECT_NE(lines.back().find("functionResponse"), std::string::npos) << lines.back();
}

TEST_F(GeminiSessionCutTest, ACallOfAParallelTurnCutsTheWholeTurnAndTheFirstLeavesThePrompt) {
  fs::path home = home_at("list_directory", "at-parallel");
  hooks::gemini_cut_session(home, point("list_directory"), kNewSession);
  EXPECT_EQ(calls(read_file(chat_of(home, kNewSession))),
            (std::vector<std::string>{"read_file a.txt"}));

  fs::path first = home_at("a.txt", "at-a");
  hooks::gemini_cut_session(first, point("read_file"), kNewSession);
  fs::path forked;
  for (const fs::path& file : chats(first)) {
    if (file.filename().string().ends_with("-5eb1a0c4.jsonl")) forked = file;
  }
  ASSERT_FALSE(forked.empty());
  std::string text = read_file(forked);
  EXPECT_EQ(text.find("\"type\":\"gemini\""), std::string::npos) << text;
  EXPECT_NE(text.find("do three things"), std::string::npos) << text;
}

TEST_F(GeminiSessionCutTest, AStrayChatOfTheSessionWithoutModelTurnsIsPassedOver) {
  // A resume in a later minute leaves a chat of the same session holding its header and
  // the session context only, updated later than the original.
  fs::path home = home_at("c.txt", "stray");
  fs::path original = chat_of(home, run_->session);
  std::vector<std::string> lines = lines_of(read_file(original));
  Object::Ptr header = parse_line(lines[0]);
  header->set("lastUpdated", "2099-01-01T00:00:00.000Z");
  std::ostringstream stray;
  header->stringify(stray);
  stray << "\n" << lines[1] << "\n";
  ASSERT_EQ(lines[1].find("\"type\":\"gemini\""), std::string::npos);
  write_file(original.parent_path() /
                 ("session-0000-00-00T00-00-" + run_->session.substr(0, 8) + ".jsonl"),
             stray.str());
  hooks::gemini_cut_session(home, point("read_file"), kNewSession);
  EXPECT_EQ(calls(read_file(chat_of(home, kNewSession))),
            (std::vector<std::string>{"read_file a.txt", "read_file b.txt", "list_directory ."}));
}

TEST_F(GeminiSessionCutTest, TheAdapterForksUnderANewSessionIdItsSessionPathsName) {
  fs::path home = home_at("c.txt", "at-c");
  const hooks::AgentAdapter& gemini = hooks::adapter_for(hooks::AgentKind::kGemini);
  hooks::SessionCut cut = gemini.cut_session(home, point("read_file"));
  ASSERT_EQ(cut.session_id.size(), 36u);
  EXPECT_NE(cut.session_id, run_->session);
  EXPECT_EQ(cut.session_id[14], '4') << cut.session_id;  // a random UUID, as Gemini's
  EXPECT_TRUE(cut.resume_args.empty());
  fs::path forked = chat_of(home, cut.session_id);
  ASSERT_FALSE(forked.empty());
  EXPECT_TRUE(
      gemini.is_session_path(forked.lexically_relative(home).generic_string(), cut.session_id));
  EXPECT_TRUE(gemini.has_session_data(home, cut.session_id));
}

// A resume forks the whole session: a chat under a new id holding every message.
TEST_F(GeminiSessionCutTest, AResumesForkCopiesTheWholeChatUnderANewId) {
  fs::path home = home_at("c.txt", "at-c");
  fs::path original = chat_of(home, run_->session);
  std::string before = read_file(original);
  const hooks::AgentAdapter& gemini = hooks::adapter_for(hooks::AgentKind::kGemini);
  std::optional<hooks::SessionCut> fork = gemini.fork_session(home, run_->session);
  ASSERT_TRUE(fork.has_value());
  EXPECT_NE(fork->session_id, run_->session);
  EXPECT_EQ(read_file(original), before);
  std::string text = read_file(chat_of(home, fork->session_id));
  EXPECT_EQ(calls(text), calls(before)) << "every call of the original";
  EXPECT_NE(text.find("\"sessionId\":\"" + fork->session_id + "\""), std::string::npos) << text;
  EXPECT_TRUE(gemini.has_session_data(home, fork->session_id));
  EXPECT_THROW(gemini.fork_session(home, "00000000-no-such-session"), sandbox::Error);
}

// When the BeforeTool hook of the call whose input held text ran (its input's
// "timestamp", ms): a stand-in for the pre-tool checkpoint's time.
std::chrono::system_clock::time_point hook_time(const e2e::SessionSnapshots& snapshots,
                                                const std::string& text) {
  fs::path snapshot = snapshots.home_where(text);
  std::string stamp =
      parse_line(read_file(snapshot.string() + ".json"))->getValue<std::string>("timestamp");
  std::tm tm{};
  int millis = 0;
  EXPECT_EQ(std::sscanf(stamp.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon,
                        &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis),
            7)
      << stamp;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return std::chrono::system_clock::from_time_t(::timegm(&tm)) + std::chrono::milliseconds(millis);
}

TEST_F(GeminiSessionCutTest, TheCallsTimeFindsItsTurnInAHomePreservedLater) {
  // The HOME as the run left it: its chat ends with the model's last turn ("done"),
  // shaped as a turn about to call a tool is. The call's time tells them apart.
  fs::path home = temp_ / "final";
  fs::create_directories(home / ".gemini");
  ASSERT_EQ(testing_support::run_command({"cp", "-R", (run_->home / ".gemini" / "tmp").string(),
                                          (home / ".gemini" / "tmp").string()})
                .exit_code,
            0);
  hooks::SessionCutPoint at_c = point("read_file");
  at_c.called_at = hook_time(run_->snapshots, "c.txt");
  hooks::gemini_cut_session(home, at_c, kNewSession);
  std::string text = read_file(chat_of(home, kNewSession));
  EXPECT_EQ(calls(text),
            (std::vector<std::string>{"read_file a.txt", "read_file b.txt", "list_directory ."}));
  EXPECT_EQ(text.find("Now the third file."), std::string::npos);
  EXPECT_EQ(text.find("\"done\""), std::string::npos);

  // The parallel turn, found by the time of either of its calls.
  fs::path again = temp_ / "final-again";
  ASSERT_EQ(testing_support::run_command({"cp", "-R", home.string(), again.string()}).exit_code, 0);
  for (const fs::path& file : chats(again)) {
    if (file.filename().string().ends_with("-5eb1a0c4.jsonl")) fs::remove(file);
  }
  hooks::SessionCutPoint at_list = point("list_directory");
  at_list.called_at = hook_time(run_->snapshots, "list_directory");
  hooks::gemini_cut_session(again, at_list, kNewSession);
  EXPECT_EQ(calls(read_file(chat_of(again, kNewSession))),
            (std::vector<std::string>{"read_file a.txt"}));
}

// Expects f to throw Error code with a message holding every text in says, and home to
// be as it was.
template <typename F>
void expect_error(const fs::path& home, sandbox::ErrorCode code,
                  const std::vector<std::string>& says, F f) {
  testing_support::Manifest before = testing_support::take_manifest(home);
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const sandbox::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const std::string& text : says) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(testing_support::describe_difference(before, testing_support::take_manifest(home)), "");
}

TEST_F(GeminiSessionCutTest, WhatCannotBeCutIsAnErrorAndWritesNothing) {
  auto cut = [&](const fs::path& home) {
    return [&, home] { hooks::gemini_cut_session(home, point("read_file"), kNewSession); };
  };
  // No chat of the session.
  fs::path empty = temp_ / "empty";
  fs::create_directories(empty / ".gemini" / "tmp");
  expect_error(empty, sandbox::ErrorCode::kNotFound, {"no chat", run_->session}, cut(empty));

  // A chat that went on after its last model turn: not as at a pre-tool boundary.
  fs::path went_on = home_at("c.txt", "went-on");
  fs::path chat = chat_of(went_on, run_->session);
  write_file(chat, read_file(chat) +
                       "{\"id\":\"u-later\",\"timestamp\":\"2026-11-26T16:20:12.000Z\","
                       "\"type\":\"user\",\"content\":[{\"text\":\"more\"}]}\n");
  expect_error(went_on, sandbox::ErrorCode::kNotFound, {"goes on after", chat.string()},
               cut(went_on));

  // A line that is not JSON.
  fs::path malformed = home_at("c.txt", "malformed");
  chat = chat_of(malformed, run_->session);
  std::vector<std::string> lines = lines_of(read_file(chat));
  lines[2] = "{\"id\":\"x\",";
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  write_file(chat, text);
  expect_error(malformed, sandbox::ErrorCode::kCorrupt, {chat.string(), "line 3"}, cut(malformed));

  // A call made before the chat's first model turn, or by a turn that called another
  // tool.
  fs::path at_c = home_at("c.txt", "by-time");
  hooks::SessionCutPoint too_early = point("read_file");
  too_early.called_at = hook_time(run_->snapshots, "a.txt") - std::chrono::seconds(60);
  expect_error(at_c, sandbox::ErrorCode::kNotFound, {"no model turn made before"},
               [&] { hooks::gemini_cut_session(at_c, too_early, kNewSession); });
  hooks::SessionCutPoint other_tool = point("write_file");
  other_tool.called_at = hook_time(run_->snapshots, "list_directory");
  expect_error(at_c, sandbox::ErrorCode::kNotFound, {"called no write_file"},
               [&] { hooks::gemini_cut_session(at_c, other_tool, kNewSession); });

  // A message without a type.
  fs::path untyped = home_at("c.txt", "untyped");
  chat = chat_of(untyped, run_->session);
  write_file(chat, read_file(chat) + "{\"id\":\"no-type\",\"content\":\"x\"}\n");
  expect_error(untyped, sandbox::ErrorCode::kCorrupt, {chat.string(), "without a type"},
               cut(untyped));
}

// A session resumed once, in a later minute than it began (as resumes are): `gemini
// --resume` rewrites the chat's messages as one "$set" record and leaves a stray chat of
// the same id beside it, holding only the session context.
TEST(GeminiResumedSessionCutTest, TheMessagesOfAResumedChatAreCutAsTheCliReplaysThem) {
  ASSERT_TRUE(fs::exists(e2e::gemini_binary())) << "run scripts/setup.sh";
  testing_support::TempDir temp("shadowbox-gemini-cut-resumed");
  GeminiRun run(temp.path());
  testing_support::CommandResult first = run_gemini(
      run.dir, run.home, read_step("a.txt") + ",{\"text\":\"done\"}", {"-p", "first prompt"});
  std::string session = GeminiRun::session_of(first);
  ASSERT_FALSE(session.empty()) << first.out << first.err;
  // The chat named as if it began in another minute: the resume does not append to it
  // by chance of the clock.
  fs::path began = chat_of(run.home, session);
  ASSERT_FALSE(began.empty());
  fs::rename(began,
             began.parent_path() / ("session-2000-01-01T00-00-" + session.substr(0, 8) + ".jsonl"));
  testing_support::CommandResult second = run_gemini(
      run.dir, run.home, read_step("b.txt") + "," + read_step("c.txt") + ",{\"text\":\"done\"}",
      {"--resume", session, "-p", "second prompt"});
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;

  fs::path snapshot = run.snapshots.home_where("c.txt");
  ASSERT_FALSE(snapshot.empty());
  fs::path original = chat_of(snapshot, session);
  ASSERT_FALSE(original.empty());
  std::string before = read_file(original);
  ASSERT_NE(before.find("{\"$set\":{\"messages\":["), std::string::npos)
      << "the shape this test is about";
  ASSERT_EQ(chats(snapshot).size(), 2u) << "a stray chat beside it";
  hooks::SessionCutPoint at_c{session, "sbx_1", "read_file", ""};
  at_c.called_at = hook_time(run.snapshots, "c.txt");  // the rewritten messages' times too
  hooks::gemini_cut_session(snapshot, at_c, kNewSession);
  std::string text = read_file(chat_of(snapshot, kNewSession));
  EXPECT_EQ(calls(text), (std::vector<std::string>{"read_file a.txt", "read_file b.txt"}));
  EXPECT_NE(text.find("first prompt"), std::string::npos);
  EXPECT_NE(text.find("second prompt"), std::string::npos);
  EXPECT_EQ(read_file(original), before);
}

}  // namespace

// `shadowbox rewind` with the real Claude Code CLI: a three-call run rewound to the
// second call's pre_tool checkpoint starts a new run whose workspace and session are the
// checkpoint's and whose model is sent the conversation up to the first call only; the
// rewound run stays as it was; what cannot be rewound is refused by name.
#include <sstream>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include "agent_harness.hpp"
#include "fsnap/shadow_repo.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/home_preservation.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;

class RewindTest : public e2e::ShadowboxTest {
 protected:
  RewindTest() { hooks::register_agent_run_slice_types(); }

  void start_mock(const std::string& name, const std::string& scenario) {
    testing_support::write_file(temp_ / (name + ".json"), scenario);
    server_ = std::make_unique<e2e::MockServer>(temp_ / (name + ".json"), temp_ / (name + ".log"));
  }
  std::vector<std::string> env() const override {
    std::vector<std::string> out = e2e::claude_env(*server_, temp_ / "user-home");
    std::string tools = std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin";
    const char* path = std::getenv("PATH");
    out.push_back("PATH=" + tools + ":" + (path ? path : "/usr/bin:/bin"));
    return out;
  }
  std::string path(const std::string& rel) const { return (ws_ / rel).string(); }
  Poco::JSON::Object::Ptr json_object(const std::vector<std::string>& args) {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Poco::JSON::Parser parser;
    return parser.parse(r.out).extract<Poco::JSON::Object::Ptr>();
  }
  Poco::JSON::Array::Ptr json_array(const std::vector<std::string>& args) {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Poco::JSON::Parser parser;
    return parser.parse(r.out).extract<Poco::JSON::Array::Ptr>();
  }

  // `runs` and `states` of the fork "fork" of run r1 at pre:toolu_two (checkpoint
  // pre_id), and r1 as it was (parent_checkpoints).
  void expect_listed_as_fork(const std::string& pre_id, std::size_t parent_checkpoints) {
    // `runs` names the fork's parent and the point it was taken from; the rewound run is
    // as it was.
    Poco::JSON::Array::Ptr runs = json_array({"--json", "runs"});
    bool found = false;
    for (std::size_t i = 0; i < runs->size(); ++i) {
      Poco::JSON::Object::Ptr info = runs->getObject(static_cast<unsigned>(i));
      if (info->getValue<std::string>("run") == "fork") {
        found = true;
        Poco::JSON::Object::Ptr from = info->getObject("forked_from");
        ASSERT_FALSE(from.isNull());
        EXPECT_EQ(from->getValue<std::string>("run"), "r1");
        EXPECT_EQ(from->getValue<std::string>("tool_call_id"), "toolu_two");
        EXPECT_EQ(from->getValue<std::string>("checkpoint"), pre_id);
        EXPECT_EQ(info->getValue<std::string>("status"), "complete");
      } else if (info->getValue<std::string>("run") == "r1") {
        EXPECT_TRUE(info->isNull("forked_from"));
      }
    }
    EXPECT_TRUE(found);
    EXPECT_EQ(json_array({"--json", "log", "--run", "r1"})->size(), parent_checkpoints);
    // The fork's lifecycle is its own: started, then complete — never a crash of the
    // rewound run's supervisor.
    CommandResult states = shadowbox({"--json", "states", "fork"});
    ASSERT_EQ(states.exit_code, 0) << states.err;
    EXPECT_EQ(e2e::lifecycle_path(states.out), std::vector<std::string>({"running", "complete"}))
        << states.out;
    CommandResult table = shadowbox({"runs"});
    EXPECT_NE(table.out.find("fork: forked from run r1 at pre:toolu_two"), std::string::npos)
        << table.out;
  }
  // What cannot be rewound is refused, naming why, and leaves no run behind.
  void expect_refusals() {
    CommandResult post = shadowbox({"rewind", "r1", "--to", "post:toolu_two", "--run-id", "x1"});
    EXPECT_EQ(post.exit_code, 1);
    EXPECT_NE(post.err.find("is a post_tool checkpoint"), std::string::npos) << post.err;
    CommandResult other = shadowbox({"rewind", "fork", "--to", "pre:toolu_two", "--run-id", "x2"});
    EXPECT_EQ(other.exit_code, 1);
    EXPECT_NE(other.err.find("is a checkpoint of run 'r1'"), std::string::npos) << other.err;
    CommandResult taken = shadowbox({"rewind", "r1", "--to", "pre:toolu_two", "--run-id", "fork"});
    EXPECT_EQ(taken.exit_code, 1);
    EXPECT_NE(taken.err.find("exists already"), std::string::npos) << taken.err;
    CommandResult no_to = shadowbox({"rewind", "r1"});
    EXPECT_EQ(no_to.exit_code, 2) << no_to.err;
    for (const char* run : {"x1", "x2"}) {
      EXPECT_FALSE(fs::exists(store_ / "runs" / run)) << run;
    }
    EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "one\n");
  }

  std::unique_ptr<e2e::MockServer> server_;
};

std::vector<std::string> strings(const Poco::JSON::Array::Ptr& a) {
  std::vector<std::string> out;
  for (std::size_t i = 0; a && i < a->size(); ++i) {
    out.push_back(a->getElement<std::string>(static_cast<unsigned>(i)));
  }
  return out;
}

TEST_F(RewindTest, RewindsAThreeCallRunToTheSecondCall) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  // The second call's input makes the transcript large enough to be preserved in chunks
  // (runs/src/home_chunks.hpp): the rewind joins them before it cuts the conversation.
  std::string two;
  for (int i = 0; i < 80000; ++i) two += "two\\n";
  start_mock("first", R"({"steps":[
    {"tool":"Write","id":"toolu_one","input":{"file_path":")" +
                          path("a.txt") + R"(","content":"one\n"}},
    {"tool":"Write","id":"toolu_two","input":{"file_path":")" +
                          path("b.txt") + R"(","content":")" + two + R"("}},
    {"tool":"Bash","id":"toolu_three","input":{"command":"echo three > c.txt","description":"c"}},
    {"text":"done"}]})");
  CommandResult r = shadowbox(
      {"run", "--run-id", "r1", "--", "claude", "-p", "go", "--dangerously-skip-permissions"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_TRUE(fs::exists(ws_ / "c.txt"));
  std::size_t checkpoints = json_array({"--json", "log", "--run", "r1"})->size();
  // Every boundary names the conversation it was recorded at.
  Poco::JSON::Object::Ptr pre = json_object({"--json", "show", "pre:toolu_two"});
  std::string home = pre->getObject("ledger")->getValue<std::string>("home");
  EXPECT_EQ(home.size(), 40u);
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store_ / "repo.git", false);
  std::optional<std::string> newest = runs::preserved_home(repo, "r1");
  ASSERT_TRUE(newest.has_value());
  bool chunked = false;
  for (const fsnap::TreeChange& c : repo.diff_trees("", *newest)) {
    chunked = chunked || c.path.find(".jsonl.shadowbox-chunks/000001") != std::string::npos;
  }
  EXPECT_TRUE(chunked) << "the transcript is kept in chunks";

  start_mock("second", R"({"steps":[{"text":"rewound"}]})");
  CommandResult rewound = shadowbox(
      {"rewind", "r1", "--to", "pre:toolu_two", "--run-id", "fork", "--", "-p", "try again"});
  ASSERT_EQ(rewound.exit_code, 0) << rewound.out << rewound.err;
  EXPECT_NE(rewound.err.find("cut just before the call"), std::string::npos) << rewound.err;

  // The model's next request holds the first call and its result, and nothing of the
  // second or the third; then the new prompt.
  std::vector<Poco::JSON::Object::Ptr> requests = e2e::main_requests(server_->requests());
  ASSERT_FALSE(requests.empty());
  EXPECT_EQ(strings(requests.front()->getArray("tool_use_ids")),
            std::vector<std::string>({"toolu_one"}));
  EXPECT_EQ(strings(requests.front()->getArray("tool_result_ids")),
            std::vector<std::string>({"toolu_one"}));
  EXPECT_EQ(requests.front()->getValue<std::string>("last_user_text"), "try again");

  // The workspace is the checkpoint's: the first call's file, not the later ones.
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "one\n");
  EXPECT_FALSE(fs::exists(ws_ / "b.txt"));
  EXPECT_FALSE(fs::exists(ws_ / "c.txt"));
  // The session too: the fork's restore holds the checkpoint's session, slice for slice.
  std::string restored;
  std::istringstream fork_log(shadowbox({"log", "--run", "fork", "--checkpoints"}).out);
  for (std::string line; std::getline(fork_log, line);) {
    if (line.find("rewound from run r1 at pre:toolu_two") != std::string::npos) {
      restored = line.substr(0, line.find(' '));
    }
  }
  ASSERT_FALSE(restored.empty()) << "no checkpoint of the fork says where it was rewound from";
  CommandResult session = shadowbox({"diff", "--session", "pre:toolu_two", restored});
  EXPECT_EQ(session.exit_code, 0) << session.err;
  EXPECT_EQ(session.out, "") << "the fork's session differs from the checkpoint's";

  expect_listed_as_fork(pre->getValue<std::string>("id"), checkpoints);
  expect_refusals();
}

// A restore from another terminal while the agent works: the agent's next tool call is
// answered with what changed and why — the model reads it in its next request, the
// person sees it as Claude Code's system message.
TEST_F(RewindTest, ARestoreFromAnotherTerminalIsToldToTheLiveAgent) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  std::vector<std::string> restore = shadowbox_argv({"restore", "pre:toolu_two"});
  std::string argv;
  for (const std::string& a : restore) argv += (argv.empty() ? "\"" : ",\"") + a + "\"";
  start_mock("live", R"({"steps":[
    {"tool":"Write","id":"toolu_one","input":{"file_path":")" +
                         path("a.txt") + R"(","content":"one\n"}},
    {"tool":"Write","id":"toolu_two","input":{"file_path":")" +
                         path("b.txt") + R"(","content":"two\n"}},
    {"tool":"Bash","id":"toolu_three","input":{"command":"ls","description":"ls"},
     "before":{"run":[)" +
                         argv + R"(]}},
    {"text":"done"}]})");
  CommandResult r =
      shadowbox({"run", "--run-id", "live", "--", "claude", "-p", "go",
                 "--dangerously-skip-permissions", "--output-format", "stream-json", "--verbose"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string ran = testing_support::read_file(temp_ / "mock-run.log");
  ASSERT_NE(ran.find("status 0"), std::string::npos) << ran;
  EXPECT_FALSE(fs::exists(ws_ / "b.txt")) << "the restore undid the second call";
  // The model's request after the third call holds what changed, and why.
  std::vector<Poco::JSON::Object::Ptr> requests = e2e::main_requests(server_->requests());
  ASSERT_EQ(requests.size(), 4u);
  std::ostringstream last;
  requests.back()->stringify(last);
  EXPECT_NE(last.str().find("changed from outside this run"), std::string::npos) << last.str();
  EXPECT_NE(last.str().find("D b.txt"), std::string::npos) << last.str();
  EXPECT_NE(last.str().find("shadowbox restore"), std::string::npos) << last.str();
  // Told once: the request before did not have it (it was not done yet).
  std::ostringstream before;
  requests[2]->stringify(before);
  EXPECT_EQ(before.str().find("changed from outside this run"), std::string::npos);
  // The person saw it in Claude Code's own place for it.
  EXPECT_NE(r.out.find("changed from outside this run"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(store_ / "runs/live/notices") &&
               !fs::is_empty(store_ / "runs/live/notices"))
      << "a notice was left untaken";
}

}  // namespace

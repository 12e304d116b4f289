// Parity: the same tool calls through the in-process ToolRunner and through the CLI
// path — each tool run as an external process between `snapshot --phase pre_tool` and
// `snapshot --phase post_tool` / `rollback CALL_ID` — go through the one transaction
// core and leave identical files, identical STATE and LOG slices and identical ledger
// records: for a success, a failure rolled back, a failure kept by configuration
// (rollback.keep_failed_tools) and a failure whose rollback is refused because a call
// that ran meanwhile (nested in it) changed files.
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "embed/agent_slices.hpp"
#include "embed/tool_runner.hpp"
#include "fsnap/host_filesystem.hpp"
#include "runs/ledger_run.hpp"
#include "sandbox/ledger.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace sandbox;
using namespace runs;
using namespace embed;
using namespace statekit;
using testing_support::run_command;

const std::string kWriteParams = "{\"file_path\":\"out.txt\"}";
const std::string kBashParams = "{\"command\":\"break things\"}";
const std::string kLintParams = "{\"command\":\"lint --fix\"}";
const std::string kOuterParams = "{\"prompt\":\"delegate\"}";
const std::string kNestedParams = "{\"file_path\":\"nested.txt\"}";

// One side of the comparison: a workspace, its store and a config that keeps the
// failures of Lint.
struct Side {
  testing_support::TempDir dir;
  fs::path ws = dir / "ws";
  fs::path store_dir = dir / "store";
  fs::path config = dir / "shadowbox.yaml";

  Side() {
    fs::create_directories(ws);
    testing_support::write_file(ws / "file.txt", "original\n");
    testing_support::write_file(ws / "src/main.c", "int main(void) { return 0; }\n");
    testing_support::write_file(config, "hooks:\n  keep_failed_tools: [Lint]\n");
  }
  fsnap::Store store() const { return fsnap::Store::open(store_dir, ws, true); }

  // The starting point both sides share: a checkpoint whose record holds a Plan.
  void seed_session(const Plan& plan) const {
    register_agent_slice_types();
    LedgerRun run(store(), {});
    run.transactions().checkpoint(
        {.tag = "start", .phase = fsnap::Phase::kManual},
        [&](Session& session) { session.seed<Plan>({plan}); }, "");
  }
};

// What must be equal between the two sides about one record.
std::string describe(const LedgerRecord& r, const Ledger& ledger) {
  const fsnap::ShadowRepo& repo = ledger.repo();
  std::string out = std::string(fsnap::to_string(r.phase)) + " " + r.tool_call_id + " " +
                    r.tool_name + " input=" + r.input_summary +
                    " success=" + (r.success ? (*r.success ? "true" : "false") : "none") +
                    " result=" + r.result_summary + " elapsed=" + (r.elapsed_ms ? "yes" : "no") +
                    " tree=" + repo.read_checkpoint(r.commit).tree;
  SessionSnapshot s = ledger.session(r);
  for (const Plan& p : s.slice<Plan>().to_vector()) out += " plan=" + p.objective;
  for (const ToolInvoked& t : s.slice<ToolInvoked>().to_vector()) {
    out += " log=" + t.tool_call_id + "/" + t.tool_name + "/" + t.params + "/" +
           (t.success ? "ok" : "failed") + "/" + t.result_summary;
  }
  for (const auto& [type, policy] : s.policies) {
    out += " " + SliceTypes::name_of(type) + ":" + std::string(to_string(policy));
  }
  return out;
}

std::vector<std::string> describe_ledger(const Side& side) {
  Ledger ledger = Ledger::of(side.store());
  std::vector<std::string> out;
  for (const LedgerRecord& r : ledger.records("default")) out.push_back(describe(r, ledger));
  return out;
}

testing_support::CommandResult shadowbox(const Side& side, std::vector<std::string> args) {
  std::vector<std::string> argv = {SHADOWBOX_BIN,       "--workspace",           side.ws.string(),
                                   "--store",           side.store_dir.string(), "--config",
                                   side.config.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  testing_support::CommandResult r = run_command(argv, side.ws, {"SHADOWBOX_NO_PROGRESS=1"});
  EXPECT_EQ(r.exit_code, 0) << args.at(0) << ": " << r.err;
  return r;
}

// Runs a shell command as the external tool; returns its exit code.
int external_tool(const Side& side, const std::string& script) {
  return run_command({"sh", "-c", script}, side.ws).exit_code;
}

// The calls through the in-process ToolRunner, with the policy the config file states;
// the rollback decision of each failed call.
std::vector<RollbackDecision::Kind> run_in_process(const Side& a) {
  std::vector<RollbackDecision::Kind> decisions;
  auto host = std::make_shared<fsnap::HostFilesystem>(a.store(), fsnap::CaptureOptions{});
  ResourceRegistry resources;
  resources.put<fsnap::Filesystem>(host, "filesystem");
  Ledger ledger = Ledger::of(a.store());
  auto session = Session::from_snapshot(ledger.session(*ledger.latest("default")));
  ExecutionState state(session, std::move(resources), std::make_shared<fsnap::SystemClock>(), 7);
  auto write = [](const std::string& path, const std::string& text) {
    return [path, text](const ToolCall&, ToolContext& ctx) {
      ctx.state.resources().get<fsnap::Filesystem>()->write(path, text);
      return ToolResult{true, "wrote " + path, ""};
    };
  };
  std::map<std::string, Tool> tools = {
      {"Write", Tool{nullptr, write("out.txt", "hello")}},
      {"Nested", Tool{nullptr, write("nested.txt", "nested\n")}},
      {"Bash", Tool{nullptr,
                    [](const ToolCall&, ToolContext& ctx) {
                      auto fs = ctx.state.resources().get<fsnap::Filesystem>();
                      fs->write("junk.txt", "junk\n");
                      fs->write("file.txt", "broken\n");
                      return ToolResult{false, "exit 1", ""};
                    }}},
      {"Lint", Tool{nullptr,
                    [](const ToolCall&, ToolContext& ctx) {
                      ctx.state.resources().get<fsnap::Filesystem>()->write("lint.log",
                                                                            "2 errors\n");
                      return ToolResult{false, "exit 2", ""};
                    }}},
      {"Task", Tool{nullptr, [](const ToolCall&, ToolContext& ctx) {
                      ctx.runner.execute({"call_5", "Nested", kNestedParams});
                      ctx.state.resources().get<fsnap::Filesystem>()->write("outer.txt", "x\n");
                      return ToolResult{false, "exit 4", ""};
                    }}}};
  ToolRunner runner(state, tools, "parity", "default", RollbackPolicy{true, {"Lint"}});
  for (const ToolCall& call :
       {ToolCall{"call_1", "Write", kWriteParams}, ToolCall{"call_2", "Bash", kBashParams},
        ToolCall{"call_3", "Lint", kLintParams}, ToolCall{"call_4", "Task", kOuterParams}}) {
    runner.execute(call);
    if (runner.last_decision()) decisions.push_back(runner.last_decision()->kind);
  }
  return decisions;
}

// The same calls through the CLI, with the tools as external processes.
void run_through_cli(const Side& b) {
  auto pre = [&](const std::string& id, const std::string& tool, const std::string& input,
                 const std::string& parent = "") {
    std::vector<std::string> args = {"snapshot", "--phase",     "pre_tool", "--tool-call-id",
                                     id,         "--tool-name", tool,       "--input",
                                     input};
    if (!parent.empty()) args.insert(args.end(), {"--parent-call-id", parent});
    shadowbox(b, args);
  };
  pre("call_1", "Write", kWriteParams);
  ASSERT_EQ(external_tool(b, "printf hello > out.txt"), 0);
  shadowbox(b, {"snapshot", "--phase", "post_tool", "--tool-call-id", "call_1", "--result",
                "wrote out.txt"});
  pre("call_2", "Bash", kBashParams);
  ASSERT_NE(external_tool(b, "echo junk > junk.txt; echo broken > file.txt; exit 1"), 0);
  std::string rolled = shadowbox(b, {"rollback", "call_2", "--result", "exit 1"}).out;
  EXPECT_NE(rolled.find("rolled back tool call call_2"), std::string::npos) << rolled;
  pre("call_3", "Lint", kLintParams);
  ASSERT_NE(external_tool(b, "echo '2 errors' > lint.log; exit 2"), 0);
  testing_support::CommandResult kept = shadowbox(b, {"rollback", "call_3", "--result", "exit 2"});
  EXPECT_NE(kept.err.find("not rolled back by configuration"), std::string::npos) << kept.err;
  pre("call_4", "Task", kOuterParams);
  pre("call_5", "Nested", kNestedParams, "call_4");
  ASSERT_EQ(external_tool(b, "echo nested > nested.txt"), 0);
  shadowbox(b, {"snapshot", "--phase", "post_tool", "--tool-call-id", "call_5", "--result",
                "wrote nested.txt"});
  ASSERT_EQ(external_tool(b, "echo x > outer.txt"), 0);
  Poco::JSON::Parser parser;
  auto outer =
      parser.parse(shadowbox(b, {"--json", "rollback", "call_4", "--result", "exit 4"}).out)
          .extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(outer->getValue<std::string>("outcome"), "rolled_back");
  EXPECT_EQ(outer->getArray("kept")->size(), 0u);
}

// Identical files: call_2 and call_4 (with its nested call_5) rolled back; call_3's
// changes kept.
void expect_same_files(const Side& a, const Side& b) {
  EXPECT_EQ(testing_support::describe_difference(testing_support::take_manifest(a.ws),
                                                 testing_support::take_manifest(b.ws)),
            "");
  EXPECT_EQ(testing_support::read_file(b.ws / "file.txt"), "original\n");
  EXPECT_FALSE(fs::exists(b.ws / "junk.txt"));
  EXPECT_TRUE(fs::exists(b.ws / "lint.log"));
  EXPECT_FALSE(fs::exists(b.ws / "nested.txt"));
  EXPECT_FALSE(fs::exists(b.ws / "outer.txt"));
}

// Identical ledger records, session (STATE and LOG slices) included.
void expect_same_ledgers(const Side& a, const Side& b) {
  std::vector<std::string> ledger_a = describe_ledger(a);
  std::vector<std::string> ledger_b = describe_ledger(b);
  // start, pre/post call_1, pre/safety/checkpoint call_2 (the safety checkpoint before the
  // rollback has its record too), pre/post call_3, pre call_4, pre/post call_5,
  // safety/checkpoint call_4
  ASSERT_EQ(ledger_a.size(), 13u);
  ASSERT_EQ(ledger_b.size(), ledger_a.size());
  for (std::size_t i = 0; i < ledger_a.size(); ++i) {
    EXPECT_EQ(ledger_a[i], ledger_b.at(i)) << "record " << i;
  }
  EXPECT_NE(ledger_b[5].find("log=call_2/Bash/" + kBashParams + "/failed/exit 1"),
            std::string::npos)
      << ledger_b[5];
  EXPECT_NE(ledger_b[7].find("result=not rolled back by configuration: exit 2"), std::string::npos)
      << ledger_b[7];
  EXPECT_NE(ledger_b[12].find("checkpoint call_4 Task"), std::string::npos) << ledger_b[12];
  EXPECT_NE(ledger_b[12].find("result=exit 4"), std::string::npos) << ledger_b[12];
}

// `show --json` exposes the record with its session; `log` shows the outcomes, by call
// and by checkpoint.
void expect_cli_views(const Side& b) {
  Poco::JSON::Parser parser;
  auto shown = parser.parse(shadowbox(b, {"--json", "show", "post:call_1"}).out)
                   .extract<Poco::JSON::Object::Ptr>();
  Poco::JSON::Object::Ptr ledger = shown->getObject("ledger");
  ASSERT_FALSE(ledger.isNull());
  EXPECT_EQ(ledger->getValue<std::string>("result_summary"), "wrote out.txt");
  EXPECT_TRUE(ledger->getObject("session")->has("slices"));
  // `log` shows the outcomes: by call, and by checkpoint.
  std::string log = shadowbox(b, {"log"}).out;
  EXPECT_NE(log.find("  call_1            Write   ok           out.txt\n"), std::string::npos)
      << log;
  EXPECT_NE(log.find("  call_2            Bash    rolled back  break things\n"), std::string::npos)
      << log;
  std::string checkpoints = shadowbox(b, {"log", "--checkpoints"}).out;
  EXPECT_NE(checkpoints.find("post_tool Write call_1"), std::string::npos) << checkpoints;
  EXPECT_NE(checkpoints.find("failed"), std::string::npos) << checkpoints;
}

TEST(ParityTest, InProcessAndCliPathsLeaveIdenticalState) {
  const Plan plan{"parity", "active", {PlanStep{"write", false}}};
  Side a;
  a.seed_session(plan);
  // The failed outer call is rolled back whole, with what its nested call changed.
  EXPECT_EQ(run_in_process(a), (std::vector<RollbackDecision::Kind>{
                                   RollbackDecision::Kind::kRollBack, RollbackDecision::Kind::kKeep,
                                   RollbackDecision::Kind::kRollBack}));
  Side b;
  b.seed_session(plan);
  ASSERT_NO_FATAL_FAILURE(run_through_cli(b));
  expect_same_files(a, b);
  ASSERT_NO_FATAL_FAILURE(expect_same_ledgers(a, b));
  expect_cli_views(b);
}

}  // namespace

// Parity (issue 3): the same tool outcomes through the in-process ToolRunner and
// through the CLI path — a tool run as an external process between
// `snapshot --phase pre_tool` and `snapshot --phase post_tool` / `restore pre:<id>` —
// leave identical files, identical STATE slices and identical ledger records.
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/host_filesystem.hpp"
#include "sandbox/checkpoint_store.hpp"
#include "sandbox/ledger.hpp"
#include "sandbox/tool_runner.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace sandbox;
using testing_support::run_command;

// One side of the comparison: a workspace and its store.
struct Side {
  testing_support::TempDir dir;
  fs::path ws = dir / "ws";
  fs::path store_dir = dir / "store";

  Side() {
    fs::create_directories(ws);
    testing_support::write_file(ws / "file.txt", "original\n");
    testing_support::write_file(ws / "src/main.c", "int main(void) { return 0; }\n");
  }
  fsnap::Store store() const { return fsnap::Store::open(store_dir, ws, true); }

  // The starting point both sides share: a checkpoint whose record holds a Plan.
  void seed_session(const Plan& plan) const {
    fsnap::HostFilesystem host(store(), {});
    Session session;
    session.seed<Plan>({plan});
    session.register_slice<ToolInvoked>();
    fsnap::Checkpoint c = host.checkpoint({.tag = "start"});
    Ledger(store()).write(LedgerRecord::for_checkpoint(c, session.snapshot({}, true)));
  }
};

// What must be equal between the two sides about one record.
std::string describe(const LedgerRecord& r, const fsnap::ShadowRepo& repo) {
  std::string out = std::string(fsnap::to_string(r.phase)) + " " + r.tool_call_id + " " +
                    r.tool_name + " input=" + r.input_summary +
                    " success=" + (r.success ? (*r.success ? "true" : "false") : "none") +
                    " result=" + r.result_summary + " elapsed=" + (r.elapsed_ms ? "yes" : "no") +
                    " tree=" + repo.read_checkpoint(r.commit).tree;
  SessionSnapshot s = r.session();
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
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(side.store_dir / "repo.git", false);
  std::vector<std::string> out;
  for (const LedgerRecord& r : Ledger(side.store()).records("default")) {
    out.push_back(describe(r, repo));
  }
  return out;
}

testing_support::CommandResult shadowbox(const Side& side, std::vector<std::string> args) {
  std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", side.ws.string(), "--store",
                                   side.store_dir.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  testing_support::CommandResult r =
      run_command(argv, side.ws, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  EXPECT_EQ(r.exit_code, 0) << args.at(0) << ": " << r.err;
  return r;
}

// Runs a shell command as the external tool; returns its exit code.
int external_tool(const Side& side, const std::string& script) {
  return run_command({"sh", "-c", script}, side.ws).exit_code;
}

TEST(ParityTest, InProcessAndCliPathsLeaveIdenticalState) {
  const Plan plan{"parity", "active", {PlanStep{"write", false}}};
  const std::string write_params = "{\"file_path\":\"out.txt\"}";
  const std::string bash_params = "{\"command\":\"break things\"}";

  // In process.
  Side a;
  a.seed_session(plan);
  {
    auto host = std::make_shared<fsnap::HostFilesystem>(a.store(), fsnap::CaptureOptions{});
    Ledger ledger(a.store());
    auto checkpoints = std::make_shared<CheckpointStore>();
    checkpoints->set_sink(ledger.sink());
    ResourceRegistry resources;
    resources.put<fsnap::Filesystem>(host, "filesystem");
    auto session = Session::from_snapshot(ledger.latest("default")->session());
    ExecutionState state(session, std::move(resources), std::make_shared<SystemClock>(), 7,
                         checkpoints);
    std::map<std::string, Tool> tools = {
        {"Write", Tool{nullptr,
                       [](const ToolCall&, ToolContext& ctx) {
                         ctx.state.resources().get<fsnap::Filesystem>()->write("out.txt", "hello");
                         return ToolResult{true, "wrote out.txt", ""};
                       }}},
        {"Bash", Tool{nullptr, [](const ToolCall&, ToolContext& ctx) {
                        auto fs = ctx.state.resources().get<fsnap::Filesystem>();
                        fs->write("junk.txt", "junk\n");
                        fs->write("file.txt", "broken\n");
                        return ToolResult{false, "exit 1", ""};
                      }}}};
    ToolRunner runner(state, tools, "parity");
    EXPECT_TRUE(runner.execute({"call_1", "Write", write_params}).success);
    EXPECT_FALSE(runner.execute({"call_2", "Bash", bash_params}).success);
  }

  // Through the CLI, with the tools as external processes.
  Side b;
  b.seed_session(plan);
  shadowbox(b, {"snapshot", "--phase", "pre_tool", "--tool-call-id", "call_1", "--tool-name",
                "Write", "--input", write_params});
  ASSERT_EQ(external_tool(b, "printf hello > out.txt"), 0);
  shadowbox(b, {"snapshot", "--phase", "post_tool", "--tool-call-id", "call_1", "--result",
                "wrote out.txt"});
  shadowbox(b, {"snapshot", "--phase", "pre_tool", "--tool-call-id", "call_2", "--tool-name",
                "Bash", "--input", bash_params});
  ASSERT_NE(external_tool(b, "echo junk > junk.txt; echo broken > file.txt; exit 1"), 0);
  shadowbox(b, {"restore", "pre:call_2", "--result", "exit 1"});

  // Identical files...
  EXPECT_EQ(testing_support::describe_difference(testing_support::take_manifest(a.ws),
                                                 testing_support::take_manifest(b.ws)),
            "");
  EXPECT_EQ(testing_support::read_file(b.ws / "file.txt"), "original\n");
  EXPECT_FALSE(fs::exists(b.ws / "junk.txt"));
  // ...and identical ledger records, session (STATE and LOG slices) included.
  std::vector<std::string> ledger_a = describe_ledger(a);
  std::vector<std::string> ledger_b = describe_ledger(b);
  ASSERT_EQ(ledger_a.size(), 5u);  // start, pre/post call_1, pre/checkpoint call_2
  for (std::size_t i = 0; i < ledger_a.size(); ++i) {
    EXPECT_EQ(ledger_a[i], ledger_b.at(i)) << "record " << i;
  }
  EXPECT_NE(ledger_b.back().find("log=call_2/Bash/" + bash_params + "/failed/exit 1"),
            std::string::npos)
      << ledger_b.back();

  // `show --json` exposes the record with its session.
  Poco::JSON::Parser parser;
  auto shown = parser.parse(shadowbox(b, {"--json", "show", "post:call_1"}).out)
                   .extract<Poco::JSON::Object::Ptr>();
  Poco::JSON::Object::Ptr ledger = shown->getObject("ledger");
  ASSERT_FALSE(ledger.isNull());
  EXPECT_EQ(ledger->getValue<std::string>("result_summary"), "wrote out.txt");
  EXPECT_TRUE(ledger->getObject("session")->has("slices"));
  // `log` shows the outcomes.
  std::string log = shadowbox(b, {"log"}).out;
  EXPECT_NE(log.find("post_tool Write call_1"), std::string::npos) << log;
  EXPECT_NE(log.find("failed"), std::string::npos) << log;
}

}  // namespace

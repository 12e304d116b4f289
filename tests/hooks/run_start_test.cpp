// The start of a run is a saga (hooks::run_agent): a step that fails part-way leaves
// nothing half-done. Here the hooks step fails (the agent's settings file is not JSON),
// so the agent never starts; run_resume_test sees a failing agent step through
// `shadowbox run`.
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "hooks/agent_run.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/run_meta.hpp"
#include "sandbox/ledger.hpp"
#include "statekit/saga.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;

TEST(RunStart, AFailedStepUndoesTheStepsBeforeItInReverseOrder) {
  hooks::register_agent_run_slice_types();
  testing_support::TempDir temp;
  fs::path ws = temp.path() / "ws";
  fs::create_directories(ws);
  testing_support::write_file(ws / "a.txt", "the user's work\n");
  fs::path user = temp.path() / "user";
  testing_support::write_file(user / ".claude" / ".credentials.json",
                              R"({"claudeAiOauth":{"accessToken":"t"}})");
  fs::path home = temp.path() / "run-home";
  testing_support::write_file(home / ".claude" / "settings.json", "{ not json");

  hooks::AgentRunSpec spec{fsnap::Store::open(temp.path() / "store", ws, true)};
  spec.run = "r";
  spec.workspace = ws;
  spec.home = home;
  spec.user.claude.home = user;
  spec.argv = {"true"};
  spec.hook_command = "shadowbox hook claude-code";
  spec.start_summary = "run started: true";
  spec.meta.run = "r";
  spec.meta.workspace = ws.string();
  fsnap::Store store = spec.store;
  try {
    hooks::run_agent(std::move(spec));
    FAIL() << "the run started";
  } catch (const statekit::SagaFailed& e) {
    EXPECT_EQ(e.failed_step(), "hooks");
    EXPECT_EQ(e.compensated(),
              (std::vector<std::string>{"opening boundary", "agent home", "run record"}));
    EXPECT_TRUE(e.compensation_failures().empty());
    EXPECT_NE(std::string(e.what()).find("settings.json"), std::string::npos) << e.what();
  }

  // The login is out of the HOME; the settings file is as it was.
  EXPECT_FALSE(fs::exists(home / ".claude" / ".credentials.json"));
  EXPECT_EQ(testing_support::read_file(home / ".claude" / "settings.json"), "{ not json");
  // The opening boundary is followed by the record that the run did not start.
  std::vector<sandbox::LedgerRecord> records = sandbox::Ledger::of(store).records("r");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].result_summary, "run started: true");
  EXPECT_NE(records[1].result_summary.find("the run could not start: "), std::string::npos)
      << records[1].result_summary;
  EXPECT_NE(records[1].result_summary.find("settings.json"), std::string::npos);
  // The run has ended: it is not taken for a running (or later, a crashed) one.
  std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, "r");
  ASSERT_TRUE(meta);
  EXPECT_FALSE(meta->running());
  EXPECT_EQ(meta->exit_code, 127);
  EXPECT_FALSE(meta->ended_at.empty());
  EXPECT_EQ(testing_support::read_file(ws / "a.txt"), "the user's work\n");
}

}  // namespace

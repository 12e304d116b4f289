// export_run's per-call cost: where a run metered its agent's spend (the
// agent.spend slice its pre-tool records hold), each call's commit carries what
// was charged since the call before it, as a Tool-Cost-USD trailer plain git reads.
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store.hpp"
#include "hooks/agent_spend.hpp"
#include "hooks/run_export.hpp"
#include "runs/ledger_run.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

std::string git(const fs::path& repo, std::vector<std::string> args) {
  std::vector<std::string> argv = {"git", "-c", "user.name=Test", "-c",
                                   "user.email=test@example.com"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = run_command(argv, repo, {"GIT_CONFIG_NOSYSTEM=1"});
  EXPECT_EQ(r.exit_code, 0) << "git " << args.at(0) << ": " << r.err;
  return r.out;
}

TEST(RunExportTest, EachCallCarriesTheSpendChargedSinceTheCallBefore) {
  testing_support::TempDir temp;
  fs::path ws = temp / "ws";
  fs::create_directories(ws);
  git(ws, {"init", "-q", "-b", "main"});
  write_file(ws / "a.txt", "0\n");
  git(ws, {"add", "-A"});
  git(ws, {"commit", "-q", "-m", "start"});

  hooks::register_agent_spend_slice_type();
  runs::LedgerRun run(fsnap::Store::open(temp / "store", ws, true), {});
  auto call = [&](const std::string& id, double charged, const std::string& content) {
    run.transactions().begin({id, "Edit", "a.txt"}, {.before_admission = [&] {
                               hooks::AgentSpend spend;
                               spend.charged_usd = charged;
                               run.state().session().seed<hooks::AgentSpend>({spend});
                             }});
    write_file(ws / "a.txt", content);
    run.transactions().succeed(id, "ok");
  };
  call("c1", 0.25, "1\n");
  call("c2", 0.75, "2\n");

  hooks::RunExport exported = hooks::export_run(run.repo(), ws, {}, "default", "with-cost", false);
  ASSERT_EQ(exported.steps.size(), 3u);  // the start, then the two calls
  ASSERT_TRUE(exported.steps[1].cost_usd);
  EXPECT_DOUBLE_EQ(*exported.steps[1].cost_usd, 0.25);
  ASSERT_TRUE(exported.steps[2].cost_usd);
  EXPECT_DOUBLE_EQ(*exported.steps[2].cost_usd, 0.5);
  EXPECT_EQ(git(ws, {"log", "--format=%(trailers:key=Tool-Cost-USD,valueonly)", "main..with-cost"}),
            "0.500000\n\n0.250000\n\n");
}

}  // namespace

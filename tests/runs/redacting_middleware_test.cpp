// The middleware a run installs: no ToolInvoked of a run's session keeps a secret.
#include <string>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store.hpp"
#include "runs/ledger_run.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/session.hpp"
#include "test_support.hpp"

namespace {

using runs::LedgerRun;
using runs::LedgerRunOptions;
using sandbox::Session;
using sandbox::ToolInvoked;

TEST(RedactingMiddlewareTest, ARunsSessionNeverHoldsASecretOfAToolCall) {
  testing_support::TempDir temp;
  boost::filesystem::create_directories(temp / "ws");
  LedgerRunOptions options;
  options.secrets = {"hunter2-is-my-password"};
  LedgerRun run(fsnap::Store::open(temp / "store", temp / "ws", true), options);
  Session& session = run.state().session();
  session.register_reducer<ToolInvoked, ToolInvoked>(statekit::reducers::append_all<ToolInvoked>);
  session.dispatch(ToolInvoked{"c1", "Bash", "{\"cmd\":\"login hunter2-is-my-password\"}", true,
                               "token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789", 1});
  const ToolInvoked& logged = session.all<ToolInvoked>()[0];
  EXPECT_EQ(logged.params, "{\"cmd\":\"login [REDACTED]\"}");
  EXPECT_EQ(logged.result_summary.find("sk-ant"), std::string::npos) << logged.result_summary;
}

}  // namespace

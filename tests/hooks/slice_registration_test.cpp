// The slice types of an agent run are registered once, at a program's start
// (register_agent_run_slice_types): after that one call every type — under its old name
// too — is known; before it, writing or reading such a session is an error naming the
// type, and the library's functions do not register anything behind the program's back.
// Its own executable: nothing here may run after a registration.
#include <gtest/gtest.h>

#include "hooks/agent_session_state.hpp"
#include "hooks/agent_spend.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/pricing.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/session.hpp"
#include "sandbox/slice_types.hpp"
#include "test_support.hpp"

namespace {

using sandbox::SliceTypes;

TEST(SliceRegistration, AnAgentRunsSliceTypesAreKnownAfterTheOneStartUpCall) {
  testing_support::TempDir dir;
  sandbox::Session session;
  // The library at work before any registration: the spend is kept in the session...
  hooks::SpendMeter meter(runs::PriceTable::defaults(), dir / "agent-cost.json");
  meter.update(session, nullptr, {});
  session.register_slice<hooks::AgentSpend>(sandbox::SlicePolicy::kLog);
  session.seed<hooks::AgentSpend>({hooks::AgentSpend{1, 0, 1, 1, {}}});
  hooks::run_transcripts(session, dir / "t.jsonl");
  // ... but nothing was registered behind the program's back.
  EXPECT_EQ(SliceTypes::find("agent.spend"), nullptr);
  EXPECT_EQ(SliceTypes::find("agent.session"), nullptr);
  // Written before registration: an error, not a session without its spend.
  try {
    (void)session.snapshot({}, true).to_json();
    ADD_FAILURE() << "a session holding an unregistered slice type was written";
  } catch (const sandbox::Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no registered JSON codec"), std::string::npos)
        << e.what();
  }

  hooks::register_agent_run_slice_types();  // the one call at start

  for (const char* name :
       {"agent.session", "agent.spend", "claude_code.session", "claude_code.spend", "run.status",
        "run.lifecycle", "run.calls", "policy.containment", "tool_invoked"}) {
    EXPECT_NE(SliceTypes::find(name), nullptr) << name;
  }
  std::string json = session.snapshot({}, true).to_json();
  EXPECT_EQ(hooks::agent_spend(sandbox::SessionSnapshot::from_json(json))->charged_usd, 1);
  // A name no program registers is refused by name when read.
  std::string unknown = json;
  unknown.replace(unknown.find("\"agent.spend\""), 13, "\"agent.gone\"");
  try {
    sandbox::SessionSnapshot::from_json(unknown);
    ADD_FAILURE() << "a session with an unknown slice type was read";
  } catch (const sandbox::SnapshotMismatchError& e) {
    EXPECT_NE(std::string(e.what()).find("agent.gone"), std::string::npos) << e.what();
  }
}

}  // namespace

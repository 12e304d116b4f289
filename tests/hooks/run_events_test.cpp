// A run's typed event channels on the product path: Claude Code hook events answered
// in process publish the hook event and the tool boundaries it made, a union
// subscription sees both in order, and a late subscriber replays from a sequence.
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "hooks/agent_hook.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/ledger_run.hpp"
#include "sandbox/run_events.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;

TEST(RunEvents, HookAndToolEventsArePublishedAsTheyAreAnswered) {
  testing_support::TempDir temp;
  fs::path ws = temp / "ws";
  fs::create_directories(ws);
  testing_support::write_file(ws / "a.txt", "a\n");
  hooks::register_agent_run_slice_types();
  runs::LedgerRunOptions options;
  options.run = "r";
  runs::LedgerRun run(fsnap::Store::open(temp / "store", ws, true), options);
  sandbox::RunEvents& events = run.transactions().events();

  std::vector<std::string> seen;
  statekit::Subscription all =
      (events.hooks | events.tools)
          .subscribe([&](const std::variant<sandbox::RunEvents::HookEvent,
                                            sandbox::RunEvents::ToolCallEvent>& e,
                         const statekit::Delivery& d) {
            if (const auto* h = std::get_if<sandbox::RunEvents::HookEvent>(&e)) {
              seen.push_back(d.channel + ":" + h->name);
            } else {
              const auto& t = std::get<sandbox::RunEvents::ToolCallEvent>(e);
              seen.push_back(d.channel + ":" + t.tool + " " + t.phase);
            }
          });
  auto send = [&](const std::string& name, const std::string& extra) {
    std::string event = "{\"hook_event_name\":\"" + name +
                        "\",\"session_id\":\"sess-1\",\"cwd\":\"" + ws.string() + "\"" + extra +
                        "}";
    ASSERT_EQ(hooks::handle_claude_code_event(event, run, {}).exit_code, 0) << name;
  };
  const std::string call =
      ",\"tool_name\":\"Bash\",\"tool_use_id\":\"toolu_1\",\"tool_input\":{\"command\":\"x\"}";
  send("PreToolUse", call);
  testing_support::write_file(ws / "a.txt", "changed\n");
  send("PostToolUseFailure", call + ",\"error\":\"exit 1\"");
  EXPECT_EQ(seen, std::vector<std::string>({"hooks:PreToolUse", "tools:Bash begin",
                                            "hooks:PostToolUseFailure", "tools:Bash failed"}));
  EXPECT_EQ(testing_support::read_file(ws / "a.txt"), "a\n") << "rolled back";

  // A subscriber that came late catches up from the second tool event.
  std::vector<std::string> replayed;
  events.tools.replay(2, [&](const sandbox::RunEvents::ToolCallEvent& t, std::uint64_t seq) {
    replayed.push_back(std::to_string(seq) + " " + t.call_id + " " + t.phase + " " + t.summary);
  });
  EXPECT_EQ(replayed, std::vector<std::string>({"2 toolu_1 failed exit 1"}));
}

}  // namespace

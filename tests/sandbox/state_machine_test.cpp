// State machines: typed events, invalid and guarded transitions, hierarchical and
// history states, entry and exit actions as effects, the machine as a session slice, and
// the run lifecycle that record_run_status moves.
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fsnap/clock.hpp"
#include "runs/run_lifecycle.hpp"
#include "runs/run_meta.hpp"
#include "sandbox/machine_slice.hpp"
#include "sandbox/session.hpp"
#include "statekit/effects.hpp"
#include "statekit/state_machine.hpp"

namespace {

using namespace sandbox;
using namespace runs;
using namespace statekit;
using std::chrono::system_clock;

struct StartTask {};
struct PlanApproved {};
struct ExecutionComplete {
  bool all_steps_done = false;
};
struct ReviewApproved {};
struct ChangesRequested {};
struct TaskAborted {};
struct Unaccepted {};

struct Logged {
  std::string what;
};

using Phase = StateMachine<StartTask, PlanApproved, ExecutionComplete, ReviewApproved,
                           ChangesRequested, TaskAborted>;

// The spec's AgentPhase.
Phase agent_phase() {
  Phase m("agent phase");
  m.state("idle", {.initial = true})
      .state("planning")
      .state("executing")
      .state("reviewing")
      .state("complete", {.terminal = true})
      .state("failed", {.terminal = true});
  m.transition<StartTask>({"idle"}, "planning", "start_planning")
      .transition<PlanApproved>({"planning"}, "executing", "begin_execution")
      .transition<ExecutionComplete>(
          {"executing"}, "reviewing", "request_review",
          [](const ExecutionComplete& e) { return e.all_steps_done; }, "all_steps_done")
      .transition<ReviewApproved>({"reviewing"}, "complete", "approve")
      .transition<ChangesRequested>({"reviewing"}, "executing", "request_changes")
      .transition<TaskAborted>({"planning", "executing", "reviewing"}, "failed", "abort");
  return m;
}

const system_clock::time_point kT0 = system_clock::time_point(std::chrono::seconds(1700000000));

// A machine can only be given (or declare transitions for) the event types it names.
template <typename M, typename E>
concept Fireable = requires(const M& m, const MachineState& s, const E& e) {
  m.fire(s, e, system_clock::time_point{});
};
static_assert(Fireable<Phase, StartTask>);
static_assert(!Fireable<Phase, Unaccepted>, "an event the machine does not name must not compile");

TEST(StateMachine, MovesThroughTheDeclaredTransitions) {
  Phase m = agent_phase();
  MachineState s = m.initial(kT0);
  EXPECT_EQ(s.state, "idle");
  s = m.fire(s, StartTask{}, kT0 + std::chrono::seconds(1)).state;
  EXPECT_EQ(s.state, "planning");
  EXPECT_EQ(s.from, "idle");
  EXPECT_EQ(s.event, "start_planning");
  EXPECT_EQ(s.at, kT0 + std::chrono::seconds(1));
  s = m.fire(s, PlanApproved{}, kT0).state;
  s = m.fire(s, ExecutionComplete{true}, kT0).state;
  EXPECT_EQ(s.state, "reviewing");
  s = m.fire(s, ChangesRequested{}, kT0).state;
  EXPECT_EQ(s.state, "executing");
}

TEST(StateMachine, RejectsAnEventTheStateDoesNotAccept) {
  Phase m = agent_phase();
  MachineState s = m.fire(m.initial(kT0), StartTask{}, kT0).state;
  EXPECT_FALSE(m.can_fire(s, ReviewApproved{}));
  try {
    m.fire(s, ReviewApproved{}, kT0);
    FAIL() << "planning -> complete must be rejected";
  } catch (const InvalidTransition& e) {
    EXPECT_EQ(e.state(), "planning");
    EXPECT_EQ(e.event(), "approve");
    EXPECT_NE(std::string(e.what()).find("no transition"), std::string::npos) << e.what();
  }
}

TEST(StateMachine, GuardDecidesAndIsNamedWhenItFails) {
  Phase m = agent_phase();
  MachineState s = m.fire(m.fire(m.initial(), StartTask{}, kT0).state, PlanApproved{}, kT0).state;
  EXPECT_FALSE(m.can_fire(s, ExecutionComplete{false}));
  EXPECT_TRUE(m.can_fire(s, ExecutionComplete{true}));
  try {
    m.fire(s, ExecutionComplete{false}, kT0);
    FAIL();
  } catch (const InvalidTransition& e) {
    EXPECT_NE(std::string(e.what()).find("all_steps_done"), std::string::npos) << e.what();
  }
}

TEST(StateMachine, GuardedAlternativesAreTriedInDeclarationOrder) {
  StateMachine<ExecutionComplete> m("m");
  m.state("a", {.initial = true}).state("done").state("again");
  m.transition<ExecutionComplete>(
       {"a"}, "done", "finish", [](const ExecutionComplete& e) { return e.all_steps_done; },
       "all done")
      .transition<ExecutionComplete>({"a"}, "again", "finish");
  EXPECT_EQ(m.fire(m.initial(), ExecutionComplete{true}, kT0).state.state, "done");
  EXPECT_EQ(m.fire(m.initial(), ExecutionComplete{false}, kT0).state.state, "again");
}

TEST(StateMachine, TerminalStateAcceptsNothing) {
  Phase m = agent_phase();
  MachineState s = m.fire(m.fire(m.initial(), StartTask{}, kT0).state, TaskAborted{}, kT0).state;
  EXPECT_EQ(s.state, "failed");
  EXPECT_THROW(m.fire(s, StartTask{}, kT0), InvalidTransition);
}

TEST(StateMachine, DefinitionErrorsAreNamed) {
  StateMachine<StartTask> m("m");
  m.state("a", {.initial = true});
  EXPECT_THROW(m.state("a"), Error);
  EXPECT_THROW(m.state("b", {.initial = true}), Error);  // a second initial at the top
  EXPECT_THROW(m.state("c", {.parent = "nowhere"}), Error);
  EXPECT_THROW(m.transition<StartTask>({"a"}, "missing", "go"), Error);
  EXPECT_THROW(m.transition<StartTask>({}, "a", "go"), Error);
  StateMachine<StartTask> none("none");
  none.state("x");
  EXPECT_THROW(none.initial(), Error);
}

// A machine with substates: a transition of the parent applies in each substate, the
// innermost declaration wins, entering the parent enters its initial (or, with
// history, its last) substate, and actions run exits-innermost-first, then entries.
struct Go {};
struct Next {};
struct Pause {};
struct Resume {};
using Nested = StateMachine<Go, Next, Pause, Resume>;

Nested nested(std::vector<std::string>* trace) {
  Nested m("nested");
  m.state("idle", {.initial = true})
      .state("work", {.history = true})
      .state("setup", {.parent = "work", .initial = true})
      .state("main", {.parent = "work"})
      .state("paused");
  m.transition<Go>({"idle"}, "work", "go")
      .transition<Next>({"setup"}, "main", "next")
      .transition<Next>({"work"}, "idle", "next_from_work")  // shadowed in setup
      .transition<Pause>({"work"}, "paused", "pause")
      .transition<Resume>({"paused"}, "work", "resume");
  for (const char* s : {"idle", "work", "setup", "main", "paused"}) {
    std::string name = s;
    m.on_enter(name, [trace, name](const MachineState&) {
      trace->push_back("enter " + name);
      return Effects{Effect::of(Logged{"entered " + name})};
    });
    m.on_exit(name, [trace, name](const MachineState&) {
      trace->push_back("exit " + name);
      return Effects{};
    });
  }
  return m;
}

TEST(StateMachine, EnteringAParentEntersItsInitialSubstate) {
  std::vector<std::string> trace;
  Nested m = nested(&trace);
  Fired f = m.fire(m.initial(), Go{}, kT0);
  EXPECT_EQ(f.state.state, "setup");
  EXPECT_EQ(f.exited, std::vector<std::string>({"idle"}));
  EXPECT_EQ(f.entered, std::vector<std::string>({"work", "setup"}));
  EXPECT_EQ(trace, std::vector<std::string>({"exit idle", "enter work", "enter setup"}));
  ASSERT_EQ(f.effects.size(), 2u);
  ASSERT_NE(f.effects[0].as<Logged>(), nullptr);
  EXPECT_EQ(f.effects[0].as<Logged>()->what, "entered work");
  EXPECT_EQ(f.effects[1].as<Logged>()->what, "entered setup");
}

TEST(StateMachine, InnermostTransitionWinsAndParentsApplyInSubstates) {
  std::vector<std::string> trace;
  Nested m = nested(&trace);
  MachineState s = m.fire(m.initial(), Go{}, kT0).state;
  Fired inner = m.fire(s, Next{}, kT0);  // setup's own next, not work's
  EXPECT_EQ(inner.state.state, "main");
  EXPECT_EQ(inner.exited, std::vector<std::string>({"setup"}));  // work is not left
  EXPECT_EQ(inner.entered, std::vector<std::string>({"main"}));
  Fired outer = m.fire(inner.state, Next{}, kT0);  // main has none: work's applies
  EXPECT_EQ(outer.state.state, "idle");
  EXPECT_EQ(outer.exited, std::vector<std::string>({"main", "work"}));
}

TEST(StateMachine, HistoryReentersTheLastSubstate) {
  std::vector<std::string> trace;
  Nested m = nested(&trace);
  MachineState s = m.fire(m.initial(), Go{}, kT0).state;
  s = m.fire(s, Next{}, kT0).state;  // main
  s = m.fire(s, Pause{}, kT0).state;
  EXPECT_EQ(s.state, "paused");
  EXPECT_EQ(s.history.at("work"), "main");
  trace.clear();
  s = m.fire(s, Resume{}, kT0).state;
  EXPECT_EQ(s.state, "main");  // not setup, work's initial
  EXPECT_EQ(trace, std::vector<std::string>({"exit paused", "enter work", "enter main"}));
}

TEST(StateMachine, SelfTransitionLeavesAndReentersTheState) {
  StateMachine<Go> m("m");
  std::vector<std::string> trace;
  m.state("a", {.initial = true}).transition<Go>({"a"}, "a", "again");
  m.on_exit("a", [&](const MachineState&) {
    trace.push_back("exit");
    return Effects{};
  });
  m.on_enter("a", [&](const MachineState&) {
    trace.push_back("enter");
    return Effects{};
  });
  Fired f = m.fire(m.initial(), Go{}, kT0);
  EXPECT_EQ(f.state.state, "a");
  EXPECT_EQ(trace, std::vector<std::string>({"exit", "enter"}));
}

TEST(StateMachine, MermaidDiagramOfTheSpecMachine) {
  EXPECT_EQ(agent_phase().to_mermaid(),
            "stateDiagram-v2\n"
            "    [*] --> idle\n"
            "    idle\n"
            "    planning\n"
            "    executing\n"
            "    reviewing\n"
            "    complete\n"
            "    complete --> [*]\n"
            "    failed\n"
            "    failed --> [*]\n"
            "    idle --> planning: start_planning\n"
            "    planning --> executing: begin_execution\n"
            "    executing --> reviewing: request_review [all_steps_done]\n"
            "    reviewing --> complete: approve\n"
            "    reviewing --> executing: request_changes\n"
            "    planning --> failed: abort\n"
            "    executing --> failed: abort\n"
            "    reviewing --> failed: abort\n");
}

TEST(StateMachine, MermaidNestsSubstates) {
  std::vector<std::string> trace;
  std::string diagram = nested(&trace).to_mermaid();
  EXPECT_NE(diagram.find("    state work {\n"
                         "        [*] --> setup\n"
                         "        setup\n"
                         "        main\n"
                         "    }\n"
                         "    note right of work: history"),
            std::string::npos)
      << diagram;
}

// The machine as a slice: one item per move, rejected moves change nothing, and the
// actions' effects are queued by dispatch or returned by dispatch_effects.
struct PhaseSlice : MachineState {
  int moves_seen = 0;
};

TEST(StateMachine, InstalledInASessionKeepsEveryMove) {
  auto clock = std::make_shared<fsnap::FixedClock>(kT0);
  Session session(clock);
  std::vector<std::string> trace;
  Nested m = nested(&trace);
  install_machine<PhaseSlice>(session, m, [](PhaseSlice& s, const Go&) { s.moves_seen = 1; });
  EXPECT_EQ(session.policy<PhaseSlice>(), SlicePolicy::kLog);

  clock->advance(std::chrono::seconds(5));
  Session::Dispatched d = session.dispatch_effects(Go{});
  EXPECT_EQ(d.applied, 1u);
  ASSERT_EQ(d.effects.size(), 2u);  // entering work, then setup: performed by no one here
  EXPECT_EQ(d.effects[1].as<Logged>()->what, "entered setup");
  EXPECT_TRUE(session.take_effects().empty());

  Slice<PhaseSlice> moves = session.all<PhaseSlice>();
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].state, "setup");
  EXPECT_EQ(moves[0].from, "idle");
  EXPECT_EQ(moves[0].at, kT0 + std::chrono::seconds(5));
  EXPECT_EQ(moves[0].moves_seen, 1);

  EXPECT_THROW(session.dispatch(Resume{}), InvalidTransition);  // not paused
  EXPECT_EQ(session.all<PhaseSlice>().size(), 1u);
  EXPECT_TRUE(session.take_effects().empty());

  session.dispatch(Next{});
  Effects queued = session.take_effects();
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued[0].as<Logged>()->what, "entered main");
  EXPECT_EQ(session.latest<PhaseSlice>()->state, "main");
  EXPECT_EQ(session.latest<PhaseSlice>()->moves_seen, 0);
}

// The run lifecycle, as record_run_status and record_run_start move it.
class RunLifecycleTest : public ::testing::Test {
 protected:
  // As a program does at its start: the run's slices are written and read back.
  RunLifecycleTest() { runs::register_run_slice_types(); }
  std::vector<std::string> states() const {
    std::vector<std::string> out;
    for (const RunLifecycle& m : session_.all<RunLifecycle>().to_vector()) out.push_back(m.state);
    return out;
  }
  Session session_;
};

TEST_F(RunLifecycleTest, RunEndsAndIsResumed) {
  record_run_status(session_, {"running", "run started"});
  record_run_status(session_, {"running", "agent session s1"});  // its SessionStart
  record_run_status(session_, {"complete", "agent session ended"});
  record_run_status(session_, {"failed", "the agent exited with status 1"});
  record_run_start(session_, "run resumed");
  record_run_status(session_, {"halted", "max-steps"});
  EXPECT_EQ(states(), std::vector<std::string>(
                          {"running", "running", "complete", "failed", "resumed", "halted"}));
  EXPECT_EQ(session_.latest<RunLifecycle>()->reason, "max-steps");
  EXPECT_EQ(session_.latest<RunLifecycle>()->event, "halt");
  EXPECT_EQ(session_.all<RunStatus>().size(), 6u);
}

TEST_F(RunLifecycleTest, StartOfARunStillActiveRecordsACrash) {
  record_run_start(session_, "run started");
  record_run_start(session_, "run resumed");  // no end was recorded: the supervisor died
  EXPECT_EQ(states(), std::vector<std::string>({"running", "crashed", "resumed"}));
  EXPECT_EQ(session_.all<RunStatus>()[1].status, "crashed");
}

TEST_F(RunLifecycleTest, RejectedMovesRecordNothing) {
  EXPECT_THROW(record_run_status(session_, {"halted", "abort"}), InvalidTransition);
  EXPECT_THROW(record_run_status(session_, {"crashed", "?"}), InvalidTransition);
  EXPECT_THROW(record_run_status(session_, {"paused", "?"}), Error);
  record_run_status(session_, {"complete", "SessionEnd of hooks installed mid-session"});
  EXPECT_THROW(record_run_status(session_, {"crashed", "?"}), InvalidTransition);
  EXPECT_EQ(states(), std::vector<std::string>({"complete"}));
  EXPECT_EQ(session_.all<RunStatus>().size(), 1u);
}

TEST_F(RunLifecycleTest, MovesSurviveTheLedgerEncoding) {
  record_run_status(session_, {"running", "run started"});
  record_run_status(session_, {"killed", "signal 9"});
  SessionSnapshot back =
      SessionSnapshot::from_json(session_.snapshot({}, /*include_all=*/true).to_json());
  std::vector<RunLifecycle> moves = back.slice<RunLifecycle>().to_vector();
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[1].state, "killed");
  EXPECT_EQ(moves[1].from, "running");
  EXPECT_EQ(moves[1].event, "agent_ended");
  EXPECT_EQ(moves[1].reason, "signal 9");
  EXPECT_EQ(
      std::chrono::time_point_cast<std::chrono::seconds>(moves[1].at),
      std::chrono::time_point_cast<std::chrono::seconds>(session_.latest<RunLifecycle>()->at));
}

}  // namespace

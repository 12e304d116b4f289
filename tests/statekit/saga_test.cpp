// Sagas: steps in order with their results, compensation in reverse order on a failure
// (each given its step's result, a failing one recorded and the rest still run), the
// observer's view, and ExecutionState's restore as a saga that leaves nothing half-done;
// step timeouts; the journal a crashed saga is resumed or compensated from.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fsnap/error.hpp"
#include "statekit/saga.hpp"
#include "test_support.hpp"

namespace {

using namespace statekit;

struct Created {
  std::string id;
};

// Created as the journal keeps it.
StepOptions<Created> journaled(std::chrono::milliseconds timeout = {}) {
  return {timeout, [](const Created& c) { return c.id; },
          [](const std::string& id) { return Created{id}; }};
}

// What a sink throws to stop a saga as a crash would.
struct Crash {};

class SagaTest : public ::testing::Test {
 protected:
  // A saga of three steps creating "vm", "net" and "app"; step fail_at throws. Each
  // step's result is journaled.
  Saga three_steps(int fail_at, bool network_undo_fails = false) {
    Saga saga("deploy", [this](const SagaEvent& e) {
      static const char* kinds[] = {"start", "done", "fail", "undo", "undone", "undo-failed"};
      events_.push_back(std::string(kinds[static_cast<int>(e.kind)]) + " " + e.step);
    });
    auto vm = saga.step<Created>(
        "vm",
        [fail_at](SagaContext&) {
          if (fail_at == 1) throw std::runtime_error("no capacity");
          return Created{"vm-1"};
        },
        [this](const Created& c) { undone_.push_back(c.id); }, journaled());
    auto net = saga.step<Created>(
        "net",
        [fail_at, vm](SagaContext& ctx) {
          if (fail_at == 2) throw std::runtime_error("no network");
          return Created{"net-for-" + ctx.result(vm).id};
        },
        [this, network_undo_fails](const Created& c) {
          if (network_undo_fails) throw std::runtime_error("network is stuck");
          undone_.push_back(c.id);
        },
        journaled());
    saga.step<Created>(
        "app",
        [this, fail_at, net](SagaContext& ctx) {
          if (fail_at == 3) throw fsnap::Error(fsnap::ErrorCode::kNotFound, "no image");
          Created app{"app-on-" + ctx.result(net).id};
          created_.push_back(app.id);
          return app;
        },
        [this](const Created& c) { undone_.push_back(c.id); }, journaled());
    return saga;
  }

  std::vector<std::string> events_;
  std::vector<std::string> undone_;
  std::vector<std::string> created_;  // the apps created
};

TEST_F(SagaTest, StepsRunInOrderAndResultsFlow) {
  Saga saga = three_steps(0);
  SagaRecord record = saga.run();
  EXPECT_EQ(record.saga, "deploy");
  EXPECT_EQ(record.steps, std::vector<std::string>({"vm", "net", "app"}));
  EXPECT_EQ(record.durations.size(), 3u);
  EXPECT_TRUE(undone_.empty());
  EXPECT_EQ(events_, std::vector<std::string>({"start vm", "done vm", "start net", "done net",
                                               "start app", "done app"}));
}

TEST_F(SagaTest, AFailureUndoesTheCompletedStepsInReverseOrder) {
  Saga saga = three_steps(3);
  try {
    saga.run();
    FAIL() << "step 3 fails";
  } catch (const SagaFailed& e) {
    EXPECT_EQ(e.failed_step(), "app");
    EXPECT_EQ(e.cause(), "no image");
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kNotFound)
        << "the cause's code: nothing is left half-done";
    EXPECT_EQ(e.compensated(), std::vector<std::string>({"net", "vm"}));
    EXPECT_TRUE(e.compensation_failures().empty());
  }
  // Each compensation got its own step's result; the failed step's own did not run.
  EXPECT_EQ(undone_, std::vector<std::string>({"net-for-vm-1", "vm-1"}));
  EXPECT_EQ(events_, std::vector<std::string>({"start vm", "done vm", "start net", "done net",
                                               "start app", "fail app", "undo net", "undone net",
                                               "undo vm", "undone vm"}));
}

TEST_F(SagaTest, AFailureOfTheFirstStepUndoesNothing) {
  Saga saga = three_steps(1);
  EXPECT_THROW(saga.run(), SagaFailed);
  EXPECT_TRUE(undone_.empty());
}

TEST_F(SagaTest, AFailingCompensationIsReportedAndTheOthersStillRun) {
  Saga saga = three_steps(3, /*network_undo_fails=*/true);
  try {
    saga.run();
    FAIL();
  } catch (const SagaFailed& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kCorrupt) << "something may be left half-done";
    ASSERT_EQ(e.compensation_failures().size(), 1u);
    EXPECT_EQ(e.compensation_failures()[0].step, "net");
    EXPECT_EQ(e.compensated(), std::vector<std::string>({"vm"}));
    EXPECT_NE(std::string(e.what()).find("could not undo 'net': network is stuck"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(undone_, std::vector<std::string>({"vm-1"}));
}

TEST_F(SagaTest, RunsOnceAndResultsAreReadOnlyAfterTheirStep) {
  Saga saga = three_steps(0);
  saga.run();
  EXPECT_THROW(saga.run(), fsnap::Error);

  // A step reading the result of a step after it.
  Saga reads("reads");
  std::optional<StepHandle<int>> second;
  reads.step<int>("first", [&](SagaContext& ctx) { return ctx.result(*second) + 1; });
  second = reads.step<int>("second", [](SagaContext&) { return 1; });
  try {
    reads.run();
    FAIL();
  } catch (const SagaFailed& e) {
    EXPECT_EQ(e.failed_step(), "first");
    EXPECT_NE(e.cause().find("the result of step 'second' is read before the step completed"),
              std::string::npos)
        << e.cause();
  }
}

TEST_F(SagaTest, VoidStepsAndStepsWithoutCompensation) {
  std::vector<std::string> trace;
  Saga saga("mixed");
  saga.step<void>(
      "log", [&](SagaContext&) { trace.push_back("log"); }, [&] { trace.push_back("unlog"); });
  saga.step<int>("count", [&](SagaContext&) { return 2; });  // nothing to undo
  saga.step<void>("boom", [&](SagaContext&) { throw std::runtime_error("boom"); });
  EXPECT_THROW(saga.run(), SagaFailed);
  EXPECT_EQ(trace, std::vector<std::string>({"log", "unlog"}));
}

// A step past its deadline fails, and the steps before it are undone newest first; one
// that returned late did its work, so it is undone too.
TEST_F(SagaTest, AStepPastItsTimeoutFailsAndTheDoneStepsAreUndoneInReverse) {
  std::chrono::steady_clock::time_point now{};
  Saga saga("deploy");
  saga.set_clock([&] { return now; });
  saga.step<Created>(
      "vm", [](SagaContext&) { return Created{"vm-1"}; },
      [this](const Created& c) { undone_.push_back(c.id); }, journaled());
  saga.step<Created>(
      "net",
      [&](SagaContext&) {
        now += std::chrono::milliseconds(20);
        return Created{"net-1"};
      },
      [this](const Created& c) { undone_.push_back(c.id); },
      journaled(std::chrono::milliseconds(50)));
  saga.step<Created>(
      "slow",
      [&](SagaContext&) {
        now += std::chrono::milliseconds(101);
        return Created{"slow-1"};
      },
      [this](const Created& c) { undone_.push_back(c.id); },
      journaled(std::chrono::milliseconds(100)));
  saga.step<void>("never", [this](SagaContext&) { created_.push_back("never"); });
  try {
    saga.run();
    FAIL() << "the slow step outlasted its timeout";
  } catch (const SagaFailed& e) {
    EXPECT_EQ(e.failed_step(), "slow");
    EXPECT_EQ(e.cause(), "timed out after 100 ms (it returned late)");
    EXPECT_EQ(e.compensated(), std::vector<std::string>({"slow", "net", "vm"}));
  }
  EXPECT_EQ(undone_, std::vector<std::string>({"slow-1", "net-1", "vm-1"}));
  EXPECT_TRUE(created_.empty()) << "no step runs after the one that timed out";
}

TEST_F(SagaTest, AStepIsAskedToStopAtItsDeadline) {
  Saga saga("wait");
  saga.step<void>(
      "first", [](SagaContext&) {}, [this] { undone_.push_back("first"); });
  bool asked = false;
  saga.step<void>(
      "waits",
      [&](SagaContext& ctx) {
        std::mutex m;
        std::condition_variable_any cv;
        std::unique_lock<std::mutex> lock(m);
        cv.wait_for(lock, ctx.stop(), std::chrono::seconds(10), [] { return false; });
        asked = ctx.stop().stop_requested();
        throw std::runtime_error("stopped");
      },
      [this] { undone_.push_back("waits"); }, {std::chrono::milliseconds(5)});
  auto start = std::chrono::steady_clock::now();
  try {
    saga.run();
    FAIL();
  } catch (const SagaFailed& e) {
    EXPECT_EQ(e.cause(), "timed out after 5 ms: stopped");
  }
  EXPECT_TRUE(asked);
  EXPECT_EQ(undone_, std::vector<std::string>({"first"})) << "the step that threw did not complete";
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// The journal as the saga goes, and a sink that throws ("the process died") once the
// journal says what stop_after says.
class SagaJournalTest : public SagaTest {
 protected:
  SagaSink crash_when(const std::string& step, SagaJournal::StepState state) {
    return [this, step, state](const SagaJournal& j) {
      file_.sink()(j);
      statuses_.push_back(j.encode());
      for (const SagaJournal::Step& s : j.steps) {
        if (s.name == step && s.state == state) throw Crash{};
      }
    };
  }
  // Runs three_steps until the process "dies" as crash_when says.
  void crash(const std::string& step, SagaJournal::StepState state) {
    Saga saga = three_steps(0);
    saga.persist_to(crash_when(step, state));
    EXPECT_THROW(saga.run(), Crash);
    EXPECT_TRUE(undone_.empty()) << "a crash compensates nothing";
    events_.clear();
  }

  testing_support::TempDir dir_;
  SagaFile file_{dir_.path() / "deploy.saga"};
  std::vector<std::string> statuses_;
};

TEST_F(SagaJournalTest, TheJournalIsWrittenAsTheSagaGoes) {
  Saga saga = three_steps(0);
  std::vector<SagaJournal> seen;
  saga.persist_to([&](const SagaJournal& j) { seen.push_back(j); });
  saga.run();
  ASSERT_EQ(seen.size(), 8u) << "running, then started and done per step, then completed";
  EXPECT_EQ(seen[2].steps[0].state, SagaJournal::StepState::kDone);
  EXPECT_EQ(seen[2].steps[0].result, "vm-1");
  EXPECT_EQ(seen[2].steps[1].state, SagaJournal::StepState::kPending);
  EXPECT_EQ(seen[3].steps[1].state, SagaJournal::StepState::kStarted);
  EXPECT_EQ(seen.back().status, SagaJournal::Status::kCompleted);
  EXPECT_FALSE(seen.back().unfinished());
}

TEST_F(SagaJournalTest, ACrashedSagaResumesFromTheFirstStepNotDone) {
  crash("app", SagaJournal::StepState::kStarted);  // died while creating the app
  std::optional<SagaJournal> journal = file_.load();
  ASSERT_TRUE(journal);
  EXPECT_TRUE(journal->unfinished());
  EXPECT_EQ(journal->first_not_done(), 2u);
  EXPECT_TRUE(created_.empty());

  Saga again = three_steps(0);  // the next process builds the same saga
  again.persist_to(file_.sink());
  SagaRecord record = again.resume(*journal);
  EXPECT_EQ(record.steps, std::vector<std::string>({"app"}));
  EXPECT_EQ(created_, std::vector<std::string>({"app-on-net-for-vm-1"}))
      << "the app step read net's result from the journal";
  EXPECT_EQ(events_, std::vector<std::string>({"start app", "done app"}));
  EXPECT_EQ(file_.load()->status, SagaJournal::Status::kCompleted);
}

TEST_F(SagaJournalTest, ACrashedSagaIsCompensatedFromItsJournalInReverse) {
  crash("net", SagaJournal::StepState::kDone);  // died right after net was done
  std::optional<SagaJournal> journal = file_.load();
  ASSERT_TRUE(journal);
  Saga again = three_steps(0);
  again.persist_to(file_.sink());
  EXPECT_EQ(again.compensate(*journal), std::vector<std::string>({"net", "vm"}));
  EXPECT_EQ(undone_, std::vector<std::string>({"net-for-vm-1", "vm-1"}))
      << "each compensation got its step's result from the journal";
  EXPECT_TRUE(created_.empty());
  std::optional<SagaJournal> after = file_.load();
  EXPECT_EQ(after->status, SagaJournal::Status::kCompensated);
  EXPECT_EQ(after->steps[0].state, SagaJournal::StepState::kCompensated);
  EXPECT_EQ(after->steps[2].state, SagaJournal::StepState::kPending);
}

TEST_F(SagaJournalTest, ACompensationCutShortGoesOnWithTheStepsNotYetUndone) {
  // The first run failed at app and died after undoing net: vm is left to undo.
  Saga saga = three_steps(3);
  saga.persist_to(crash_when("net", SagaJournal::StepState::kCompensated));
  EXPECT_THROW(saga.run(), Crash);
  EXPECT_EQ(undone_, std::vector<std::string>({"net-for-vm-1"}));
  std::optional<SagaJournal> journal = file_.load();
  ASSERT_TRUE(journal);
  EXPECT_EQ(journal->status, SagaJournal::Status::kCompensating);
  EXPECT_EQ(journal->failed_step, "app");
  EXPECT_EQ(journal->cause, "no image");
  Saga again = three_steps(0);
  EXPECT_EQ(again.compensate(*journal), std::vector<std::string>({"vm"}));
  EXPECT_EQ(undone_, std::vector<std::string>({"net-for-vm-1", "vm-1"}));
}

TEST_F(SagaJournalTest, AJournalOfAnotherSagaOrWithoutItsResultsIsRefused) {
  crash("net", SagaJournal::StepState::kDone);
  SagaJournal journal = *file_.load();
  Saga other("other");
  other.step<void>("vm", [](SagaContext&) {});
  EXPECT_THROW(other.resume(journal), fsnap::Error);
  // A step done in the journal whose result this saga cannot decode.
  Saga opaque("deploy");
  for (const char* name : {"vm", "net", "app"}) {
    opaque.step<Created>(name, [](SagaContext&) { return Created{"x"}; });
  }
  try {
    opaque.resume(journal);
    FAIL();
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'vm' is done in the journal"), std::string::npos)
        << e.what();
  }
}

TEST(SagaJournalText, ReadsBackWhatItWroteAndRefusesWhatItDidNot) {
  SagaJournal j;
  j.saga = "start of run a b";
  j.status = SagaJournal::Status::kFailed;
  j.failed_step = "hooks";
  j.cause = "100% broken\nnext line";
  j.steps = {{"files", SagaJournal::StepState::kCompensationFailed, "a b%c\n\r", "stuck"},
             {"", SagaJournal::StepState::kPending, "", ""}};
  j.cause = "100% broken\nnext line";
  SagaJournal back = SagaJournal::parse(j.encode());
  EXPECT_EQ(back.encode(), j.encode());
  EXPECT_EQ(back.saga, j.saga);
  EXPECT_EQ(back.cause, j.cause);
  EXPECT_EQ(back.steps[0].result, j.steps[0].result);
  EXPECT_EQ(back.steps[1].name, "");
  EXPECT_EQ(back.status, SagaJournal::Status::kFailed);
  for (const char* bad : {"", "statekit-saga 1\n", "statekit-saga 1\nsaga :x done : :\n",
                          "statekit-saga 1\nsaga :x running : :\nstep done :a :%4 :\n"}) {
    try {
      SagaJournal::parse(bad);
      FAIL() << bad;
    } catch (const fsnap::Error& e) {
      EXPECT_EQ(e.code(), fsnap::ErrorCode::kCorrupt) << bad;
    }
  }
}

}  // namespace

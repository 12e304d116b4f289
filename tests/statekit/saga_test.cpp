// Sagas: steps in order with their results, compensation in reverse order on a failure
// (each given its step's result, a failing one recorded and the rest still run), the
// observer's view, and ExecutionState's restore as a saga that leaves nothing half-done.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fsnap/error.hpp"
#include "statekit/saga.hpp"

namespace {

using namespace statekit;

struct Created {
  std::string id;
};

class SagaTest : public ::testing::Test {
 protected:
  // A saga of three steps creating "vm", "net" and "app"; step fail_at throws.
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
        [this](const Created& c) { undone_.push_back(c.id); });
    auto net = saga.step<Created>(
        "net",
        [fail_at, vm](SagaContext& ctx) {
          if (fail_at == 2) throw std::runtime_error("no network");
          return Created{"net-for-" + ctx.result(vm).id};
        },
        [this, network_undo_fails](const Created& c) {
          if (network_undo_fails) throw std::runtime_error("network is stuck");
          undone_.push_back(c.id);
        });
    saga.step<Created>(
        "app",
        [fail_at, net](SagaContext& ctx) {
          if (fail_at == 3) throw fsnap::Error(fsnap::ErrorCode::kNotFound, "no image");
          return Created{"app-on-" + ctx.result(net).id};
        },
        [this](const Created& c) { undone_.push_back(c.id); });
    return saga;
  }

  std::vector<std::string> events_;
  std::vector<std::string> undone_;
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

}  // namespace

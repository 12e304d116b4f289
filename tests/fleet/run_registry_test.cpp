// fleet::RunRegistry against a real redis-server: leases, fencing tokens, take-overs,
// the run's record, and a registry that lost its data.
#include "fleet/run_registry.hpp"

#include <thread>

#include <gtest/gtest.h>

#include "loopback_services.hpp"
#include "test_support.hpp"

namespace {

using fleet::FleetRun;
using fleet::Lease;
using fleet::RunOwnedElsewhere;
using std::chrono::milliseconds;

class RunRegistryTest : public ::testing::Test {
 protected:
  testing_support::TempDir dir_;
  testing_support::RedisServer server_{dir_.path()};
  fleet::RedisClient redis_{fleet::RedisEndpoint::parse(server_.url())};
  fleet::RunRegistry registry_{redis_};

  // Waits out a lease of ttl (Redis expires keys to the millisecond).
  static void outlive(milliseconds ttl) { std::this_thread::sleep_for(ttl + milliseconds(50)); }
};

TEST_F(RunRegistryTest, ANewRunBelongsToTheWorkerThatClaimsIt) {
  Lease a = registry_.claim("r1", "worker-a", milliseconds(30'000));
  EXPECT_EQ(a.token, 1);
  std::optional<FleetRun> run = registry_.find("r1");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->owner, "worker-a");
  EXPECT_EQ(run->token, 1);
  ASSERT_TRUE(run->lease_left);
  EXPECT_GT(run->lease_left->count(), 25'000);
  EXPECT_FALSE(registry_.find("r2"));
  // The lease is plain Redis, readable by anyone debugging.
  EXPECT_EQ(server_.cli({"GET", "shadowbox:lease:r1"}), "worker-a 1\n");
}

TEST_F(RunRegistryTest, AnotherWorkerCannotClaimARunEvenAfterItsLeaseExpired) {
  registry_.claim("r1", "worker-a", milliseconds(100));
  for (bool expired : {false, true}) {
    if (expired) outlive(milliseconds(100));
    try {
      registry_.claim("r1", "worker-b", milliseconds(30'000));
      FAIL() << "worker-b claimed worker-a's run";
    } catch (const RunOwnedElsewhere& e) {
      EXPECT_EQ(e.owner(), "worker-a");
      EXPECT_EQ(e.lease_left().has_value(), !expired);
      EXPECT_NE(std::string(e.what()).find("belongs to worker 'worker-a'"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(registry_.find("r1")->owner, "worker-a");
}

TEST_F(RunRegistryTest, ATakeOverWaitsForTheLeaseAndFencesTheOldOwner) {
  Lease a = registry_.claim("r1", "worker-a", milliseconds(200));
  ASSERT_TRUE(registry_.publish(a, {{"status", "running"}, {"steps", "3"}}));
  try {
    registry_.take_over("r1", "worker-b", milliseconds(30'000), /*force=*/false);
    FAIL() << "taken over while the lease lived";
  } catch (const RunOwnedElsewhere& e) {
    ASSERT_TRUE(e.lease_left());
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  outlive(milliseconds(200));
  Lease b = registry_.take_over("r1", "worker-b", milliseconds(30'000), /*force=*/false);
  EXPECT_EQ(b.token, 2);
  // Worker A comes back: it can neither renew nor write, nor claim the run again.
  EXPECT_FALSE(registry_.renew(a, milliseconds(30'000)));
  EXPECT_FALSE(registry_.publish(a, {{"status", "complete"}, {"steps", "4"}}));
  EXPECT_THROW(registry_.claim("r1", "worker-a", milliseconds(30'000)), RunOwnedElsewhere);
  FleetRun run = *registry_.find("r1");
  EXPECT_EQ(run.owner, "worker-b");
  EXPECT_EQ(run.field("status"), "running");
  EXPECT_EQ(run.field("steps"), "3");
  EXPECT_TRUE(registry_.renew(b, milliseconds(30'000)));
  EXPECT_TRUE(registry_.publish(b, {{"steps", "5"}}));
  EXPECT_EQ(registry_.find("r1")->field("steps"), "5");
}

TEST_F(RunRegistryTest, AForcedTakeOverFencesALiveOwnerAtOnce) {
  Lease a = registry_.claim("r1", "worker-a", milliseconds(30'000));
  Lease b = registry_.take_over("r1", "worker-b", milliseconds(30'000), /*force=*/true);
  EXPECT_GT(b.token, a.token);
  EXPECT_FALSE(registry_.renew(a, milliseconds(30'000)));
  EXPECT_FALSE(registry_.publish(a, {{"status", "x"}}));
  EXPECT_EQ(server_.cli({"GET", "shadowbox:lease:r1"}), "worker-b 2\n");
}

TEST_F(RunRegistryTest, AWorkerClaimingItsOwnRunAgainFencesItsEarlierProcess) {
  Lease first = registry_.claim("r1", "worker-a", milliseconds(30'000));
  Lease second = registry_.claim("r1", "worker-a", milliseconds(30'000));
  EXPECT_EQ(second.token, first.token + 1);
  EXPECT_FALSE(registry_.renew(first, milliseconds(30'000)));
  EXPECT_TRUE(registry_.renew(second, milliseconds(30'000)));
}

TEST_F(RunRegistryTest, AReleasedLeaseLetsARecoveryInWithoutWaiting) {
  Lease a = registry_.claim("r1", "worker-a", milliseconds(30'000));
  registry_.release(a);
  FleetRun run = *registry_.find("r1");
  EXPECT_EQ(run.owner, "worker-a");
  EXPECT_FALSE(run.lease_left);
  EXPECT_THROW(registry_.claim("r1", "worker-b", milliseconds(30'000)), RunOwnedElsewhere);
  Lease b = registry_.take_over("r1", "worker-b", milliseconds(30'000), /*force=*/false);
  EXPECT_EQ(b.worker, "worker-b");
  // Releasing a lease one no longer holds changes nothing.
  registry_.release(a);
  EXPECT_TRUE(registry_.find("r1")->lease_left);
}

TEST_F(RunRegistryTest, AnOwnerUpdatesTheRecordOfItsEndedRunUnlessAnotherHoldsIt) {
  Lease a = registry_.claim("r1", "worker-a", milliseconds(30'000));
  // While its own lease lives, and after releasing it.
  EXPECT_TRUE(registry_.publish_as_owner("r1", "worker-a", {{"unpushed_checkpoints", "3"}}));
  registry_.release(a);
  EXPECT_TRUE(registry_.publish_as_owner("r1", "worker-a", {{"unpushed_checkpoints", "0"}}));
  EXPECT_EQ(registry_.find("r1")->field("unpushed_checkpoints"), "0");
  // Not another worker; not once another worker took the run.
  EXPECT_FALSE(registry_.publish_as_owner("r1", "worker-b", {{"unpushed_checkpoints", "9"}}));
  registry_.take_over("r1", "worker-b", milliseconds(30'000), false);
  EXPECT_FALSE(registry_.publish_as_owner("r1", "worker-a", {{"unpushed_checkpoints", "9"}}));
  EXPECT_FALSE(registry_.publish_as_owner("nope", "worker-a", {{"x", "1"}}));
  EXPECT_EQ(registry_.find("r1")->field("unpushed_checkpoints"), "0");
}

TEST_F(RunRegistryTest, AnUnknownRunCannotBeTakenOver) {
  try {
    registry_.take_over("nope", "worker-b", milliseconds(1000), /*force=*/true);
    FAIL() << "took over a run nobody registered";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kNotFound);
  }
  EXPECT_FALSE(registry_.find("nope"));
}

TEST_F(RunRegistryTest, ARestartedRedisLearnsTheLeaseBackFromItsHolder) {
  Lease a = registry_.claim("r1", "worker-a", milliseconds(30'000));
  registry_.claim("r0", "worker-a", milliseconds(30'000));
  server_.stop();
  EXPECT_THROW(registry_.renew(a, milliseconds(30'000)), fsnap::Error);
  server_.start();  // empty
  EXPECT_FALSE(registry_.find("r1"));
  EXPECT_TRUE(registry_.renew(a, milliseconds(30'000)));
  FleetRun run = *registry_.find("r1");
  EXPECT_EQ(run.owner, "worker-a");
  EXPECT_EQ(run.token, a.token);
  EXPECT_TRUE(run.lease_left);
  // Another worker sees it owned again; the next token is a new one.
  EXPECT_THROW(registry_.take_over("r1", "worker-b", milliseconds(1000), false), RunOwnedElsewhere);
  Lease b = registry_.take_over("r1", "worker-b", milliseconds(1000), true);
  EXPECT_GT(b.token, a.token);
  EXPECT_FALSE(registry_.publish(a, {{"status", "late"}}));
}

TEST_F(RunRegistryTest, ListsAFleetOfManyRunsInFewRoundTrips) {
  for (int i = 0; i < 700; ++i) {
    registry_.claim("run-" + std::to_string(i), "w" + std::to_string(i % 7), milliseconds(30'000));
  }
  server_.cli({"CONFIG", "RESETSTAT"});
  std::vector<FleetRun> runs = registry_.list();
  ASSERT_EQ(runs.size(), 700u);
  EXPECT_EQ(runs.front().run, "run-699");
  EXPECT_EQ(runs.back().owner, "w0");
  // ZREVRANGE, then three commands a run, pipelined 300 runs at a time.
  std::string stats = server_.cli({"INFO", "commandstats"});
  EXPECT_NE(stats.find("cmdstat_hgetall:calls=700,"), std::string::npos) << stats;
}

TEST_F(RunRegistryTest, ListsRunsMostRecentlyUpdatedFirst) {
  Lease one = registry_.claim("one", "w", milliseconds(30'000));
  registry_.claim("two", "w", milliseconds(30'000));
  std::this_thread::sleep_for(milliseconds(5));  // scores are milliseconds
  ASSERT_TRUE(registry_.publish(one, {{"status", "running"}}));
  std::vector<FleetRun> runs = registry_.list();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run, "one");
  EXPECT_EQ(runs[0].field("status"), "running");
  EXPECT_EQ(runs[1].run, "two");
  EXPECT_GT(runs[0].updated_at, runs[1].updated_at);
  EXPECT_LT(std::chrono::system_clock::now() - runs[0].updated_at, std::chrono::seconds(60));
  EXPECT_THROW(registry_.publish(one, {{"owner", "me"}}), fsnap::Error);
}

}  // namespace

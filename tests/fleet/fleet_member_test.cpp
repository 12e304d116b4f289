// fleet::FleetMember with a real redis-server and a bare remote: pushes after
// boundaries (async and sync), the record in the registry, a lease lost to another
// worker, an unreachable remote that catches up, a Redis restarted mid-run, and the end.
#include "fleet/fleet_member.hpp"

#include <thread>

#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "fsnap/error.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/store_layout.hpp"
#include "loopback_services.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using fleet::FleetMember;
using std::chrono::milliseconds;

fs::path made(const fs::path& dir) {
  fs::create_directories(dir);
  return dir;
}

// Polls condition every 20 ms for up to 10 s.
template <typename Condition>
bool eventually(Condition condition) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return condition();
}

class FleetMemberTest : public ::testing::Test {
 protected:
  FleetMemberTest() { init_remote(); }

  void init_remote() { testing_support::init_bare_remote(remote_); }

  FleetMember::Options options(bool sync = false) {
    fleet::FleetSettings settings;
    settings.redis = redis_.url();
    settings.remote = remote_.string();
    settings.worker_id = "worker-a";
    settings.lease_ttl = std::chrono::seconds(2);
    settings.sync_push = sync;
    return {settings,
            store_,
            "r1",
            ws_.string(),
            [](const std::shared_ptr<fsnap::ShadowRepo>& repo) {
              return std::map<std::string, std::string>{
                  {"checkpoints", std::to_string(repo->log("r1", 0).size())}};
            },
            [this](const std::string& w) {
              std::lock_guard<std::mutex> lock(warnings_mutex_);
              warnings_.push_back(w);
            }};
  }

  fsnap::Checkpoint step(const std::string& content) {
    testing_support::write_file(ws_ / "a.txt", content);
    return host_.checkpoint({.phase = fsnap::Phase::kCheckpoint, .run = "r1"});
  }

  // The remote's r1, or "" if it has none.
  std::string remote_tip() {
    testing_support::CommandResult r =
        testing_support::run_command({"git", "--git-dir", remote_.string(), "rev-parse", "-q",
                                      "--verify", fsnap::layout::run_ref("r1")});
    return r.exit_code == 0 ? r.out.substr(0, 40) : "";
  }

  std::string field(const std::string& name) {
    fleet::RedisClient client(fleet::RedisEndpoint::parse(redis_.url()));
    fleet::RunRegistry registry(client);
    std::optional<fleet::FleetRun> run = registry.find("r1");
    return run ? (name == "owner" ? run->owner : run->field(name)) : "";
  }

  std::vector<std::string> warnings() {
    std::lock_guard<std::mutex> lock(warnings_mutex_);
    return warnings_;
  }

  testing_support::TempDir temp_;
  testing_support::RedisServer redis_{temp_.path()};
  fs::path ws_ = made(temp_.path() / "ws");
  fs::path remote_ = temp_.path() / "remote.git";
  fsnap::Store store_ = fsnap::Store::open(temp_.path() / "store", ws_, true);
  fsnap::HostFilesystem host_{store_, {}};
  std::mutex warnings_mutex_;
  std::vector<std::string> warnings_;
};

TEST_F(FleetMemberTest, AsyncPushesFollowTheBoundariesAndTheRecordShowsThem) {
  step("before");  // left queued by an earlier process: pushed when the member starts
  FleetMember member(options(), FleetMember::Join::kClaim);
  EXPECT_EQ(field("owner"), "worker-a");
  EXPECT_EQ(field("status"), "running");
  EXPECT_EQ(field("workspace"), ws_.string());
  fsnap::Checkpoint c = step("one");
  member.boundary_recorded();
  EXPECT_TRUE(eventually([&] { return remote_tip() == c.commit; }));
  EXPECT_TRUE(eventually([&] {
    return field("pushed_checkpoint") == c.commit && field("unpushed_checkpoints") == "0" &&
           field("checkpoints") == "2";
  })) << field("pushed_checkpoint");
  member.finish();
  EXPECT_EQ(redis_.cli({"EXISTS", "shadowbox:lease:r1"}), "0\n");  // released
  EXPECT_EQ(field("owner"), "worker-a");                           // released, still its owner
  EXPECT_TRUE(warnings().empty()) << warnings().front();
}

TEST_F(FleetMemberTest, ASyncBoundaryReturnsOnceTheRemoteHasIt) {
  FleetMember member(options(/*sync=*/true), FleetMember::Join::kClaim);
  for (const char* content : {"one", "two", "three"}) {
    fsnap::Checkpoint c = step(content);
    member.boundary_recorded();
    EXPECT_EQ(remote_tip(), c.commit);
  }
  member.finish();
}

TEST_F(FleetMemberTest, ALostLeaseStopsEveryWriteForTheRun) {
  FleetMember member(options(), FleetMember::Join::kClaim);
  fsnap::Checkpoint pushed = step("one");
  member.boundary_recorded();
  ASSERT_TRUE(eventually([&] { return remote_tip() == pushed.commit; }));
  {
    fleet::RedisClient client(fleet::RedisEndpoint::parse(redis_.url()));
    fleet::RunRegistry registry(client);
    fleet::Lease b = registry.take_over("r1", "worker-b", milliseconds(30'000), /*force=*/true);
    ASSERT_TRUE(registry.publish(b, {{"status", "recovered"}}));
  }
  EXPECT_TRUE(eventually([&] { return member.lost(); }));
  EXPECT_EQ(member.lost_to(), "worker-b");
  step("after the loss");
  member.boundary_recorded();
  member.finish();
  EXPECT_EQ(remote_tip(), pushed.commit);  // nothing more went out
  EXPECT_EQ(field("status"), "recovered");
  EXPECT_EQ(field("owner"), "worker-b");
  EXPECT_EQ(redis_.cli({"GET", "shadowbox:lease:r1"}).substr(0, 8), "worker-b");
}

TEST_F(FleetMemberTest, APushAfterATakeOverChecksTheLeaseAndSendsNothing) {
  FleetMember member(options(/*sync=*/true), FleetMember::Join::kClaim);
  fsnap::Checkpoint pushed = step("one");
  member.boundary_recorded();
  ASSERT_EQ(remote_tip(), pushed.commit);
  {
    fleet::RedisClient client(fleet::RedisEndpoint::parse(redis_.url()));
    fleet::RunRegistry(client).take_over("r1", "worker-b", milliseconds(30'000), /*force=*/true);
  }
  // At once, before any renewal of the member's own would have noticed.
  step("two");
  member.boundary_recorded();
  EXPECT_TRUE(member.lost());
  EXPECT_EQ(member.lost_to(), "worker-b");
  EXPECT_EQ(remote_tip(), pushed.commit);
  member.finish();
}

TEST_F(FleetMemberTest, AnUnreachableRemoteShowsTheLagAndCatchesUp) {
  fs::remove_all(remote_);
  FleetMember member(options(), FleetMember::Join::kClaim);
  step("one");
  fsnap::Checkpoint last = step("two");
  member.boundary_recorded();
  EXPECT_TRUE(eventually([&] { return field("unpushed_checkpoints") == "2"; }));
  EXPECT_NE(field("push_error"), "");
  init_remote();  // the remote is back
  EXPECT_TRUE(eventually([&] { return remote_tip() == last.commit; }));
  EXPECT_TRUE(eventually([&] { return field("unpushed_checkpoints") == "0"; }));
  EXPECT_EQ(field("push_error"), "");
  member.finish();
  std::vector<std::string> w = warnings();
  ASSERT_EQ(w.size(), 1u);  // warned once, not at every try
  EXPECT_NE(w[0].find("cannot push to the fleet's remote"), std::string::npos) << w[0];
}

TEST_F(FleetMemberTest, ARedisRestartedMidRunLosesNothing) {
  FleetMember member(options(), FleetMember::Join::kClaim);
  redis_.stop();
  std::vector<std::string> commits;
  for (const char* content : {"one", "two", "three"}) {
    commits.push_back(step(content).commit);
    member.boundary_recorded();
  }
  EXPECT_TRUE(eventually([&] { return remote_tip() == commits.back(); }));  // git needs no Redis
  redis_.start();                                                           // empty
  EXPECT_TRUE(eventually([&] { return field("owner") == "worker-a"; }));
  EXPECT_FALSE(member.lost());
  EXPECT_TRUE(eventually(
      [&] { return field("pushed_checkpoint") == commits.back() && field("checkpoints") == "3"; }));
  member.finish();
  std::vector<std::string> w = warnings();
  ASSERT_FALSE(w.empty());
  EXPECT_NE(w[0].find("Redis cannot be reached"), std::string::npos) << w[0];
}

TEST_F(FleetMemberTest, AWorkerCannotJoinARunAnotherOwns) {
  {
    FleetMember a(options(), FleetMember::Join::kClaim);
    a.finish();
  }
  FleetMember::Options b = options();
  b.settings.worker_id = "worker-b";
  EXPECT_THROW(FleetMember(b, FleetMember::Join::kClaim), fleet::RunOwnedElsewhere);
  FleetMember taken(b, FleetMember::Join::kTakeOver);  // released: no wait
  EXPECT_EQ(field("owner"), "worker-b");
  taken.finish();
}

}  // namespace

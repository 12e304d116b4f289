// The user's Claude Code login in a run: copied in privately, refreshes carried in both
// directions (the later expiry wins), a logout or a new login in the run kept in the
// run, the copy removed at the end — also when a killed supervisor left it behind.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/store.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/claude_code_credentials.hpp"
#include "runs/run_meta.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::read_file;

// A credentials file as Claude Code writes it, for tokens of generation n.
std::string login(int n, long long expires_at) {
  return R"({"claudeAiOauth":{"accessToken":"sk-ant-oat01-access-)" + std::to_string(n) +
         R"(","refreshToken":"sk-ant-ort01-refresh-)" + std::to_string(n) + R"(","expiresAt":)" +
         std::to_string(expires_at) + R"(,"scopes":["user:inference"],"subscriptionType":"max"}})";
}

// Writes as Claude Code does: a new file renamed over the old one.
void write_as_claude(const fs::path& file, const std::string& content) {
  fsnap::write_file_atomically(file, content, 0600);
}

mode_t mode_of(const fs::path& file) {
  struct stat st {};
  EXPECT_EQ(::stat(file.c_str(), &st), 0) << file;
  return st.st_mode & 0777;
}

class CredentialSyncTest : public ::testing::Test {
 protected:
  CredentialSyncTest() {
    fs::create_directories(user_file_.parent_path());
    write_as_claude(user_file_, login(1, 1000));
  }
  testing_support::TempDir temp_;
  fs::path user_file_ = temp_ / "user/.claude/.credentials.json";
  fs::path run_file_ = temp_ / "run-home/.claude/.credentials.json";
};

TEST_F(CredentialSyncTest, TheUsersLoginIsCopiedInPrivately) {
  hooks::CredentialSync sync(user_file_, run_file_);
  EXPECT_TRUE(sync.carried());
  EXPECT_EQ(read_file(run_file_), login(1, 1000));
  EXPECT_EQ(mode_of(run_file_), 0600u);
  sync.sync();
  EXPECT_EQ(read_file(user_file_), login(1, 1000)) << "nothing changed, nothing written";
}

TEST_F(CredentialSyncTest, ARefreshInTheRunIsWrittenBackToTheUser) {
  ::chmod(user_file_.c_str(), 0640);
  hooks::CredentialSync sync(user_file_, run_file_);
  write_as_claude(run_file_, login(2, 2000));
  sync.sync();
  EXPECT_EQ(read_file(user_file_), login(2, 2000));
  EXPECT_EQ(mode_of(user_file_), 0640u) << "the user's file keeps its mode";
  // And a second refresh after that one.
  write_as_claude(run_file_, login(3, 3000));
  sync.sync();
  EXPECT_EQ(read_file(user_file_), login(3, 3000));
}

TEST_F(CredentialSyncTest, ARefreshByTheUsersOwnClaudeReachesTheRun) {
  hooks::CredentialSync sync(user_file_, run_file_);
  write_as_claude(user_file_, login(2, 2000));
  sync.sync();
  EXPECT_EQ(read_file(run_file_), login(2, 2000));
  EXPECT_EQ(read_file(user_file_), login(2, 2000));
}

TEST_F(CredentialSyncTest, WhenBothRefreshedTheLaterExpiryWins) {
  hooks::CredentialSync sync(user_file_, run_file_);
  write_as_claude(user_file_, login(2, 2000));
  write_as_claude(run_file_, login(3, 3000));
  sync.sync();
  EXPECT_EQ(read_file(user_file_), login(3, 3000));
  EXPECT_EQ(read_file(run_file_), login(3, 3000));
  write_as_claude(user_file_, login(5, 5000));
  write_as_claude(run_file_, login(4, 4000));
  sync.sync();
  EXPECT_EQ(read_file(user_file_), login(5, 5000));
  EXPECT_EQ(read_file(run_file_), login(5, 5000));
}

TEST_F(CredentialSyncTest, ALogoutInTheRunDoesNotLogTheUserOut) {
  hooks::CredentialSync sync(user_file_, run_file_);
  fs::remove(run_file_);
  sync.sync();
  EXPECT_EQ(read_file(user_file_), login(1, 1000));
  write_as_claude(run_file_,
                  R"({"claudeAiOauth":{"accessToken":"","refreshToken":"","expiresAt":0}})");
  sync.sync();
  EXPECT_EQ(read_file(user_file_), login(1, 1000));
  // The user's own new login still reaches the run.
  write_as_claude(user_file_, login(2, 2000));
  sync.sync();
  EXPECT_EQ(read_file(run_file_), login(2, 2000));
}

TEST_F(CredentialSyncTest, ALoginMadeInTheRunStaysInTheRun) {
  fs::remove(user_file_);
  hooks::CredentialSync sync(user_file_, run_file_);
  EXPECT_FALSE(sync.carried());
  EXPECT_FALSE(fs::exists(run_file_));
  fs::create_directories(run_file_.parent_path());
  write_as_claude(run_file_, login(7, 7000));
  sync.sync();
  EXPECT_FALSE(fs::exists(user_file_));
  EXPECT_EQ(sync.finish(), "");
  EXPECT_FALSE(fs::exists(run_file_));
}

TEST_F(CredentialSyncTest, TheEndCarriesALastRefreshBackAndRemovesTheCopy) {
  hooks::CredentialSync sync(user_file_, run_file_);
  write_as_claude(run_file_, login(2, 2000));
  testing_support::write_file(run_file_.string() + ".tmp.1a2b3c4d", login(3, 3000));
  EXPECT_EQ(sync.finish(), "");
  EXPECT_EQ(read_file(user_file_), login(2, 2000));
  EXPECT_FALSE(fs::exists(run_file_));
  EXPECT_FALSE(fs::exists(run_file_.string() + ".tmp.1a2b3c4d"))
      << "a write Claude Code did not finish holds a login too";
}

TEST(LoginExpiryTest, OnlyALoginWithATokenCounts) {
  EXPECT_EQ(hooks::login_expiry(login(1, 1234)), 1234);
  EXPECT_FALSE(hooks::login_expiry(R"({"claudeAiOauth":{"accessToken":"","refreshToken":""}})"));
  EXPECT_FALSE(hooks::login_expiry(R"({"other":{}})"));
  EXPECT_FALSE(hooks::login_expiry("not json"));
}

TEST(StaleCredentialsTest, ALoginLeftByAKilledSupervisorIsRemoved) {
  testing_support::TempDir temp;
  fs::create_directories(temp / "ws");
  fsnap::Store store = fsnap::Store::open(temp / "store", temp / "ws", true);
  auto run_with = [&](const std::string& run, long pid, std::optional<int> exit_code) {
    runs::RunMeta meta;
    meta.run = run;
    meta.workspace = (temp / "ws").string();
    meta.pid = pid;
    meta.exit_code = exit_code;
    meta.save(store);
    fs::path file = fsnap::layout::run_home_dir(store.dir(), run) / ".claude/.credentials.json";
    testing_support::write_file(file, login(1, 1000));
    return file;
  };
  fs::path killed = run_with("killed", 999999999, std::nullopt);
  fs::path running = run_with("running", ::getpid(), std::nullopt);
  fs::path resumed_home =
      fsnap::layout::resumed_home_dir(store.dir(), "killed", "1-2") / ".claude/.credentials.json";
  testing_support::write_file(resumed_home, login(1, 1000));
  std::vector<fs::path> removed = hooks::remove_stale_credentials(store);
  EXPECT_EQ(removed.size(), 2u);
  EXPECT_FALSE(fs::exists(killed));
  EXPECT_FALSE(fs::exists(resumed_home));
  EXPECT_TRUE(fs::exists(running)) << "a running run keeps its login";
}

}  // namespace

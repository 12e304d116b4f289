// `shadowbox trust` and an untrusted .shadowbox.yaml through the executable: a
// retention the workspace sets cuts nothing until trusted, a repository's fleet section
// sends nothing anywhere, and every command says what it left out.
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/shadow_repo.hpp"
#include "loopback_services.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

class WorkspaceTrustTest : public ::testing::Test {
 protected:
  WorkspaceTrustTest() {
    fs::create_directories(ws_);
    write_file(ws_ / "a.txt", "a\n");
  }
  CommandResult shadowbox(std::vector<std::string> args) const {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_,
                       {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1",
                        "XDG_CONFIG_HOME=" + (temp_ / "config-home").string()});
  }
  std::size_t checkpoints() const {
    return fsnap::ShadowRepo::open(store_ / "repo.git", false).log("default", 0).size();
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
};

TEST_F(WorkspaceTrustTest, AnUntrustedRetentionCutsNothingUntilTrusted) {
  for (int i = 0; i < 17; ++i) {
    write_file(ws_ / "a.txt", std::to_string(i));
    ASSERT_EQ(shadowbox({"snapshot"}).exit_code, 0);
  }
  write_file(ws_ / ".shadowbox.yaml", "retention:\n  keep_last: 1\n");
  CommandResult gc = shadowbox({"gc"});
  ASSERT_EQ(gc.exit_code, 0) << gc.err;
  EXPECT_EQ(checkpoints(), 17u);
  EXPECT_NE(gc.err.find("is not trusted"), std::string::npos) << gc.err;
  EXPECT_NE(gc.err.find("retention.keep_last: 1"), std::string::npos) << gc.err;
  EXPECT_NE(gc.err.find("shadowbox trust"), std::string::npos) << gc.err;

  CommandResult trust = shadowbox({"--json", "trust"});
  ASSERT_EQ(trust.exit_code, 0) << trust.err;
  Poco::JSON::Parser parser;
  auto out = parser.parse(trust.out).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(out->getValue<std::string>("action"), "trusted");
  EXPECT_EQ(out->getArray("loosens")->size(), 1u) << trust.out;
  EXPECT_EQ(out->getValue<std::string>("trust_file").rfind(ws_.string(), 0), std::string::npos)
      << "the trust is kept outside the workspace";
  CommandResult trusted_gc = shadowbox({"gc"});
  ASSERT_EQ(trusted_gc.exit_code, 0) << trusted_gc.err;
  EXPECT_EQ(trusted_gc.err.find("is not trusted"), std::string::npos) << trusted_gc.err;
  EXPECT_EQ(checkpoints(), 1u);
}

TEST_F(WorkspaceTrustTest, ARepositorysFleetSectionSendsNothingAnywhere) {
  fs::path remote = temp_ / "their-remote.git";
  testing_support::init_bare_remote(remote);
  write_file(ws_ / ".shadowbox.yaml", "fleet:\n  redis: redis://127.0.0.1:1/0\n  remote: " +
                                          remote.string() + "\n  required: false\n");
  CommandResult r = shadowbox({"run", "--run-id", "r", "--agent", "claude-sdk", "--", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("fleet: every checkpoint"), std::string::npos) << r.err;
  // Not a local run that tried the repository's Redis (fleet.required: false lets one
  // start with a warning): no fleet at all, and nothing pushed.
  EXPECT_EQ(r.err.find("Redis"), std::string::npos) << r.err;
  EXPECT_EQ(testing_support::git_at(remote, {"for-each-ref"}), "");
}

TEST_F(WorkspaceTrustTest, OnlyAValidFileIsTrustedAndTrustCanBeTakenBack) {
  CommandResult none = shadowbox({"trust"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("nothing to trust"), std::string::npos) << none.err;
  write_file(ws_ / ".shadowbox.yaml", "retention: [not, a, map]\n");
  CommandResult invalid = shadowbox({"trust"});
  EXPECT_EQ(invalid.exit_code, 1);
  EXPECT_NE(invalid.err.find("retention"), std::string::npos) << invalid.err;
  write_file(ws_ / ".shadowbox.yaml", "hooks: {rollback_on_failure: false}\n");
  ASSERT_EQ(shadowbox({"trust"}).exit_code, 0);
  EXPECT_EQ(shadowbox({"init"}).err.find("is not trusted"), std::string::npos);
  CommandResult revoked = shadowbox({"trust", "--revoke"});
  EXPECT_EQ(revoked.exit_code, 0) << revoked.err;
  EXPECT_NE(shadowbox({"init"}).err.find("is not trusted"), std::string::npos);
}

TEST_F(WorkspaceTrustTest, AProjectWhoseSettingsSwitchEveryHookOffIsRefusedARun) {
  // Claude Code would run no hook at all, shadowbox's included: nothing of the run
  // could be recorded. (The claude named is never started.)
  write_file(ws_ / ".claude" / "settings.json", "{\"disableAllHooks\": true}\n");
  CommandResult r = shadowbox({"run", "--run-id", "r", "--", "claude", "-p", "go"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("sets disableAllHooks"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(store_ / "runs" / "r"));
  write_file(ws_ / ".claude" / "settings.json", "{}\n");
  write_file(ws_ / ".claude" / "settings.local.json", "{\"disableAllHooks\": 1}\n");
  EXPECT_EQ(shadowbox({"run", "--run-id", "r", "--", "claude", "-p", "go"}).exit_code, 1);
}

}  // namespace

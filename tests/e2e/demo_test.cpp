// scripts/demo-run.sh, the demo the README opens with, run to its end with this build:
// the real Claude Code under `run` against the bundled mock, a failed call rolled back,
// runs, log, show, diff, undo of one call, restore of a path, resume, rewind and plain
// git. The script checks the workspace itself at each step; this test checks that it got
// through, and what a person reads.
#include <gtest/gtest.h>

#include "agent_harness.hpp"
#include "test_support.hpp"

namespace {

TEST(DemoTest, TheReadmesDemoRunsToItsEnd) {
  ASSERT_TRUE(boost::filesystem::exists(e2e::claude_binary()))
      << "run scripts/setup.sh to install Claude Code";
  testing_support::TempDir temp;
  testing_support::CommandResult r = testing_support::run_command(
      {"bash", std::string(SHADOWBOX_SOURCE_DIR) + "/scripts/demo-run.sh", SHADOWBOX_BIN},
      temp.path(), {"TMPDIR=" + temp.path().string()}, "", std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("run demo complete; 2 calls: 2 steps (1 failed, 1 rolled back)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("README.md is here, src/greet.h is intact"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("undid tool call toolu_demo_write (Write)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("restored src/main.c of "), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("run demo-rewound rewinds run demo to pre:toolu_demo_bash"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("Try it yourself"), std::string::npos) << r.out;
}

}  // namespace

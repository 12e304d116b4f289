// The runs a command line names, checked in one place from the command table (a RUN
// operand, --run, --run-id: ValueKind::kRun, kNewRun) before anything is opened: every
// command that takes one refuses a malformed one as a usage error, and writes nothing.
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::TempDir;

TEST(RunOperandsTest, EveryRunOfTheCommandLineIsCheckedBeforeAnythingIsOpened) {
  TempDir temp;
  fs::path ws = temp / "ws";
  fs::create_directories(ws);
  fs::path store = temp / "store";
  auto shadowbox = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws.string(), "--store",
                                     store.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws, {"SHADOWBOX_CONFIG="});
  };
  // A RUN operand, a new run's id: a folder of the store (runs::check_run_id).
  const std::string folder_rule = "must be at most 100 letters";
  const std::string long_id(150, 'a');  // a ref's name, too long for a folder's
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"resume", ".hidden"},
           {"abort", ".hidden"},
           {"preserve", ".hidden"},
           {"recover", ".hidden"},
           {"states", ".hidden"},
           {"export", ".hidden", "--branch", "b"},
           {"fleet", "push", ".hidden"},
           {"rewind", ".hidden", "--to", "pre:c1"},
           {"rewind", "r1", "--to", "pre:c1", "--run-id", long_id},
           {"run", "--run-id", long_id, "--", "true"},
       }) {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ' ' << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find(folder_rule), std::string::npos) << r.err;
  }
  // An option's run: a ref's name, said with the option and the command's usage.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"log", "--run", "a/b"},
           {"snapshot", "--run", "a/b"},
           {"restore", "x", "--run", "a/b"},
           {"run", "--run-id", "a/b", "--", "true"},
       }) {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(args[0] + ": --run"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("invalid run name 'a/b'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(usage: shadowbox " + args[0]), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(store)) << "nothing was opened or written";
}

}  // namespace

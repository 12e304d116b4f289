// `cmake --install` as a user runs it: into a prefix of its own, the installed
// `shadowbox` works from there (its version names the commit it was built from, its help,
// a snapshot and a restore), every file lands in its GNU directory, and a program builds
// against the installed libraries with find_package(shadowbox) (examples/embedding).
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::read_file;
using testing_support::run_command;
using testing_support::TempDir;
using testing_support::write_file;

// Installs the build (component: one, or "" for all) into prefix; the command's output
// on failure.
void install(const fs::path& prefix, const std::string& component = "") {
  std::vector<std::string> argv = {SHADOWBOX_CMAKE, "--install", SHADOWBOX_BUILD_DIR, "--prefix",
                                   prefix.string()};
  if (!component.empty()) {
    argv.push_back("--component");
    argv.push_back(component);
  }
  CommandResult r = run_command(argv);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
}

// The commit the source tree is at, as --version names it ("unknown" outside git).
std::string source_commit() {
  CommandResult r =
      run_command({"git", "-C", SHADOWBOX_SOURCE_DIR, "rev-parse", "--short=12", "HEAD"});
  if (r.exit_code != 0) return "unknown";
  return r.out.substr(0, r.out.find('\n'));
}

TEST(InstallTest, TheInstalledToolWorksFromItsPrefix) {
  TempDir dir;
  fs::path prefix = dir / "prefix";
  install(prefix);

  // Each file in its GNU directory.
  for (const char* file :
       {"bin/shadowbox", "bin/shadowbox-hook", "share/doc/shadowbox/examples/shadowbox.yaml",
        "share/doc/shadowbox/copyright", "include/shadowbox/embed/tool_runner.hpp",
        "include/shadowbox/fsnap/host_filesystem.hpp", "lib/libshadowbox-sandbox.a",
        "lib/cmake/shadowbox/shadowboxConfig.cmake",
        "lib/cmake/shadowbox/shadowboxConfigVersion.cmake", "share/man/man1/shadowbox.1.gz",
        "share/man/man1/shadowbox-hook.1.gz", "share/bash-completion/completions/shadowbox",
        "share/zsh/vendor-completions/_shadowbox",
        "share/fish/vendor_completions.d/shadowbox.fish"}) {
    EXPECT_TRUE(fs::is_regular_file(prefix / file)) << file;
  }
  // The example configuration is the documented one.
  EXPECT_EQ(read_file(prefix / "share/doc/shadowbox/examples/shadowbox.yaml"),
            read_file(fs::path(SHADOWBOX_SOURCE_DIR) / "config/shadowbox.yaml"));

  // --version: the project's version and the commit of the sources, as the build's own.
  std::string shadowbox = (prefix / "bin/shadowbox").string();
  CommandResult version = run_command({shadowbox, "--version"});
  ASSERT_EQ(version.exit_code, 0) << version.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(version.out, m,
                               std::regex(R"(shadowbox (\d+\.\d+\.\d+) \(commit ([^)]+)\)\n)")))
      << version.out;
  EXPECT_EQ(m[2].str().substr(0, source_commit().size()), source_commit()) << version.out;
  EXPECT_EQ(version.out, run_command({SHADOWBOX_BIN, "--version"}).out);

  CommandResult help = run_command({shadowbox, "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("usage: shadowbox"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("  restore "), std::string::npos) << help.out;

  // A snapshot and a restore, by the installed program alone.
  fs::path ws = dir / "ws";
  fs::path store = dir / "store";
  write_file(ws / "notes.txt", "first\n");
  std::vector<std::string> global = {shadowbox, "--workspace", ws.string(), "--store",
                                     store.string()};
  auto shadowbox_cmd = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = global;
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, std::nullopt, {"SHADOWBOX_CONFIG="});
  };
  CommandResult snap = shadowbox_cmd({"snapshot", "--tag", "first"});
  ASSERT_EQ(snap.exit_code, 0) << snap.err;
  write_file(ws / "notes.txt", "second\n");
  write_file(ws / "stray.txt", "new\n");
  CommandResult restore = shadowbox_cmd({"restore", "first"});
  ASSERT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_EQ(read_file(ws / "notes.txt"), "first\n");
  EXPECT_FALSE(fs::exists(ws / "stray.txt"));
}

TEST(InstallTest, AProgramBuildsAgainstTheInstalledLibraries) {
  TempDir dir;
  fs::path prefix = dir / "prefix";
  install(prefix, "dev");
  // Only the libraries' component: no executable, so the example needs nothing else.
  EXPECT_FALSE(fs::exists(prefix / "bin/shadowbox"));

  fs::path build = dir / "build";
  CommandResult configure =
      run_command({SHADOWBOX_CMAKE, "-S", std::string(SHADOWBOX_SOURCE_DIR) + "/examples/embedding",
                   "-B", build.string(), "-DCMAKE_PREFIX_PATH=" + prefix.string()});
  ASSERT_EQ(configure.exit_code, 0) << configure.out << configure.err;
  CommandResult compile = run_command({SHADOWBOX_CMAKE, "--build", build.string()});
  ASSERT_EQ(compile.exit_code, 0) << compile.out << compile.err;

  fs::path ws = dir / "ws";
  fs::create_directories(ws);
  CommandResult example =
      run_command({(build / "embed_example").string(), ws.string(), (dir / "store").string()});
  EXPECT_EQ(example.exit_code, 0) << example.out << example.err;
  EXPECT_EQ(example.out,
            "call_1: ok\ncall_2: failed, rolled_back\nthe workspace is as call_1 left it\n");
  EXPECT_EQ(read_file(ws / "notes.txt"), "kept\n");
  EXPECT_FALSE(fs::exists(ws / "stray.txt"));
}

}  // namespace

// The Debian packages cpack makes (cmake/package.cmake): their control fields — the
// version is the project's, the tool's dependencies are computed from its executables —
// their contents, the packaged program itself, and lintian's verdict on the tool's.
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::TempDir;

// Builds the package of one component into dir; its path.
fs::path build_package(const fs::path& dir, const std::string& component) {
  CommandResult r = run_command(
      {SHADOWBOX_CPACK, "-G", "DEB", "-B", dir.string(), "-D", "CPACK_COMPONENTS_ALL=" + component},
      fs::path(SHADOWBOX_BUILD_DIR));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".deb") return e.path();
  }
  ADD_FAILURE() << "cpack made no .deb:\n" << r.out << r.err;
  return {};
}

// One control field of a package.
std::string field(const fs::path& deb, const std::string& name) {
  CommandResult r = run_command({"dpkg-deb", "--field", deb.string(), name});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

// The paths a package installs ("usr/bin/shadowbox", ...), directories left out.
std::set<std::string> files_of(const fs::path& deb) {
  CommandResult r = run_command({"dpkg-deb", "--contents", deb.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> files;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::size_t at = line.find(" ./");
    if (line.empty() || line[0] == 'd' || at == std::string::npos) continue;
    std::string path = line.substr(at + 3);
    files.insert(path.substr(0, path.find(" -> ")));
  }
  return files;
}

// "0.1.0": the version the build's shadowbox names.
std::string project_version() {
  std::string out = run_command({SHADOWBOX_BIN, "--version"}).out;
  std::smatch m;
  EXPECT_TRUE(std::regex_search(out, m, std::regex(R"(^shadowbox (\S+) )"))) << out;
  return m[1].str();
}

TEST(DebianPackageTest, TheToolsPackageDependsOnWhatItsProgramsLinkAndPassesLintian) {
  TempDir dir;
  fs::path deb = build_package(dir.path(), "shadowbox");
  ASSERT_FALSE(deb.empty());

  EXPECT_EQ(field(deb, "Package"), "shadowbox");
  EXPECT_EQ(field(deb, "Version"), project_version() + "-1");
  std::string architecture = run_command({"dpkg", "--print-architecture"}).out;
  EXPECT_EQ(field(deb, "Architecture"), architecture.substr(0, architecture.find('\n')));
  // Computed by dpkg-shlibdeps from the executables: the libraries they link.
  std::string depends = field(deb, "Depends");
  for (const char* library : {"libgit2-", "libpocofoundation", "libpocojson", "libyaml-cpp",
                              "libboost-filesystem", "libc6"}) {
    EXPECT_NE(depends.find(library), std::string::npos) << library << " in " << depends;
  }
  std::string description = field(deb, "Description");
  EXPECT_EQ(description.substr(0, description.find('\n')),
            "makes every tool call of a coding agent reversible");

  std::set<std::string> files = files_of(deb);
  for (const char* file :
       {"usr/bin/shadowbox", "usr/bin/shadowbox-hook", "usr/share/doc/shadowbox/copyright",
        "usr/share/doc/shadowbox/changelog.Debian.gz",
        "usr/share/doc/shadowbox/examples/shadowbox.yaml", "usr/share/man/man1/shadowbox.1.gz",
        "usr/share/man/man1/shadowbox-hook.1.gz", "usr/share/bash-completion/completions/shadowbox",
        "usr/share/zsh/vendor-completions/_shadowbox",
        "usr/share/fish/vendor_completions.d/shadowbox.fish"}) {
    EXPECT_EQ(files.count(file), 1u) << file;
  }
  // The libraries and headers are the other package's.
  for (const std::string& file : files) {
    EXPECT_NE(file.rfind("usr/include/", 0), 0u) << file;
    EXPECT_FALSE(file.size() > 2 && file.compare(file.size() - 2, 2, ".a") == 0) << file;
  }

  // The packaged program runs, and is the build's (stripped, the same version line).
  fs::path root = dir / "root";
  ASSERT_EQ(run_command({"dpkg-deb", "--extract", deb.string(), root.string()}).exit_code, 0);
  CommandResult version = run_command({(root / "usr/bin/shadowbox").string(), "--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out, run_command({SHADOWBOX_BIN, "--version"}).out);

  // lintian: no error (its warnings are shown, for whoever reads the log).
  CommandResult lint = run_command({"lintian", "--tag-display-limit", "0", deb.string()});
  // 0: nothing at lintian's failing level (errors); 127: not installed (scripts/setup.sh
  // installs it).
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
  std::cout << lint.out;
  std::istringstream lines(lint.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_NE(line.rfind("E: ", 0), 0u) << line;
  }
}

TEST(DebianPackageTest, TheLibrariesPackageHoldsHeadersLibrariesAndTheCMakePackage) {
  TempDir dir;
  fs::path deb = build_package(dir.path(), "dev");
  ASSERT_FALSE(deb.empty());

  EXPECT_EQ(field(deb, "Package"), "libshadowbox-dev");
  EXPECT_EQ(field(deb, "Version"), project_version() + "-1");
  EXPECT_EQ(field(deb, "Section"), "libdevel");
  std::string depends = field(deb, "Depends");
  for (const char* package :
       {"libgit2-dev", "libboost-filesystem-dev", "libyaml-cpp-dev", "libpoco-dev", "pkg-config"}) {
    EXPECT_NE(depends.find(package), std::string::npos) << package << " in " << depends;
  }
  std::set<std::string> files = files_of(deb);
  for (const char* library :
       {"fsnap", "policy", "statekit", "sandbox", "embed", "fleet", "hooks"}) {
    EXPECT_EQ(files.count(std::string("usr/lib/libshadowbox-") + library + ".a"), 1u) << library;
  }
  for (const char* file : {"usr/include/shadowbox/embed/tool_runner.hpp",
                           "usr/include/shadowbox/fsnap/host_filesystem.hpp",
                           "usr/include/shadowbox/policy/execution_context.hpp",
                           "usr/lib/cmake/shadowbox/shadowboxConfig.cmake",
                           "usr/lib/cmake/shadowbox/shadowboxConfigVersion.cmake",
                           "usr/lib/cmake/shadowbox/shadowboxTargets.cmake",
                           "usr/share/doc/libshadowbox-dev/copyright"}) {
    EXPECT_EQ(files.count(file), 1u) << file;
  }
  EXPECT_EQ(files.count("usr/bin/shadowbox"), 0u);
}

}  // namespace

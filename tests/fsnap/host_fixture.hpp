// A workspace and its store in temporary directories, for HostFilesystem tests.
#pragma once

#include <unistd.h>

#include <string>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/clock.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/store.hpp"
#include "test_support.hpp"

namespace fsnap_test {

namespace fs = boost::filesystem;
using testing_support::Manifest;
using testing_support::take_manifest;

// Creates <tmp>/ws and <tmp>/store; open() returns a HostFilesystem on them.
class HostTest : public ::testing::Test {
 protected:
  HostTest() : ws_(temp_.path() / "ws"), store_dir_(temp_.path() / "store") {
    fs::create_directories(ws_);
  }

  fsnap::HostFilesystem open(fsnap::CaptureOptions options = {}) {
    fsnap::HostEnv env{nullptr, clock_, nullptr};
    env.copies = copies_;
    env.watch_limit = watch_limit_;
    return fsnap::HostFilesystem(fsnap::Store::open(store_dir_, ws_, true), std::move(options),
                                 std::move(env));
  }

  // Tests of the racy-timestamp rule run captures on a clock of their own, which starts
  // at the real time: settle() moves it past the files written so far, so that they
  // look older than the rule's margin — without sleeping.
  void use_test_clock() {
    clock_ = std::make_shared<fsnap::FixedClock>(std::chrono::system_clock::now());
  }
  void settle() { clock_->set(std::chrono::system_clock::now() + std::chrono::seconds(1)); }

  // Absolute path of rel in the workspace.
  std::string at(const std::string& rel) const { return (ws_ / rel).string(); }
  void write(const std::string& rel, const std::string& data, bool exec = false) {
    testing_support::write_file(ws_ / rel, data, exec);
  }
  void link(const std::string& target, const std::string& rel) {
    fs::create_directories((ws_ / rel).parent_path());
    ASSERT_EQ(::symlink(target.c_str(), at(rel).c_str()), 0) << rel;
  }
  void mkdir(const std::string& rel) { fs::create_directories(ws_ / rel); }
  void remove(const std::string& rel) { fs::remove_all(ws_ / rel); }
  Manifest manifest(bool include_git = false) const { return take_manifest(ws_, include_git); }

  testing_support::TempDir temp_;
  fs::path ws_;
  fs::path store_dir_;
  std::shared_ptr<fsnap::FixedClock> clock_;  // null: the system clock
  fsnap::WatchLimit watch_limit_;             // for watch(): the kernel's, unless a test sets one
  // How copies of files over the size limit are made (null: the system's).
  std::shared_ptr<const fsnap::CopyOperations> copies_;
};

// Asserts that the workspace matches the manifest exactly.
#define EXPECT_WORKSPACE(expected) \
  EXPECT_EQ(testing_support::describe_difference((expected), manifest()), "")

}  // namespace fsnap_test

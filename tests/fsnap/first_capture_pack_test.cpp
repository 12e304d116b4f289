// A first capture writes its objects into one pack instead of a loose file each
// (issue 10): git reads the pack (`git fsck --strict`, `git verify-pack`), every file
// comes back from it, large files stay loose for restore to stream, and a small first
// capture leaves its few objects loose as every later capture does.
#include <sys/stat.h>

#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

using testing_support::run_command;

class FirstCapturePackTest : public HostTest {
 protected:
  fs::path objects() const { return store_dir_ / "repo.git" / "objects"; }

  std::vector<fs::path> files_in(const fs::path& dir, const std::string& extension) const {
    std::vector<fs::path> out;
    if (!fs::exists(dir)) return out;
    for (fs::directory_iterator it(dir), end; it != end; ++it) {
      if (extension.empty() || it->path().extension() == extension) out.push_back(it->path());
    }
    return out;
  }

  bool loose(const std::string& hex) const {
    return fs::exists(objects() / hex.substr(0, 2) / hex.substr(2));
  }

  std::string git(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"git", "--git-dir", (store_dir_ / "repo.git").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_command(argv, temp_.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  std::string blob_id(const std::string& content) {
    auto r = run_command({"git", "hash-object", "--stdin"}, temp_.path(), {}, content);
    return r.out.substr(0, 40);
  }
};

TEST_F(FirstCapturePackTest, OnePackHoldsTheFirstCaptureAndEveryFileComesBack) {
  for (int i = 0; i < 400; ++i) {
    write("d" + std::to_string(i % 9) + "/f" + std::to_string(i), "file " + std::to_string(i));
  }
  write("same-a", "twice");
  write("same-b", "twice");  // one object for both
  write("run.sh", "#!/bin/sh\n", true);
  link("d0/f0", "to-f0");
  std::string large((std::size_t{16} << 20) + 1, 'x');
  large[12345] = 'y';
  write("large.bin", large);
  Manifest before = manifest();

  fsnap::HostFilesystem fs = open();
  fsnap::Checkpoint cp = fs.checkpoint({});

  ASSERT_EQ(files_in(objects() / "pack", ".pack").size(), 1u);
  ASSERT_EQ(files_in(objects() / "pack", ".idx").size(), 1u);
  for (const fs::path& p : files_in(objects() / "pack", "")) {
    EXPECT_EQ(p.filename().string().rfind("tmp_", 0), std::string::npos) << p;
    struct stat st;
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0077, 0u) << p << " is readable by others";
  }
  std::string verify = git({"verify-pack", "-v", files_in(objects() / "pack", ".idx")[0].string()});
  // 400 files, "twice", run.sh, the link target; trees: the root and 9 directories.
  EXPECT_NE(verify.find("non delta: 413 objects"), std::string::npos) << verify;
  EXPECT_TRUE(loose(blob_id(large))) << "a blob restore streams must stay loose";
  EXPECT_FALSE(loose(blob_id("file 7")));

  fs::remove_all(ws_);
  fs::create_directories(ws_);
  fs.restore_checkpoint(cp, {});
  EXPECT_WORKSPACE(before);
  git({"fsck", "--strict", "--no-dangling"});

  // Later captures write loose objects, as always.
  write("d1/new", "new content");
  fs.checkpoint({});
  EXPECT_TRUE(loose(blob_id("new content")));
  EXPECT_EQ(files_in(objects() / "pack", ".pack").size(), 1u);
}

TEST_F(FirstCapturePackTest, ASmallFirstCaptureStaysLoose) {
  for (int i = 0; i < 20; ++i) write("f" + std::to_string(i), "small " + std::to_string(i));
  fsnap::HostFilesystem fs = open();
  fs.checkpoint({});
  EXPECT_TRUE(files_in(objects() / "pack", ".pack").empty());
  EXPECT_TRUE(loose(blob_id("small 3")));
}

}  // namespace
}  // namespace fsnap_test

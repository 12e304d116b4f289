// fsnap::InMemoryFilesystem: the Filesystem operations, confinement, and snapshots
// that share structure with the live tree and are named by the git tree id of their
// content.
#include <git2.h>

#include <chrono>

#include <gtest/gtest.h>

#include "fsnap/error.hpp"
#include "fsnap/in_memory_filesystem.hpp"
#include "test_support.hpp"

namespace {

using fsnap::EntryType;
using fsnap::ErrorCode;

void expect_error(const std::function<void()>& f, ErrorCode code) {
  try {
    f();
    ADD_FAILURE() << "no error (expected " << fsnap::to_string(code) << ")";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
  }
}

TEST(InMemoryFilesystemTest, FilesDirectoriesAndLinks) {
  fsnap::InMemoryFilesystem fs;
  const std::string binary("a\0b\xff\n", 5);
  fs.write("dir/sub/data.bin", binary);
  EXPECT_EQ(fs.read("dir/sub/data.bin"), binary);
  EXPECT_EQ(fs.stat("dir/sub/data.bin").size, 5u);
  EXPECT_EQ(fs.stat("dir").type, EntryType::kDirectory);
  fs.write("name with space\nand newline\xe9", "odd");
  EXPECT_EQ(fs.read("name with space\nand newline\xe9"), "odd");

  fs.set_executable("dir/sub/data.bin", true);
  fs.write("dir/sub/data.bin", "rewritten");
  EXPECT_TRUE(fs.stat("dir/sub/data.bin").executable) << "overwrite keeps the exec bit";

  fs.mkdir("empty/nested");
  fs.mkdir("empty/nested");  // no-op
  EXPECT_TRUE(fs.list("empty/nested").empty());
  fs.symlink("links/to-data", "../dir/sub/data.bin");
  EXPECT_EQ(fs.readlink("links/to-data"), "../dir/sub/data.bin");
  EXPECT_EQ(fs.stat("links/to-data").type, EntryType::kSymlink);
  EXPECT_EQ(fs.read("links/to-data"), "rewritten") << "read follows links inside the tree";
  fs.write("links/to-data", "through the link");
  EXPECT_EQ(fs.read("dir/sub/data.bin"), "through the link");
  fs.symlink("dangling", "nowhere");
  EXPECT_TRUE(fs.exists("dangling"));

  std::vector<fsnap::DirEntry> root = fs.list("");
  ASSERT_EQ(root.size(), 5u);
  EXPECT_EQ(root[0], (fsnap::DirEntry{"dangling", EntryType::kSymlink}));
  EXPECT_EQ(root[1], (fsnap::DirEntry{"dir", EntryType::kDirectory}));

  fs.remove("dir");
  EXPECT_FALSE(fs.exists("dir/sub/data.bin"));
  EXPECT_FALSE(fs.exists("dir"));
}

TEST(InMemoryFilesystemTest, ErrorsAndConfinement) {
  fsnap::InMemoryFilesystem fs;
  fs.write("d/f", "x");
  fs.symlink("up", "../..");
  fs.symlink("abs", "/etc");
  expect_error([&] { fs.read("missing"); }, ErrorCode::kNotFound);
  expect_error([&] { fs.remove("missing"); }, ErrorCode::kNotFound);
  expect_error([&] { fs.read("d"); }, ErrorCode::kInvalidArgument);
  expect_error([&] { fs.write("d", "x"); }, ErrorCode::kInvalidArgument);
  expect_error([&] { fs.write("d/f/g", "x"); }, ErrorCode::kInvalidArgument);
  expect_error([&] { fs.remove(""); }, ErrorCode::kInvalidArgument);
  expect_error([&] { fs.read("/etc/passwd"); }, ErrorCode::kPathEscape);
  expect_error([&] { fs.write("../x", "x"); }, ErrorCode::kPathEscape);
  expect_error([&] { fs.read("up/x"); }, ErrorCode::kPathEscape);
  expect_error([&] { fs.read("abs/passwd"); }, ErrorCode::kPathEscape);
  expect_error([&] { fs.symlink("d/f", "t"); }, ErrorCode::kInvalidArgument);  // exists
  EXPECT_EQ(fs.read("d/../d/f"), "x");
}

TEST(InMemoryFilesystemTest, SnapshotsAreIndependentOfLaterChanges) {
  fsnap::InMemoryFilesystem fs;
  fs.write("a", "1");
  fsnap::FilesystemSnapshot one = fs.snapshot("one");
  fs.write("a", "2");
  fs.write("b/c", "new");
  fsnap::FilesystemSnapshot two = fs.snapshot("two");
  fs.remove("a");
  fs.restore(one);
  EXPECT_EQ(fs.read("a"), "1");
  EXPECT_FALSE(fs.exists("b"));
  fs.write("a", "3");  // changing the restored tree must not change the snapshot
  fs.restore(two);
  EXPECT_EQ(fs.read("a"), "2");
  EXPECT_EQ(fs.read("b/c"), "new");
  fs.restore(one);
  EXPECT_EQ(fs.read("a"), "1");
  EXPECT_EQ(one.tag, "one");
  EXPECT_TRUE(one.commit.empty());
}

TEST(InMemoryFilesystemTest, IdsAreContentHashes) {
  fsnap::InMemoryFilesystem x;
  fsnap::InMemoryFilesystem y;
  x.write("a", "1");
  x.write("b/c", "2");
  y.write("b/c", "2");
  y.write("a", "1");
  EXPECT_EQ(x.snapshot("").id, y.snapshot("").id);
  y.set_executable("a", true);
  EXPECT_NE(x.snapshot("").id, y.snapshot("").id);
  y.set_executable("a", false);
  EXPECT_EQ(x.snapshot("").id, y.snapshot("").id);
  y.mkdir("b/empty");
  EXPECT_NE(x.snapshot("").id, y.snapshot("").id) << "empty directories count";
}

TEST(InMemoryFilesystemTest, IdIsTheGitTreeIdOfTheSameContent) {
  fsnap::InMemoryFilesystem fs;
  fs.write("file.txt", "hello\n");
  fs.write("run.sh", "#!/bin/sh\n");
  fs.set_executable("run.sh", true);
  fs.symlink("link", "file.txt");
  fs.write("sub/inner", "inner");

  // Build the same tree with libgit2's own tree builder.
  testing_support::TempDir dir;
  git_libgit2_init();
  git_repository* repo = nullptr;
  ASSERT_EQ(git_repository_init(&repo, (dir / "r.git").c_str(), 1), 0);
  auto blob = [&](const std::string& data) {
    git_oid oid;
    EXPECT_EQ(git_blob_create_from_buffer(&oid, repo, data.data(), data.size()), 0);
    return oid;
  };
  auto tree = [&](const std::vector<std::tuple<std::string, git_oid, git_filemode_t>>& items) {
    git_treebuilder* builder = nullptr;
    EXPECT_EQ(git_treebuilder_new(&builder, repo, nullptr), 0);
    for (const auto& [name, oid, mode] : items) {
      EXPECT_EQ(git_treebuilder_insert(nullptr, builder, name.c_str(), &oid, mode), 0);
    }
    git_oid out;
    EXPECT_EQ(git_treebuilder_write(&out, builder), 0);
    git_treebuilder_free(builder);
    return out;
  };
  git_oid sub = tree({{"inner", blob("inner"), GIT_FILEMODE_BLOB}});
  git_oid root = tree({{"file.txt", blob("hello\n"), GIT_FILEMODE_BLOB},
                       {"run.sh", blob("#!/bin/sh\n"), GIT_FILEMODE_BLOB_EXECUTABLE},
                       {"link", blob("file.txt"), GIT_FILEMODE_LINK},
                       {"sub", sub, GIT_FILEMODE_TREE}});
  char hex[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(hex, sizeof hex, &root);
  EXPECT_EQ(fs.snapshot("").id, hex);
  git_repository_free(repo);
  git_libgit2_shutdown();
}

TEST(InMemoryFilesystemTest, SnapshotsShareStructure) {
  fsnap::InMemoryFilesystem fs;
  for (int i = 0; i < 10000; ++i) {
    fs.write("d" + std::to_string(i % 100) + "/f" + std::to_string(i), std::string(100, 'x'));
  }
  fsnap::FilesystemSnapshot base = fs.snapshot("base");
  // A thousand edit+snapshot rounds: each copies only the path to the edited file. A
  // copy of the whole tree per snapshot (10,000 entries) would take far longer.
  std::vector<fsnap::FilesystemSnapshot> snaps;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) {
    fs.write("d7/f7", std::to_string(i));
    snaps.push_back(fs.snapshot(""));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Generous bound (not a benchmark): structure sharing makes this take milliseconds.
  EXPECT_LT(seconds, 2.0);
  EXPECT_EQ(base.state.use_count(), 1);  // held only by the snapshot, not copied
  fs.restore(snaps[500]);
  EXPECT_EQ(fs.read("d7/f7"), "500");
  fs.restore(base);
  EXPECT_EQ(fs.read("d7/f7"), std::string(100, 'x'));
}

TEST(InMemoryFilesystemTest, ForeignSnapshotsAreRefused) {
  fsnap::InMemoryFilesystem fs;
  fs.write("a", "1");
  fsnap::FilesystemSnapshot host_like;
  host_like.id = "0123456789abcdef";
  host_like.commit = std::string(40, 'a');
  expect_error([&] { fs.restore(host_like); }, ErrorCode::kInvalidArgument);
  fsnap::FilesystemSnapshot empty;
  expect_error([&] { fs.restore(empty); }, ErrorCode::kInvalidArgument);
  fsnap::FilesystemSnapshot real = fs.snapshot("");
  real.id = std::string(40, '0');  // tampered id
  expect_error([&] { fs.restore(real); }, ErrorCode::kInvalidArgument);
  EXPECT_EQ(fs.read("a"), "1");
}

}  // namespace

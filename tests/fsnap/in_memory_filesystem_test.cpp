// fsnap::InMemoryFilesystem: every Filesystem operation (binary contents, unusual
// names, implicit parents, executable bits, sorted listings, stat sizes, error codes,
// confinement of paths and symlinks), snapshot/restore round trips, content ids that
// equal the git tree id of the same content (checked against libgit2's treebuilder),
// structure sharing across many snapshots, and refusal of foreign or tampered snapshots.
#include <git2.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fsnap/error.hpp"
#include "fsnap/in_memory_filesystem.hpp"
#include "test_support.hpp"

namespace {

using fsnap::DirEntry;
using fsnap::EntryType;
using fsnap::ErrorCode;
using fsnap::FilesystemSnapshot;
using fsnap::InMemoryFilesystem;

// Runs f and checks that it throws an fsnap::Error with the given code.
void expect_error(ErrorCode code, const std::string& what, const std::function<void()>& f) {
  try {
    f();
    ADD_FAILURE() << what << ": no error (expected " << fsnap::to_string(code) << ")";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), code) << what << ": " << fsnap::to_string(e.code()) << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not an fsnap::Error: " << e.what();
  }
}

// Everything observable about one entry.
struct Entry {
  EntryType type = EntryType::kFile;
  bool executable = false;
  std::string data;  // file content or symlink target
  friend bool operator==(const Entry&, const Entry&) = default;
  friend std::ostream& operator<<(std::ostream& out, const Entry& e) {
    return out << fsnap::to_string(e.type) << (e.executable ? "+x" : "") << " '" << e.data << "'";
  }
};
using State = std::map<std::string, Entry>;

void dump_into(const InMemoryFilesystem& fs, const std::string& dir, State& out) {
  std::vector<DirEntry> entries = fs.list(dir);
  for (const DirEntry& e : entries) {
    std::string path = dir.empty() ? e.name : dir + "/" + e.name;
    fsnap::EntryStat st = fs.stat(path);
    EXPECT_EQ(st.type, e.type) << path << ": list and stat disagree";
    Entry entry{e.type, st.executable, ""};
    if (e.type == EntryType::kFile) entry.data = fs.read(path);
    if (e.type == EntryType::kSymlink) entry.data = fs.readlink(path);
    out[path] = entry;
    if (e.type == EntryType::kDirectory) dump_into(fs, path, out);
  }
}

// The whole tree, path -> entry (directories included).
State dump(const InMemoryFilesystem& fs) {
  State out;
  dump_into(fs, "", out);
  return out;
}

// The first difference between two states, "" if they are equal (keeps failure
// messages short for large trees).
std::string difference(const State& expected, const State& actual) {
  for (const auto& [path, entry] : expected) {
    auto it = actual.find(path);
    if (it == actual.end()) return "missing: " + path;
    if (!(it->second == entry)) {
      std::ostringstream out;
      out << path << ": expected " << entry << ", got " << it->second;
      return out.str();
    }
  }
  for (const auto& [path, entry] : actual) {
    if (expected.count(path) == 0) return "unexpected: " + path;
  }
  return "";
}

// A varied tree: nested dirs, an empty dir, binary data, an executable, symlinks.
void populate(InMemoryFilesystem& fs) {
  fs.write("README", "hello\n");
  fs.write("src/main.cc", "int main() {}\n");
  fs.write("src/lib/util.h", std::string("\0\x01\xff", 3));
  fs.write("bin/run.sh", "#!/bin/sh\n");
  fs.set_executable("bin/run.sh", true);
  fs.mkdir("empty/dir");
  fs.symlink("link", "src/main.cc");
  fs.symlink("dangling", "nowhere");
}

// ---- Filesystem operations ------------------------------------------------------------

TEST(InMemoryFilesystemTest, NewFilesystemIsAnEmptyRoot) {
  InMemoryFilesystem fs;
  EXPECT_TRUE(fs.list("").empty());
  EXPECT_TRUE(fs.list(".").empty());
  EXPECT_TRUE(fs.exists(""));
  EXPECT_EQ(fs.stat("").type, EntryType::kDirectory);
  EXPECT_FALSE(fs.exists("a"));
}

TEST(InMemoryFilesystemTest, BinaryDataWithNulBytesRoundTrips) {
  InMemoryFilesystem fs;
  std::string data;
  for (int i = 0; i < 256; ++i) data.push_back(static_cast<char>(i));
  data += std::string(1000, '\0');
  fs.write("bin.dat", data);
  EXPECT_EQ(fs.read("bin.dat"), data);
  EXPECT_EQ(fs.stat("bin.dat").size, data.size());
  fs.write("empty", "");
  EXPECT_EQ(fs.read("empty"), "");
  EXPECT_EQ(fs.stat("empty").size, 0u);
  EXPECT_EQ(fs.stat("empty").type, EntryType::kFile);
}

TEST(InMemoryFilesystemTest, NamesWithSpacesNewlinesAndNonUtf8Bytes) {
  InMemoryFilesystem fs;
  const std::vector<std::string> names = {
      "with space", "new\nline", "tab\there", std::string("latin1-\xe9"), "\xff\xfe", " lead"};
  for (const std::string& name : names) fs.write("d/" + name, "content of " + name);
  for (const std::string& name : names) {
    EXPECT_EQ(fs.read("d/" + name), "content of " + name);
    EXPECT_TRUE(fs.exists("d/" + name));
  }
  std::vector<DirEntry> listed = fs.list("d");
  std::set<std::string> listed_names;
  for (const DirEntry& e : listed) listed_names.insert(e.name);
  EXPECT_EQ(listed_names, std::set<std::string>(names.begin(), names.end()));

  fs.symlink("odd link\n\xe9", "d/new\nline");
  EXPECT_EQ(fs.readlink("odd link\n\xe9"), "d/new\nline");
  EXPECT_EQ(fs.read("odd link\n\xe9"), "content of new\nline");
  fs.mkdir("dir \xff\n");
  EXPECT_EQ(fs.stat("dir \xff\n").type, EntryType::kDirectory);
}

TEST(InMemoryFilesystemTest, NulByteInPathIsInvalid) {
  InMemoryFilesystem fs;
  std::string bad("a\0b", 3);
  expect_error(ErrorCode::kInvalidArgument, "write", [&] { fs.write(bad, "x"); });
  expect_error(ErrorCode::kInvalidArgument, "read", [&] { fs.read(bad); });
  expect_error(ErrorCode::kInvalidArgument, "symlink target", [&] { fs.symlink("l", bad); });
  EXPECT_FALSE(fs.exists("l"));
  expect_error(ErrorCode::kInvalidArgument, "empty target", [&] { fs.symlink("l", ""); });
  EXPECT_FALSE(fs.exists("l"));
}

TEST(InMemoryFilesystemTest, WriteSymlinkAndMkdirCreateParents) {
  InMemoryFilesystem fs;
  fs.write("a/b/c/file", "x");
  EXPECT_EQ(fs.stat("a").type, EntryType::kDirectory);
  EXPECT_EQ(fs.stat("a/b").type, EntryType::kDirectory);
  EXPECT_EQ(fs.stat("a/b/c").type, EntryType::kDirectory);
  EXPECT_EQ(fs.read("a/b/c/file"), "x");

  fs.symlink("l/m/link", "../../a");
  EXPECT_EQ(fs.stat("l/m").type, EntryType::kDirectory);
  EXPECT_EQ(fs.stat("l/m/link").type, EntryType::kSymlink);

  fs.mkdir("p/q/r");
  EXPECT_EQ(fs.stat("p/q").type, EntryType::kDirectory);
  EXPECT_TRUE(fs.list("p/q/r").empty());
  fs.mkdir("p/q/r");  // exists already: no-op
  fs.mkdir("a/b");    // keeps what is inside
  EXPECT_EQ(fs.read("a/b/c/file"), "x");

  expect_error(ErrorCode::kInvalidArgument, "mkdir over a file", [&] { fs.mkdir("a/b/c/file"); });
  expect_error(ErrorCode::kInvalidArgument, "write below a file",
               [&] { fs.write("a/b/c/file/below", "y"); });
  EXPECT_EQ(fs.read("a/b/c/file"), "x");
}

TEST(InMemoryFilesystemTest, PathsAreNormalised) {
  InMemoryFilesystem fs;
  fs.write("./a//b/./c", "x");
  EXPECT_EQ(fs.read("a/b/c"), "x");
  EXPECT_EQ(fs.read("a/b/../b/c"), "x");
  EXPECT_EQ(fs.read("a/b/c/"), "x");
  EXPECT_EQ(fs.list("a/./b/"), (std::vector<DirEntry>{{"c", EntryType::kFile}}));
}

TEST(InMemoryFilesystemTest, ExecutableBitIsSetClearedAndKeptOnOverwrite) {
  InMemoryFilesystem fs;
  fs.write("tool", "v1");
  EXPECT_FALSE(fs.stat("tool").executable);
  fs.set_executable("tool", true);
  EXPECT_TRUE(fs.stat("tool").executable);
  fs.write("tool", "v2 longer");
  EXPECT_TRUE(fs.stat("tool").executable) << "overwrite keeps the exec bit";
  EXPECT_EQ(fs.read("tool"), "v2 longer");
  fs.set_executable("tool", true);  // no change
  EXPECT_TRUE(fs.stat("tool").executable);
  fs.set_executable("tool", false);
  EXPECT_FALSE(fs.stat("tool").executable);
  fs.write("tool", "v3");
  EXPECT_FALSE(fs.stat("tool").executable);

  // A file recreated after removal starts non-executable.
  fs.set_executable("tool", true);
  fs.remove("tool");
  fs.write("tool", "new");
  EXPECT_FALSE(fs.stat("tool").executable);

  // Through a symlink: the bit is set on, and kept for, the target.
  fs.write("target", "t");
  fs.symlink("link", "target");
  fs.set_executable("link", true);
  EXPECT_TRUE(fs.stat("target").executable);
  EXPECT_FALSE(fs.stat("link").executable) << "a symlink has no exec bit";
  fs.write("link", "through");
  EXPECT_TRUE(fs.stat("target").executable);
  EXPECT_EQ(fs.read("target"), "through");

  fs.mkdir("dir");
  expect_error(ErrorCode::kInvalidArgument, "dir", [&] { fs.set_executable("dir", true); });
  expect_error(ErrorCode::kNotFound, "missing", [&] { fs.set_executable("missing", true); });
}

TEST(InMemoryFilesystemTest, ListIsSortedBytewise) {
  InMemoryFilesystem fs;
  for (const std::string name : {"b", "a", "B", "\xff", "a b", "_", "a.txt", "1", "\x7f"}) {
    fs.write("d/" + name, "");
  }
  fs.mkdir("d/ab");
  fs.symlink("d/A", "a");
  std::vector<DirEntry> listed = fs.list("d");
  std::vector<std::string> names;
  for (const DirEntry& e : listed) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"1", "A", "B", "_", "a", "a b", "a.txt", "ab", "b",
                                             "\x7f", "\xff"}));
  ASSERT_EQ(listed.size(), 11u);
  EXPECT_EQ(listed[1].type, EntryType::kSymlink);
  EXPECT_EQ(listed[7].type, EntryType::kDirectory);
  EXPECT_EQ(listed[4].type, EntryType::kFile);

  EXPECT_EQ(fs.list(""), (std::vector<DirEntry>{{"d", EntryType::kDirectory}}));
  expect_error(ErrorCode::kNotFound, "list missing", [&] { fs.list("nope"); });
  expect_error(ErrorCode::kInvalidArgument, "list a file", [&] { fs.list("d/a"); });
}

TEST(InMemoryFilesystemTest, ListFollowsASymlinkToADirectory) {
  InMemoryFilesystem fs;
  fs.write("real/x", "1");
  fs.symlink("alias", "real");
  EXPECT_EQ(fs.list("alias"), (std::vector<DirEntry>{{"x", EntryType::kFile}}));
}

TEST(InMemoryFilesystemTest, StatReportsTypeSizeAndDoesNotFollowTheLastLink) {
  InMemoryFilesystem fs;
  fs.write("f", "12345");
  fs.mkdir("d");
  fs.write("d/inner", std::string(4096, 'z'));
  fs.symlink("l", "d/inner");

  fsnap::EntryStat f = fs.stat("f");
  EXPECT_EQ(f.type, EntryType::kFile);
  EXPECT_EQ(f.size, 5u);
  EXPECT_FALSE(f.executable);

  fsnap::EntryStat d = fs.stat("d");
  EXPECT_EQ(d.type, EntryType::kDirectory);
  EXPECT_EQ(d.size, 0u);
  EXPECT_FALSE(d.executable);

  fsnap::EntryStat l = fs.stat("l");
  EXPECT_EQ(l.type, EntryType::kSymlink);
  EXPECT_EQ(l.size, std::string("d/inner").size()) << "length of the target";

  EXPECT_EQ(fs.stat("d/inner").size, 4096u);
  fs.symlink("dl", "d");
  EXPECT_EQ(fs.stat("dl/inner").size, 4096u) << "inner links are followed";
  expect_error(ErrorCode::kNotFound, "stat missing", [&] { fs.stat("missing"); });
  expect_error(ErrorCode::kNotFound, "stat missing/deeper", [&] { fs.stat("d/missing/deeper"); });
}

TEST(InMemoryFilesystemTest, ExistsSeesDanglingLinksAndNotMissingPaths) {
  InMemoryFilesystem fs;
  fs.symlink("dangling", "no/such/target");
  EXPECT_TRUE(fs.exists("dangling"));
  EXPECT_FALSE(fs.exists("no"));
  EXPECT_FALSE(fs.exists("missing/child"));
  expect_error(ErrorCode::kNotFound, "read a dangling link", [&] { fs.read("dangling"); });
  // Nothing is below a regular file: exists answers false (as HostFilesystem's lstat
  // does with ENOTDIR) rather than throwing.
  fs.write("file", "");
  bool below_file = false;
  EXPECT_NO_THROW(below_file = fs.exists("file/child"));
  EXPECT_FALSE(below_file);
}

TEST(InMemoryFilesystemTest, SymlinkAndReadlink) {
  InMemoryFilesystem fs;
  fs.symlink("l", "some/where/../x");
  EXPECT_EQ(fs.readlink("l"), "some/where/../x") << "target stored verbatim";
  expect_error(ErrorCode::kInvalidArgument, "symlink twice", [&] { fs.symlink("l", "other"); });
  EXPECT_EQ(fs.readlink("l"), "some/where/../x");
  fs.write("f", "x");
  expect_error(ErrorCode::kInvalidArgument, "symlink over a file", [&] { fs.symlink("f", "t"); });
  EXPECT_EQ(fs.read("f"), "x");
  expect_error(ErrorCode::kInvalidArgument, "readlink of a file", [&] { fs.readlink("f"); });
  expect_error(ErrorCode::kNotFound, "readlink missing", [&] { fs.readlink("missing"); });
  expect_error(ErrorCode::kInvalidArgument, "symlink at root", [&] { fs.symlink("", "x"); });
}

TEST(InMemoryFilesystemTest, ReadAndWriteFollowLinksInsideTheTree) {
  InMemoryFilesystem fs;
  fs.write("data/file.txt", "original");
  fs.symlink("links/to-file", "../data/file.txt");
  fs.symlink("links/to-dir", "../data");
  fs.symlink("chain", "links/to-file");

  EXPECT_EQ(fs.read("links/to-file"), "original");
  EXPECT_EQ(fs.read("links/to-dir/file.txt"), "original");
  EXPECT_EQ(fs.read("chain"), "original") << "chains of links are followed";

  fs.write("links/to-file", "via link");
  EXPECT_EQ(fs.read("data/file.txt"), "via link");
  EXPECT_EQ(fs.stat("links/to-file").type, EntryType::kSymlink) << "the link stays a link";
  EXPECT_EQ(fs.readlink("links/to-file"), "../data/file.txt");

  fs.write("links/to-dir/new.txt", "created through a dir link");
  EXPECT_EQ(fs.read("data/new.txt"), "created through a dir link");
  EXPECT_FALSE(fs.exists("links/new.txt"));

  // A link to a missing file: write creates the target.
  fs.symlink("pending", "data/later.txt");
  fs.write("pending", "now");
  EXPECT_EQ(fs.read("data/later.txt"), "now");
  EXPECT_EQ(fs.stat("pending").type, EntryType::kSymlink);

  // A link to a directory cannot be read or written as a file.
  expect_error(ErrorCode::kInvalidArgument, "read dir link", [&] { fs.read("links/to-dir"); });
  expect_error(ErrorCode::kInvalidArgument, "write dir link",
               [&] { fs.write("links/to-dir", "x"); });

  // Removing goes through inner links but not the last one.
  fs.remove("links/to-dir/new.txt");
  EXPECT_FALSE(fs.exists("data/new.txt"));
  fs.remove("links/to-dir");
  EXPECT_FALSE(fs.exists("links/to-dir"));
  EXPECT_EQ(fs.read("data/file.txt"), "via link") << "removing a link leaves its target";
}

TEST(InMemoryFilesystemTest, SymlinkLoopIsAnErrorNotAHang) {
  InMemoryFilesystem fs;
  fs.symlink("a", "b");
  fs.symlink("b", "a");
  fs.symlink("self", "self");
  EXPECT_THROW(fs.read("a"), fsnap::Error);
  EXPECT_THROW(fs.write("self", "x"), fsnap::Error);
  EXPECT_THROW(fs.read("a/x"), fsnap::Error);
  EXPECT_EQ(fs.readlink("a"), "b");
}

TEST(InMemoryFilesystemTest, RemoveFilesLinksAndWholeDirectories) {
  InMemoryFilesystem fs;
  populate(fs);
  fs.remove("README");
  EXPECT_FALSE(fs.exists("README"));
  fs.remove("dangling");
  EXPECT_FALSE(fs.exists("dangling"));
  fs.remove("src");
  EXPECT_FALSE(fs.exists("src"));
  EXPECT_FALSE(fs.exists("src/lib/util.h"));
  EXPECT_TRUE(fs.exists("link")) << "a link to a removed file dangles";
  EXPECT_EQ(fs.list("empty").size(), 1u);
  fs.remove("empty/dir");
  EXPECT_TRUE(fs.list("empty").empty()) << "the parent stays";

  expect_error(ErrorCode::kNotFound, "remove twice", [&] { fs.remove("README"); });
  expect_error(ErrorCode::kNotFound, "remove missing", [&] { fs.remove("no/such/path"); });
  expect_error(ErrorCode::kInvalidArgument, "remove root", [&] { fs.remove(""); });
  expect_error(ErrorCode::kInvalidArgument, "remove root", [&] { fs.remove("."); });
  EXPECT_TRUE(fs.exists("bin/run.sh")) << "a refused remove of the root changes nothing";
}

TEST(InMemoryFilesystemTest, ErrorsForMissingPathsAndDirectories) {
  InMemoryFilesystem fs;
  fs.mkdir("dir");
  fs.write("dir/f", "x");
  expect_error(ErrorCode::kNotFound, "read missing", [&] { fs.read("missing"); });
  expect_error(ErrorCode::kNotFound, "read dir/missing", [&] { fs.read("dir/missing"); });
  expect_error(ErrorCode::kNotFound, "read nodir/x", [&] { fs.read("nodir/x"); });
  expect_error(ErrorCode::kInvalidArgument, "read a directory", [&] { fs.read("dir"); });
  expect_error(ErrorCode::kInvalidArgument, "read the root", [&] { fs.read(""); });
  expect_error(ErrorCode::kInvalidArgument, "write over a dir", [&] { fs.write("dir", "x"); });
  expect_error(ErrorCode::kInvalidArgument, "write the root", [&] { fs.write("", "x"); });
  EXPECT_EQ(fs.read("dir/f"), "x") << "the directory survives a refused write";
}

TEST(InMemoryFilesystemTest, PathsOutsideTheRootAreRefused) {
  InMemoryFilesystem fs;
  fs.write("a/f", "x");
  for (const std::string path : {"/abs", "/a/f", "../x", "a/../../x", "./../a/f"}) {
    expect_error(ErrorCode::kPathEscape, "read " + path, [&] { fs.read(path); });
    expect_error(ErrorCode::kPathEscape, "write " + path, [&] { fs.write(path, "y"); });
    expect_error(ErrorCode::kPathEscape, "mkdir " + path, [&] { fs.mkdir(path); });
    expect_error(ErrorCode::kPathEscape, "remove " + path, [&] { fs.remove(path); });
    expect_error(ErrorCode::kPathEscape, "stat " + path, [&] { fs.stat(path); });
    expect_error(ErrorCode::kPathEscape, "symlink " + path, [&] { fs.symlink(path, "t"); });
  }
  EXPECT_EQ(dump(fs), (State{{"a", {EntryType::kDirectory, false, ""}},
                             {"a/f", {EntryType::kFile, false, "x"}}}));
}

TEST(InMemoryFilesystemTest, SymlinksThatClimbOutAreRefused) {
  InMemoryFilesystem fs;
  fs.write("inside/file", "x");
  fs.symlink("up", "../outside");
  fs.symlink("abs", "/etc/passwd");
  fs.symlink("inside/up2", "../../x");
  fs.symlink("inside/root", "..");
  fs.symlink("inside/rootup", "../..");
  fs.symlink("hop", "inside/up2");

  // The links themselves exist and can be inspected and removed.
  EXPECT_EQ(fs.readlink("up"), "../outside");
  EXPECT_EQ(fs.stat("abs").type, EntryType::kSymlink);
  EXPECT_TRUE(fs.exists("inside/up2"));

  for (const std::string path : {"up", "abs", "inside/up2", "hop", "inside/rootup/x"}) {
    expect_error(ErrorCode::kPathEscape, "read " + path, [&] { fs.read(path); });
    expect_error(ErrorCode::kPathEscape, "write " + path, [&] { fs.write(path, "y"); });
  }
  expect_error(ErrorCode::kPathEscape, "list", [&] { fs.list("inside/rootup"); });
  expect_error(ErrorCode::kPathEscape, "write below", [&] { fs.write("up/child", "y"); });
  expect_error(ErrorCode::kPathEscape, "mkdir below", [&] { fs.mkdir("abs/child"); });
  expect_error(ErrorCode::kPathEscape, "read below", [&] { fs.read("abs/passwd"); });

  // A link that climbs to the root but not above it is fine.
  EXPECT_EQ(fs.read("inside/root/inside/file"), "x");
  fs.write("inside/root/top", "t");
  EXPECT_EQ(fs.read("top"), "t");

  fs.remove("up");
  EXPECT_FALSE(fs.exists("up"));
}

// ---- Snapshots --------------------------------------------------------------------------

TEST(InMemorySnapshotTest, SnapshotCarriesLabelIdAndState) {
  InMemoryFilesystem fs;
  populate(fs);
  auto before = std::chrono::system_clock::now();
  FilesystemSnapshot snap = fs.snapshot("pre:my call");
  auto after = std::chrono::system_clock::now();
  EXPECT_EQ(snap.label, "pre:my call");
  EXPECT_EQ(snap.tag, "") << "an in-memory filesystem has no git tags";
  EXPECT_TRUE(snap.commit.empty());
  EXPECT_NE(snap.state, nullptr);
  EXPECT_TRUE(snap.skipped.empty());
  EXPECT_EQ(snap.id.size(), 40u);
  EXPECT_EQ(snap.id.find_first_not_of("0123456789abcdef"), std::string::npos) << snap.id;
  EXPECT_GE(snap.created_at, before);
  EXPECT_LE(snap.created_at, after);
}

TEST(InMemorySnapshotTest, RestoreBringsBackTheExactState) {
  InMemoryFilesystem fs;
  populate(fs);
  State at_snapshot = dump(fs);
  FilesystemSnapshot snap = fs.snapshot("before");

  // Change everything: content, modes, type changes in every direction, removals,
  // additions.
  fs.write("README", "changed");
  fs.set_executable("bin/run.sh", false);
  fs.remove("src/main.cc");
  fs.mkdir("src/main.cc");  // file -> directory
  fs.remove("empty");
  fs.write("empty", "now a file");  // directory -> file
  fs.remove("link");
  fs.write("link", "now a file");  // symlink -> file
  fs.remove("src/lib/util.h");
  fs.symlink("src/lib/util.h", "../../README");  // file -> symlink
  fs.write("new/file", "added");
  ASSERT_NE(dump(fs), at_snapshot);

  fs.restore(snap);
  EXPECT_EQ(dump(fs), at_snapshot);
  EXPECT_EQ(fs.snapshot("again").id, snap.id);

  // The restored tree is live: it can be changed and restored again.
  fs.write("README", "after restore");
  EXPECT_EQ(fs.read("README"), "after restore");
  fs.restore(snap);
  EXPECT_EQ(fs.read("README"), "hello\n");
}

TEST(InMemorySnapshotTest, LaterSnapshotsAreUnaffectedByEarlierRestores) {
  InMemoryFilesystem fs;
  fs.write("f", "1");
  FilesystemSnapshot s1 = fs.snapshot("s1");
  State state1 = dump(fs);

  fs.write("f", "2");
  fs.write("g", "only in 2");
  FilesystemSnapshot s2 = fs.snapshot("s2");
  State state2 = dump(fs);

  fs.restore(s1);
  EXPECT_EQ(dump(fs), state1);
  fs.write("f", "3");
  fs.write("h", "only in 3");
  fs.remove("f");
  FilesystemSnapshot s3 = fs.snapshot("s3");
  State state3 = dump(fs);

  fs.restore(s2);
  EXPECT_EQ(dump(fs), state2);
  fs.restore(s3);
  EXPECT_EQ(dump(fs), state3);
  fs.restore(s1);
  EXPECT_EQ(dump(fs), state1);
  fs.restore(s2);
  EXPECT_EQ(dump(fs), state2);
  EXPECT_NE(s1.id, s2.id);
  EXPECT_NE(s2.id, s3.id);
}

TEST(InMemorySnapshotTest, CopiesOfASnapshotRestoreTheSameState) {
  InMemoryFilesystem fs;
  populate(fs);
  State expected = dump(fs);
  FilesystemSnapshot copy;
  {
    FilesystemSnapshot original = fs.snapshot("x");
    copy = original;
  }
  fs.remove("src");
  fs.restore(copy);
  EXPECT_EQ(dump(fs), expected);
}

TEST(InMemorySnapshotTest, IdenticalContentHasIdenticalIds) {
  InMemoryFilesystem a;
  populate(a);
  InMemoryFilesystem b;
  // Same content, built in another order and via detours.
  b.symlink("dangling", "nowhere");
  b.mkdir("empty/dir");
  b.write("bin/run.sh", "temporary");
  b.set_executable("bin/run.sh", true);
  b.write("bin/run.sh", "#!/bin/sh\n");
  b.write("src/lib/util.h", std::string("\0\x01\xff", 3));
  b.write("src/main.cc", "int main() {}\n");
  b.write("README", "something else");
  b.write("extra/file", "removed later");
  b.remove("extra");
  b.write("README", "hello\n");
  b.symlink("link", "src/main.cc");
  ASSERT_EQ(dump(a), dump(b));
  EXPECT_EQ(a.snapshot("one").id, b.snapshot("other tag").id) << "the tag is not content";

  // The same filesystem, unchanged, twice; and after changes that are undone.
  FilesystemSnapshot first = a.snapshot("1");
  EXPECT_EQ(a.snapshot("2").id, first.id);
  a.write("README", "changed");
  a.write("README", "hello\n");
  EXPECT_EQ(a.snapshot("3").id, first.id);
  a.set_executable("README", true);
  a.set_executable("README", false);
  EXPECT_EQ(a.snapshot("4").id, first.id) << "exec bit set and cleared again";

  InMemoryFilesystem empty1;
  InMemoryFilesystem empty2;
  EXPECT_EQ(empty1.snapshot("").id, empty2.snapshot("").id);
}

TEST(InMemorySnapshotTest, DifferentContentHasDifferentIds) {
  InMemoryFilesystem base;
  populate(base);
  const std::string base_id = base.snapshot("base").id;

  std::vector<std::pair<std::string, std::function<void(InMemoryFilesystem&)>>> changes = {
      {"content", [](InMemoryFilesystem& fs) { fs.write("README", "hello!\n"); }},
      {"exec bit", [](InMemoryFilesystem& fs) { fs.set_executable("README", true); }},
      {"link target",
       [](InMemoryFilesystem& fs) {
         fs.remove("link");
         fs.symlink("link", "README");
       }},
      {"link -> file with the same data",
       [](InMemoryFilesystem& fs) {
         fs.remove("dangling");
         fs.write("dangling", "nowhere");
       }},
      {"rename",
       [](InMemoryFilesystem& fs) {
         fs.remove("README");
         fs.write("README.md", "hello\n");
       }},
      {"empty dir removed", [](InMemoryFilesystem& fs) { fs.remove("empty/dir"); }},
      {"empty file added", [](InMemoryFilesystem& fs) { fs.write("src/empty", ""); }},
      {"deep change",
       [](InMemoryFilesystem& fs) { fs.write("src/lib/util.h", std::string("\0\x01\xfe", 3)); }},
  };
  std::set<std::string> ids = {base_id};
  for (const auto& [what, change] : changes) {
    InMemoryFilesystem fs;
    populate(fs);
    ASSERT_EQ(fs.snapshot("same").id, base_id);
    change(fs);
    std::string id = fs.snapshot("changed").id;
    EXPECT_NE(id, base_id) << what;
    EXPECT_TRUE(ids.insert(id).second) << what << ": id collides with another change";
  }
}

// ---- Snapshot ids are git tree ids -------------------------------------------------------

// Builds trees with libgit2 in a bare repository, independently of fsnap.
class GitTrees {
 public:
  explicit GitTrees(const boost::filesystem::path& dir) {
    git_libgit2_init();
    check(git_repository_init(&repo_, dir.string().c_str(), 1), "init");
  }
  ~GitTrees() {
    git_repository_free(repo_);
    git_libgit2_shutdown();
  }
  GitTrees(const GitTrees&) = delete;
  GitTrees& operator=(const GitTrees&) = delete;

  git_oid blob(const std::string& data) {
    git_oid oid;
    check(git_blob_create_from_buffer(&oid, repo_, data.data(), data.size()), "blob");
    return oid;
  }

  struct Item {
    std::string name;
    git_filemode_t mode;
    git_oid oid;
  };

  git_oid tree(const std::vector<Item>& items) {
    git_treebuilder* builder = nullptr;
    check(git_treebuilder_new(&builder, repo_, nullptr), "treebuilder");
    for (const Item& item : items) {
      check(git_treebuilder_insert(nullptr, builder, item.name.c_str(), &item.oid, item.mode),
            "insert " + item.name);
    }
    git_oid oid;
    int rc = git_treebuilder_write(&oid, builder);
    git_treebuilder_free(builder);
    check(rc, "write tree");
    return oid;
  }

  static std::string hex(const git_oid& oid) {
    char buf[GIT_OID_HEXSZ + 1];
    git_oid_tostr(buf, sizeof buf, &oid);
    return buf;
  }

 private:
  static void check(int rc, const std::string& what) {
    if (rc < 0) {
      const git_error* e = git_error_last();
      throw std::runtime_error(what + ": " + (e != nullptr ? e->message : "libgit2 error"));
    }
  }
  git_repository* repo_ = nullptr;
};

TEST(InMemorySnapshotIdTest, EmptyFilesystemHasTheEmptyTreeId) {
  testing_support::TempDir tmp;
  GitTrees git(tmp / "repo.git");
  InMemoryFilesystem fs;
  std::string expected = GitTrees::hex(git.tree({}));
  EXPECT_EQ(expected, "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
  EXPECT_EQ(fs.snapshot("empty").id, expected);
}

TEST(InMemorySnapshotIdTest, IdEqualsTheGitTreeIdOfTheSameContent) {
  testing_support::TempDir tmp;
  GitTrees git(tmp / "repo.git");

  InMemoryFilesystem fs;
  fs.write("file.txt", "plain file\n");
  fs.write("run.sh", "#!/bin/sh\necho hi\n");
  fs.set_executable("run.sh", true);
  fs.symlink("link", "file.txt");
  fs.write("sub/inner.txt", std::string("binary\0data", 11));
  fs.mkdir("sub/empty");
  // "sub.txt" sorts before the directory "sub" in git's order ('.' < '/'), but after it
  // in plain bytewise order: the tree encoding must use git's.
  fs.write("sub.txt", "next to sub\n");
  fs.write("sub-dir/x", "y");

  git_oid empty = git.tree({});
  git_oid sub = git.tree({
      {"inner.txt", GIT_FILEMODE_BLOB, git.blob(std::string("binary\0data", 11))},
      {"empty", GIT_FILEMODE_TREE, empty},
  });
  git_oid sub_dir = git.tree({{"x", GIT_FILEMODE_BLOB, git.blob("y")}});
  git_oid root = git.tree({
      {"file.txt", GIT_FILEMODE_BLOB, git.blob("plain file\n")},
      {"run.sh", GIT_FILEMODE_BLOB_EXECUTABLE, git.blob("#!/bin/sh\necho hi\n")},
      {"link", GIT_FILEMODE_LINK, git.blob("file.txt")},
      {"sub", GIT_FILEMODE_TREE, sub},
      {"sub.txt", GIT_FILEMODE_BLOB, git.blob("next to sub\n")},
      {"sub-dir", GIT_FILEMODE_TREE, sub_dir},
  });
  EXPECT_EQ(fs.snapshot("t").id, GitTrees::hex(root));

  // A change deep down changes the id to that of the new git tree.
  fs.write("sub/inner.txt", "changed");
  git_oid sub2 = git.tree({
      {"inner.txt", GIT_FILEMODE_BLOB, git.blob("changed")},
      {"empty", GIT_FILEMODE_TREE, empty},
  });
  git_oid root2 = git.tree({
      {"file.txt", GIT_FILEMODE_BLOB, git.blob("plain file\n")},
      {"run.sh", GIT_FILEMODE_BLOB_EXECUTABLE, git.blob("#!/bin/sh\necho hi\n")},
      {"link", GIT_FILEMODE_LINK, git.blob("file.txt")},
      {"sub", GIT_FILEMODE_TREE, sub2},
      {"sub.txt", GIT_FILEMODE_BLOB, git.blob("next to sub\n")},
      {"sub-dir", GIT_FILEMODE_TREE, sub_dir},
  });
  EXPECT_EQ(fs.snapshot("t2").id, GitTrees::hex(root2));
}

// ---- Structure sharing ------------------------------------------------------------------

TEST(InMemorySnapshotTest, ManySnapshotsOfALargeTreeAreCheapAndIndependent) {
  constexpr int kFiles = 10000;
  constexpr int kSnapshots = 1000;
  auto path_of = [](int i) {
    return "d" + std::to_string(i / 100) + "/f" + std::to_string(i % 100);
  };
  // File k*7919 mod 10000 changes before snapshot k: distinct files (7919 is prime).
  auto changed_at = [](int k) { return (k * 7919) % kFiles; };

  InMemoryFilesystem fs;
  for (int i = 0; i < kFiles; ++i) fs.write(path_of(i), "initial " + std::to_string(i));
  FilesystemSnapshot initial = fs.snapshot("initial");

  std::vector<FilesystemSnapshot> snaps;
  snaps.reserve(kSnapshots);
  auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < kSnapshots; ++k) {
    fs.write(path_of(changed_at(k)), "changed at " + std::to_string(k));
    snaps.push_back(fs.snapshot("s" + std::to_string(k)));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Copying or rehashing the 10,000 files per snapshot would be ~10^7 operations;
  // sharing makes each snapshot cost one path of directories.
  EXPECT_LT(seconds, 2.0) << "1000 write+snapshot rounds over 10,000 files took " << seconds
                          << " s";
  EXPECT_EQ(initial.state.use_count(), 1) << "held only by the snapshot, not copied";

  std::set<std::string> ids;
  for (const FilesystemSnapshot& s : snaps) ids.insert(s.id);
  ids.insert(initial.id);
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(kSnapshots + 1)) << "every state is different";

  // The expected content of every file as of snapshot k (-1: the initial snapshot).
  auto expected_state = [&](int k) {
    State state;
    for (int i = 0; i < kFiles / 100; ++i) {
      state["d" + std::to_string(i)] = Entry{EntryType::kDirectory, false, ""};
    }
    for (int i = 0; i < kFiles; ++i) {
      state[path_of(i)] = Entry{EntryType::kFile, false, "initial " + std::to_string(i)};
    }
    for (int j = 0; j <= k; ++j) {
      state[path_of(changed_at(j))].data = "changed at " + std::to_string(j);
    }
    return state;
  };

  // Restore in a scrambled order; each restore shows exactly the state of its time.
  for (int k : {0, 999, 1, 500, 998, -1, 250}) {
    fs.restore(k < 0 ? initial : snaps[static_cast<std::size_t>(k)]);
    EXPECT_EQ(difference(expected_state(k), dump(fs)), "") << "restore of snapshot " << k;
  }

  // Modify after a restore, snapshot, and check the older snapshots again.
  fs.restore(snaps[10]);
  fs.write(path_of(changed_at(10)), "diverged");
  fs.write(path_of(changed_at(500)), "diverged too");
  FilesystemSnapshot diverged = fs.snapshot("diverged");
  fs.restore(snaps[500]);
  EXPECT_EQ(difference(expected_state(500), dump(fs)), "");
  fs.restore(snaps[10]);
  EXPECT_EQ(difference(expected_state(10), dump(fs)), "");
  fs.restore(diverged);
  EXPECT_EQ(fs.read(path_of(changed_at(10))), "diverged");
  EXPECT_EQ(fs.read(path_of(changed_at(500))), "diverged too");
  EXPECT_EQ(fs.read(path_of(changed_at(9))), "changed at 9");
  EXPECT_EQ(fs.read(path_of(changed_at(11))), "initial " + std::to_string(changed_at(11)));
}

// ---- Refused snapshots ------------------------------------------------------------------

TEST(InMemorySnapshotTest, RestoreRefusesSnapshotsOfAnotherKind) {
  InMemoryFilesystem fs;
  populate(fs);
  FilesystemSnapshot good = fs.snapshot("good");
  fs.write("after", "x");
  State current = dump(fs);

  FilesystemSnapshot host_like;  // what a HostFilesystem snapshot looks like
  host_like.id = "0123456789abcdef0123456789abcdef01234567";
  host_like.commit = "89abcdef0123456789abcdef0123456789abcdef";
  host_like.tag = "host";
  expect_error(ErrorCode::kInvalidArgument, "host snapshot", [&] { fs.restore(host_like); });

  FilesystemSnapshot null_state = good;
  null_state.state = nullptr;
  expect_error(ErrorCode::kInvalidArgument, "null state", [&] { fs.restore(null_state); });

  FilesystemSnapshot with_commit = good;
  with_commit.commit = "89abcdef0123456789abcdef0123456789abcdef";
  expect_error(ErrorCode::kInvalidArgument, "with commit", [&] { fs.restore(with_commit); });

  FilesystemSnapshot default_constructed;
  expect_error(ErrorCode::kInvalidArgument, "empty", [&] { fs.restore(default_constructed); });

  FilesystemSnapshot tampered = good;
  tampered.id = std::string(40, '0');  // an id that is not that of the tree it holds
  expect_error(ErrorCode::kInvalidArgument, "tampered id", [&] { fs.restore(tampered); });

  EXPECT_EQ(dump(fs), current) << "a refused restore changes nothing";
  fs.restore(good);
  EXPECT_FALSE(fs.exists("after"));
}

TEST(InMemorySnapshotTest, SnapshotRestoresIntoAnotherInMemoryFilesystem) {
  InMemoryFilesystem a;
  populate(a);
  FilesystemSnapshot snap = a.snapshot("a");
  InMemoryFilesystem b;
  b.write("unrelated", "x");
  b.restore(snap);
  EXPECT_EQ(dump(b), dump(a));
  b.write("README", "changed in b");
  EXPECT_EQ(a.read("README"), "hello\n") << "the two filesystems do not share mutations";
}

}  // namespace

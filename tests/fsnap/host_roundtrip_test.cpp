// Round-trip fidelity of HostFilesystem checkpoints: every kind of
// entry and change comes back exactly after a restore, each case on its own, and a
// seeded randomized test over many operations and restores.
#include <sys/stat.h>

#include <cstdlib>
#include <functional>
#include <random>
#include <set>

#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

// Takes checkpoint A of the state `setup` makes, applies `change`, takes B; then
// restores A, B, and finally undoes the last restore via its safety checkpoint.
class RoundTripTest : public HostTest {
 protected:
  void round_trip(const std::function<void()>& setup, const std::function<void()>& change) {
    setup();
    fsnap::HostFilesystem fs = open();
    Manifest a = manifest();
    fsnap::Checkpoint cp_a = fs.checkpoint({.tag = "a"});
    change();
    Manifest b = manifest();
    ASSERT_NE(testing_support::describe_difference(a, b), "") << "the change changed nothing";
    fsnap::Checkpoint cp_b = fs.checkpoint({.tag = "b"});

    fsnap::RestoreReport to_a = fs.restore_checkpoint(cp_a, {});
    EXPECT_WORKSPACE(a);
    EXPECT_FALSE(to_a.changes.empty());
    ASSERT_TRUE(to_a.safety.has_value());

    fs.restore_checkpoint(cp_b, {});
    EXPECT_WORKSPACE(b);

    fsnap::RestoreReport again = fs.restore_checkpoint(cp_a, {});
    EXPECT_WORKSPACE(a);
    fs.restore_checkpoint(*again.safety, {});
    EXPECT_WORKSPACE(b);

    // A restore to the current state changes nothing.
    fsnap::RestoreReport noop = fs.restore_checkpoint(cp_b, {});
    EXPECT_TRUE(noop.changes.empty());
    EXPECT_WORKSPACE(b);
  }
};

std::string all_bytes() {
  std::string s;
  for (int round = 0; round < 3; ++round) {
    for (int c = 0; c < 256; ++c) s.push_back(static_cast<char>(c));
  }
  return s;
}

TEST_F(RoundTripTest, FileContent) {
  round_trip([&] { write("a.txt", "one\n"); }, [&] { write("a.txt", "two, longer\n"); });
}

TEST_F(RoundTripTest, SameSizeContentChange) {
  round_trip([&] { write("a.txt", "aaaa"); }, [&] { write("a.txt", "bbbb"); });
}

TEST_F(RoundTripTest, BinaryData) {
  round_trip([&] { write("bin/data", all_bytes()); },
             [&] { write("bin/data", std::string(1000, '\0') + "tail"); });
}

TEST_F(RoundTripTest, EmptyFiles) {
  round_trip(
      [&] {
        write("empty", "");
        write("d/also-empty", "");
      },
      [&] {
        write("empty", "now has data");
        remove("d/also-empty");
      });
}

TEST_F(RoundTripTest, ExecutableBit) {
  round_trip(
      [&] {
        write("run.sh", "#!/bin/sh\n", true);
        write("plain", "x");
      },
      [&] {
        ::chmod(at("run.sh").c_str(), 0644);
        ::chmod(at("plain").c_str(), 0755);
      });
}

TEST_F(RoundTripTest, SymlinksAreLinks) {
  round_trip(
      [&] {
        write("target.txt", "target");
        link("target.txt", "rel-link");
        link("/etc/passwd", "abs-link");  // never followed: stored as its target text
        link("missing/nowhere", "dangling");
        mkdir("dir");
        write("dir/inner", "x");
        link("dir", "dir-link");
      },
      [&] {
        remove("rel-link");
        link("dir/inner", "rel-link");
        remove("dangling");
        remove("abs-link");
        write("dir/inner", "changed through the directory");
      });
}

TEST_F(RoundTripTest, EmptyDirectories) {
  round_trip(
      [&] {
        mkdir("empty");
        mkdir("nested/empty/deep");
      },
      [&] {
        remove("empty");
        remove("nested/empty/deep");
        write("nested/f", "x");
      });
}

TEST_F(RoundTripTest, UnusualNames) {
  round_trip(
      [&] {
        write("with space.txt", "1");
        write("new\nline", "2");
        write(std::string("caf\xe9-latin1"), "3");
        write("caf\xc3\xa9-utf8", "4");
        write("quote\"and\\backslash", "5");
        write("-leading-dash", "6");
        write("tab\there/x", "7");
        write(std::string("\x01\x7f-control"), "8");
      },
      [&] {
        write("new\nline", "changed");
        remove(std::string("caf\xe9-latin1"));
        write("more\nnewlines\n", "9");
      });
}

TEST_F(RoundTripTest, DeletionsComeBack) {
  round_trip(
      [&] {
        write("keep", "k");
        write("gone/deep/file", "g");
        write("gone/other", "o");
      },
      [&] { remove("gone"); });
}

TEST_F(RoundTripTest, CreationsAreRemoved) {
  round_trip([&] { write("existing", "e"); },
             [&] {
               write("created/deep/file", "c");
               write("also", "a");
               mkdir("newdir");
             });
}

TEST_F(RoundTripTest, Renames) {
  round_trip(
      [&] {
        write("src/a.c", "a");
        write("src/b.c", "b");
      },
      [&] {
        fs::rename(ws_ / "src/a.c", ws_ / "src/renamed.c");
        fs::rename(ws_ / "src", ws_ / "lib");
      });
}

TEST_F(RoundTripTest, FileBecomesDirectory) {
  round_trip([&] { write("x", "file"); },
             [&] {
               remove("x");
               write("x/inside", "now a directory");
             });
}

TEST_F(RoundTripTest, DirectoryBecomesFile) {
  round_trip(
      [&] {
        write("x/a", "a");
        write("x/sub/b", "b");
        mkdir("x/empty");
      },
      [&] {
        remove("x");
        write("x", "now a file");
      });
}

TEST_F(RoundTripTest, FileBecomesSymlink) {
  round_trip(
      [&] {
        write("x", "file");
        write("t", "t");
      },
      [&] {
        remove("x");
        link("t", "x");
      });
}

TEST_F(RoundTripTest, SymlinkBecomesFile) {
  round_trip(
      [&] {
        write("t", "t");
        link("t", "x");
      },
      [&] {
        remove("x");
        write("x", "file");
      });
}

TEST_F(RoundTripTest, DirectoryBecomesSymlink) {
  round_trip(
      [&] {
        write("d/a", "a");
        write("e/b", "b");
      },
      [&] {
        remove("d");
        link("e", "d");
      });
}

TEST_F(RoundTripTest, SymlinkBecomesDirectory) {
  round_trip(
      [&] {
        write("e/b", "b");
        link("e", "d");
      },
      [&] {
        remove("d");
        write("d/own", "own");
      });
}

TEST_F(RoundTripTest, LargeFile) {
  std::string big(6 << 20, 'x');
  for (std::size_t i = 0; i < big.size(); i += 4093) big[i] = static_cast<char>(i);
  round_trip([&] { write("big.bin", big); }, [&] { write("big.bin", big.substr(0, 1 << 20)); });
}

TEST_F(RoundTripTest, RestoreDoesNotFollowSymlinkedDirectories) {
  // A symlink created where a directory was must not make restore write through it.
  testing_support::TempDir outside;
  write("d/a", "a");
  fsnap::HostFilesystem fs = open();
  Manifest before = manifest();
  fsnap::Checkpoint cp = fs.checkpoint({});
  remove("d");
  link(outside.path().string(), "d");
  fs.restore_checkpoint(cp, {});
  EXPECT_WORKSPACE(before);
  EXPECT_TRUE(fs::is_empty(outside.path())) << "restore wrote outside the workspace";
}

// ---- Restoring some paths only ----------------------------------------------------

TEST_F(RoundTripTest, OnlyTheNamedPathsAreRestored) {
  write("keep.txt", "before");
  write("undo.txt", "before");
  fsnap::HostFilesystem fs = open();
  fsnap::Checkpoint cp = fs.checkpoint({});
  write("keep.txt", "after");
  write("undo.txt", "after");
  write("d/mine", "new");
  write("d/theirs", "new");

  fsnap::RestoreOptions options;
  options.only = std::set<std::string>{"undo.txt", "d", "d/mine"};
  fsnap::RestoreReport report = fs.restore_checkpoint(cp, options);
  EXPECT_EQ(testing_support::read_file(ws_ / "undo.txt"), "before");
  EXPECT_EQ(testing_support::read_file(ws_ / "keep.txt"), "after");
  EXPECT_FALSE(fs::exists(ws_ / "d/mine"));
  EXPECT_EQ(testing_support::read_file(ws_ / "d/theirs"), "new")
      << "d is not removed while a path below it is not restored";
  ASSERT_TRUE(report.safety.has_value());
  EXPECT_EQ(report.changes.size(), 2u);
}

// ---- Randomized ---------------------------------------------------------------------

// Random operations over a small pool of names, so that they collide often.
class RandomWorkspace {
 public:
  RandomWorkspace(const fs::path& root, std::uint64_t seed) : root_(root), rng_(seed) {}

  void step() {
    std::string path = random_path();
    fs::path abs = root_ / path;
    switch (rng_() % 9) {
      case 0:
      case 1:  // create or overwrite a file
        replace_with_file(abs);
        break;
      case 2:  // delete whatever is there
        fs::remove_all(abs);
        break;
      case 3: {  // rename something to another random name
        std::string to = random_path();
        if (exists(abs) && !is_prefix(path, to) && !is_prefix(to, path)) {
          fs::remove_all(root_ / to);
          fs::create_directories((root_ / to).parent_path());
          fs::rename(abs, root_ / to);
        }
        break;
      }
      case 4:  // toggle the executable bit
        if (fs::is_regular_file(fs::symlink_status(abs))) {
          struct stat st;
          ::lstat(abs.c_str(), &st);
          ::chmod(abs.c_str(), (st.st_mode & 0100) ? 0644 : 0755);
        }
        break;
      case 5:  // symlink (sometimes dangling)
        fs::remove_all(abs);
        fs::create_directories(abs.parent_path());
        fs::create_symlink(rng_() % 2 ? "../x" : random_name(), abs);
        break;
      case 6:  // directory (sometimes left empty)
        fs::remove_all(abs);
        fs::create_directories(abs);
        if (rng_() % 2) testing_support::write_file(abs / random_name(), random_data());
        break;
      case 7:  // truncate to empty
        if (fs::is_regular_file(fs::symlink_status(abs))) testing_support::write_file(abs, "");
        break;
      default:  // append
        if (fs::is_regular_file(fs::symlink_status(abs))) {
          testing_support::write_file(abs, testing_support::read_file(abs) + random_data());
        }
        break;
    }
  }

 private:
  static bool exists(const fs::path& p) {
    return fs::symlink_status(p).type() != fs::file_not_found;
  }
  static bool is_prefix(const std::string& a, const std::string& b) {
    return b.compare(0, a.size(), a) == 0 && (b.size() == a.size() || b[a.size()] == '/');
  }

  std::string random_name() {
    static const char* names[] = {"a", "b", "c d", "e\nf", "g\xff", "h.txt", ".hidden"};
    return names[rng_() % (sizeof names / sizeof *names)];
  }

  // A path of 1-3 components whose parents are directories (or made so).
  std::string random_path() {
    std::string path;
    int depth = 1 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < depth; ++i) {
      std::string next = path.empty() ? random_name() : path + "/" + random_name();
      if (i + 1 < depth) {
        fs::path abs = root_ / next;
        if (!fs::is_directory(fs::symlink_status(abs))) {
          if (rng_() % 3 == 0) return next;  // keep it shallow instead
          fs::remove_all(abs);
          fs::create_directories(abs);
        }
      }
      path = next;
    }
    return path;
  }

  std::string random_data() {
    std::string s(rng_() % 64, '\0');
    for (char& c : s) c = static_cast<char>(rng_());
    return s;
  }

  void replace_with_file(const fs::path& abs) {
    if (!fs::is_regular_file(fs::symlink_status(abs))) fs::remove_all(abs);
    testing_support::write_file(abs, random_data(), rng_() % 4 == 0);
  }

  fs::path root_;
  std::mt19937_64 rng_;
};

std::uint64_t test_seed() {
  if (const char* env = std::getenv("SHADOWBOX_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return std::random_device{}();
}

// N rounds of random operations with a checkpoint after each, then restores to random
// earlier checkpoints. With watched, the workspace is watched (inotify) and every
// capture is also compared with a full walk of a fresh, unwatched HostFilesystem.
class RandomizedTest : public HostTest {
 protected:
  void run(bool watched);
};

void RandomizedTest::run(bool watched) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) +
               " (rerun with SHADOWBOX_TEST_SEED=" + std::to_string(seed) + ")");
  RandomWorkspace random(ws_, seed);
  std::mt19937_64 pick(seed ^ 0x9e3779b97f4a7c15ull);
  fsnap::HostFilesystem fs = open();
  if (watched) fs.watch();
  auto full_walk = [&] {
    fs::remove(store_dir_ / "stat-cache");
    return open().capture_tree();
  };

  std::vector<std::pair<fsnap::Checkpoint, Manifest>> history;
  constexpr int kRounds = 60;
  for (int round = 0; round < kRounds; ++round) {
    int ops = 1 + static_cast<int>(pick() % 4);
    for (int i = 0; i < ops; ++i) random.step();
    Manifest m = manifest();
    history.emplace_back(fs.checkpoint({}), m);
    if (watched) {
      std::string full = full_walk();
      ASSERT_EQ(history.back().first.tree, full) << "round " << round;
    }
  }
  for (int i = 0; i < 25; ++i) {
    std::size_t k = pick() % history.size();
    SCOPED_TRACE("restore to snapshot " + std::to_string(k));
    fs.restore_checkpoint(history[k].first, {});
    ASSERT_EQ(testing_support::describe_difference(history[k].second, manifest()), "");
    if (watched) {
      ASSERT_EQ(fs.capture_tree(), history[k].first.tree);
    }
    // Mutate between restores too, so restores start from states never captured.
    if (i % 3 == 0) random.step();
    if (watched) {
      ASSERT_EQ(fs.capture_tree(), full_walk());
    }
  }
}

TEST_F(RandomizedTest, OperationsAndRestores) {
  run(false);
}

TEST_F(RandomizedTest, OperationsAndRestoresWhileWatching) {
  run(true);
}

}  // namespace
}  // namespace fsnap_test

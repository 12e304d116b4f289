// A first capture of a git checkout (issue 10): blob ids come from the user's index
// where its stat data vouches for a file, and the result is exactly what reading every
// file gives. A blob the user's packs hold goes into the store's own pack as the bytes
// git compressed, once they decompress to the file's content; nothing in the store is
// the user's file. The store stays self-contained: deleting, truncating or
// garbage-collecting the user's repository afterwards breaks no checkpoint, and a pack
// whose index lies is not believed (issue 31).
#include <fcntl.h>
#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <sstream>
#include <thread>

#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

using testing_support::CommandResult;
using testing_support::run_command;

class CheckoutIndexTest : public HostTest {
 protected:
  CheckoutIndexTest() { use_test_clock(); }

  // Runs git in the workspace, isolated from the user's own configuration.
  std::string git(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"git", "-c", "user.name=t", "-c", "user.email=t@example.com"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_command(argv, ws_, {"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"});
    EXPECT_EQ(r.exit_code, 0) << "git " << args.front() << ": " << r.err;
    return r.out;
  }

  // A checkout of a repository with n committed files in a few directories (packed by
  // git gc, as a clone's are), a symlink and an executable file.
  void make_checkout(int n) {
    git({"init", "-q"});
    for (int i = 0; i < n; ++i) {
      write("src/d" + std::to_string(i % 5) + "/f" + std::to_string(i) + ".c",
            "int f" + std::to_string(i) + "() { return " + std::to_string(i) + "; }\n");
    }
    write("tool.sh", "#!/bin/sh\necho hi\n", true);
    link("src/d0/f0.c", "latest");
    write(".gitignore", "*.o\n");
    past_the_clock_tick();
    git({"add", "-A"});
    git({"commit", "-q", "-m", "one"});
    git({"gc", "-q"});
  }

  // File times come from a coarse clock (a tick of at most 10 ms): a file written in the
  // same tick as the index that takes it is racy, and read. Called between writing files
  // and `git add`, so that the index vouches for them.
  static void past_the_clock_tick() { std::this_thread::sleep_for(std::chrono::milliseconds(30)); }

  fsnap::CaptureOptions counting(bool use_git_index = true) {
    fsnap::CaptureOptions options;
    options.use_git_index = use_git_index;
    options.on_progress = [this](const fsnap::CaptureProgress& p) {
      if (p.done) last_ = p;
    };
    return options;
  }

  // The tree of the workspace as a capture that reads every file sees it, in a store of
  // its own.
  std::string tree_read_in_full() {
    fsnap::HostFilesystem plain(fsnap::Store::open(temp_.path() / "plain-store", ws_, true),
                                counting(false), fsnap::HostEnv{nullptr, clock_, nullptr});
    return plain.capture_tree();
  }

  static timespec mtime_of(const fs::path& p) {
    struct stat st;
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mtim;
  }

  fs::path user_pack() {
    for (fs::directory_iterator it(ws_ / ".git/objects/pack"), end; it != end; ++it) {
      if (it->path().extension() == ".pack") return it->path();
    }
    ADD_FAILURE() << "git gc wrote no pack";
    return {};
  }

  // The files of the user's packs (.pack, .idx and the rest).
  std::vector<fs::path> user_pack_files() {
    std::vector<fs::path> out;
    for (fs::directory_iterator it(ws_ / ".git/objects/pack"), end; it != end; ++it) {
      out.push_back(it->path());
    }
    EXPECT_FALSE(out.empty()) << "git gc wrote no pack";
    return out;
  }

  // A first checkpoint of a packed checkout; then damage (to the user's packs, as an
  // agent's command could) and an agent's damage to the work tree; then the
  // checkpoint restored by another HostFilesystem (another process, as a rollback is):
  // every file comes back.
  void expect_checkpoint_survives(const std::function<void(const fs::path&)>& damage) {
    make_checkout(30);
    write("src/d2/new.c", "staged, not committed\n");
    past_the_clock_tick();
    git({"add", "src/d2/new.c"});
    settle();
    Manifest before = manifest();
    fsnap::Checkpoint cp;
    {
      fsnap::HostFilesystem fs = open(counting());
      cp = fs.checkpoint({});
      EXPECT_EQ(last_.files_hashed, 0u) << "the ids came from the index";
    }
    for (const fs::path& file : user_pack_files()) {
      ::chmod(file.c_str(), 0644);  // git writes them read-only; so much for that
      damage(file);
    }
    remove("src");
    write("tool.sh", "rm -rf /\n", true);
    fsnap::HostFilesystem fs = open(counting());
    fs.restore_checkpoint(cp, {});
    EXPECT_WORKSPACE(before);
  }

  // A version-2 pack index naming each id (hex) with the offset given, for a pack
  // whose checksum (its last 20 bytes) is pack_checksum: what an index says, crafted.
  std::string crafted_index(std::vector<std::pair<std::string, std::uint64_t>> entries,
                            const std::string& pack_checksum) {
    std::sort(entries.begin(), entries.end());
    std::vector<git_oid> ids(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
      EXPECT_EQ(git_oid_fromstr(&ids[i], entries[i].first.c_str()), 0);
    }
    auto be32 = [](std::string& out, std::uint32_t v) {
      for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
    };
    std::string idx = "\377tOc";
    be32(idx, 2);
    for (unsigned byte = 0, n = 0; byte < 256; ++byte) {
      while (n < ids.size() && ids[n].id[0] <= byte) ++n;
      be32(idx, n);
    }
    for (const git_oid& id : ids) idx.append(reinterpret_cast<const char*>(id.id), GIT_OID_RAWSZ);
    for (std::size_t i = 0; i < ids.size(); ++i) be32(idx, 0);  // CRCs: not checked on reading
    std::string large;
    for (const auto& [id, offset] : entries) {
      if (offset < 0x80000000u) {
        be32(idx, static_cast<std::uint32_t>(offset));
      } else {
        be32(idx, 0x80000000u | static_cast<std::uint32_t>(large.size() / 8));
        be32(large, static_cast<std::uint32_t>(offset >> 32));
        be32(large, static_cast<std::uint32_t>(offset));
      }
    }
    idx += large + pack_checksum;
    testing_support::write_file(temp_.path() / "idx-body", idx);
    std::string sum = run_ok({"sha1sum", (temp_.path() / "idx-body").string()}).substr(0, 40);
    for (std::size_t i = 0; i < sum.size(); i += 2) {
      idx.push_back(static_cast<char>(std::stoi(sum.substr(i, 2), nullptr, 16)));
    }
    return idx;
  }

  // Places a pack and its index into the checkout's pack directory as pack-<name>.
  void place_pack(const std::string& name, const std::string& pack, const std::string& idx) {
    fs::path base = ws_ / ".git/objects/pack" / ("pack-" + name);
    fs::create_directories(base.parent_path());
    testing_support::write_file(fs::path(base).replace_extension(".pack"), pack);
    testing_support::write_file(fs::path(base).replace_extension(".idx"), idx);
  }

  // The output of a command, which must succeed.
  std::string run_ok(const std::vector<std::string>& argv, const std::string& input = "") {
    auto r =
        run_command(argv, ws_, {"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}, input);
    EXPECT_EQ(r.exit_code, 0) << argv.front() << ": " << r.err;
    return r.out;
  }

  fsnap::CaptureProgress last_;
};

TEST_F(CheckoutIndexTest, FirstCaptureTakesIdsFromTheIndexAndMatchesAFullRead) {
  make_checkout(40);
  write("src/d1/f1.c", "changed, and longer than before\n");  // edited, not staged
  write("src/d2/new.c", "staged, not committed\n");           // a loose object of the user's
  past_the_clock_tick();
  git({"add", "src/d2/new.c"});
  write("notes.txt", "untracked\n");
  write("main.o", "ignored\n");
  settle();
  timespec pack_before = mtime_of(user_pack());
  timespec index_before = mtime_of(ws_ / ".git/index");

  fsnap::HostFilesystem fs = open(counting());
  std::string tree = fs.capture_tree();
  std::uint64_t hashed = last_.files_hashed;

  EXPECT_EQ(tree, tree_read_in_full());
  EXPECT_EQ(last_.files_hashed, 46u) << "the full read reads every file";
  // Only the edited, untracked and ignored files were read as files the index does not
  // know; the others, the staged one (a loose object of the user's) included, took the
  // index's id once their hash confirmed it.
  EXPECT_EQ(hashed, 3u);
  // The user's repository is only read.
  timespec pack_after = mtime_of(user_pack());
  timespec index_after = mtime_of(ws_ / ".git/index");
  EXPECT_EQ(pack_after.tv_sec, pack_before.tv_sec);
  EXPECT_EQ(pack_after.tv_nsec, pack_before.tv_nsec);
  EXPECT_EQ(index_after.tv_nsec, index_before.tv_nsec);
  // Nothing in the store is a file of the user's repository (no hard link, no pack of
  // the user's name): the store's objects are its own.
  std::vector<ino_t> user_inodes;
  for (const fs::path& file : user_pack_files()) {
    struct stat st;
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    user_inodes.push_back(st.st_ino);
    EXPECT_FALSE(fs::exists(store_dir_ / "repo.git/objects/pack" / file.filename())) << file;
  }
  for (fs::recursive_directory_iterator it(store_dir_ / "repo.git/objects"), end; it != end; ++it) {
    struct stat st;
    ASSERT_EQ(::lstat(it->path().c_str(), &st), 0);
    if (!S_ISREG(st.st_mode)) continue;
    EXPECT_EQ(st.st_nlink, 1u) << it->path();
    EXPECT_EQ(std::count(user_inodes.begin(), user_inodes.end(), st.st_ino), 0) << it->path();
  }
}

TEST_F(CheckoutIndexTest, BlobsTheUsersPacksHoldAreCopiedIntoTheStoresOwnPack) {
  make_checkout(300);  // enough objects for the first capture to write a pack
  std::string big;
  for (int i = 0; big.size() < 20000; ++i) {
    big += "line " + std::to_string(i * 7919 % 1000) + " of a file that compresses\n";
  }
  write("big.txt", big);
  past_the_clock_tick();
  git({"add", "big.txt"});
  git({"commit", "-q", "-m", "two"});
  git({"repack", "-adq"});
  settle();
  std::string id = git({"rev-parse", "HEAD:big.txt"});
  id.pop_back();

  // Where git put the blob in its pack (`git verify-pack -v`: id, type, size, size in
  // the pack, offset), and so the bytes git compressed it to.
  fs::path pack = user_pack();
  std::istringstream listing(
      run_ok({"git", "verify-pack", "-v", fs::path(pack).replace_extension(".idx").string()}));
  std::string compressed;
  for (std::string line; std::getline(listing, line);) {
    if (line.compare(0, id.size(), id) != 0) continue;
    std::istringstream fields(line);
    std::string oid, type;
    std::uint64_t size = 0, in_pack = 0, offset = 0;
    fields >> oid >> type >> size >> in_pack >> offset;
    ASSERT_EQ(type, "blob");
    std::string entry = testing_support::read_file(pack).substr(offset, in_pack);
    std::size_t header = 1;
    while (static_cast<unsigned char>(entry[header - 1]) & 0x80) ++header;
    compressed = entry.substr(header);
  }
  ASSERT_FALSE(compressed.empty()) << "big.txt is not a whole blob in git's pack";

  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint cp = fs.checkpoint({});
  EXPECT_EQ(last_.files_hashed, 0u);
  EXPECT_EQ(cp.tree, tree_read_in_full());
  std::string stored;  // the packs the store wrote (not one of the user's, were it there)
  for (fs::directory_iterator it(store_dir_ / "repo.git/objects/pack"), end; it != end; ++it) {
    if (it->path().extension() == ".pack" && it->path().filename() != pack.filename()) {
      stored += testing_support::read_file(it->path());
    }
  }
  EXPECT_NE(stored.find(compressed), std::string::npos)
      << "the store's pack holds git's compressed bytes of big.txt";
}

TEST_F(CheckoutIndexTest, CheckpointsSurviveTheUsersPacksTruncated) {
  // What one failing Bash call of an agent can do: `truncate -s0 .git/objects/pack/*`.
  expect_checkpoint_survives(
      [](const fs::path& file) { ASSERT_EQ(::truncate(file.c_str(), 0), 0) << file; });
}

TEST_F(CheckoutIndexTest, CheckpointsSurviveTheUsersPacksDeleted) {
  expect_checkpoint_survives([](const fs::path& file) { fs::remove(file); });
}

TEST_F(CheckoutIndexTest, APackWhoseIndexMapsAnIdToOtherBytesIsNotBelieved) {
  // Two files of one size. The checkout's index vouches for b.txt (its true id); a pack
  // placed in .git holds a.txt's bytes, and its index names them with b.txt's id.
  git({"init", "-q"});
  std::string a = "the bytes the forged index names\n";
  std::string b = "b.txt really holds this one size\n";
  ASSERT_EQ(a.size(), b.size());
  write("a.txt", a);
  write("b.txt", b);
  past_the_clock_tick();
  git({"add", "-A"});
  git({"commit", "-q", "-m", "one"});
  std::string a_id = git({"rev-parse", "HEAD:a.txt"});
  std::string b_id = git({"rev-parse", "HEAD:b.txt"});
  a_id.pop_back();
  b_id.pop_back();

  // A pack of a.txt's blob alone (its one object right after the 12-byte header), and
  // an index that gives that object b.txt's id.
  std::string pack_data = run_ok({"git", "pack-objects", "-q", "--stdout"}, a_id + "\n");
  ASSERT_GT(pack_data.size(), 32u);
  place_pack("0123456789012345678901234567890123456789", pack_data,
             crafted_index({{b_id, 12}}, pack_data.substr(pack_data.size() - 20)));
  settle();

  fsnap::Checkpoint first;
  {
    fsnap::HostFilesystem fs = open(counting());
    first = fs.checkpoint({});
    EXPECT_EQ(first.tree, tree_read_in_full());
  }
  remove("b.txt");
  remove("a.txt");
  fsnap::HostFilesystem fs = open(counting());
  fs.restore_checkpoint(first, {});
  EXPECT_EQ(testing_support::read_file(ws_ / "b.txt"), b);
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), a);
}

TEST_F(CheckoutIndexTest, PacksThatAreNotWhatTheySayAreReadAsNothing) {
  make_checkout(60);
  settle();
  fs::path real = user_pack();
  std::string pack = testing_support::read_file(real);
  std::string checksum = pack.substr(pack.size() - 20);
  // What git's index of the real pack says: offset and id of each object.
  std::vector<std::pair<std::string, std::uint64_t>> entries;
  std::istringstream listing(run_ok(
      {"git", "show-index"}, testing_support::read_file(fs::path(real).replace_extension(".idx"))));
  for (std::string line; std::getline(listing, line);) {
    std::istringstream fields(line);
    std::uint64_t offset = 0;
    std::string id;
    fields >> offset >> id;
    entries.emplace_back(id, offset);
  }
  ASSERT_GT(entries.size(), 60u);
  // Each id given the next one's bytes (files of one size among them), ...
  std::vector<std::pair<std::string, std::uint64_t>> shifted = entries;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    shifted[i].second = entries[(i + 1) % entries.size()].second;
  }
  place_pack("00-shifted", pack, crafted_index(shifted, checksum));
  // ... offsets into the pack's header, its trailer, past its end and in the 64-bit table,
  std::vector<std::pair<std::string, std::uint64_t>> wild = entries;
  for (std::size_t i = 0; i < wild.size(); ++i) {
    std::uint64_t choices[] = {0,
                               5,
                               pack.size() - 20,
                               pack.size() - 1,
                               pack.size() + 100,
                               std::uint64_t{1} << 40,
                               ~std::uint64_t{0}};
    wild[i].second = choices[i % (sizeof choices / sizeof *choices)];
  }
  place_pack("01-wild", pack, crafted_index(wild, checksum));
  // ... the pack cut in half under a true index,
  place_pack("02-cut", pack.substr(0, pack.size() / 2),
             testing_support::read_file(fs::path(real).replace_extension(".idx")));
  // ... an index whose fan-out goes down, and one cut short,
  std::string idx = crafted_index(entries, checksum);
  std::string falling = idx;
  falling[8 + 200 * 4] = '\x7f';
  place_pack("03-falling", pack, falling);
  place_pack("04-short", pack, idx.substr(0, idx.size() / 2));
  // ... and files that are not files.
  fs::path packs = ws_ / ".git/objects/pack";
  fs::create_symlink("/dev/zero", packs / "pack-05-zero.idx");
  fs::create_symlink("/dev/zero", packs / "pack-05-zero.pack");
  ASSERT_EQ(::mkfifo((packs / "pack-06-fifo.idx").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((packs / "pack-06-fifo.pack").c_str(), 0600), 0);
  fs::create_directory(packs / "pack-07-dir.idx");
  settle();

  Manifest before = manifest();
  fsnap::Checkpoint first;
  {
    fsnap::HostFilesystem fs = open(counting());
    first = fs.checkpoint({});
    EXPECT_EQ(last_.files_hashed, 0u) << "the ids still came from the index";
    EXPECT_EQ(first.tree, tree_read_in_full());
  }
  remove("src");
  fsnap::HostFilesystem fs = open(counting());
  fs.restore_checkpoint(first, {});
  EXPECT_WORKSPACE(before);
  CommandResult fsck = run_command({"git", "--git-dir", (store_dir_ / "repo.git").string(), "fsck",
                                    "--strict", "--no-dangling"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
}

TEST_F(CheckoutIndexTest, CheckpointsSurviveTheUserRepositoryDeleted) {
  make_checkout(30);
  write("src/d2/new.c", "staged, not committed\n");
  past_the_clock_tick();
  git({"add", "src/d2/new.c"});
  settle();
  Manifest before = manifest();
  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint cp = fs.checkpoint({});
  EXPECT_EQ(last_.files_hashed, 0u);

  fs::remove_all(ws_ / ".git");
  for (int i = 0; i < 30; i += 3)
    remove("src/d" + std::to_string(i % 5) + "/f" + std::to_string(i) + ".c");
  write("src/d0/f0.c", "overwritten\n");
  fs.restore_checkpoint(cp, {});
  EXPECT_WORKSPACE(before);
}

TEST_F(CheckoutIndexTest, CheckpointsSurviveTheUserRepositoryGarbageCollected) {
  make_checkout(30);
  settle();
  Manifest before = manifest();
  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint cp = fs.checkpoint({});
  EXPECT_EQ(last_.files_hashed, 0u);
  fs::path linked = user_pack();

  // History rewritten to nothing, then every unreachable object pruned: the packs the
  // store linked are deleted from the user's repository.
  std::string branch = git({"symbolic-ref", "--short", "HEAD"});
  branch.pop_back();  // the newline
  git({"checkout", "-q", "--orphan", "empty"});
  git({"rm", "-rq", "--cached", "."});
  git({"commit", "-q", "--allow-empty", "-m", "empty"});
  git({"branch", "-q", "-D", branch});
  git({"reflog", "expire", "--expire=now", "--all"});
  git({"gc", "-q", "--prune=now"});
  EXPECT_FALSE(fs::exists(linked)) << "git gc kept the pack";

  remove("src");
  fs.restore_checkpoint(cp, {});
  EXPECT_WORKSPACE(before);
}

TEST_F(CheckoutIndexTest, ContentAFilterChangedIsReadAsItIs) {
  git({"init", "-q"});
  git({"config", "core.autocrlf", "true"});
  write("dos.txt", "one\r\ntwo\r\n");
  write("unix.txt", "no line ends at all");
  past_the_clock_tick();
  git({"add", "-A"});
  git({"commit", "-q", "-m", "one"});
  git({"gc", "-q"});
  write("staged.txt", "three\r\n");  // a loose object of the user's
  past_the_clock_tick();
  git({"add", "staged.txt"});
  settle();
  Manifest before = manifest();
  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint cp = fs.checkpoint({});
  // The files with CRLF went into the index with LF endings (another size): they were
  // read.
  EXPECT_EQ(last_.files_hashed, 2u);

  remove("dos.txt");
  remove("staged.txt");
  fs.restore_checkpoint(cp, {});
  EXPECT_WORKSPACE(before);
  EXPECT_EQ(tree_read_in_full(), cp.tree);
}

TEST_F(CheckoutIndexTest, AFilterAttributeMeansEveryFileIsRead) {
  make_checkout(10);
  write(".gitattributes", "*.c filter=custom\n");
  past_the_clock_tick();
  git({"add", ".gitattributes"});
  settle();
  fsnap::HostFilesystem fs = open(counting());
  EXPECT_EQ(fs.capture_tree(), tree_read_in_full());
  EXPECT_EQ(last_.files_hashed, 14u);
}

TEST_F(CheckoutIndexTest, RacyEntriesAreRead) {
  make_checkout(10);
  // An index written before its files' times: git cannot tell whether they changed
  // again in the same tick, and neither can shadowbox.
  timespec past[2] = {{.tv_sec = 1000000, .tv_nsec = 0}, {.tv_sec = 1000000, .tv_nsec = 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (ws_ / ".git/index").c_str(), past, 0), 0);
  settle();
  fsnap::HostFilesystem fs = open(counting());
  EXPECT_EQ(fs.capture_tree(), tree_read_in_full());
  EXPECT_EQ(last_.files_hashed, 13u);
}

TEST_F(CheckoutIndexTest, TheIndexIsNotUsedWhenTurnedOffOrOnceAStatCacheExists) {
  make_checkout(10);
  settle();
  {
    fsnap::HostFilesystem fs = open(counting(false));
    fs.capture_tree();
    EXPECT_EQ(last_.files_hashed, 13u);
  }
  write("src/d0/f0.c", "edited\n");
  settle();
  fsnap::HostFilesystem fs = open(counting());
  fs.capture_tree();
  EXPECT_EQ(last_.files_hashed, 1u);  // from the stat cache, as before
}

TEST_F(CheckoutIndexTest, AForgedIndexCannotMakeACheckpointRecordWhatIsNotOnDisk) {
  // An agent that can write the workspace can write .git/index: here an entry with the
  // stat data of the file as it is now and the id of what it was (same size).
  make_checkout(5);
  std::string old_id = git({"rev-parse", "HEAD:src/d0/f0.c"});
  old_id.pop_back();
  std::string before = testing_support::read_file(ws_ / "src/d0/f0.c");
  std::string after = before;
  after[after.size() - 5] = '9';  // "return 0;" -> "return 9;"
  ASSERT_EQ(after.size(), before.size());
  write("src/d0/f0.c", after);
  past_the_clock_tick();
  git({"add", "src/d0/f0.c"});  // the index now vouches for the new content...
  {
    git_libgit2_init();
    git_repository* repo = nullptr;
    ASSERT_EQ(git_repository_open(&repo, ws_.c_str()), 0);
    git_index* index = nullptr;
    ASSERT_EQ(git_repository_index(&index, repo), 0);
    const git_index_entry* found = git_index_get_bypath(index, "src/d0/f0.c", 0);
    ASSERT_NE(found, nullptr);
    git_index_entry forged = *found;
    ASSERT_EQ(git_oid_fromstr(&forged.id, old_id.c_str()), 0);  // ...under the old id
    ASSERT_EQ(git_index_add(index, &forged), 0);
    ASSERT_EQ(git_index_write(index), 0);
    git_index_free(index);
    git_repository_free(repo);
    git_libgit2_shutdown();
  }
  settle();
  ASSERT_NE(git({"ls-files", "-s", "src/d0/f0.c"}).find(old_id), std::string::npos)
      << "the index was forged";

  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint first = fs.checkpoint({});
  EXPECT_EQ(first.tree, tree_read_in_full()) << "the checkpoint records what is on disk";
  // And a restore of it writes what was on disk.
  write("src/d0/f0.c", "something else entirely\n");
  fs.restore_checkpoint(first, {});
  EXPECT_EQ(testing_support::read_file(ws_ / "src/d0/f0.c"), after);
}

}  // namespace
}  // namespace fsnap_test

// A stat-cache record keeps its entries' names in one buffer (issue 37: a watch daemon
// holds one entry per file of the workspace): lookups by name, names of any length and
// bytes, and the cache file, whose format did not change with it.
#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/error.hpp"
#include "stat_cache.hpp"
#include "test_support.hpp"
#include "tree_encoding.hpp"

namespace {

namespace fs = boost::filesystem;
using fsnap::DirRecord;
using fsnap::StatCache;
using fsnap::StatEntry;

// Names a directory may hold: short, over the 15 bytes a std::string holds in place,
// the 255 a Linux filesystem allows, and bytes other than letters (never '/' or NUL).
std::vector<std::string> odd_names() {
  std::vector<std::string> names = {"a",
                                    "a.txt",
                                    "a-name-of-exactly-31-bytes-.txt",
                                    std::string(255, 'z'),
                                    "new\nline",
                                    "tab\there",
                                    "\x01\x02\x7f",
                                    "\xff\xfe high bytes",
                                    "\xc3\xa9t\xc3\xa9",
                                    "back\\slash",
                                    " leading space",
                                    "A"};
  std::sort(names.begin(), names.end());
  return names;
}

// An entry whose stat data are derived from i, so that each is told apart.
StatEntry stat_of(std::size_t i) {
  StatEntry e;
  e.set_size(i * 3 + 1);
  e.mtime_ns = static_cast<std::int64_t>(i) * 1000 + 7;
  e.ctime_ns = static_cast<std::int64_t>(i) * 1000 + 9;
  e.ino = 100000 + i;
  e.set_mode(i % 5 == 0 ? fsnap::kModeTree : fsnap::kModeFile);
  e.oid.id[0] = static_cast<unsigned char>(i);
  e.oid.id[19] = static_cast<unsigned char>(i >> 8);
  return e;
}

DirRecord record_of(const std::vector<std::string>& names) {
  DirRecord record;
  std::size_t bytes = 0;
  for (const std::string& n : names) bytes += n.size();
  record.reserve(names.size(), bytes);
  for (std::size_t i = 0; i < names.size(); ++i) record.add(names[i], stat_of(i));
  record.tree.id[0] = 42;
  return record;
}

void expect_same_entry(const StatEntry& a, const StatEntry& b) {
  EXPECT_EQ(a.size(), b.size());
  EXPECT_EQ(a.mtime_ns, b.mtime_ns);
  EXPECT_EQ(a.ctime_ns, b.ctime_ns);
  EXPECT_EQ(a.ino, b.ino);
  EXPECT_EQ(a.mode(), b.mode());
  EXPECT_TRUE(git_oid_equal(&a.oid, &b.oid));
}

TEST(DirRecordTest, AnEntryHoldsNoNameOfItsOwn) {
  // Stat data, the id, the mode and where its name is: 56 bytes (64 before the size,
  // the mode and the name's length shared a word), where a std::string name made 88
  // (and more, on the heap, for a name over 15 bytes).
  EXPECT_EQ(sizeof(StatEntry), 56u);
}

TEST(DirRecordTest, NamesOfAnyLengthAndBytesAreFoundAndGivenBack) {
  std::vector<std::string> names = odd_names();
  DirRecord record = record_of(names);
  ASSERT_EQ(record.entries.size(), names.size());
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE("entry " + std::to_string(i));
    EXPECT_EQ(record.name(record.entries[i]), names[i]);
    const StatEntry* found = StatCache::find_entry(record, names[i]);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found, &record.entries[i]);
    expect_same_entry(*found, stat_of(i));
    bytes += names[i].size();
  }
  // One buffer, the names back to back.
  EXPECT_EQ(record.name_bytes(), bytes);
  for (std::size_t i = 1; i < names.size(); ++i) {
    EXPECT_EQ(record.name(record.entries[i]).data(),
              record.name(record.entries[i - 1]).data() + names[i - 1].size());
  }
  // Prefixes, extensions and neighbours of names are not names.
  const std::vector<std::string> absent_names = {
      "", "a.tx", "a.txt.", "b", std::string(254, 'z'), std::string(256, 'z'), "new", "\x01"};
  for (const std::string& absent : absent_names) {
    EXPECT_EQ(StatCache::find_entry(record, absent), nullptr) << absent;
  }
}

TEST(DirRecordTest, AnEntryPacksItsSizeKindAndNameLengthIntoOneWord) {
  StatEntry e;
  EXPECT_EQ(e.mode(), 0u);
  for (std::uint32_t mode :
       {fsnap::kModeFile, fsnap::kModeExec, fsnap::kModeLink, fsnap::kModeTree}) {
    ASSERT_TRUE(e.set_mode(mode));
    e.set_size(123456789);
    e.set_name_size(255);
    EXPECT_EQ(e.mode(), mode);
    EXPECT_EQ(e.size(), 123456789u);
    EXPECT_EQ(e.name_size(), 255u);
  }
  EXPECT_FALSE(e.set_mode(0100600)) << "not one of git's modes";
  EXPECT_EQ(e.mode(), fsnap::kModeTree);
  e.set_size(std::uint64_t{1} << 60);
  EXPECT_EQ(e.size(), StatEntry::kMaxSize) << "recorded as the size that is never trusted";
  EXPECT_EQ(e.mode(), fsnap::kModeTree);
  EXPECT_EQ(e.name_size(), 255u);

  DirRecord record;
  EXPECT_EQ(record.name(record.add(std::string(255, 'n'), e)), std::string(255, 'n'));
  EXPECT_THROW(record.add(std::string(256, 'o'), e), fsnap::Error);
}

TEST(DirRecordTest, ManyEntriesAreEachFound) {
  std::vector<std::string> names;
  for (int i = 0; i < 20000; ++i) {
    names.push_back("node_modules_package_file_" + std::to_string(i * 7919 % 20000) + ".js");
  }
  std::sort(names.begin(), names.end());
  DirRecord record = record_of(names);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const StatEntry* found = StatCache::find_entry(record, names[i]);
    ASSERT_NE(found, nullptr) << names[i];
    ASSERT_EQ(found->ino, 100000 + i);
  }
  EXPECT_EQ(StatCache::find_entry(record, "node_modules_package_file_20000.js"), nullptr);
}

TEST(DirRecordTest, EntriesRemovedLeaveTheOthersNamed) {
  std::vector<std::string> names = odd_names();
  DirRecord record = record_of(names);
  // As a capture drops the subdirectories that vanished before it reached them.
  std::erase_if(record.entries, [](const StatEntry& e) { return e.mode() == fsnap::kModeTree; });
  record.shrink_to_fit();
  EXPECT_EQ(record.entries.capacity(), record.entries.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const StatEntry* found = StatCache::find_entry(record, names[i]);
    if (i % 5 == 0) {
      EXPECT_EQ(found, nullptr) << names[i];
      continue;
    }
    ASSERT_NE(found, nullptr) << names[i];
    EXPECT_EQ(record.name(*found), names[i]);
    expect_same_entry(*found, stat_of(i));
  }
}

class StatCacheFileTest : public ::testing::Test {
 protected:
  testing_support::TempDir temp_;
  fs::path file_ = temp_.path() / "stat-cache";
};

TEST_F(StatCacheFileTest, RecordsAreReadBackWithTheirNames) {
  std::vector<std::string> names = odd_names();
  StatCache cache;
  cache.set_workspace("/ws");
  cache.set_scan_started_ns(123456789);
  cache.put_dir("", record_of({"dir", "file"}));
  cache.put_dir("dir", record_of(names));
  cache.put_dir("dir/empty", DirRecord());
  cache.save(file_);

  StatCache loaded = StatCache::load(file_, "/ws");
  EXPECT_EQ(loaded.scan_started_ns(), 123456789);
  ASSERT_EQ(loaded.dir_count(), 3u);
  const DirRecord* dir = loaded.find_dir("dir");
  ASSERT_NE(dir, nullptr);
  EXPECT_EQ(dir->tree.id[0], 42);
  ASSERT_EQ(dir->entries.size(), names.size());
  EXPECT_EQ(dir->entries.capacity(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(dir->name(dir->entries[i]), names[i]);
    const StatEntry* found = StatCache::find_entry(*dir, names[i]);
    ASSERT_NE(found, nullptr) << names[i];
    expect_same_entry(*found, stat_of(i));
  }
  ASSERT_NE(loaded.find_dir("dir/empty"), nullptr);
  EXPECT_TRUE(loaded.find_dir("dir/empty")->entries.empty());
  EXPECT_EQ(StatCache::load(file_, "/elsewhere").dir_count(), 0u);
}

// The file keeps the format it had when each entry held its own name (version 01): a
// cache written before is read, and one written now is read by the version before.
TEST_F(StatCacheFileTest, TheFileFormatIsUnchanged) {
  StatCache cache;
  cache.set_workspace("ws");
  cache.set_scan_started_ns(5);
  cache.put_dir("d", record_of({"x", "yy"}));
  cache.save(file_);

  std::string expected("SBSTAT01", 8);
  auto put32 = [&](std::uint32_t v) { expected.append(reinterpret_cast<const char*>(&v), 4); };
  auto put64 = [&](std::uint64_t v) { expected.append(reinterpret_cast<const char*>(&v), 8); };
  auto put_oid = [&](const git_oid& oid) {
    expected.append(reinterpret_cast<const char*>(oid.id), GIT_OID_RAWSZ);
  };
  put32(2);
  expected += "ws";
  put64(5);
  put64(1);
  put32(1);
  expected += "d";
  DirRecord d = record_of({"x", "yy"});
  put_oid(d.tree);
  put32(2);
  for (std::size_t i = 0; i < 2; ++i) {
    const StatEntry e = stat_of(i);
    std::string name = i == 0 ? "x" : "yy";
    put32(static_cast<std::uint32_t>(name.size()));
    expected += name;
    put32(e.mode());
    put64(e.size());
    put64(static_cast<std::uint64_t>(e.mtime_ns));
    put64(static_cast<std::uint64_t>(e.ctime_ns));
    put64(e.ino);
    put_oid(e.oid);
  }
  std::string written = testing_support::read_file(file_);
  ASSERT_EQ(written.size(), expected.size() + 8);  // and its checksum
  EXPECT_EQ(written.substr(0, expected.size()), expected);
}

TEST_F(StatCacheFileTest, AnEntryOfNoGitModeOrWithAnOverlongNameMakesTheFileIgnored) {
  // The file is the store's, which someone else may have written.
  auto file_with = [&](std::uint32_t mode, const std::string& name) {
    std::string body;
    auto put32 = [&](std::uint32_t v) { body.append(reinterpret_cast<const char*>(&v), 4); };
    auto put64 = [&](std::uint64_t v) { body.append(reinterpret_cast<const char*>(&v), 8); };
    put32(2);
    body += "ws";
    put64(5);
    put64(1);  // one directory
    put32(1);
    body += "d";
    body.append(GIT_OID_RAWSZ, '\1');
    put32(1);  // one entry
    put32(static_cast<std::uint32_t>(name.size()));
    body += name;
    put32(mode);
    for (int i = 0; i < 4; ++i) put64(7);
    body.append(GIT_OID_RAWSZ, '\2');
    std::uint64_t h = fsnap::stat_cache_checksum(body);
    std::string data = std::string("SBSTAT01", 8) + body;
    data.append(reinterpret_cast<const char*>(&h), 8);
    testing_support::write_file(file_, data);
    return StatCache::load(file_, "ws").dir_count();
  };
  EXPECT_EQ(file_with(fsnap::kModeFile, "a"), 1u) << "the same file, well formed, is read";
  EXPECT_EQ(file_with(0100600, "a"), 0u);
  EXPECT_EQ(file_with(fsnap::kModeFile, std::string(256, 'a')), 0u);
}

TEST_F(StatCacheFileTest, AFileWhoseNamesAreOutOfOrderIsIgnored) {
  // Lookups search a record's names: a record not sorted (which no capture writes)
  // makes the whole cache unusable, as a damaged one is.
  StatCache cache;
  cache.set_workspace("ws");
  DirRecord unsorted;
  unsorted.add("b", stat_of(1));
  unsorted.add("a", stat_of(2));
  cache.put_dir("", record_of({"a", "b"}));
  cache.put_dir("d", std::move(unsorted));
  cache.save(file_);
  EXPECT_EQ(StatCache::load(file_, "ws").dir_count(), 0u);

  DirRecord twice;
  twice.add("a", stat_of(1));
  twice.add("a", stat_of(2));
  cache.put_dir("d", std::move(twice));
  cache.save(file_);
  EXPECT_EQ(StatCache::load(file_, "ws").dir_count(), 0u);

  cache.put_dir("d", record_of({"a", "b"}));
  cache.save(file_);
  EXPECT_EQ(StatCache::load(file_, "ws").dir_count(), 2u);
}

}  // namespace

// A large transcript kept in chunks (runs/src/home_chunks.hpp): where the cuts fall, a
// file that grows rewriting only its last chunks, the same redaction as the whole
// file's, HOME rebuilt with every file whole, changes told by file, and trees of chunks
// that preservation did not write left as they are.
#include <fcntl.h>

#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "fsnap/posix.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "git_objects.hpp"
#include "home_chunks.hpp"
#include "runs/home_preservation.hpp"
#include "runs/redaction.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using fsnap::TreeChange;

const std::vector<std::string> kParts = {".claude/projects", ".claude/todos"};
const std::string kTranscript = ".claude/projects/p/s1.jsonl";
const std::string kChunks = kTranscript + std::string(runs::kChunkedSuffix);

// JSON lines from line first on, about bytes long in all; every seventh holds secret,
// and a few hold a line break of their own, escaped as JSON writes it.
std::string json_lines(std::size_t first, std::size_t bytes, const std::string& secret) {
  std::string out;
  for (std::size_t i = first; out.size() < bytes; ++i) {
    out += "{\"type\":\"user\",\"n\":" + std::to_string(i) + ",\"text\":\"" +
           std::string(100 + (i * 37) % 900, 'a' + static_cast<char>(i % 26)) +
           (i % 7 == 0 ? " key " + secret : "") + (i % 11 == 0 ? "\\nmore" : "") + "\"}\n";
  }
  return out;
}

class HomeChunksTest : public ::testing::Test {
 protected:
  HomeChunksTest() {
    fs::create_directories(temp_ / "ws");
    store_ = fsnap::Store::open(temp_ / "store", temp_ / "ws", true);
    repo_ = std::make_shared<fsnap::ShadowRepo>(fsnap::ShadowRepo::open(store_->repo_dir(), false));
  }
  runs::HomePreserver preserver(std::vector<std::string> secrets = {}) {
    return runs::HomePreserver(*store_, repo_, "r", home_, kParts, std::move(secrets));
  }
  // The entry at path (a/b/c) of tree, or nullopt.
  std::optional<fsnap::ObjectEntry> entry(std::string tree, const std::string& path) {
    std::size_t start = 0;
    while (true) {
      std::size_t slash = path.find('/', start);
      std::string name = path.substr(start, slash == std::string::npos ? slash : slash - start);
      std::optional<fsnap::ObjectEntry> found;
      for (const fsnap::ObjectEntry& e : repo_->read_tree(tree)) {
        if (e.name == name) found = e;
      }
      if (!found || slash == std::string::npos) return found;
      tree = found->oid;
      start = slash + 1;
    }
  }
  // The blob ids of the transcript's chunks in tree, in order.
  std::vector<std::string> chunk_blobs(const std::string& tree) {
    std::optional<fsnap::ObjectEntry> chunks = entry(tree, kChunks);
    if (!chunks || !chunks->is_tree) return {};
    std::vector<std::string> out;
    for (const fsnap::ObjectEntry& e : repo_->read_tree(chunks->oid)) out.push_back(e.oid);
    return out;
  }
  std::string rebuilt(const std::string& tree, const std::string& name) {
    fs::path dir = temp_ / name;
    runs::materialize_home(*repo_, tree, dir);
    EXPECT_FALSE(fs::exists(dir / kChunks)) << "the chunks are joined into their file";
    return testing_support::read_file(dir / kTranscript);
  }

  testing_support::TempDir temp_;
  fs::path home_ = temp_ / "home";
  std::optional<fsnap::Store> store_;
  std::shared_ptr<fsnap::ShadowRepo> repo_;
};

TEST(ChunkEndsTest, ACutFollowsANewlineBeforeAJsonLinePastTheTarget) {
  std::string content = json_lines(0, 5 * runs::kChunkTarget, "s");
  std::vector<std::size_t> ends = runs::chunk_ends(content);
  ASSERT_GE(ends.size(), 4u);
  EXPECT_EQ(ends.back(), content.size());
  std::size_t start = 0;
  for (std::size_t i = 0; i + 1 < ends.size(); ++i) {
    EXPECT_GE(ends[i] - start, runs::kChunkTarget);
    EXPECT_EQ(content[ends[i] - 1], '\n');
    EXPECT_EQ(content[ends[i]], '{');
    start = ends[i];
  }
  // Appended to, the file keeps its cuts: only its last chunk grows, and more follow.
  std::string longer = content + json_lines(100000, 3 * runs::kChunkTarget, "s");
  std::vector<std::size_t> after = runs::chunk_ends(longer);
  ASSERT_GT(after.size(), ends.size());
  for (std::size_t i = 0; i + 1 < ends.size(); ++i) EXPECT_EQ(after[i], ends[i]);
  EXPECT_GE(after[ends.size() - 1], content.size());
  // Lines that never start with '{' are never cut: a PEM block's stays whole.
  std::string pem(3 * runs::kChunkTarget, 'A');
  for (std::size_t i = 64; i < pem.size(); i += 65) pem[i] = '\n';
  EXPECT_EQ(runs::chunk_ends(pem), std::vector<std::size_t>{pem.size()});
  EXPECT_EQ(runs::chunk_ends(""), std::vector<std::size_t>{});
}

TEST(ChunkEndsTest, NoCutFallsInsideAPrivateKeyWhoseEndIsLinesLater) {
  // An agent that read a key in two tool calls wrote its BEGIN into one JSON line and
  // its END into a later one.
  std::string before = json_lines(0, 30 * 1024, "s");
  std::string key_start = "{\"text\":\"-----BEGIN RSA PRIVATE KEY-----\\nMIIEfirsthalf\"}\n";
  std::string middle = json_lines(1000, 3 * runs::kChunkTarget, "s");
  std::string key_end = "{\"text\":\"secondhalfOFTHEKEY\\n-----END RSA PRIVATE KEY-----\"}\n";
  std::string after = json_lines(5000, 3 * runs::kChunkTarget, "s");
  std::string content = before + key_start + middle + key_end + after;
  std::vector<std::size_t> ends = runs::chunk_ends(content);
  std::size_t begin_at = before.size();
  std::size_t end_at = content.find("-----END RSA");
  for (std::size_t e : ends) {
    EXPECT_FALSE(e > begin_at && e <= end_at) << "a cut at " << e << " inside the key";
  }
  ASSERT_GE(ends.size(), 3u) << "cut again after the key";
  std::string chunked;
  std::size_t start = 0;
  for (std::size_t e : ends) {
    chunked += runs::redact(content.substr(start, e - start), {});
    start = e;
  }
  EXPECT_EQ(chunked, runs::redact(content, {}));
  EXPECT_EQ(chunked.find("secondhalfOFTHEKEY"), std::string::npos);

  // A BEGIN with no END anywhere: nothing after it is cut, as redaction takes the rest.
  std::string open = before + key_start + middle;
  std::vector<std::size_t> open_ends = runs::chunk_ends(open);
  EXPECT_LE(open_ends.size(), 1u + before.size() / runs::kChunkTarget);
  EXPECT_EQ(open_ends.back(), open.size());
}

TEST(ChunkEndsTest, AFileReadInAStreamIsCutWhereItsWholeContentIs) {
  testing_support::TempDir temp;
  // A cut right at the streaming reader's read size (256 KiB): '\n' its last byte read,
  // '{' the first of the next read.
  constexpr std::size_t kRead = 256 * 1024;
  std::string content(kRead - 1, 'x');
  for (std::size_t i = 1000; i + 1 < content.size(); i += 70 * 1024) content[i] = '\n';
  content += "\n{" + json_lines(0, 2 * kRead, "s");
  content[kRead - 2] = 'y';  // no '\n' right before: the only cut near is at kRead
  testing_support::write_file(temp / "t.jsonl", content);
  fsnap::UniqueFd fd(::open((temp / "t.jsonl").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  std::vector<std::size_t> streamed;
  std::size_t at = 0;
  std::string joined;
  runs::for_each_chunk(fd.get(), "t.jsonl", [&](std::string_view chunk) {
    at += chunk.size();
    streamed.push_back(at);
    joined.append(chunk);
  });
  EXPECT_EQ(streamed, runs::chunk_ends(content));
  EXPECT_EQ(joined, content);
  EXPECT_NE(std::find(streamed.begin(), streamed.end(), kRead), streamed.end())
      << "the cut at the read's end is made";
}

TEST(ChunkEndsTest, OnlyLargeJsonLinesFilesWithoutMultiLineSecretsAreCut) {
  std::size_t large = runs::kChunkedFileMin + 1;
  EXPECT_TRUE(runs::kept_in_chunks("a/t.jsonl", large, {"secret-value"}));
  EXPECT_FALSE(runs::kept_in_chunks("a/t.jsonl", runs::kChunkedFileMin, {}));
  EXPECT_FALSE(runs::kept_in_chunks("a/t.json", large, {}));
  EXPECT_FALSE(runs::kept_in_chunks("a/t.jsonl", large, {"two\nlines-secret"}));
  EXPECT_EQ(runs::home_file_path("a/t.jsonl.shadowbox-chunks/000003"), "a/t.jsonl");
  EXPECT_EQ(runs::home_file_path("a/t.jsonl.shadowbox-chunks"), "a/t.jsonl");
  EXPECT_EQ(runs::home_file_path("a/t.jsonl"), "a/t.jsonl");
  EXPECT_TRUE(runs::in_chunk_tree("a/t.jsonl.shadowbox-chunks/000000"));
  EXPECT_TRUE(runs::in_chunk_tree("a/x.shadowbox-chunks/b/c.jsonl"));
  EXPECT_FALSE(runs::in_chunk_tree("a/t.jsonl"));
}

TEST_F(HomeChunksTest, ALargeTranscriptIsRedactedAsTheWholeFileWouldBe) {
  const std::string secret = "sk-live-secret-0123456789";
  std::string content = json_lines(0, 700 * 1024, secret);
  testing_support::write_file(home_ / kTranscript, content);
  testing_support::write_file(home_ / ".claude/todos/t.json", "[]");
  std::string tree = preserver({secret}).preserve_now();
  EXPECT_GE(chunk_blobs(tree).size(), 10u);
  EXPECT_FALSE(entry(tree, kTranscript).has_value()) << "not kept whole as well";
  EXPECT_EQ(rebuilt(tree, "rebuilt"), runs::redact(content, {secret}));
  EXPECT_EQ(testing_support::objects_containing(store_->repo_dir(), {secret}),
            std::vector<std::string>{});
  fs::path rebuilt_run = temp_ / "rebuilt-run";
  runs::rebuild_home(*repo_, "r", rebuilt_run);
  EXPECT_EQ(testing_support::read_file(rebuilt_run / kTranscript), runs::redact(content, {secret}));
  EXPECT_EQ(testing_support::read_file(rebuilt_run / ".claude/todos/t.json"), "[]");
}

TEST_F(HomeChunksTest, AGrowingTranscriptWritesOnlyItsLastChunksAgain) {
  std::string content = json_lines(0, 700 * 1024, "secret-value-1234");
  testing_support::write_file(home_ / kTranscript, content);
  runs::HomePreserver keeper = preserver({"secret-value-1234"});
  std::vector<std::string> before = chunk_blobs(keeper.preserve_now());
  ASSERT_GE(before.size(), 10u);

  content += json_lines(5000, 3000, "secret-value-1234");
  testing_support::write_file(home_ / kTranscript, content);
  std::string tree = keeper.preserve_now();
  std::vector<std::string> after = chunk_blobs(tree);
  ASSERT_GE(after.size(), before.size());
  std::size_t rewritten = 0;
  for (std::size_t i = 0; i < after.size(); ++i) {
    rewritten += i >= before.size() || after[i] != before[i];
  }
  EXPECT_EQ(rewritten, after.size() - before.size() + 1)
      << "3 KB appended change the last chunk, and make new ones if it outgrew its size";
  EXPECT_LE(rewritten, 2u);
  EXPECT_EQ(rebuilt(tree, "rebuilt"), runs::redact(content, {"secret-value-1234"}));

  // A byte changed in place, the size the same: that chunk is read as new.
  std::size_t text = content.find("\"text\":\"", content.size() / 2) + 9;
  content[text] = content[text] == 'Z' ? 'Y' : 'Z';
  testing_support::write_file(home_ / kTranscript, content);
  std::string changed = keeper.preserve_now();
  std::vector<std::string> third = chunk_blobs(changed);
  ASSERT_EQ(third.size(), after.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < third.size(); ++i) differ += third[i] != after[i];
  EXPECT_EQ(differ, 1u);
  EXPECT_EQ(rebuilt(changed, "rebuilt-2"), runs::redact(content, {"secret-value-1234"}));
}

TEST_F(HomeChunksTest, ChangesAreToldByTheFileTheChunksStandFor) {
  testing_support::write_file(home_ / kTranscript, "{\"small\":1}\n");
  runs::HomePreserver keeper = preserver();
  std::string small = keeper.preserve_now();
  std::string content = json_lines(0, 500 * 1024, "unused-secret");
  testing_support::write_file(home_ / kTranscript, content);
  std::string large = keeper.preserve_now();
  testing_support::write_file(home_ / kTranscript, content + json_lines(9000, 200, "x"));
  std::string larger = keeper.preserve_now();
  // Whether the transcript is in changes once, as kind, and no chunk is (the
  // directories above it are listed too when it is added or deleted).
  auto only = [](const std::vector<TreeChange>& changes, TreeChange::Kind kind) {
    std::size_t found = 0;
    for (const TreeChange& c : changes) {
      if (c.path.find(runs::kChunkedSuffix) != std::string::npos) return false;
      if (c.path == kTranscript) found += c.kind == kind ? 1 : 2;
    }
    return found == 1;
  };
  EXPECT_TRUE(only(runs::home_changes(*repo_, small, large), TreeChange::Kind::kModified))
      << "kept whole, then in chunks: the same file changed";
  EXPECT_TRUE(only(runs::home_changes(*repo_, large, larger), TreeChange::Kind::kModified));
  EXPECT_TRUE(only(runs::home_changes(*repo_, "", larger), TreeChange::Kind::kAdded));
  EXPECT_TRUE(only(runs::home_changes(*repo_, larger, ""), TreeChange::Kind::kDeleted));
  EXPECT_TRUE(only(runs::home_changes(*repo_, larger, small), TreeChange::Kind::kModified));
}

TEST_F(HomeChunksTest, AFileOfTheAgentsNamedLikeATreeOfChunksIsLeftOut) {
  testing_support::write_file(home_ / (kChunks + "/000000"), "planted\n");
  testing_support::write_file(home_ / ".claude/projects/p/x.shadowbox-chunks", "planted too\n");
  testing_support::write_file(home_ / ".claude/projects/p/s2.jsonl", "{\"mine\":1}\n");
  std::string tree = preserver().preserve_now();
  fs::path dir = temp_ / "rebuilt";
  runs::materialize_home(*repo_, tree, dir);
  EXPECT_EQ(testing_support::read_file(dir / ".claude/projects/p/s2.jsonl"), "{\"mine\":1}\n");
  EXPECT_FALSE(fs::exists(dir / kTranscript));
  EXPECT_FALSE(fs::exists(dir / kChunks));
  EXPECT_FALSE(fs::exists(dir / ".claude/projects/p/x.shadowbox-chunks"));
}

TEST_F(HomeChunksTest, ATreeOfChunksPreservationDidNotWriteIsRebuiltAsItIs) {
  // A store may come from someone else: what does not look like preservation's chunks
  // is materialized as the directory it is, and nothing is written over.
  auto blob = [&](const std::string& text) { return repo_->write_blob(text); };
  auto dir_of = [&](std::vector<fsnap::ObjectEntry> entries) { return repo_->write_tree(entries); };
  std::string gap = dir_of({{"000000", blob("a"), false}, {"000002", blob("c"), false}});
  std::string named = dir_of({{"000000", blob("a"), false}, {"1", blob("b"), false}});
  std::string nested = dir_of({{"000000", dir_of({{"x", blob("x"), false}}), true}});
  std::string padded = dir_of({{"000000", blob("a"), false}, {"0000001", blob("b"), false}});
  std::string good =
      dir_of({{"000000", blob("{\"a\":1}\n"), false}, {"000001", blob("{\"b\":2}\n"), false}});
  std::string top = dir_of({
      {"gap.jsonl.shadowbox-chunks", gap, true},
      {"named.jsonl.shadowbox-chunks", named, true},
      {"nested.jsonl.shadowbox-chunks", nested, true},
      {"padded.jsonl.shadowbox-chunks", padded, true},
      {"taken.jsonl", blob("already here\n"), false},
      {"taken.jsonl.shadowbox-chunks", good, true},
      {"good.jsonl.shadowbox-chunks", good, true},
  });
  fs::path dir = temp_ / "rebuilt";
  runs::materialize_home(*repo_, top, dir);
  EXPECT_EQ(testing_support::read_file(dir / "good.jsonl"), "{\"a\":1}\n{\"b\":2}\n");
  EXPECT_FALSE(fs::exists(dir / "good.jsonl.shadowbox-chunks"));
  EXPECT_EQ(testing_support::read_file(dir / "taken.jsonl"), "already here\n");
  EXPECT_TRUE(fs::exists(dir / "taken.jsonl.shadowbox-chunks/000001"));
  for (const char* name : {"gap", "named", "nested", "padded"}) {
    EXPECT_FALSE(fs::exists(dir / (std::string(name) + ".jsonl"))) << name;
    EXPECT_TRUE(fs::is_directory(dir / (std::string(name) + ".jsonl.shadowbox-chunks"))) << name;
  }
}

}  // namespace

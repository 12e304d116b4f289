// Session trees: a session snapshot kept as a git tree reads back exactly (and as the
// same JSON as its inline form), a snapshot that adds one item to a long LOG slice
// writes a handful of new objects whatever the slice's length, a warm SessionTrees
// writes the same trees as a cold one and hands back the items it has without decoding
// them, a cold one decodes only the items used (and the last chunk), a slice a window
// cuts reads back exactly and, sliding, writes a handful of new objects too, and a
// damaged tree or an unknown slice type is a clear error.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>

#include <boost/filesystem.hpp>

#include "embed/agent_slices.hpp"
#include "fsnap/shadow_repo.hpp"
#include "runs/run_lifecycle.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/session_trees.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace sandbox;
using namespace embed;
using namespace runs;
using namespace statekit;

// A slice type with a name that is not a plain file name.
struct Odd {
  std::string text;
};

void register_odd() {
  SliceTypes::add<Odd>(
      "odd/type name", SlicePolicy::kState, [](const Odd& o) { return Poco::Dynamic::Var(o.text); },
      [](const Poco::Dynamic::Var& v) { return Odd{v.toString()}; });
}

ToolInvoked call(int i) {
  return ToolInvoked{"call_" + std::to_string(i),
                     "Edit",
                     "{\"n\":" + std::to_string(i) + "}",
                     i % 3 != 0,
                     "edited \"f" + std::to_string(i) + "\"\n",
                     i};
}

// "" if a == b, else a few bytes of each around where they first differ.
std::string difference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::size_t from = i < 40 ? 0 : i - 40;
  return "at byte " + std::to_string(i) + ": ..." + a.substr(from, 80) + "\n vs ..." +
         b.substr(from, 80);
}

class SessionTreesTest : public ::testing::Test {
 protected:
  SessionTreesTest() : repo_(fsnap::ShadowRepo::open(temp_ / "repo.git", true)) {
    embed::register_agent_slice_types();
    register_run_slice_types();
    register_odd();
  }

  // A session with a STATE slice, a LOG slice of log_items calls, an empty slice and
  // the odd one.
  std::shared_ptr<Session> session_with(int log_items) {
    auto session = std::make_shared<Session>();
    session->seed<Plan>({Plan{"ship it", "active", {{"write", true}, {"test", false}}}});
    std::vector<ToolInvoked> calls;
    calls.reserve(static_cast<std::size_t>(log_items));
    for (int i = 0; i < log_items; ++i) calls.push_back(call(i));
    session->seed<ToolInvoked>(calls);
    session->register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>,
                                                        SlicePolicy::kLog);
    session->seed<RunStatus>({});
    session->seed<Odd>({Odd{"x"}, Odd{"y"}});
    return session;
  }

  // Every object a tree holds (itself included).
  std::set<std::string> objects_of(const std::string& tree) {
    std::set<std::string> out{tree};
    for (const fsnap::ObjectEntry& e : repo_.read_tree(tree)) {
      if (e.is_tree) {
        std::set<std::string> inner = objects_of(e.oid);
        out.insert(inner.begin(), inner.end());
      } else {
        out.insert(e.oid);
      }
    }
    return out;
  }

  testing_support::TempDir temp_;
  fsnap::ShadowRepo repo_;
};

TEST_F(SessionTreesTest, ASnapshotReadsBackExactlyAndAsItsInlineJson) {
  for (int items : {0, 1, 32, 33, 1024, 1025, 2100}) {
    std::shared_ptr<Session> session = session_with(items);
    SessionSnapshot snap = session->snapshot({SlicePolicy::kState, SlicePolicy::kLog}, false,
                                             {{"tag", "t" + std::to_string(items)}});
    SessionTrees writer;
    std::string tree = writer.write(repo_, snap);
    SessionTrees reader;  // another process
    SessionSnapshot back = reader.read(repo_, tree, SessionTrees::SessionStamp::of(snap));
    EXPECT_TRUE(back.equivalent(snap)) << items;
    EXPECT_EQ(back.id, snap.id);
    EXPECT_EQ(back.tags, snap.tags);
    EXPECT_EQ(back.covered, snap.covered);
    EXPECT_EQ(back.slice<ToolInvoked>().to_vector(), snap.slice<ToolInvoked>().to_vector());
    EXPECT_EQ(difference(back.to_json(), snap.to_json()), "") << items;
    EXPECT_EQ(
        difference(SessionTrees().read_json(repo_, tree, SessionTrees::SessionStamp::of(snap)),
                   snap.to_json()),
        "")
        << items;
  }
}

TEST_F(SessionTreesTest, PlainGitShowsTheSession) {
  SessionTrees trees;
  std::string tree = trees.write(repo_, session_with(40)->snapshot({}, true));
  testing_support::CommandResult head = testing_support::run_command(
      {"git", "--git-dir", repo_.git_dir().string(), "show", tree + ":head.json"}, temp_.path());
  ASSERT_EQ(head.exit_code, 0) << head.err;
  EXPECT_NE(head.out.find("\"type\": \"tool_invoked\""), std::string::npos) << head.out;
  testing_support::CommandResult chunk = testing_support::run_command(
      {"git", "--git-dir", repo_.git_dir().string(), "show", tree + ":tool_invoked/01.json"},
      temp_.path());
  ASSERT_EQ(chunk.exit_code, 0) << chunk.err;
  EXPECT_NE(chunk.out.find("\"tool_call_id\":\"call_39\""), std::string::npos) << chunk.out;
  EXPECT_EQ(std::count(chunk.out.begin(), chunk.out.end(), '\n'), 8 + 2) << "one item per line";
}

TEST_F(SessionTreesTest, OneMoreItemWritesAHandfulOfObjectsWhateverTheLength) {
  for (int items : {100, 1000, 5000}) {
    std::shared_ptr<Session> session = session_with(items);
    SessionTrees trees;
    std::string before = trees.write(repo_, session->snapshot({}, true));
    session->dispatch(call(items));
    std::string after = trees.write(repo_, session->snapshot({}, true));
    std::set<std::string> old_objects = objects_of(before);
    std::size_t fresh = 0;
    for (const std::string& oid : objects_of(after)) fresh += old_objects.count(oid) == 0;
    // The root, head.json, the slice's nodes down to the last chunk.
    std::size_t depth = items + 1 > 1024 ? 2 : 1;
    EXPECT_LE(fresh, 2 + depth + 1) << items << " items";
  }
}

TEST_F(SessionTreesTest, AnUnchangedSessionIsOneTreeThatItsNoteAnchors) {
  std::shared_ptr<Session> session = session_with(10);
  SessionSnapshot first = session->snapshot({}, true);
  SessionSnapshot second = session->snapshot({}, true);  // another id and time
  ASSERT_NE(first.id, second.id);
  SessionTrees trees;
  std::string tree = trees.write(repo_, first);
  EXPECT_EQ(SessionTrees().write(repo_, second), tree);
  // A note that names the tree anchors it beside the notes; a later one replaces the
  // anchor, and the notes' history keeps the earlier tree reachable.
  std::string commit = repo_.commit_to_ref("refs/shadowbox/home/r", tree, "a checkpoint\n");
  repo_.write_notes({SessionTrees::anchored({commit, "names " + tree + "\n"}, "r", tree)},
                    std::chrono::system_clock::now());
  session->dispatch(call(10));
  std::string grown = trees.write(repo_, session->snapshot({}, true));
  repo_.write_notes({SessionTrees::anchored({commit, "names " + grown + "\n"}, "r", grown)},
                    std::chrono::system_clock::now());
  auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "--git-dir", repo_.git_dir().string()});
    return testing_support::run_command(args, temp_.path());
  };
  EXPECT_EQ(git({"rev-parse", "refs/notes/shadowbox:session-r"}).out, grown + "\n");
  std::string listed = git({"notes", "--ref=shadowbox", "list"}).out;
  EXPECT_EQ(std::count(listed.begin(), listed.end(), '\n'), 1)
      << "the anchor is no note: " << listed;
  EXPECT_NE(listed.find(commit), std::string::npos) << listed;
  EXPECT_NE(git({"rev-list", "--objects", "refs/notes/shadowbox"}).out.find(tree),
            std::string::npos)
      << "the earlier session tree stays reachable";
  testing_support::CommandResult fsck = git({"fsck", "--strict", "--no-dangling"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
  // Each reads back with its own stamp.
  EXPECT_EQ(trees.read(repo_, tree, SessionTrees::SessionStamp::of(second)).id, second.id);
  EXPECT_EQ(trees.read(repo_, tree, SessionTrees::SessionStamp::of(first)).created_at,
            first.created_at);
}

TEST_F(SessionTreesTest, AWarmWriterWritesWhatAColdOneWritesAndReadsWithoutDecoding) {
  std::shared_ptr<Session> session = session_with(300);
  SessionTrees warm;
  for (int step = 0; step < 5; ++step) {
    session->dispatch(call(300 + step));
    SessionSnapshot snap = session->snapshot({}, true);
    std::string tree = warm.write(repo_, snap);
    EXPECT_EQ(SessionTrees().write(repo_, snap), tree) << "step " << step;
    // Reading back what was just written hands back the very items.
    SessionSnapshot back = warm.read(repo_, tree, SessionTrees::SessionStamp::of(snap));
    EXPECT_EQ(back.slice<ToolInvoked>().items()[7].get(),
              snap.slice<ToolInvoked>().items()[7].get());
    EXPECT_EQ(back.slice<ToolInvoked>().size(), 301u + static_cast<std::size_t>(step));
  }
}

TEST_F(SessionTreesTest, AWindowedSliceReadsBackExactlyAndSlidesWritingAHandfulOfObjects) {
  for (auto [window, items] : {std::pair{10, 11}, {33, 40}, {100, 1000}, {1000, 3000}}) {
    std::shared_ptr<Session> session = session_with(0);
    session->set_count_window(typeid(ToolInvoked), static_cast<std::size_t>(window));
    for (int i = 0; i < items; ++i) session->dispatch(call(i));
    SessionSnapshot snap = session->snapshot({}, true);
    ASSERT_EQ(snap.slice<ToolInvoked>().size(), static_cast<std::size_t>(window));
    std::string tree = SessionTrees().write(repo_, snap);
    // Another process reads it back: the newest `window` items, in order, at their
    // positions, and the same JSON as the snapshot's inline form.
    SessionTrees reader;
    SessionSnapshot back = reader.read(repo_, tree, SessionTrees::SessionStamp::of(snap));
    EXPECT_EQ(back.slice<ToolInvoked>().to_vector(), snap.slice<ToolInvoked>().to_vector())
        << window << " of " << items;
    EXPECT_EQ(back.slice<ToolInvoked>()[0].tool_call_id, call(items - window).tool_call_id);
    EXPECT_EQ(back.slice<ToolInvoked>().items().start(), snap.slice<ToolInvoked>().items().start());
    EXPECT_EQ(
        difference(SessionTrees().read_json(repo_, tree, SessionTrees::SessionStamp::of(snap)),
                   snap.to_json()),
        "")
        << window;
    // The next process continues from what it read: one more call slides the window,
    // and the tree it writes is the one the first process would have written, made of
    // a handful of new objects (the root, head.json, the slice's nodes down to its first
    // and its last chunk, and those two chunks), whatever the window.
    std::shared_ptr<Session> next = Session::from_snapshot(back);
    next->register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>,
                                                     SlicePolicy::kLog);
    next->set_count_window(typeid(ToolInvoked), static_cast<std::size_t>(window));
    next->dispatch(call(items));
    session->dispatch(call(items));
    std::string after = reader.write(repo_, next->snapshot({}, true));
    EXPECT_EQ(SessionTrees().write(repo_, session->snapshot({}, true)), after) << window;
    std::set<std::string> old_objects = objects_of(tree);
    std::size_t fresh = 0;
    for (const std::string& oid : objects_of(after)) fresh += old_objects.count(oid) == 0;
    std::size_t depth = items + 1 > 1024 ? 2 : 1;
    EXPECT_LE(fresh, 2 + 2 * depth + 2) << window << " of " << items;
    EXPECT_EQ(
        reader.read(repo_, after, SessionTrees::SessionStamp::of(snap)).slice<ToolInvoked>().size(),
        static_cast<std::size_t>(window));
  }
}

// A slice type that counts how many of its items are decoded.
struct Counted {
  int n = 0;
};
std::atomic<int> decoded_counted{0};

void register_counted() {
  SliceTypes::add<Counted>(
      "counted", SlicePolicy::kLog, [](const Counted& c) { return Poco::Dynamic::Var(c.n); },
      [](const Poco::Dynamic::Var& v) {
        ++decoded_counted;
        return Counted{v.convert<int>()};
      });
}

TEST_F(SessionTreesTest, AReadLongLogDecodesOnlyWhatIsUsed) {
  register_counted();
  SessionSnapshot snap;
  SliceItems items;
  for (int i = 0; i < 1000; ++i)
    items = items.push_back(std::make_shared<const Counted>(Counted{i}));
  snap.slices.emplace(typeid(Counted), items);
  snap.policies.emplace(typeid(Counted), SlicePolicy::kLog);
  std::string tree = SessionTrees().write(repo_, snap);

  decoded_counted = 0;
  SessionTrees cold;
  SessionSnapshot back = cold.read(repo_, tree, SessionTrees::SessionStamp::of(snap));
  EXPECT_EQ(decoded_counted, 1000 % 32) << "the last chunk only";
  ASSERT_EQ(back.slices.at(typeid(Counted)).size(), 1000u);
  // The next snapshot (one item more) is written without decoding the rest, and is the
  // tree a writer that has every item in hand writes.
  SessionSnapshot next = back;
  next.slices.at(typeid(Counted)) =
      back.slices.at(typeid(Counted)).push_back(std::make_shared<const Counted>(Counted{1000}));
  std::string next_tree = cold.write(repo_, next);
  EXPECT_EQ(decoded_counted, 1000 % 32);
  snap.slices.at(typeid(Counted)) = items.push_back(std::make_shared<const Counted>(Counted{1000}));
  EXPECT_EQ(SessionTrees().write(repo_, snap), next_tree);
  // Items are there when asked for: their chunk is decoded then, once.
  const SliceItems& read = next.slices.at(typeid(Counted));
  EXPECT_EQ(static_cast<const Counted*>(read[33].get())->n, 33);
  EXPECT_EQ(static_cast<const Counted*>(read[40].get())->n, 40);
  EXPECT_EQ(decoded_counted, 1000 % 32 + 32);
  for (int i = 0; i <= 1000; ++i) {
    ASSERT_EQ(static_cast<const Counted*>(read[static_cast<std::size_t>(i)].get())->n, i);
  }
}

TEST_F(SessionTreesTest, ADamagedChunkDecodedLateIsACorruptError) {
  SessionSnapshot snap = session_with(100)->snapshot({}, true);
  std::string tree = SessionTrees().write(repo_, snap);
  std::vector<fsnap::ObjectEntry> root = repo_.read_tree(tree);
  auto log =
      std::find_if(root.begin(), root.end(), [](auto& e) { return e.name == "tool_invoked"; });
  std::vector<fsnap::ObjectEntry> chunks = repo_.read_tree(log->oid);
  chunks[0].oid = repo_.write_blob("[\n{\"not\": \"a tool call\"}\n]\n");
  log->oid = repo_.write_tree(chunks);
  std::string bad = repo_.write_tree(root);
  SessionSnapshot back = SessionTrees().read(repo_, bad, {});
  try {
    (void)back.slice<ToolInvoked>().items()[0];
    ADD_FAILURE() << "decoded a damaged chunk";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
}

TEST_F(SessionTreesTest, ADamagedTreeIsACorruptError) {
  SessionTrees trees;
  SessionSnapshot snap = session_with(50)->snapshot({}, true);
  std::string tree = trees.write(repo_, snap);
  auto expect_corrupt = [&](const std::string& bad, const std::string& why) {
    try {
      SessionTrees().read(repo_, bad, {});
      ADD_FAILURE() << "read a damaged tree: " << why;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << why << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  };
  // Without the slice's second chunk.
  std::vector<fsnap::ObjectEntry> root = repo_.read_tree(tree);
  auto log =
      std::find_if(root.begin(), root.end(), [](auto& e) { return e.name == "tool_invoked"; });
  std::vector<fsnap::ObjectEntry> chunks = repo_.read_tree(log->oid);
  chunks.pop_back();
  log->oid = repo_.write_tree(chunks);
  expect_corrupt(repo_.write_tree(root), "a chunk missing");
  // A chunk that is not JSON.
  chunks.push_back({"01.json", repo_.write_blob("not json"), false});
  log->oid = repo_.write_tree(chunks);
  expect_corrupt(repo_.write_tree(root), "a chunk of bad JSON");
  // No head.json; and a tree that is not there at all.
  expect_corrupt(repo_.write_tree({*log}), "no head");
  expect_corrupt(std::string(40, 'a'), "missing");
}

TEST_F(SessionTreesTest, AnUnknownSliceTypeIsAMismatchButItsJsonIsShown) {
  SessionTrees trees;
  SessionSnapshot snap = session_with(3)->snapshot({}, true);
  std::string tree = trees.write(repo_, snap);
  // Another program's slice type: rename it in head.json and its directory.
  std::vector<fsnap::ObjectEntry> root = repo_.read_tree(tree);
  for (fsnap::ObjectEntry& e : root) {
    if (e.name == "head.json") {
      std::string head = repo_.read_blob(e.oid);
      head.replace(head.find("odd/type name"), 13, "someone.else");
      e.oid = repo_.write_blob(head);
    } else if (e.name == "odd%2Ftype%20name") {
      e.name = "someone.else";
    }
  }
  std::string foreign = repo_.write_tree(root);
  EXPECT_THROW(SessionTrees().read(repo_, foreign, {}), SnapshotMismatchError);
  std::string json = SessionTrees().read_json(repo_, foreign, {});
  EXPECT_NE(json.find("\"type\":\"someone.else\",\"policy\":\"state\",\"items\":[\"x\",\"y\"]"),
            std::string::npos)
      << json;
}

}  // namespace

// The ledger's notes stay cheap to write and read as they grow: the notes tree is
// fanned out as git does ("ab/cdef..."), no tree level holds more than 128 notes, the
// notes of one write are one commit leaving no tree behind, a tree anchored beside the
// notes stays, and plain git reads every note.
#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "fsnap/error.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store_layout.hpp"
#include "test_support.hpp"

namespace {

// The number of notes in the notes tree at tree (depth levels down), checking that no
// level holds more than 128 of them directly (the root's anchors apart).
std::size_t count_notes(const fsnap::ShadowRepo& repo, const std::string& tree, std::size_t depth) {
  std::size_t here = 0;
  std::size_t below = 0;
  for (const fsnap::ObjectEntry& e : repo.read_tree(tree)) {
    if (depth == 0 && e.name.rfind("session-", 0) == 0) continue;
    if (e.is_tree) {
      EXPECT_EQ(e.name.size(), 2u) << e.name;
      below += count_notes(repo, e.oid, depth + 1);
    } else {
      EXPECT_EQ(e.name.size() + 2 * depth, 40u) << e.name;
      ++here;
    }
  }
  EXPECT_LE(here, 128u) << "notes at depth " << depth;
  return here + below;
}

TEST(LedgerNotesTest, TheNotesTreeIsFannedOutAndEveryNoteIsRead) {
  testing_support::TempDir temp;
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(temp / "repo.git", true);
  auto now = std::chrono::system_clock::now();
  std::vector<std::string> annotated;
  for (int i = 0; i < 300; ++i) {
    annotated.push_back(repo.write_blob("object " + std::to_string(i)));
    repo.write_notes({{annotated.back(), "note " + std::to_string(i) + "\n"}}, now);
  }
  // A note may anchor a tree beside the notes; it stays through later writes.
  std::string anchored_tree = repo.write_tree({{"kept.txt", repo.write_blob("kept\n"), false}});
  repo.write_notes({{annotated[0], "note 0\n", "session-r", anchored_tree}}, now);
  std::vector<fsnap::Note> batch;
  for (int i = 300; i < 350; ++i) {
    annotated.push_back(repo.write_blob("object " + std::to_string(i)));
    batch.push_back({annotated.back(), "note " + std::to_string(i) + "\n"});
  }
  repo.write_notes(batch, now);
  // A note in a fanned-out subtree is replaced, not added beside.
  repo.write_notes({{annotated[7], "note 7, amended\n"}}, now);

  for (std::size_t i = 0; i < annotated.size(); ++i) {
    std::string expected = i == 7 ? "note 7, amended\n" : "note " + std::to_string(i) + "\n";
    ASSERT_EQ(repo.note(annotated[i]).value_or("(none)"), expected) << i;
  }
  std::optional<std::string> tree = repo.ref_tree(fsnap::layout::kNotesRef);
  ASSERT_TRUE(tree.has_value());
  EXPECT_EQ(count_notes(repo, *tree, 0), 350u);

  std::string git_dir = repo.git_dir().string();
  testing_support::CommandResult list = testing_support::run_command(
      {"git", "--git-dir", git_dir, "notes", "--ref=shadowbox", "list"}, temp.path());
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(std::count(list.out.begin(), list.out.end(), '\n'), 350);
  testing_support::CommandResult show = testing_support::run_command(
      {"git", "--git-dir", git_dir, "notes", "--ref=shadowbox", "show", annotated[7]}, temp.path());
  EXPECT_EQ(show.out, "note 7, amended\n") << show.err;
  // One commit per write, the batch of 50 included.
  testing_support::CommandResult commits = testing_support::run_command(
      {"git", "--git-dir", git_dir, "rev-list", "--count", fsnap::layout::kNotesRef}, temp.path());
  EXPECT_EQ(commits.out, "303\n") << commits.err;
  EXPECT_EQ(testing_support::run_command({"git", "--git-dir", git_dir, "rev-parse",
                                          std::string(fsnap::layout::kNotesRef) + ":session-r"},
                                         temp.path())
                .out,
            anchored_tree + "\n");
  // Each tree a write makes is part of what it commits: none is left behind unreachable.
  testing_support::CommandResult unreachable = testing_support::run_command(
      {"git", "--git-dir", git_dir, "fsck", "--unreachable", "--no-reflogs"}, temp.path());
  EXPECT_EQ(unreachable.out.find("unreachable tree"), std::string::npos) << unreachable.out;
  EXPECT_EQ(unreachable.out.find("unreachable commit"), std::string::npos) << unreachable.out;
  // An anchor must not look like a note or a fan-out directory.
  EXPECT_THROW(repo.write_notes({{annotated[1], "x\n", "ab", anchored_tree}}, now), fsnap::Error);
  testing_support::CommandResult fsck = testing_support::run_command(
      {"git", "--git-dir", git_dir, "fsck", "--strict", "--no-dangling"}, temp.path());
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
}

}  // namespace

// No library includes itself in a circle: within each top-level folder, a file's
// component is its name without the extension (x.hpp and x.cpp are one component; a
// private x_impl.hpp is part of x), and the components' includes of one another form no
// cycle. A cycle means two parts that cannot be read, tested or moved apart; the test
// names every one it finds with the files that make it.
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

namespace {

namespace fs = boost::filesystem;

const fs::path kSource(SHADOWBOX_SOURCE_DIR);

std::string component_of(const std::string& file_name) {
  std::string stem = fs::path(file_name).stem().string();
  const std::string impl = "_impl";
  if (stem.size() > impl.size() && stem.compare(stem.size() - impl.size(), impl.size(), impl) == 0)
    stem.resize(stem.size() - impl.size());
  return stem;
}

// component -> the components of the same library it includes, with the file that does.
using Graph = std::map<std::string, std::map<std::string, std::string>>;

Graph include_graph(const std::string& library) {
  Graph graph;
  static const std::regex include_line("^#include \"([^\"]+)\"");
  for (fs::recursive_directory_iterator it(kSource / library), end; it != end; ++it) {
    std::string ext = it->path().extension().string();
    if (ext != ".hpp" && ext != ".cpp") continue;
    std::string from = component_of(it->path().filename().string());
    graph[from];
    std::ifstream in(it->path().string());
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      std::string target = m[1];
      // Ours: "<library>/x.hpp" (a public header) or "x.hpp" (a private one).
      bool public_header = target.rfind(library + "/", 0) == 0;
      if (!public_header && target.find('/') != std::string::npos) continue;
      std::string to = component_of(target);
      if (to != from) graph[from].emplace(to, it->path().lexically_relative(kSource).string());
    }
  }
  return graph;
}

// The strongly connected components of more than one member (Tarjan).
std::vector<std::vector<std::string>> cycles(const Graph& graph) {
  std::map<std::string, int> index, low;
  std::vector<std::string> stack;
  std::set<std::string> on_stack;
  std::vector<std::vector<std::string>> out;
  int next = 0;
  std::function<void(const std::string&)> visit = [&](const std::string& v) {
    index[v] = low[v] = next++;
    stack.push_back(v);
    on_stack.insert(v);
    auto edges = graph.find(v);
    if (edges != graph.end()) {
      for (const auto& [w, file] : edges->second) {
        if (index.count(w) == 0) {
          visit(w);
          low[v] = std::min(low[v], low[w]);
        } else if (on_stack.count(w) != 0) {
          low[v] = std::min(low[v], index[w]);
        }
      }
    }
    if (low[v] != index[v]) return;
    std::vector<std::string> members;
    std::string w;
    do {
      w = stack.back();
      stack.pop_back();
      on_stack.erase(w);
      members.push_back(w);
    } while (w != v);
    if (members.size() > 1) out.push_back(members);
  };
  for (const auto& [v, edges] : graph) {
    if (index.count(v) == 0) visit(v);
  }
  return out;
}

TEST(IncludeCyclesTest, NoLibraryIncludesItselfInACircle) {
  for (const std::string library :
       {"fsnap", "policy", "statekit", "sandbox", "runs", "embed", "fleet", "hooks", "cli"}) {
    Graph graph = include_graph(library);
    EXPECT_GT(graph.size(), 1u) << library << " has sources";
    for (const std::vector<std::string>& members : cycles(graph)) {
      std::string why;
      std::set<std::string> in(members.begin(), members.end());
      for (const std::string& m : members) {
        for (const auto& [to, file] : graph.at(m)) {
          if (in.count(to) != 0) why += "\n  " + file + " includes " + to;
        }
      }
      ADD_FAILURE() << library << ": a cycle among " << members.size() << " components:" << why;
    }
  }
}

// The check itself finds a cycle where there is one.
TEST(IncludeCyclesTest, ACycleIsFound) {
  Graph graph = {{"a", {{"b", "a.cpp"}}},
                 {"b", {{"c", "b.hpp"}}},
                 {"c", {{"a", "c.cpp"}}},
                 {"d", {{"a", "d.cpp"}}}};
  std::vector<std::vector<std::string>> found = cycles(graph);
  ASSERT_EQ(found.size(), 1u);
  std::sort(found[0].begin(), found[0].end());
  EXPECT_EQ(found[0], (std::vector<std::string>{"a", "b", "c"}));
}

}  // namespace

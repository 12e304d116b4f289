#include "lifecycle_svg.hpp"

#include <algorithm>
#include <map>

#include "html_text.hpp"

namespace cli {

namespace {

constexpr double kBoxW = 120;
constexpr double kBoxH = 28;
constexpr double kColumnGap = 70;
constexpr double kRowGap = 12;
constexpr double kPad = 24;  // around a compound state's children, its name above them

struct Box {
  double x = 0;
  double y = 0;
  double w = kBoxW;
  double h = kBoxH;
  double cx() const { return x + w / 2; }
  double cy() const { return y + h / 2; }
};

std::string rect(const Box& b, const std::string& cls, const std::string& state) {
  return "<rect class=\"" + cls + "\" data-state=\"" + html_escape(state) + "\" x=\"" +
         svg_number(b.x) + "\" y=\"" + svg_number(b.y) + "\" width=\"" + svg_number(b.w) +
         "\" height=\"" + svg_number(b.h) + "\" rx=\"6\"/>";
}

// Where each state is drawn: top-level states in a row, a compound state's children in a
// column inside its box (compound holds those boxes' markup).
struct Layout {
  std::map<std::string, Box> boxes;
  std::string compound;
  double width = 0;
  double height = 0;
};

Layout lay_out(const statekit::MachineGraph& graph) {
  std::vector<std::string> top;
  std::map<std::string, std::vector<std::string>> children;
  for (const std::string& s : graph.states()) {
    const std::string& parent = graph.options(s).parent;
    if (parent.empty()) {
      top.push_back(s);
    } else {
      children[parent].push_back(s);
    }
  }
  Layout out;
  double x = kPad;
  for (const std::string& s : top) {
    const std::vector<std::string>& inner = children[s];
    if (inner.empty()) {
      out.boxes[s] = Box{x, kPad * 2, kBoxW, kBoxH};
      out.height = std::max(out.height, kPad * 2 + kBoxH);
      x += kBoxW + kColumnGap;
      continue;
    }
    Box outer{x, kPad, kBoxW + 2 * kPad / 2,
              kPad + static_cast<double>(inner.size()) * (kBoxH + kRowGap) + kRowGap};
    out.compound += rect(outer, "compound", s) + "<text class=\"compound-name\" x=\"" +
                    svg_number(outer.x + 8) + "\" y=\"" + svg_number(outer.y + 16) + "\">" +
                    html_escape(s) + "</text>";
    double y = outer.y + kPad;
    for (const std::string& c : inner) {
      out.boxes[c] = Box{x + kPad / 2, y, kBoxW, kBoxH};
      y += kBoxH + kRowGap;
    }
    out.height = std::max(out.height, outer.y + outer.h);
    x += outer.w + kColumnGap;
  }
  out.width = x - kColumnGap + kPad + 3 * kPad;  // room for the loops out to the right
  out.height += kPad;
  return out;
}

// Each state's box: visited if a move went to it, current if the run is in it.
std::string state_boxes(const Layout& layout, const std::vector<ReportMove>& moves,
                        const std::string& current) {
  std::vector<std::string> visited;
  for (const ReportMove& m : moves) visited.push_back(m.to);
  std::string svg;
  for (const auto& [name, box] : layout.boxes) {
    bool seen = std::find(visited.begin(), visited.end(), name) != visited.end();
    std::string cls =
        std::string("state") + (seen ? " visited" : "") + (name == current ? " current" : "");
    svg += rect(box, cls, name) + "<text class=\"state-name\" x=\"" + svg_number(box.cx()) +
           "\" y=\"" + svg_number(box.cy() + 4) + "\" text-anchor=\"middle\">" + html_escape(name) +
           "</text>";
  }
  return svg;
}

// A move's curve (path data) and where its number goes.
struct Arc {
  std::string d;
  double label_x = 0;
  double label_y = 0;
};

// A loop above the state for a move to itself.
Arc loop_arc(const Box& a, double bend) {
  return Arc{"M" + svg_number(a.cx() - 20) + "," + svg_number(a.y) + " C" +
                 svg_number(a.cx() - 20) + "," + svg_number(a.y - bend) + " " +
                 svg_number(a.cx() + 20) + "," + svg_number(a.y - bend) + " " +
                 svg_number(a.cx() + 20) + "," + svg_number(a.y),
             a.cx(), a.y - bend * 0.75};
}

// An arc from box a to box b, bent by bend.
Arc move_arc(const Box& a, const Box& b, double bend) {
  double x1 = a.x + a.w;
  double y1 = a.cy();
  double x2 = b.x;
  double y2 = b.cy();
  double mx = (x1 + x2) / 2;
  double my = (y1 + y2) / 2 - bend;
  if (b.x + b.w <= a.x) {  // back to the left
    x1 = a.x;
    x2 = b.x + b.w;
    mx = (x1 + x2) / 2;
  } else if (b.x < a.x + a.w) {  // within a column: out to its right and back
    x2 = b.x + b.w;
    mx = x1 + 2 * bend;
    my = (y1 + y2) / 2;
  }
  // The label by the curve's middle (a quadratic's is halfway to its control point).
  return Arc{"M" + svg_number(x1) + "," + svg_number(y1) + " Q" + svg_number(mx) + "," +
                 svg_number(my) + " " + svg_number(x2) + "," + svg_number(y2),
             (x1 + x2) / 4 + mx / 2 + (b.x < a.x + a.w && b.x + b.w > a.x ? 10 : 0),
             (y1 + y2) / 4 + my / 2 - 3};
}

// The moves: an arc from state to state (a loop above a state for a move to itself),
// each bent a little more than the last so that repeated moves stay apart.
std::string move_arcs(const Layout& layout, const std::vector<ReportMove>& moves) {
  std::string svg;
  for (std::size_t i = 0; i < moves.size(); ++i) {
    const ReportMove& m = moves[i];
    auto to = layout.boxes.find(m.to);
    if (to == layout.boxes.end()) continue;
    auto from = layout.boxes.find(m.from);
    Box a = from == layout.boxes.end() ? Box{to->second.x - kColumnGap / 2, to->second.y, 0, kBoxH}
                                       : from->second;
    double bend = 18 + 6 * static_cast<double>(i % 5);
    Arc arc = from != layout.boxes.end() && m.from == m.to ? loop_arc(a, bend)
                                                           : move_arc(a, to->second, bend);
    svg += "<g class=\"move\" data-from=\"" + html_escape(m.from) + "\" data-to=\"" +
           html_escape(m.to) + "\" data-event=\"" + html_escape(m.event) + "\"><title>" +
           html_escape(std::to_string(i + 1) + ". " + m.at + " " + m.event + ": " + m.from +
                       " -> " + m.to + (m.reason.empty() ? "" : " (" + m.reason + ")")) +
           "</title><path class=\"move-line\" d=\"" + arc.d +
           "\" marker-end=\"url(#arrow)\"/><text class=\"move-number\" x=\"" +
           svg_number(arc.label_x) + "\" y=\"" + svg_number(arc.label_y) +
           "\" text-anchor=\"middle\">" + std::to_string(i + 1) + "</text></g>";
  }
  return svg;
}

}  // namespace

std::string lifecycle_svg(const statekit::MachineGraph& graph, const std::vector<ReportMove>& moves,
                          const std::string& current) {
  Layout layout = lay_out(graph);
  std::string width = svg_number(layout.width);
  std::string height = svg_number(layout.height);
  return "<svg class=\"lifecycle\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + width +
         "\" height=\"" + height + "\" viewBox=\"0 0 " + width + " " + height +
         "\" role=\"img\" aria-label=\"the run's lifecycle moves\">"
         "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
         "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
         "<path d=\"M0,0 L10,5 L0,10 z\" class=\"arrow-head\"/></marker></defs>" +
         layout.compound + state_boxes(layout, moves, current) + move_arcs(layout, moves) +
         "</svg>";
}

}  // namespace cli

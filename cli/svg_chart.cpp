#include "svg_chart.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "fsnap/checkpoint.hpp"
#include "html_text.hpp"

namespace cli {

namespace {

constexpr double kWidth = 760;
constexpr double kHeight = 260;
constexpr double kLeft = 56;  // room for the axes' labels
constexpr double kRight = 64;
constexpr double kTop = 16;
constexpr double kBottom = 36;

// The seconds from the first point to each point (its index when times are missing).
std::vector<double> seconds_of(const std::vector<ReportPoint>& points) {
  std::vector<double> out;
  std::optional<std::chrono::system_clock::time_point> start;
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::optional<std::chrono::system_clock::time_point> t = fsnap::parse_timestamp(points[i].at);
    if (!t) return {};
    if (!start) start = *t;
    out.push_back(std::chrono::duration<double>(*t - *start).count());
  }
  return out;
}

std::string line(double x1, double y1, double x2, double y2, const std::string& cls) {
  return "<line class=\"" + cls + "\" x1=\"" + svg_number(x1) + "\" y1=\"" + svg_number(y1) +
         "\" x2=\"" + svg_number(x2) + "\" y2=\"" + svg_number(y2) + "\"/>";
}

std::string text(double x, double y, const std::string& anchor, const std::string& cls,
                 const std::string& words) {
  return "<text class=\"" + cls + "\" x=\"" + svg_number(x) + "\" y=\"" + svg_number(y) +
         "\" text-anchor=\"" + anchor + "\">" + html_escape(words) + "</text>";
}

// Where a point lands: time across, steps (left axis) and cost (right axis) up.
struct Scale {
  std::size_t points = 0;
  double span = 1e-9;  // seconds from the first point to the last
  double max_steps = 1;
  double max_cost = 1e-6;
  static constexpr double kPlotW = kWidth - kLeft - kRight;
  static constexpr double kPlotH = kHeight - kTop - kBottom;
  static constexpr double kBottomY = kTop + kPlotH;

  double x(double s) const { return kLeft + (points == 1 ? kPlotW / 2 : s / span * kPlotW); }
  double steps_y(double v) const { return kBottomY - v / max_steps * kPlotH; }
  double cost_y(double v) const { return kBottomY - v / max_cost * kPlotH; }
};

// The scale that holds every point and the run's limits, with a tenth to spare.
Scale scale_of(const std::vector<ReportPoint>& points, const std::vector<double>& seconds,
               const runs::PolicyLimits& limits) {
  Scale scale;
  scale.points = points.size();
  scale.span = std::max(seconds.back(), 1e-9);
  for (const ReportPoint& p : points) {
    scale.max_steps = std::max(scale.max_steps, static_cast<double>(p.steps));
    scale.max_cost = std::max(scale.max_cost, p.cost_usd);
  }
  if (limits.max_steps) {
    scale.max_steps = std::max(scale.max_steps, static_cast<double>(*limits.max_steps));
  }
  if (limits.max_cost_usd) scale.max_cost = std::max(scale.max_cost, *limits.max_cost_usd);
  scale.max_steps *= 1.1;
  scale.max_cost *= 1.1;
  return scale;
}

// The axes and their labels: steps on the left, cost on the right, the first and last
// times below.
std::string axes(const Scale& scale, const std::vector<ReportPoint>& points) {
  const double right = kLeft + Scale::kPlotW;
  const double bottom = Scale::kBottomY;
  return line(kLeft, bottom, right, bottom, "axis") + line(kLeft, kTop, kLeft, bottom, "axis") +
         line(right, kTop, right, bottom, "axis") +
         text(kLeft - 6, kTop + 10, "end", "steps-label", svg_number(std::round(scale.max_steps))) +
         text(kLeft - 6, bottom, "end", "steps-label", "0") +
         text(right + 6, kTop + 10, "start", "cost-label", "$" + svg_number(scale.max_cost)) +
         text(right + 6, bottom, "start", "cost-label", "$0") +
         text(kLeft, kHeight - 8, "start", "time-label", points.front().at.substr(11, 8)) +
         text(right, kHeight - 8, "end", "time-label", points.back().at.substr(11, 8) + " UTC");
}

// The run's limits as lines across the plot.
std::string limit_lines(const Scale& scale, const runs::PolicyLimits& limits) {
  const double right = kLeft + Scale::kPlotW;
  std::string svg;
  if (limits.max_steps) {
    double y = scale.steps_y(static_cast<double>(*limits.max_steps));
    svg += "<g class=\"limit steps-limit\" data-max-steps=\"" + std::to_string(*limits.max_steps) +
           "\">" + line(kLeft, y, right, y, "limit-line") +
           text(kLeft + 4, y - 4, "start", "steps-label",
                "max_steps " + std::to_string(*limits.max_steps)) +
           "</g>";
  }
  if (limits.max_cost_usd) {
    double y = scale.cost_y(*limits.max_cost_usd);
    svg += "<g class=\"limit cost-limit\" data-max-cost-usd=\"" + svg_number(*limits.max_cost_usd) +
           "\">" + line(kLeft, y, right, y, "limit-line") +
           text(right - 4, y - 4, "end", "cost-label",
                "max_cost_usd $" + svg_number(*limits.max_cost_usd)) +
           "</g>";
  }
  return svg;
}

// The two curves and a mark per point, carrying its figures for whoever reads the page.
std::string series(const Scale& scale, const std::vector<ReportPoint>& points,
                   const std::vector<double>& seconds) {
  std::string steps_path;
  std::string cost_path;
  std::string marks;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ReportPoint& p = points[i];
    double x = scale.x(seconds[i]);
    double sy = scale.steps_y(static_cast<double>(p.steps));
    double cy = scale.cost_y(p.cost_usd);
    steps_path += (i == 0 ? "" : " ") + svg_number(x) + "," + svg_number(sy);
    cost_path += (i == 0 ? "" : " ") + svg_number(x) + "," + svg_number(cy);
    marks +=
        "<g class=\"point\" data-checkpoint=\"" + html_escape(p.checkpoint) + "\" data-at=\"" +
        html_escape(p.at) + "\" data-steps=\"" + std::to_string(p.steps) + "\" data-cost-usd=\"" +
        svg_number(p.cost_usd) + "\"><title>" +
        html_escape(p.at + ": " + std::to_string(p.steps) + " steps, $" + svg_number(p.cost_usd)) +
        "</title><circle class=\"steps-dot\" cx=\"" + svg_number(x) + "\" cy=\"" + svg_number(sy) +
        "\" r=\"2.5\"/><circle class=\"cost-dot\" cx=\"" + svg_number(x) + "\" cy=\"" +
        svg_number(cy) + "\" r=\"2.5\"/></g>";
  }
  return "<polyline class=\"steps-line\" points=\"" + steps_path + "\"/>" +
         "<polyline class=\"cost-line\" points=\"" + cost_path + "\"/>" + marks;
}

}  // namespace

std::string cost_steps_chart(const std::vector<ReportPoint>& points,
                             const runs::PolicyLimits& limits) {
  if (points.empty()) return "<p class=\"none\">No checkpoint of this run records its figures.</p>";
  std::vector<double> seconds = seconds_of(points);
  if (seconds.empty()) {
    for (std::size_t i = 0; i < points.size(); ++i) seconds.push_back(static_cast<double>(i));
  }
  Scale scale = scale_of(points, seconds, limits);
  return "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + svg_number(kWidth) +
         "\" height=\"" + svg_number(kHeight) + "\" viewBox=\"0 0 " + svg_number(kWidth) + " " +
         svg_number(kHeight) + "\" role=\"img\" aria-label=\"steps and cost over time\">" +
         axes(scale, points) + limit_lines(scale, limits) + series(scale, points, seconds) +
         "</svg>";
}

}  // namespace cli

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

}  // namespace

std::string cost_steps_chart(const std::vector<ReportPoint>& points,
                             const sandbox::PolicyLimits& limits) {
  if (points.empty()) return "<p class=\"none\">No checkpoint of this run records its figures.</p>";
  std::vector<double> seconds = seconds_of(points);
  if (seconds.empty()) {
    for (std::size_t i = 0; i < points.size(); ++i) seconds.push_back(static_cast<double>(i));
  }
  double span = std::max(seconds.back(), 1e-9);
  double max_steps = 1;
  double max_cost = 1e-6;
  for (const ReportPoint& p : points) {
    max_steps = std::max(max_steps, static_cast<double>(p.steps));
    max_cost = std::max(max_cost, p.cost_usd);
  }
  if (limits.max_steps) max_steps = std::max(max_steps, static_cast<double>(*limits.max_steps));
  if (limits.max_cost_usd) max_cost = std::max(max_cost, *limits.max_cost_usd);
  max_steps *= 1.1;
  max_cost *= 1.1;
  const double plot_w = kWidth - kLeft - kRight;
  const double plot_h = kHeight - kTop - kBottom;
  auto x_of = [&](double s) {
    return kLeft + (points.size() == 1 ? plot_w / 2 : s / span * plot_w);
  };
  auto steps_y = [&](double v) { return kTop + plot_h - v / max_steps * plot_h; };
  auto cost_y = [&](double v) { return kTop + plot_h - v / max_cost * plot_h; };

  std::string svg = "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    svg_number(kWidth) + "\" height=\"" + svg_number(kHeight) +
                    "\" viewBox=\"0 0 " + svg_number(kWidth) + " " + svg_number(kHeight) +
                    "\" role=\"img\" aria-label=\"steps and cost over time\">";
  double bottom = kTop + plot_h;
  svg += line(kLeft, bottom, kLeft + plot_w, bottom, "axis");
  svg += line(kLeft, kTop, kLeft, bottom, "axis");
  svg += line(kLeft + plot_w, kTop, kLeft + plot_w, bottom, "axis");
  svg += text(kLeft - 6, kTop + 10, "end", "steps-label", svg_number(std::round(max_steps)));
  svg += text(kLeft - 6, bottom, "end", "steps-label", "0");
  svg += text(kLeft + plot_w + 6, kTop + 10, "start", "cost-label", "$" + svg_number(max_cost));
  svg += text(kLeft + plot_w + 6, bottom, "start", "cost-label", "$0");
  svg += text(kLeft, kHeight - 8, "start", "time-label", points.front().at.substr(11, 8));
  svg += text(kLeft + plot_w, kHeight - 8, "end", "time-label",
              points.back().at.substr(11, 8) + " UTC");
  if (limits.max_steps) {
    double y = steps_y(static_cast<double>(*limits.max_steps));
    svg += "<g class=\"limit steps-limit\" data-max-steps=\"" + std::to_string(*limits.max_steps) +
           "\">" + line(kLeft, y, kLeft + plot_w, y, "limit-line") +
           text(kLeft + 4, y - 4, "start", "steps-label",
                "max_steps " + std::to_string(*limits.max_steps)) +
           "</g>";
  }
  if (limits.max_cost_usd) {
    double y = cost_y(*limits.max_cost_usd);
    svg += "<g class=\"limit cost-limit\" data-max-cost-usd=\"" + svg_number(*limits.max_cost_usd) +
           "\">" + line(kLeft, y, kLeft + plot_w, y, "limit-line") +
           text(kLeft + plot_w - 4, y - 4, "end", "cost-label",
                "max_cost_usd $" + svg_number(*limits.max_cost_usd)) +
           "</g>";
  }
  std::string steps_path;
  std::string cost_path;
  std::string marks;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ReportPoint& p = points[i];
    double x = x_of(seconds[i]);
    double sy = steps_y(static_cast<double>(p.steps));
    double cy = cost_y(p.cost_usd);
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
  svg += "<polyline class=\"steps-line\" points=\"" + steps_path + "\"/>";
  svg += "<polyline class=\"cost-line\" points=\"" + cost_path + "\"/>";
  svg += marks + "</svg>";
  return svg;
}

}  // namespace cli

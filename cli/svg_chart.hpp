// The chart of `shadowbox report`: a run's steps and cost over time as inline SVG, with
// its max_steps and max_cost_usd limits drawn as dashed lines on their scales. Each
// point is a <g class="point"> whose data-checkpoint, data-at, data-steps and
// data-cost-usd say what it stands for, so a test (or a person's tool) can read them.
#pragma once

#include <string>
#include <vector>

#include "run_report_model.hpp"
#include "runs/run_settings.hpp"

namespace cli {

// The <svg> element of the chart (a short text instead when there are no points).
std::string cost_steps_chart(const std::vector<ReportPoint>& points,
                             const runs::PolicyLimits& limits);

}  // namespace cli

#include "run_report_html.hpp"

#include "html_text.hpp"
#include "lifecycle_svg.hpp"
#include "run_figures.hpp"
#include "svg_chart.hpp"
#include "version.hpp"

namespace cli {

namespace {

// The page's look: plain, readable printed or on a small screen.
constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:16px 24px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
dl.summary{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0}dl.summary dt{color:#59636e}dl.summary dd{margin:0}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:8px;overflow:auto;max-height:420px;font:12px/1.4 ui-monospace,monospace;white-space:pre-wrap;word-break:break-all}
pre.commands{max-height:none}
ol.timeline{list-style:none;padding:0;margin:0}
li.entry{border-left:4px solid #d0d7de;padding:4px 10px;margin:6px 0;background:#fbfbfc}
li.entry .head{display:flex;flex-wrap:wrap;gap:4px 12px;align-items:baseline}
.time{color:#59636e;font:12px ui-monospace,monospace}.ref{font:12px ui-monospace,monospace;color:#59636e}
.tool{font-weight:600}.input{font:12px ui-monospace,monospace;word-break:break-all}
.outcome{border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;background:#eaeef2}
li.outcome-ok{border-left-color:#1a7f37}.outcome-ok .outcome{background:#dafbe1;color:#116329}
li.outcome-rolled-back,li.outcome-failed,li.outcome-rollback-refused{border-left-color:#cf222e}
.outcome-rolled-back .outcome,.outcome-failed .outcome,.outcome-rollback-refused .outcome{background:#ffebe9;color:#a40e26}
li.outcome-denied-by-a-limit,li.outcome-denied-by-the-agent{border-left-color:#9a6700}
.outcome-denied-by-a-limit .outcome,.outcome-denied-by-the-agent .outcome{background:#fff8c5;color:#7d4e00}
li.kind-between{border-left-color:#8250df;background:#fbf8ff}li.kind-lifecycle{border-left-color:#0969da;background:#f3f8ff}
li.kind-checkpoint{border-left-color:#afb8c1}
.details{color:#59636e;font-size:13px;margin:2px 0 0 0}
details{margin:4px 0}summary{cursor:pointer;color:#0969da;font-size:13px}
.cut{color:#9a6700;font-size:12px}
svg{max-width:100%;height:auto;display:block}
.axis{stroke:#8c959f;stroke-width:1}.limit-line{stroke:#cf222e;stroke-width:1.2;stroke-dasharray:6 4}
.steps-line{fill:none;stroke:#0969da;stroke-width:1.5}.cost-line{fill:none;stroke:#bc4c00;stroke-width:1.5}
.steps-dot{fill:#0969da}.cost-dot{fill:#bc4c00}
.steps-label{fill:#0969da;font-size:11px}.cost-label{fill:#bc4c00;font-size:11px}.time-label{fill:#59636e;font-size:11px}
.legend span{margin-right:16px;font-size:13px}.legend .s{color:#0969da}.legend .c{color:#bc4c00}.legend .l{color:#cf222e}
.compound{fill:#f6f8fa;stroke:#8c959f;stroke-dasharray:4 3}.compound-name{fill:#59636e;font-size:12px}
.state{fill:#fff;stroke:#8c959f}.state.visited{fill:#ddf4ff;stroke:#0969da}.state.current{fill:#fff8c5;stroke:#9a6700;stroke-width:3}
.state-name{font-size:12px;fill:#1f2328}.move-line{fill:none;stroke:#0969da;stroke-width:1.3}.arrow-head{fill:#0969da}
.move-number{font-size:11px;font-weight:700;fill:#0550ae}
table.moves{border-collapse:collapse;font-size:13px}table.moves td,table.moves th{border:1px solid #d0d7de;padding:2px 8px;text-align:left}
.none{color:#59636e}footer{margin-top:32px;color:#59636e;font-size:12px}
)";

std::string esc(const std::string& s) {
  return html_escape(s);
}

// "2026-11-27 02:09:17.679" of "2026-11-27T02:09:17.679131Z": to the millisecond.
std::string short_time(const std::string& iso) {
  if (iso.size() < 23 || iso[10] != 'T') return iso;
  return iso.substr(0, 10) + " " + iso.substr(11, 12);
}

// "rolled back" -> "rolled-back", for a class name.
std::string slug(std::string text) {
  for (char& c : text) {
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!word) c = '-';
  }
  return text;
}

std::string joined(const std::vector<std::string>& words, const std::string& sep) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

std::string row(const std::string& term, const std::string& html) {
  return "<dt>" + esc(term) + "</dt><dd>" + html + "</dd>";
}

std::string limits_text(const runs::PolicyLimits& l) {
  std::vector<std::string> parts;
  if (l.max_steps) parts.push_back("max_steps " + std::to_string(*l.max_steps));
  if (l.max_cost_usd) parts.push_back("max_cost_usd $" + svg_number(*l.max_cost_usd));
  if (l.max_retries_total) parts.push_back("max_retries " + std::to_string(*l.max_retries_total));
  if (l.timeout) parts.push_back("timeout " + std::to_string(l.timeout->count()) + "s");
  return parts.empty() ? "none" : joined(parts, ", ");
}

std::string summary_html(const RunReport& r) {
  const hooks::RunInfo& info = r.info;
  std::string sessions;
  for (const hooks::AgentSession& s : info.sessions) {
    sessions += (sessions.empty() ? "" : ", ") + s.session_id;
  }
  if (sessions.empty()) sessions = info.session_id;
  std::string html = "<section id=\"summary\"><h2>Summary</h2><dl class=\"summary\">";
  html += row("agent", esc(info.agent.empty() ? "-" : info.agent));
  html += row("agent sessions",
              "<span class=\"sessions\">" + esc(sessions.empty() ? "-" : sessions) + "</span>");
  html += row("status", "<span id=\"status\">" + esc(info.status) + "</span>");
  html +=
      row("halt reason", "<span id=\"halt-reason\">" +
                             esc(info.halt_reason.empty() ? "-" : info.halt_reason) + "</span>");
  html += row("totals", "<span id=\"totals\">" +
                            esc(figures_line(info.figures, info.unpriced_models)) + "</span>");
  html += row("limits", esc(limits_text(r.limits)));
  html += row("started", esc(info.started_at.empty() ? "-" : info.started_at));
  html += row("last activity", esc(info.last_activity.empty() ? "-" : info.last_activity));
  html += row("checkpoints", std::to_string(info.checkpoints));
  html += row(
      "gaps",
      std::to_string(info.gaps) +
          (info.gaps == 0 ? "" : " hook events could not be recorded (the run's log says which)"));
  if (!r.command.empty()) {
    html += row("command", "<code>" + esc(joined(r.command, " ")) + "</code>");
  }
  if (!r.resumes.empty()) html += row("resumed", esc(joined(r.resumes, ", ")));
  if (info.forked_from) {
    html +=
        row("forked from", "<span id=\"forked-from\">run " + esc(info.forked_from->run) +
                               " before call " + esc(info.forked_from->tool_call_id) +
                               " (checkpoint " + esc(info.forked_from->checkpoint) + ")</span>");
  }
  html += "</dl><p>Go on with it, rewind it or look closer:</p><pre class=\"commands\">";
  for (const std::string& c : r.commands) html += esc(c) + "\n";
  return html + "</pre></section>";
}

std::string diff_html(const ReportEntry& e) {
  if (e.changes.empty()) return "";
  std::string files;
  for (const ReportChange& c : e.changes) files += esc(c.status + "  " + c.path) + "\n";
  std::string html = "<details class=\"diff\"><summary>" + std::to_string(e.changes.size()) +
                     (e.changes.size() == 1 ? " file" : " files") + " changed, diff " +
                     std::to_string(e.diff.full_bytes) + " bytes, " +
                     std::to_string(e.diff.full_lines) + " lines</summary><pre class=\"files\">" +
                     files + "</pre>";
  if (!e.diff.text.empty())
    html += "<pre class=\"patch\">" + html_escape_text(e.diff.text) + "</pre>";
  if (e.diff.over_budget) {
    html += "<p class=\"cut\">Diff left out: the report's diff budget was spent (" +
            std::to_string(e.diff.full_bytes) + " bytes; shadowbox diff " + esc(e.from_checkpoint) +
            " " + esc(e.to_checkpoint) + " shows it).</p>";
  } else if (e.diff.cut) {
    html += "<p class=\"cut\">Diff cut at " + std::to_string(e.diff.text.size()) + " of " +
            std::to_string(e.diff.full_bytes) + " bytes (shadowbox diff " + esc(e.from_checkpoint) +
            " " + esc(e.to_checkpoint) + " shows it whole).</p>";
  }
  return html + "</details>";
}

std::string entry_html(const ReportEntry& e) {
  std::string html = "<li class=\"entry kind-" + slug(e.kind) + " outcome-" + slug(e.outcome) +
                     "\" data-kind=\"" + esc(e.kind) + "\" data-ref=\"" + esc(e.ref) +
                     "\" data-tool=\"" + esc(e.tool) + "\" data-outcome=\"" + esc(e.outcome) +
                     "\"><div class=\"head\"><span class=\"time\" title=\"" + esc(e.at) + "\">" +
                     esc(short_time(e.at)) + "</span>";
  if (e.kind == "call") {
    html += "<span class=\"tool\">" + esc(e.tool) + "</span>";
  } else if (e.kind == "between") {
    html += "<span class=\"tool\">files changed between calls</span>";
  } else if (e.kind == "lifecycle") {
    html += "<span class=\"tool\">run lifecycle</span>";
  } else {
    html += "<span class=\"tool\">checkpoint</span>";
  }
  html += "<span class=\"outcome\">" + esc(e.outcome) + "</span>";
  if (e.elapsed_ms)
    html += "<span class=\"duration\">" + std::to_string(*e.elapsed_ms) + " ms</span>";
  if (!e.ref.empty()) html += "<span class=\"ref\">" + esc(e.ref) + "</span>";
  html += "</div>";
  if (!e.input.empty()) html += "<div class=\"input\">" + esc(e.input) + "</div>";
  for (const std::string& d : e.details) html += "<div class=\"details\">" + esc(d) + "</div>";
  html += diff_html(e);
  if (!e.record.empty()) {
    html += "<details class=\"record\"><summary>ledger record</summary><pre>" +
            html_escape_text(e.record) + "</pre>";
    if (e.record.size() < e.record_bytes) {
      html += "<p class=\"cut\">Record cut at " + std::to_string(e.record.size()) + " of " +
              std::to_string(e.record_bytes) + " bytes (shadowbox show shows it whole).</p>";
    }
    html += "</details>";
  }
  return html + "</li>";
}

std::string moves_html(const RunReport& r) {
  std::string html = "<section id=\"lifecycle\"><h2>Lifecycle</h2>" +
                     lifecycle_svg(runs::run_lifecycle().graph(), r.moves, r.current);
  if (r.moves.empty()) {
    return html +
           "<p class=\"none\">The run recorded no lifecycle moves (it predates them, or "
           "no agent ran in it).</p></section>";
  }
  html += "<details class=\"moves\"><summary>the " + std::to_string(r.moves.size()) +
          (r.moves.size() == 1 ? " move" : " moves") +
          " in order</summary><table class=\"moves\"><tr><th>#</th><th>at (UTC)</th>"
          "<th>from</th><th>to</th><th>event</th><th>reason</th></tr>";
  for (std::size_t i = 0; i < r.moves.size(); ++i) {
    const ReportMove& m = r.moves[i];
    html += "<tr><td>" + std::to_string(i + 1) + "</td><td>" + esc(short_time(m.at)) + "</td><td>" +
            esc(m.from) + "</td><td>" + esc(m.to) + "</td><td>" + esc(m.event) + "</td><td>" +
            esc(m.reason) + "</td></tr>";
  }
  return html + "</table></details></section>";
}

}  // namespace

std::string run_report_html(const RunReport& r) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>shadowbox report: " +
      esc(r.info.run) + "</title><style>" + kStyle + "</style></head><body>";
  html += "<h1>Run <span id=\"run\">" + esc(r.info.run) + "</span></h1>";
  html += summary_html(r);
  html +=
      "<section id=\"figures\"><h2>Steps and cost</h2><p class=\"legend\"><span class=\"s\">"
      "&#9679; steps</span><span class=\"c\">&#9679; cost (USD)</span><span class=\"l\">"
      "- - limits</span></p>" +
      cost_steps_chart(r.points, r.limits) + "</section>";
  html += moves_html(r);
  std::size_t calls = 0;
  for (const ReportEntry& e : r.entries) calls += e.kind == "call" ? 1 : 0;
  html += "<section id=\"timeline\"><h2>Timeline</h2><p>" + std::to_string(calls) +
          (calls == 1 ? " tool call" : " tool calls") + ", " + std::to_string(r.entries.size()) +
          " entries, oldest first. Times are UTC.</p><ol class=\"timeline\">";
  for (const ReportEntry& e : r.entries) html += entry_html(e);
  html += "</ol></section>";
  html += "<section id=\"cuts\"><h2>What this page leaves out</h2><p>Each diff is cut at " +
          std::to_string(kDiffBytes) + " bytes; once the diffs shown reach " +
          std::to_string(kDiffBudget) + " bytes, later ones list their files only (" +
          std::to_string(r.diffs_over_budget) + " left out here); each ledger record is cut at " +
          std::to_string(kRecordBytes) +
          " bytes. Every cut says the full size; shadowbox diff "
          "and shadowbox show print what was cut.</p></section>";
  html += "<footer>Written by shadowbox " + esc(kVersion) + " report.</footer></body></html>\n";
  return html;
}

}  // namespace cli

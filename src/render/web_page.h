// HTML pages built around the front-end bundle (web/, built by npm and compiled into the
// binary): reports, standalone flame graphs and timelines, and the `mlprof serve` dashboard.
// Everything is inline, so a page opened from disk makes no network request.
#pragma once

#include <string>
#include <string_view>

namespace mlprof {

struct WebPage {
  std::string kind;  // "report", "flame", "timeline" or "dashboard"
  std::string title;
  std::string data_json;      // the page's data object (see docs/report.md); "" = {kind, title}
  std::string events_base64;  // gzip'ed timeline events (render/timeline_data.h), may be empty
};

std::string render_web_page(const WebPage& page);

// The bundle compiled into this binary (generated at build time from web/).
std::string_view web_bundle_js();
std::string_view web_bundle_css();

// Makes JSON or JS text safe inside a <script> element ("</" -> "<\/", valid in both).
std::string script_safe(std::string_view text);

}  // namespace mlprof

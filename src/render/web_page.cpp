#include "render/web_page.h"

#include "trace/json_writer.h"

namespace mlprof {

std::string script_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else if (text[i] == '<' && text.substr(i, 4) == "<!--") {
      out += "<\\!--";
      i += 3;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

namespace {

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string render_web_page(const WebPage& page) {
  static const std::string js = script_safe(web_bundle_js());
  std::string data = page.data_json;
  if (data.empty()) {
    JsonWriter w;
    w.begin_object().field("kind", page.kind).field("title", page.title).end_object();
    data = w.take();
  }
  std::string out;
  out.reserve(js.size() + web_bundle_css().size() + data.size() + page.events_base64.size() + 1024);
  out += "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"mlprof\">\n<title>";
  out += html_escape(page.title.empty() ? "mlprof" : "mlprof: " + page.title);
  out += "</title>\n<style>\n";
  out += web_bundle_css();
  out += "\n</style>\n</head>\n<body>\n<div id=\"app\"></div>\n";
  out += "<script id=\"mlprof-data\" type=\"application/json\">";
  out += script_safe(data);
  out += "</script>\n";
  if (!page.events_base64.empty()) {
    out += "<script id=\"mlprof-events\" type=\"application/octet-stream\">";
    out += page.events_base64;  // base64 has no '<'
    out += "</script>\n";
  }
  out += "<script>\n";
  out += js;
  out += "\n</script>\n</body></html>\n";
  return out;
}

}  // namespace mlprof

#include "render/flame_render.h"
#include "render/web_page.h"

namespace mlprof {

std::string render_flame_html(const FlameGraph& g, std::string_view title) {
  JsonWriter w;
  w.begin_object();
  w.field("kind", "flame");
  w.field("title", title);
  w.key("analyses").begin_object().key("flame");
  write_flame_json(w, g);
  w.end_object().end_object();
  return render_web_page(WebPage{"flame", std::string(title), w.take(), ""});
}

}  // namespace mlprof

// Which Host headers `serve` answers: a defence against DNS rebinding, where a web page from a
// foreign site gets its own name resolved to 127.0.0.1 and reads the API with the user's
// browser. Such requests carry the foreign name in Host; an IP literal cannot be rebound.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mlprof::serve {

class HostCheck {
 public:
  // `bound_host`: the address `serve` listens on; `allowed`: extra names (--allow-host), "*"
  // allows every name.
  HostCheck(std::string bound_host, std::vector<std::string> allowed);
  // `host` is the Host header's value ("name", "name:port", "[v6]:port"); empty (HTTP/1.0
  // without Host) is allowed: browsers always send one.
  bool allows(std::string_view host) const;

 private:
  std::string bound_;
  bool bound_wildcard_ = false;  // 0.0.0.0 or ::: any literal address of this machine
  std::vector<std::string> allowed_;
  bool allow_all_ = false;
};

}  // namespace mlprof::serve

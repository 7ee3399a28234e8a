#include "serve/host_check.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

namespace mlprof::serve {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!out.empty() && out.back() == '.') out.pop_back();  // "localhost." is "localhost"
  return out;
}

// The name part of a Host header: "[::1]:8080" -> "::1", "a.b:80" -> "a.b".
std::string host_name(std::string_view h) {
  if (!h.empty() && h[0] == '[') {
    size_t end = h.find(']');
    return end == std::string_view::npos ? std::string() : lower(h.substr(1, end - 1));
  }
  size_t colon = h.find(':');
  if (colon != std::string_view::npos && h.find(':', colon + 1) == std::string_view::npos)
    h = h.substr(0, colon);
  return lower(h);
}

bool is_ipv4(const std::string& s, in_addr& a) { return inet_pton(AF_INET, s.c_str(), &a) == 1; }
bool is_ipv6(const std::string& s, in6_addr& a) { return inet_pton(AF_INET6, s.c_str(), &a) == 1; }

bool is_loopback(const std::string& name) {
  if (name == "localhost" || name.ends_with(".localhost")) return true;
  in_addr a4{};
  if (is_ipv4(name, a4)) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  return is_ipv6(name, a6) && IN6_IS_ADDR_LOOPBACK(&a6);
}

}  // namespace

HostCheck::HostCheck(std::string bound_host, std::vector<std::string> allowed)
    : bound_(host_name(bound_host.find(':') != std::string::npos && bound_host[0] != '['
                           ? "[" + bound_host + "]"
                           : bound_host)) {
  bound_wildcard_ = bound_ == "0.0.0.0" || bound_ == "::" || bound_.empty();
  for (const std::string& a : allowed) {
    if (a == "*") allow_all_ = true;
    allowed_.push_back(host_name(a));
  }
}

bool HostCheck::allows(std::string_view host) const {
  if (host.empty() || allow_all_) return true;
  std::string name = host_name(host);
  if (name.empty()) return false;
  if (is_loopback(name) || name == bound_) return true;
  if (std::find(allowed_.begin(), allowed_.end(), name) != allowed_.end()) return true;
  in_addr a4{};
  in6_addr a6{};
  return bound_wildcard_ && (is_ipv4(name, a4) || is_ipv6(name, a6));
}

}  // namespace mlprof::serve

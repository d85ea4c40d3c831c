// The index page of a folder of exported kernels (`vyre export web --all`):
// a link to each kernel's demo page, and each program refused with why.
#include "web/web_files.hpp"

namespace vyre::web {

std::string index_page(const std::vector<WebIndexEntry>& entries) {
  std::string kernels, refused;
  for (const WebIndexEntry& e : entries) {
    if (e.refused.empty())
      kernels += "    <li><a href=\"" + html_escape(e.folder) + "/index.html\">" + html_escape(e.program) +
                 "</a> <small>(<a href=\"" + html_escape(e.folder) + "/kernel.js\">kernel.js</a>)</small></li>\n";
    else
      refused += "    <li data-program=\"" + html_escape(e.program) + "\"><b>" + html_escape(e.program) + "</b>: " +
                 html_escape(e.refused) + "</li>\n";
  }
  std::string out;
  out += "<!doctype html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n  <title>vyre kernels</title>\n";
  out += "  <style>\n    body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; "
         "padding: 0 1rem; }\n  </style>\n</head>\n<body>\n  <h1>vyre kernels</h1>\n";
  out += "  <p>Each kernel's page runs it on this browser's WebGPU. Serve this folder over http (for example "
         "<code>python3 -m http.server</code>): a page opened as a file cannot import its module.</p>\n";
  out += "  <ul id=\"kernels\">\n" + kernels + "  </ul>\n";
  if (!refused.empty()) out += "  <h2>Not exported</h2>\n  <ul id=\"refused\">\n" + refused + "  </ul>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace vyre::web

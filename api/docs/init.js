// Renders the API's OpenAPI document with Redoc. Redoc shows info.version in parentheses after the title
// ("Postbox (1)"); the page says it in words instead. The document itself is served unchanged.
fetch("/api/openapi.json")
  .then(function (res) { return res.json(); })
  .then(function (spec) {
    spec.info.title = spec.info.title + " API, version " + spec.info.version;
    spec.info.version = "";
    Redoc.init(spec, {}, document.getElementById("redoc"));
  });

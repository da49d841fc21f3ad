// r2med viewer only: "show more" on a document fetches that one document
// from the viewer (/api/doc/…), so a page never carries every document's
// full text. Not in the offline report, which fetches nothing.
(function () {
  "use strict";
  // "show more" on a document fetches that one document from the viewer
  // (/api/doc/…), so a page never carries every document's full text.
  (function initMore() {
    document.addEventListener("click", function (e) {
      var btn = e.target.closest ? e.target.closest("button.more") : null;
      if (!btn) return;
      var box = btn.closest(".hit, .doc");
      var text = box.querySelector(".text");
      if (box.classList.contains("open")) {
        box.classList.remove("open");
        if (box._snippet !== undefined) text.textContent = box._snippet;
        btn.textContent = "show more";
        return;
      }
      var url = btn.getAttribute("data-doc");
      if (!url) { box.classList.add("open"); btn.textContent = "show less"; return; }
      btn.textContent = "loading…";
      fetch(url, { headers: { "Accept": "application/json" } }).then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.json();
      }).then(function (d) {
        if (box._snippet === undefined) box._snippet = text.textContent;
        text.textContent = d.text + (d.truncated ? "\n[… " + d.length + " bytes in all; cut at " + d.text.length + "]" : "");
        box.classList.add("open");
        btn.textContent = "show less";
      }).catch(function (err) { btn.textContent = "failed: " + err.message; });
    });
  })();
})();

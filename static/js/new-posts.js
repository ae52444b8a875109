// "N new posts" on the home page: polls /timeline/new/ while the page is visible.
// The page works without it; the feed container carries the newest key and the URL.
(function () {
  "use strict";
  var feed = document.querySelector("[data-newest-key]");
  if (!feed || !window.fetch) {
    return;
  }
  var INTERVAL_MS = 30000;
  var url = feed.getAttribute("data-new-posts-url") + "?after=" +
    encodeURIComponent(feed.getAttribute("data-newest-key"));
  var notice = null;
  var timer = null;

  function show(count) {
    if (count <= 0) {
      return;
    }
    if (!notice) {
      notice = document.createElement("a");
      notice.className = "new-posts";
      notice.href = "/";
      notice.setAttribute("role", "status");
      feed.parentNode.insertBefore(notice, feed);
    }
    var shown = count > 99 ? "99+" : String(count);
    notice.textContent = shown + (count === 1 ? " new post" : " new posts");
  }

  function poll() {
    if (document.visibilityState !== "visible") {
      return;
    }
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        return response.ok ? response.json() : null;
      })
      .then(function (data) {
        if (data && typeof data.count === "number") {
          show(data.count);
        }
      })
      .catch(function () {
        // Offline or the server is busy: try again next time.
      });
  }

  function start() {
    if (timer === null) {
      timer = window.setInterval(poll, INTERVAL_MS);
    }
  }

  function stop() {
    if (timer !== null) {
      window.clearInterval(timer);
      timer = null;
    }
  }

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") {
      poll();
      start();
    } else {
      stop();
    }
  });
  if (document.visibilityState === "visible") {
    start();
  }
})();

// "N new posts" on the home page: polls /timeline/new/ while the page is visible.
// The page works without it; the feed container carries the newest key and the URL.
// Pressing the notice puts the new posts at the top of the feed (the page of
// posts after the newest key, ?after=KEY), or opens the newest page when more
// came than one page holds.
(function () {
  "use strict";
  var feed = document.querySelector("[data-newest-key]");
  if (!feed || !window.fetch) {
    return;
  }
  var INTERVAL_MS = 30000;
  var newest = feed.getAttribute("data-newest-key");
  var countUrl = feed.getAttribute("data-new-posts-url");
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
      notice.addEventListener("click", insertNewPosts);
      feed.parentNode.insertBefore(notice, feed);
    }
    var shown = count > 99 ? "99+" : String(count);
    notice.textContent = shown + (count === 1 ? " new post" : " new posts");
  }

  function insertNewPosts(event) {
    if (!window.DOMParser) {
      return; // the link opens the newest page
    }
    event.preventDefault();
    fetch("?after=" + encodeURIComponent(newest), { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) {
          throw new Error(String(response.status));
        }
        return response.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("[data-top-key]");
        if (!fresh || doc.querySelector("a[rel=prev]")) {
          window.location.href = notice.href; // more than a page came: start again at the top
          return;
        }
        var items = fresh.querySelectorAll(":scope > article");
        for (var i = items.length - 1; i >= 0; i--) {
          var old = feed.querySelector('article[data-post-id="' + items[i].getAttribute("data-post-id") + '"]');
          if (old) {
            old.remove(); // a post reposted again moves up, never shows twice
          }
          feed.insertBefore(document.adoptNode(items[i]), feed.firstElementChild);
        }
        if (items.length) {
          newest = fresh.getAttribute("data-top-key");
          feed.setAttribute("data-newest-key", newest);
          var empty = feed.querySelector(":scope > .empty");
          if (empty) {
            empty.remove();
          }
        }
        notice.remove();
        notice = null;
      })
      .catch(function () {
        window.location.href = notice.href;
      });
  }

  function poll() {
    if (document.visibilityState !== "visible") {
      return;
    }
    fetch(countUrl + "?after=" + encodeURIComponent(newest), { credentials: "same-origin", headers: { Accept: "application/json" } })
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

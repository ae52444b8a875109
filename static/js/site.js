// The site, a little livelier: actions in place, the next page as you near the
// end, relative times. Every page and form works the same without it.
//
// A form marked data-inplace is sent with fetch and the header X-Fragment: 1;
// the server answers with HTML (a post's <article>, or the page it would have
// redirected to), and the part of the page around the form (its closest
// [data-part]) is swapped for the part of the same name in the answer. A form
// with data-inplace-into="SELECTOR" (the compose boxes) puts the answer's
// <article> at the top of that list instead. Any failure falls back to
// sending the form the ordinary way.
(function () {
  "use strict";
  if (!window.fetch || !window.DOMParser) {
    return;
  }

  function parse(html) {
    // DOMParser never runs scripts, and the answer is our own HTML.
    return new DOMParser().parseFromString(html, "text/html");
  }

  var status = document.getElementById("live-status");
  var statusTimer = null;

  function announce(doc) {
    var messages = doc.querySelectorAll(".messages .message");
    if (!status || !messages.length) {
      return;
    }
    var texts = [];
    for (var i = 0; i < messages.length; i++) {
      texts.push(messages[i].textContent.trim());
    }
    status.textContent = texts.join(" ");
    status.hidden = false;
    window.clearTimeout(statusTimer);
    statusTimer = window.setTimeout(function () {
      status.hidden = true;
    }, 5000);
  }

  function removeEmpty(list) {
    var empty = list.querySelector(":scope > .empty");
    if (empty) {
      empty.remove();
    }
  }

  function insertInto(form, doc) {
    var list = document.querySelector(form.getAttribute("data-inplace-into"));
    var article = doc.querySelector("article[data-post-id]");
    if (!list || !article) {
      return false;
    }
    removeEmpty(list);
    list.insertBefore(document.adoptNode(article), list.firstElementChild);
    form.reset();
    var text = form.querySelector("textarea");
    if (text) {
      text.dispatchEvent(new Event("input")); // the counter counts again
    }
    return true;
  }

  function swapPart(form, doc) {
    var part = form.closest("[data-part]");
    if (!part) {
      return false;
    }
    var name = part.getAttribute("data-part");
    var fresh = doc.querySelector('[data-part="' + name + '"]');
    if (!fresh) {
      return false;
    }
    var forms = Array.prototype.slice.call(part.querySelectorAll("form"));
    var index = forms.indexOf(form);
    var hadFocus = part.contains(document.activeElement);
    fresh = document.adoptNode(fresh);
    part.replaceWith(fresh);
    if (hadFocus) {
      // Keep the keyboard where it was: on the button that took the place of the one pressed.
      var button = fresh.querySelectorAll("form")[index];
      button = button && button.querySelector("button");
      if (button) {
        button.focus();
      }
    }
    return true;
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.hasAttribute("data-inplace") || form.getAttribute("data-busy")) {
      if (form.getAttribute("data-busy")) {
        event.preventDefault(); // one request at a time per form
      }
      return;
    }
    event.preventDefault();
    form.setAttribute("data-busy", "1");
    fetch(form.action, {
      method: "POST",
      body: new FormData(form),
      credentials: "same-origin",
      headers: { "X-Fragment": "1" },
    })
      .then(function (response) {
        if (!response.ok) {
          throw new Error(String(response.status));
        }
        return response.text();
      })
      .then(function (html) {
        var doc = parse(html);
        var done = form.hasAttribute("data-inplace-into") ? insertInto(form, doc) : swapPart(form, doc);
        if (!done) {
          throw new Error("nothing to swap");
        }
        announce(doc);
        form.removeAttribute("data-busy");
      })
      .catch(function () {
        // A form error, a rate limit, the network: let the server's own page say so.
        form.removeAttribute("data-busy");
        HTMLFormElement.prototype.submit.call(form);
      });
  });

  // The next page, fetched as the reader nears the end of the list; the
  // rel="next" link stays for readers without JavaScript (and for crawlers).
  function setUpNextPage() {
    var list = document.querySelector("[data-page-list]");
    if (!list || !window.IntersectionObserver) {
      return;
    }
    var loading = false;
    var observer = new IntersectionObserver(function (entries) {
      if (entries[0].isIntersecting) {
        loadNext();
      }
    }, { rootMargin: "0px 0px 800px 0px" });

    function watch() {
      var pager = document.querySelector("nav.pager");
      observer.disconnect();
      if (pager && pager.querySelector("a[rel=next]")) {
        observer.observe(pager);
      }
    }

    function loadNext() {
      var pager = document.querySelector("nav.pager");
      var next = pager && pager.querySelector("a[rel=next]");
      if (loading || !next) {
        return;
      }
      loading = true;
      pager.setAttribute("aria-busy", "true");
      fetch(next.href, { credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) {
            throw new Error(String(response.status));
          }
          return response.text();
        })
        .then(function (html) {
          var doc = parse(html);
          var more = doc.querySelector("[data-page-list]");
          var items = more ? more.querySelectorAll(":scope > article, :scope > li") : [];
          for (var i = 0; i < items.length; i++) {
            list.appendChild(document.adoptNode(items[i]));
          }
          var fresh = doc.querySelector("nav.pager");
          if (fresh) {
            var prev = fresh.querySelector("a[rel=prev]");
            if (prev) {
              prev.remove(); // newer posts are above, already on this page
            }
            pager.replaceWith(document.adoptNode(fresh));
          } else {
            pager.remove();
          }
          loading = false;
          watch();
        })
        .catch(function () {
          loading = false; // the link still works by hand
          pager.removeAttribute("aria-busy");
        });
    }
    watch();
  }

  // "5m", "3h", "20 Nov": the server writes them; this keeps them fresh and
  // shows the full time in the reader's own time zone on hover.
  function ago(moment, now) {
    var seconds = (now - moment) / 1000;
    if (seconds < 60) {
      return "now";
    }
    if (seconds < 3600) {
      return Math.floor(seconds / 60) + "m";
    }
    if (seconds < 86400) {
      return Math.floor(seconds / 3600) + "h";
    }
    return null; // a day: the server's text stands
  }

  function refreshTimes() {
    var now = Date.now();
    var times = document.querySelectorAll(".post-time time[datetime]");
    for (var i = 0; i < times.length; i++) {
      var moment = Date.parse(times[i].getAttribute("datetime"));
      if (isNaN(moment)) {
        continue;
      }
      var text = ago(moment, now);
      if (text) {
        times[i].textContent = text;
      }
      if (!times[i].hasAttribute("data-local")) {
        times[i].title = new Date(moment).toLocaleString();
        times[i].setAttribute("data-local", "");
      }
    }
  }

  // The sign-up form's time zone, from the browser (the server's default stays without it).
  var zone = document.querySelector("input[name=time_zone][data-from-browser]");
  if (zone && !zone.value && window.Intl) {
    zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  }

  setUpNextPage();
  refreshTimes();
  window.setInterval(refreshTimes, 60000);
})();

// The compose box, made friendlier: a live character counter and one alt-text
// field per chosen image. The form works the same without it (the server
// checks everything). Counting follows posts/post_length.py: every http(s)
// link is 23 characters, other characters count as code points.
(function () {
  "use strict";
  var URL_PATTERN = /https?:\/\/\S+/gi;

  function postLength(text, urlLength) {
    var filler = new Array(urlLength + 1).join("x");
    return Array.from(text.replace(URL_PATTERN, filler)).length;
  }

  function setUpCounter(form) {
    var text = form.querySelector("textarea[data-max-length]");
    var counter = form.querySelector("[data-compose-counter]");
    if (!text || !counter) {
      return;
    }
    var max = parseInt(text.getAttribute("data-max-length"), 10);
    var urlLength = parseInt(text.getAttribute("data-url-length"), 10);
    function update() {
      var left = max - postLength(text.value, urlLength);
      counter.textContent = left >= 0
        ? left + (left === 1 ? " character left" : " characters left")
        : -left + (left === -1 ? " character too many" : " characters too many");
      counter.classList.toggle("is-over", left < 0);
    }
    counter.hidden = false;
    text.addEventListener("input", update);
    update();
  }

  function setUpAltFields(form) {
    var picker = form.querySelector('input[type="file"][name="media"]');
    var alts = form.querySelectorAll("[data-compose-alt]");
    if (!picker || !alts.length) {
      return;
    }
    function update() {
      var files = picker.files || [];
      for (var i = 0; i < alts.length; i++) {
        var label = alts[i].querySelector("label");
        var field = alts[i].querySelector("textarea");
        var shown = i < files.length || field.value !== "";
        alts[i].hidden = !shown;
        if (i < files.length) {
          label.textContent = "Description of " + files[i].name + " (alt text, optional)";
        }
      }
    }
    picker.addEventListener("change", update);
    update();
  }

  var forms = document.querySelectorAll("form[data-compose]");
  for (var i = 0; i < forms.length; i++) {
    setUpCounter(forms[i]);
    setUpAltFields(forms[i]);
  }
})();

/* The lesson filter's autocomplete box: Django's select2 leaves the text box it draws without a
   name for screen readers, so it takes the filter's own label, whenever select2 draws it. */
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll(".lesson-filter").forEach(function (form) {
    var label = form.querySelector("label");
    function nameTheBox() {
      var shown = form.querySelector(".select2-selection__rendered");
      if (label && shown) shown.setAttribute("aria-label", label.textContent.trim());
    }
    nameTheBox();
    new MutationObserver(nameTheBox).observe(form, { childList: true, subtree: true });
  });
});

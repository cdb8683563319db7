/* The lesson's admin page (and a question's own page): Markdown previews, questions reordered
   by dragging or by "Move up"/"Move down", unused choice slots behind "Add a choice", no
   "why wrong" box on a choice ticked right, and the Area pop-up that keeps the subject.
   Without JavaScript the page still works: positions are typed, every slot is shown. */
(function () {
  "use strict";

  if (window.htmx) {
    // The site's CSP forbids the inline <style> htmx would add; a 400 (bad input) is swapped
    // in like any answer, so the preview can say what is wrong.
    window.htmx.config.includeIndicatorStyles = false;
    window.htmx.config.allowEval = false;
    window.htmx.config.responseHandling = [
      { code: "204", swap: false },
      { code: "[23]..", swap: true },
      { code: "400", swap: true, error: false },
      { code: "...", swap: false, error: true },
    ];
  }

  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  /* Markdown previews ---------------------------------------------------------------- */

  function setUpPreview(panel) {
    if (panel.dataset.ready) return;
    panel.dataset.ready = "yes";
    panel.hidden = false;
    var field = panel.closest(".markdown-field");
    var box = field && field.querySelector("textarea");
    var button = panel.querySelector("button");
    var output = panel.querySelector(".markdown-preview-output");
    if (!box || !button) return;
    var timer = null;
    box.addEventListener("input", function () {
      if (!output.hasChildNodes()) return; // live once the editor has asked for a preview
      clearTimeout(timer);
      timer = setTimeout(function () {
        window.htmx.trigger(button, "preview-refresh");
      }, 500);
    });
  }

  document.addEventListener("htmx:configRequest", function (event) {
    var panel = event.detail.elt.closest("[data-markdown-preview]");
    if (!panel) return;
    var box = panel.closest(".markdown-field").querySelector("textarea");
    event.detail.parameters.text = box ? box.value : "";
    event.detail.headers["X-CSRFToken"] = csrfToken();
  });

  /* Questions in order: drag, or Move up / Move down ----------------------------------- */

  function questionRows(group) {
    return Array.prototype.filter.call(
      group.querySelectorAll(".inline-related"),
      function (row) { return !row.classList.contains("empty-form") && row.id; }
    );
  }

  function positionInput(row) {
    return row.querySelector("input[name$='-position']");
  }

  function renumber(group) {
    questionRows(group).forEach(function (row, index) {
      var input = positionInput(row);
      if (input) input.value = String(index + 1);
    });
  }

  function announce(group, text) {
    var status = group.querySelector("[data-reorder-status]");
    if (status) status.textContent = text;
  }

  function move(group, row, step) {
    var rows = questionRows(group);
    var index = rows.indexOf(row);
    var target = rows[index + step];
    if (!target) return;
    if (step < 0) target.parentNode.insertBefore(row, target);
    else target.parentNode.insertBefore(row, target.nextSibling);
    renumber(group);
    var position = questionRows(group).indexOf(row) + 1;
    announce(group, "Question moved to position " + position + " of " + rows.length + ".");
  }

  function addReorderTools(group, row) {
    if (row.querySelector(".reorder-tools")) return;
    var heading = row.querySelector("h3");
    if (!heading) return;
    var tools = document.createElement("span");
    tools.className = "reorder-tools";
    var handle = document.createElement("button");
    handle.type = "button";
    handle.className = "reorder-handle";
    handle.draggable = true;
    handle.textContent = "⠿ Drag";
    handle.setAttribute("aria-label", "Drag to reorder (or use Move up and Move down)");
    var up = document.createElement("button");
    up.type = "button";
    up.className = "reorder-up";
    up.textContent = "Move up";
    var down = document.createElement("button");
    down.type = "button";
    down.className = "reorder-down";
    down.textContent = "Move down";
    up.addEventListener("click", function () { move(group, row, -1); up.focus(); });
    down.addEventListener("click", function () { move(group, row, 1); down.focus(); });
    handle.addEventListener("dragstart", function (event) {
      group.draggedRow = row;
      row.classList.add("is-dragged");
      event.dataTransfer.effectAllowed = "move";
      event.dataTransfer.setData("text/plain", row.id);
      if (event.dataTransfer.setDragImage) event.dataTransfer.setDragImage(row, 20, 20);
    });
    handle.addEventListener("dragend", function () {
      row.classList.remove("is-dragged");
      group.draggedRow = null;
    });
    tools.appendChild(handle);
    tools.appendChild(up);
    tools.appendChild(down);
    heading.appendChild(tools);
  }

  function setUpReorder(group) {
    var status = document.createElement("p");
    status.className = "visually-hidden";
    status.setAttribute("aria-live", "polite");
    status.dataset.reorderStatus = "";
    group.appendChild(status);
    questionRows(group).forEach(function (row) { addReorderTools(group, row); });
    group.addEventListener("dragover", function (event) {
      if (!group.draggedRow) return;
      var over = event.target.closest(".inline-related");
      if (over && over !== group.draggedRow && questionRows(group).indexOf(over) >= 0) {
        event.preventDefault();
        event.dataTransfer.dropEffect = "move";
      }
    });
    group.addEventListener("drop", function (event) {
      var row = group.draggedRow;
      var over = event.target.closest(".inline-related");
      if (!row || !over || over === row) return;
      event.preventDefault();
      var rows = questionRows(group);
      var box = over.getBoundingClientRect();
      var after = event.clientY > box.top + box.height / 2;
      if (rows.indexOf(row) < rows.indexOf(over)) after = true;
      if (rows.indexOf(row) > rows.indexOf(over)) after = false;
      over.parentNode.insertBefore(row, after ? over.nextSibling : over);
      renumber(group);
      announce(group, "Question moved to position " + (questionRows(group).indexOf(row) + 1) +
        " of " + rows.length + ".");
    });
  }

  /* Choices: unused slots behind "Add a choice", no "why wrong" on a right choice --------- */

  var SLOTS = 6;
  var SHOWN_AT_LEAST = 4;

  function slotRow(scope, slot) {
    return scope.querySelector(".form-row.field-choice_" + slot + "_text");
  }

  function slotValue(scope, slot, part) {
    var input = scope.querySelector("[name$='choice_" + slot + "_" + part + "']");
    return input ? input.value.trim() : "";
  }

  function setUpChoices(scope) {
    if (!slotRow(scope, 0) || scope.dataset.choicesReady) return;
    scope.dataset.choicesReady = "yes";
    var last = -1;
    for (var slot = 0; slot < SLOTS; slot++) {
      var row = slotRow(scope, slot);
      var errors = row && row.querySelector(".errorlist");
      if (slotValue(scope, slot, "text") || slotValue(scope, slot, "why") || errors) last = slot;
      setUpWhy(scope, slot);
    }
    var shown = Math.max(last + 1, SHOWN_AT_LEAST);
    for (slot = shown; slot < SLOTS; slot++) slotRow(scope, slot).hidden = true;
    if (shown >= SLOTS) return;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "button add-choice";
    button.textContent = "Add a choice";
    var wrapper = document.createElement("div");
    wrapper.className = "form-row add-choice-row";
    wrapper.appendChild(button);
    var lastRow = slotRow(scope, SLOTS - 1);
    lastRow.parentNode.insertBefore(wrapper, lastRow.nextSibling);
    button.addEventListener("click", function () {
      for (var next = 0; next < SLOTS; next++) {
        var row = slotRow(scope, next);
        if (row.hidden) {
          row.hidden = false;
          row.querySelector("input[type=text]").focus();
          if (next === SLOTS - 1) wrapper.hidden = true;
          return;
        }
      }
    });
  }

  function setUpWhy(scope, slot) {
    var tick = scope.querySelector("input[type=checkbox][name$='choice_" + slot + "_correct']");
    var box = scope.querySelector(".fieldBox.field-choice_" + slot + "_why");
    if (!tick || !box) return;
    function update() { box.hidden = tick.checked; }
    tick.addEventListener("change", update);
    update();
  }

  /* The Area pop-up opens with the lesson's subject ------------------------------------- */

  function setUpAreaPopup() {
    var subject = document.getElementById("id_subject");
    var add = document.getElementById("add_id_area");
    if (!subject || !add) return;
    function update() {
      var url = new URL(add.href, window.location.href);
      if (subject.value) url.searchParams.set("subject", subject.value);
      else url.searchParams.delete("subject");
      add.href = url.pathname + url.search;
    }
    subject.addEventListener("change", update);
    update();
  }

  /* Start ------------------------------------------------------------------------------ */

  function setUp(root) {
    root.querySelectorAll("[data-markdown-preview]").forEach(function (panel) {
      if (!panel.closest(".empty-form")) setUpPreview(panel);
    });
    var group = document.getElementById("questions-group");
    if (root === document) {
      if (group) setUpReorder(group);
      setUpAreaPopup();
      var questionPage = document.querySelector("form#question_form");
      if (questionPage) setUpChoices(questionPage);
    }
    root.querySelectorAll("#questions-group .inline-related").forEach(function (row) {
      if (!row.classList.contains("empty-form")) setUpChoices(row);
    });
  }

  document.addEventListener("formset:added", function (event) {
    var row = event.target;
    var group = row.closest("#questions-group");
    if (group) {
      var rows = questionRows(group);
      var input = positionInput(row);
      if (input) input.value = String(rows.indexOf(row) + 1);
      addReorderTools(group, row);
    }
    if (window.htmx) window.htmx.process(row);
    setUp(row);
    setUpChoices(row);
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { setUp(document); });
  } else {
    setUp(document);
  }
})();

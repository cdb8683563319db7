/* The lesson's admin page (and a question's own page): Markdown previews, questions reordered
   by dragging or by "Move up"/"Move down", choices moved up and down with their identity,
   unused choice slots behind "Add a choice", no
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

  function scriptButton(className, text) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = className;
    button.textContent = text;
    return button;
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

  /* Questions in order: a short list at the top of the questions, each line dragged or
     moved with its buttons; the question blocks follow and their positions are renumbered. */

  function questionRows(group) {
    return Array.prototype.filter.call(
      group.querySelectorAll(".inline-related"),
      function (row) { return !row.classList.contains("empty-form") && row.id; }
    );
  }

  function positionInput(row) {
    return row.querySelector("input[name$='-position']");
  }

  function promptOf(row) {
    var box = row.querySelector("textarea[name$='-prompt']");
    var text = box ? box.value.trim().replace(/\s+/g, " ") : "";
    if (!text) return "A new question";
    return text.length > 90 ? text.slice(0, 89) + "…" : text;
  }

  function orderList(group) {
    return group.querySelector(".question-order ol");
  }

  function lineOf(group, row) {
    return orderList(group).querySelector("li[data-row='" + row.id + "']");
  }

  function blockOf(line) {
    return document.getElementById(line.dataset.row);
  }

  /* Put the blocks in the order of the list and number them 1, 2, 3… */
  function applyOrder(group, moved) {
    var lines = Array.prototype.slice.call(orderList(group).children);
    var rows = questionRows(group);
    var anchor = rows.length ? rows[rows.length - 1].nextSibling : null;
    lines.forEach(function (line, index) {
      var row = blockOf(line);
      row.parentNode.insertBefore(row, anchor);
      var input = positionInput(row);
      if (input) input.value = String(index + 1);
      line.querySelector(".question-order-number").textContent = String(index + 1);
    });
    if (moved) {
      var status = group.querySelector("[data-reorder-status]");
      status.textContent = "“" + promptOf(blockOf(moved)) + "” is now question " +
        (lines.indexOf(moved) + 1) + " of " + lines.length + ".";
    }
  }

  function moveLine(group, line, step) {
    var list = orderList(group);
    var lines = Array.prototype.slice.call(list.children);
    var target = lines[lines.indexOf(line) + step];
    if (!target) return;
    list.insertBefore(line, step < 0 ? target : target.nextSibling);
    applyOrder(group, line);
  }

  function addLine(group, row) {
    if (lineOf(group, row)) return;
    var line = document.createElement("li");
    line.dataset.row = row.id;
    line.draggable = true;
    var handle = document.createElement("span");
    handle.className = "reorder-handle";
    handle.setAttribute("aria-hidden", "true");
    handle.title = "Drag to reorder";
    handle.textContent = "⠿";
    var number = document.createElement("span");
    number.className = "question-order-number";
    var input = positionInput(row);
    number.textContent = input ? input.value : "";
    var label = document.createElement("a");
    label.href = "#" + row.id;
    label.className = "question-order-label";
    label.textContent = promptOf(row);
    var up = scriptButton("reorder-up", "Move up");
    var down = scriptButton("reorder-down", "Move down");
    function name() { return "“" + promptOf(row) + "”"; }
    up.addEventListener("click", function () {
      moveLine(group, line, -1);
      up.focus();
    });
    down.addEventListener("click", function () {
      moveLine(group, line, 1);
      down.focus();
    });
    up.addEventListener("focus", function () { up.setAttribute("aria-label", "Move up: " + name()); });
    down.addEventListener("focus", function () { down.setAttribute("aria-label", "Move down: " + name()); });
    var box = row.querySelector("textarea[name$='-prompt']");
    if (box) box.addEventListener("input", function () { label.textContent = promptOf(row); });
    line.addEventListener("dragstart", function (event) {
      group.draggedLine = line;
      line.classList.add("is-dragged");
      event.dataTransfer.effectAllowed = "move";
      event.dataTransfer.setData("text/plain", row.id);
    });
    line.addEventListener("dragend", function () {
      line.classList.remove("is-dragged");
      group.draggedLine = null;
    });
    line.appendChild(handle);
    line.appendChild(number);
    line.appendChild(label);
    line.appendChild(up);
    line.appendChild(down);
    orderList(group).appendChild(line);
  }

  function setUpReorder(group) {
    var heading = group.querySelector("h2");
    if (!heading) return;
    var panel = document.createElement("div");
    panel.className = "question-order";
    var title = document.createElement("h3");
    title.id = "question-order-heading";
    title.textContent = "Order of the questions";
    var help = document.createElement("p");
    help.className = "help";
    help.textContent = "Drag a question to its place, or use Move up and Move down. " +
      "The positions below follow; nothing changes until you save.";
    var list = document.createElement("ol");
    list.setAttribute("aria-labelledby", title.id);
    var status = document.createElement("p");
    status.className = "visually-hidden";
    status.setAttribute("aria-live", "polite");
    status.dataset.reorderStatus = "";
    panel.appendChild(title);
    panel.appendChild(help);
    panel.appendChild(list);
    panel.appendChild(status);
    heading.parentNode.insertBefore(panel, heading.nextSibling);
    questionRows(group).forEach(function (row) { addLine(group, row); });
    list.addEventListener("dragover", function (event) {
      var over = event.target.closest("li");
      if (group.draggedLine && over && over !== group.draggedLine) {
        event.preventDefault();
        event.dataTransfer.dropEffect = "move";
      }
    });
    list.addEventListener("drop", function (event) {
      var line = group.draggedLine;
      var over = event.target.closest("li");
      if (!line || !over || over === line) return;
      event.preventDefault();
      var lines = Array.prototype.slice.call(list.children);
      var below = lines.indexOf(line) < lines.indexOf(over);
      list.insertBefore(line, below ? over.nextSibling : over);
      applyOrder(group, line);
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
    var status = document.createElement("p");
    status.className = "visually-hidden";
    status.setAttribute("aria-live", "polite");
    slotRow(scope, SLOTS - 1).parentNode.appendChild(status);
    setUpChoiceMoves(scope, status);
    var shown = Math.max(last + 1, SHOWN_AT_LEAST);
    for (slot = shown; slot < SLOTS; slot++) slotRow(scope, slot).hidden = true;
    if (shown >= SLOTS) return;
    var button = scriptButton("button add-choice", "Add a choice");
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

  /* Moving a choice moves its whole row: text, tick, reason and the hidden identity that
     learners' answers record, so a reorder never reads as a new right answer. */
  var CHOICE_PARTS = ["text", "why", "id"];

  function slotInput(scope, slot, part) {
    return scope.querySelector("[name$='choice_" + slot + "_" + part + "']");
  }

  function swapSlots(scope, a, b) {
    CHOICE_PARTS.forEach(function (part) {
      var first = slotInput(scope, a, part);
      var second = slotInput(scope, b, part);
      if (!first || !second) return;
      var value = first.value;
      first.value = second.value;
      second.value = value;
    });
    var tickA = slotInput(scope, a, "correct");
    var tickB = slotInput(scope, b, "correct");
    if (tickA && tickB) {
      var checked = tickA.checked;
      tickA.checked = tickB.checked;
      tickB.checked = checked;
      tickA.dispatchEvent(new Event("change"));
      tickB.dispatchEvent(new Event("change"));
    }
  }

  function setUpChoiceMoves(scope, status) {
    for (var slot = 0; slot < SLOTS; slot++) {
      var row = slotRow(scope, slot);
      if (!row) continue;
      [["up", -1], ["down", 1]].forEach(function (pair) {
        var from = slot;
        var to = slot + pair[1];
        if (to < 0 || to >= SLOTS) return;
        var letter = "ABCDEF".charAt(from);
        var button = scriptButton("choice-move choice-move-" + pair[0], pair[0] === "up" ? "↑" : "↓");
        button.setAttribute("aria-label", "Move choice " + letter + " " + pair[0]);
        button.addEventListener("click", function () {
          if (slotRow(scope, to).hidden) return;
          swapSlots(scope, from, to);
          var text = slotInput(scope, to, "text").value || "An empty choice";
          status.textContent = "“" + text + "” is now choice " + "ABCDEF".charAt(to) + ".";
          var moved = slotRow(scope, to).querySelector(".choice-move-" + pair[0]);
          (moved || slotInput(scope, to, "text")).focus();
        });
        row.appendChild(button);
      });
    }
  }

  function setUpWhy(scope, slot) {
    var tick = scope.querySelector("input[type=checkbox][name$='choice_" + slot + "_correct']");
    var box = scope.querySelector(".fieldBox.field-choice_" + slot + "_why");
    if (!tick || !box) return;
    function update() { box.hidden = tick.checked; }
    tick.addEventListener("change", update);
    // Going back to the page (Cancel on the confirmation page) restores the ticks as they were.
    window.addEventListener("pageshow", update);
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
    // A subject added with its own pop-up is chosen by Django's script, which tells only
    // jQuery's listeners.
    if (window.django && window.django.jQuery) window.django.jQuery(subject).on("change", update);
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
      var input = positionInput(row);
      if (input) input.value = String(questionRows(group).indexOf(row) + 1);
      addLine(group, row);
    }
    var cards = row.closest("#flashcards-group");
    var own = positionInput(row);
    if (cards && own) {
      /* Django fills every added row with the same number: the next after the highest instead. */
      var highest = 0;
      cards.querySelectorAll("input[name$='-position']").forEach(function (other) {
        if (other !== own && !other.closest(".empty-form")) {
          highest = Math.max(highest, parseInt(other.value, 10) || 0);
        }
      });
      own.value = String(highest + 1);
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

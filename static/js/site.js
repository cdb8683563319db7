// Small behaviours that make pages nicer with JavaScript; every page works without it.
"use strict";

function isTyping(target) {
  return target.closest("input[type=text], input[type=search], textarea, select, [contenteditable]");
}

// Answer forms: 1–9 or A–F pick a choice, Enter checks the answer.
function handleAnswerKeys(event, form) {
  const key = event.key.toLowerCase();
  const choice =
    form.querySelector(`input[name=choice][data-number="${key}"]`) ||
    form.querySelector(`input[name=choice][data-key="${key}"]`);
  if (choice) {
    choice.checked = choice.type === "radio" ? true : !choice.checked;
    choice.focus();
    event.preventDefault();
    return true;
  }
  if (event.key === "Enter" && form.contains(document.activeElement) && document.activeElement.tagName !== "BUTTON") {
    event.preventDefault();
    form.requestSubmit();
    return true;
  }
  return false;
}

// Flashcards: once the answer is shown, 1–4 rate it.
function handleRatingKeys(event, reveal) {
  if (!reveal.open || !/^[1-4]$/.test(event.key)) return false;
  const button = reveal.querySelector(`button[name=rating][value="${event.key}"]`);
  if (!button) return false;
  event.preventDefault();
  button.click();
  return true;
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
  const form = document.querySelector("[data-answer-form]");
  if (form && handleAnswerKeys(event, form)) return;
  const reveal = document.querySelector("[data-reveal]");
  if (reveal) handleRatingKeys(event, reveal);
});

// After htmx swaps in the next step, move focus to its heading so keyboard and screen-reader
// users land on what changed.
document.addEventListener("htmx:afterSettle", (event) => {
  const target = event.detail.elt;
  const heading = target && target.querySelector ? target.querySelector("[data-autofocus]") : null;
  const focusable = heading || document.querySelector("[data-autofocus]");
  if (focusable) focusable.focus();
});

document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("[data-print]")) {
    button.hidden = false;
    button.addEventListener("click", () => window.print());
  }
});

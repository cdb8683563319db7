// Small behaviours that make pages nicer with JavaScript; every page works without it.
"use strict";

function isTyping(target) {
  return target.closest("input[type=text], input[type=search], input:not([type]), textarea, select, [contenteditable]");
}

// Answer forms: 1–9 or A–F pick a choice, G ticks "I guessed", Enter checks the answer.
function handleAnswerKeys(event, form) {
  const key = event.key.toLowerCase();
  const choice = Array.from(form.querySelectorAll("input[name=choice], input[name=guessed]")).find(
    (input) => input.dataset.number === key || input.dataset.key === key,
  );
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

// Flashcards: Enter or Space shows the answer, then 1–4 rate it.
function handleFlashcardKeys(event, reveal) {
  if (!reveal.open) {
    const onControl = document.activeElement && document.activeElement.closest("a, button, summary");
    if ((event.key === "Enter" || event.key === " ") && !onControl) {
      event.preventDefault();
      reveal.open = true;
      return true;
    }
    return false;
  }
  const button = Array.from(reveal.querySelectorAll("button[name=rating]")).find(
    (candidate) => candidate.value === event.key,
  );
  if (!button) return false;
  event.preventDefault();
  button.click();
  return true;
}

// The single-key shortcuts work only while focus is inside the card that uses them (WCAG
// 2.1.4), so they never fire while someone types or reads elsewhere on the page.
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
  const card = event.target.closest ? event.target.closest(".practice-card") : null;
  if (!card) return;
  const form = card.querySelector("[data-answer-form]");
  if (form && handleAnswerKeys(event, form)) return;
  // After the verdict, Enter or Space goes on (unless focus is on another control).
  const next = card.querySelector("[data-continue]");
  const onControl = event.target.closest("a, button, summary, input, label");
  if (next && !onControl && (event.key === "Enter" || event.key === " ")) {
    event.preventDefault();
    next.click();
    return;
  }
  const reveal = card.querySelector("[data-reveal]");
  if (reveal) handleFlashcardKeys(event, reveal);
});

// When the answer of a flashcard is shown, move focus to it so it is read out, and bring
// the rating buttons on screen with it (on a phone they fell below the fold). Above them, the
// card's front stays in view below the strip at the top when the screen holds both; else the
// start of the answer does, even if that leaves the buttons below.
document.addEventListener(
  "toggle",
  (event) => {
    const reveal = event.target;
    if (!(reveal.matches && reveal.matches("[data-reveal]") && reveal.open)) return;
    const back = reveal.querySelector(".back");
    const buttons = reveal.querySelector(".ratings") || reveal.querySelector("[data-rating-form]");
    if (!back) return;
    const room = window.innerHeight - 8;
    back.focus({ preventScroll: true });
    const below = buttons ? buttons.getBoundingClientRect().bottom - room : 0;
    if (below > 0) window.scrollBy(0, below);
    const strip = document.querySelector(".practice-strip");
    const covered = (strip ? strip.getBoundingClientRect().bottom : 0) + 8;
    const front = reveal.parentElement.querySelector(".card-face:not(.back)");
    const end = buttons ? buttons.getBoundingClientRect().bottom : 0;
    const fits = (element) => covered + end - element.getBoundingClientRect().top <= room;
    const first = front && fits(front) ? front : back;
    const start = first.getBoundingClientRect().top;
    if (start < covered) window.scrollBy(0, start - covered);
  },
  true,
);

// After htmx swaps in the next step, move focus to its heading so keyboard and screen-reader
// users land on what changed.
document.addEventListener("htmx:afterSettle", (event) => {
  const target = event.detail.elt;
  const heading = target && target.querySelector ? target.querySelector("[data-autofocus]") : null;
  const focusable = heading || document.querySelector("[data-autofocus]");
  if (focusable) focusable.focus();
});

// A failed request (server error, lost connection, an expired form) must never leave the
// learner pressing a button that does nothing: say so, and offer a fresh page.
function showRequestProblem(event, text) {
  const target = event.detail.target || event.detail.elt;
  const card = target && target.closest ? target.closest(".practice-card") || target : null;
  if (!card) return;
  const old = card.querySelector(".request-problem");
  if (old) old.remove();
  const box = document.createElement("div");
  box.className = "request-problem";
  box.setAttribute("role", "alert");
  const message = document.createElement("p");
  message.textContent = text;
  const reload = document.createElement("a");
  reload.href = window.location.href;
  reload.className = "button";
  reload.textContent = "Reload the page";
  box.append(message, reload);
  card.prepend(box);
}

document.addEventListener("htmx:responseError", (event) => {
  const status = event.detail.xhr ? event.detail.xhr.status : 0;
  const text =
    status === 403
      ? "This page has expired, so the answer was not recorded. Reload the page and answer again."
      : status === 429
        ? "That was a lot at once, so the answer was not recorded. Wait a moment, then try again."
        : "Something went wrong on our side and the answer was not recorded. Reload the page and try again.";
  showRequestProblem(event, text);
});

document.addEventListener("htmx:sendError", (event) => {
  showRequestProblem(event, "The site could not be reached, so nothing was recorded. Check your connection, then try again.");
});

// Focus rings on headings the script focuses are for keyboard users: remember how the
// learner last interacted (a pointer until a key says otherwise).
document.documentElement.dataset.input = "pointer";
document.addEventListener("pointerdown", () => { document.documentElement.dataset.input = "pointer"; }, true);
document.addEventListener("keydown", (event) => {
  if (event.key === "Tab" || event.key.length === 1 || event.key === "Enter") document.documentElement.dataset.input = "keyboard";
}, true);

// Key hints only where a keyboard is likely.
const keyboardLikely = window.matchMedia("(any-hover: hover) and (any-pointer: fine)");
function showKeyHints(root) {
  if (!keyboardLikely.matches) return;
  for (const hint of root.querySelectorAll("[data-keys-hint]")) hint.hidden = false;
}

// Times in the learner's own time zone (the page says UTC without JavaScript), written the
// way the rest of the page is (its lang), not in the browser's locale.
const localTime = new Intl.DateTimeFormat(document.documentElement.lang || undefined, { weekday: "long", day: "numeric", month: "long", hour: "2-digit", minute: "2-digit" });
function showLocalTimes(root) {
  for (const time of root.querySelectorAll("time[data-local]")) {
    const moment = new Date(time.dateTime);
    if (!Number.isNaN(moment.getTime())) time.textContent = localTime.format(moment);
  }
}
document.addEventListener("htmx:afterSettle", (event) => {
  showKeyHints(document);
  showLocalTimes(document);
});

document.addEventListener("DOMContentLoaded", () => {
  showKeyHints(document);
  showLocalTimes(document);
  // Start where the page's news is: on a practice page in the card, so its keys work at once;
  // on a one-time code, its heading; after moving progress, the notice that says so.
  const start = document.querySelector("[data-autofocus]");
  if (start && !window.location.hash) start.focus({ preventScroll: true });
  for (const button of document.querySelectorAll("[data-print]")) {
    button.hidden = false;
    button.addEventListener("click", () => window.print());
  }
  hideStickyStartWhileTheStartShows();
});

// A lesson's bar that follows the reader on a phone is not needed while one of the lesson's
// own start buttons (at the top, and after the Read) is on screen: one button, not two.
function hideStickyStartWhileTheStartShows() {
  const starts = document.querySelectorAll("[data-lesson-start]");
  const bar = document.querySelector(".lesson-sticky-start");
  if (!starts.length || !bar || !("IntersectionObserver" in window)) return;
  const onScreen = new Set();
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (entry.isIntersecting) onScreen.add(entry.target);
      else onScreen.delete(entry.target);
    }
    bar.classList.toggle("is-redundant", onScreen.size > 0);
  });
  for (const start of starts) observer.observe(start);
}

// A printed worksheet carries its answer key, closed on screen or not. CSS opens it where the
// browser styles ::details-content; elsewhere this opens it for the print and closes it after.
window.addEventListener("beforeprint", () => {
  for (const details of document.querySelectorAll("details[data-open-for-print]:not([open])")) {
    details.open = true;
    details.dataset.openedForPrint = "";
  }
});
window.addEventListener("afterprint", () => {
  for (const details of document.querySelectorAll("details[data-opened-for-print]")) {
    details.open = false;
    delete details.dataset.openedForPrint;
  }
});

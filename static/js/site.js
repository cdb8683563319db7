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
const lang = document.documentElement.lang || undefined;
const localTime = new Intl.DateTimeFormat(lang, { weekday: "long", day: "numeric", month: "long", hour: "2-digit", minute: "2-digit" });
function showLocalTimes(root) {
  for (const time of root.querySelectorAll("time[data-local]")) {
    const moment = new Date(time.dateTime);
    if (!Number.isNaN(moment.getTime())) write(time, localTime.format(moment));
  }
}
// Text changed only where it differs: every htmx swap writes the page's times again, and a
// rewrite inside the live region would be read out again.
function write(element, text) {
  if (element.textContent !== String(text)) element.textContent = text;
}

// Days as the learner lives them. The server counts days in UTC, as it does not know the
// learner's time zone; where a figure depends on the day a moment falls on, the page carries
// the moments (minutes since 1970, UTC) and this counts them again by the browser's own days.
const localDate = new Intl.DateTimeFormat(lang, { day: "numeric", month: "short", year: "numeric" });
const longDate = new Intl.DateTimeFormat(lang, { day: "numeric", month: "long", year: "numeric" });
const dayParts = new Intl.DateTimeFormat(lang, { weekday: "short", day: "numeric", month: "short" });
function partsOf(moment) {
  return Object.fromEntries(dayParts.formatToParts(moment).map((part) => [part.type, part.value]));
}
function momentsIn(text) {
  return (text || "").split(" ").filter(Boolean).map((minutes) => new Date(Number(minutes) * 60000));
}
// When the page was made (a page kept for visitors may be hours old, so never before the
// browser's own now).
function madeAt(element) {
  return new Date(Math.max(Number(element.dataset.now) * 1000 || 0, Date.now()));
}
function startOfDay(moment) {
  return new Date(moment.getFullYear(), moment.getMonth(), moment.getDate());
}
function daysFrom(now, moment) {
  return Math.round((startOfDay(moment) - startOfDay(now)) / 86400000); // a day may have 23 or 25 hours
}
// As practice/selectors/stars.py's day_words says it.
function dayWords(moment, now) {
  const days = daysFrom(now, moment);
  if (days <= 0) return "later today";
  if (days === 1) return "tomorrow";
  if (days < 14) return `in ${days} days`;
  const { weekday, day, month } = partsOf(moment);
  return `on ${weekday} ${day} ${month}${days > 300 ? ` ${moment.getFullYear()}` : ""}`;
}

// Every time and day-based figure in `root`, in the learner's own zone.
function showLocalMoments(root) {
  showLocalTimes(root);
  for (const note of root.querySelectorAll("[data-utc]")) note.remove(); // "(UTC)", said without the script
  for (const time of root.querySelectorAll("time[data-local-date]")) {
    const moment = new Date(time.dateTime);
    if (!Number.isNaN(moment.getTime())) write(time, localDate.format(moment));
  }
  for (const line of root.querySelectorAll("[data-comes-back]")) {
    const now = madeAt(line);
    const days = new Map();
    for (const due of momentsIn(line.dataset.comesBack)) {
      const words = dayWords(due, now);
      days.set(words, (days.get(words) || 0) + 1);
    }
    if (days.size) write(line, `Coming back: ${Array.from(days, ([words, count]) => `${count} ${words}`).join(", ")}.`);
  }
  for (const span of root.querySelectorAll("[data-date-span]")) {
    const [first, last] = [span.dataset.first, span.dataset.last].map((moment) => longDate.format(new Date(moment)));
    write(span, first === last ? `, all on ${first}` : `, from ${first} to ${last}`);
  }
  for (const forecast of root.querySelectorAll("[data-forecast]")) showForecast(forecast);
  for (const weeks of root.querySelectorAll("[data-weeks]")) showWeeks(weeks);
}

// Bars as lightmysky/lib/charts.py draws them: standing on y = 112, the busiest 96 high.
function drawCounts(bars, counts) {
  const busiest = Math.max(...counts, 1);
  bars.forEach((bar, index) => {
    const count = counts[index];
    const height = count ? Math.round((96 * count) / busiest) : 0;
    const rect = bar.querySelector("rect");
    rect.setAttribute("y", 112 - height);
    rect.setAttribute("height", height);
    const value = bar.querySelector(".bar-value");
    value.setAttribute("y", 108 - height);
    write(value, count ? count : "");
  });
}

// /progress's stars first lit each week, by the learner's own Mondays (the same dates as
// UTC's, so only the counts can change).
function showWeeks(weeks) {
  const bars = weeks.querySelectorAll("[data-bar]");
  const [year, month, day] = weeks.dataset.firstMonday.split("-").map(Number);
  const first = new Date(year, month - 1, day);
  const counts = new Array(bars.length).fill(0);
  for (const lit of momentsIn(weeks.dataset.lit)) {
    const week = Math.floor(daysFrom(first, lit) / 7);
    if (week >= 0) counts[Math.min(week, counts.length - 1)] += 1;
  }
  drawCounts(bars, counts);
  weeks.querySelectorAll("tbody tr").forEach((row, index) => write(row.cells[1], counts[index]));
}

// The "Coming due" chart and its table, one bar and row a day from today.
function showForecast(forecast) {
  const now = madeAt(forecast);
  const bars = forecast.querySelectorAll("[data-bar]");
  const rows = forecast.querySelectorAll("tbody tr");
  const counts = new Array(bars.length).fill(0);
  counts[0] = Number(forecast.dataset.overdue) || 0;
  for (const due of momentsIn(forecast.dataset.dues)) {
    const day = Math.max(daysFrom(now, due), 0);
    if (day < counts.length) counts[day] += 1;
  }
  drawCounts(bars, counts);
  bars.forEach((bar, index) => {
    const day = startOfDay(now);
    day.setDate(day.getDate() + index);
    const { weekday, month } = partsOf(day);
    const count = counts[index];
    write(bar.querySelector("[data-weekday]"), index ? weekday : "Today");
    write(bar.querySelector("[data-day]"), day.getDate());
    write(bar.querySelector("[data-month]"), index === 0 || day.getDate() === 1 ? month : "");
    const row = rows[index];
    if (!row) return;
    if (index) write(row.cells[0], `${weekday} ${day.getDate()} ${month}`);
    write(row.cells[1], count);
  });
}

document.addEventListener("htmx:afterSettle", () => showKeyHints(document));
// A swap that changes the address (the search's) moves the header's "current page" mark with it.
document.addEventListener("htmx:pushedIntoHistory", () => {
  for (const link of document.querySelectorAll(".nav-list a")) {
    if (link.pathname === window.location.pathname) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
});
// Right after a swap, before the browser paints it: its times never show in UTC, even for a frame.
document.addEventListener("htmx:afterSwap", () => showLocalMoments(document));
// The live region comes in out of band: its times are written the learner's way before it goes
// in, so a screen reader is told once, not the UTC text and then the local one.
document.addEventListener("htmx:oobBeforeSwap", (event) => showLocalMoments(event.detail.fragment));

document.addEventListener("DOMContentLoaded", () => {
  showKeyHints(document);
  showLocalMoments(document);
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

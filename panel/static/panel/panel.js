// The panel's only script: confirmations for destructive buttons, copy buttons, and a progress bar that follows a
// document's processing or an import by polling its status endpoint. Pages work without it (the detail page then
// shows the state as of its last load, in words). The Content-Security-Policy allows no inline script or style:
// behaviour is bound here, and the bar's width is set from its aria-valuenow (a style="" attribute would be refused).
"use strict";

document.addEventListener("submit", (event) => {
  const message = event.target.dataset && event.target.dataset.confirm;
  if (message && !window.confirm(message)) event.preventDefault();
});

function followProgress(box) {
  const bar = box.querySelector(".bar");
  const text = box.nextElementSibling;
  const field = (role) => text.querySelector(`[data-role="${role}"]`);
  const initial = box.dataset.status;
  const show = (doc) => {
    const percent = doc.progress.percent;
    bar.style.width = `${percent}%`;
    bar.setAttribute("aria-valuenow", String(percent));
    const status = field("status");
    status.textContent = doc.status;
    status.className = `status status-${doc.status}`;
    field("counts").textContent = `${doc.progress.done} / ${doc.progress.total} ${box.dataset.unit || "passages"}`;
    field("error").textContent = doc.error_message || "";
    box.dataset.status = doc.status;
  };
  const poll = () => {
    fetch(box.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then((response) => (response.ok ? response.json() : Promise.reject(response.status)))
      .then((doc) => {
        show(doc);
        if (doc.status === "completed" || doc.status === "failed") {
          // the passages and derived memories are rendered by the server: load them once, when done
          if (initial !== doc.status) window.location.reload();
          return;
        }
        window.setTimeout(poll, 500);
      })
      .catch(() => window.setTimeout(poll, 2000));
  };
  if (initial !== "completed" && initial !== "failed") poll();
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll(".progress .bar[aria-valuenow]").forEach((bar) => {
    bar.style.width = `${bar.getAttribute("aria-valuenow")}%`;
  });
  document.querySelectorAll(".progress[data-status-url]").forEach(followProgress);
});

// Copy buttons: <button data-copy="ID"> copies the text of the element with that id (a new token's key).
document.addEventListener("click", (event) => {
  const button = event.target.closest && event.target.closest("[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(() => {
    button.textContent = "Copied";
  });
});

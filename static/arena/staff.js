// Staff pages: copy buttons, the study form's live count of places and people, the pickers'
// counts, and setting a point truth by clicking the review page's image. Every page works
// without it; this only saves typing and arithmetic.
"use strict";

(() => {
  // --- Copy buttons: <button class="copy" data-copy="#element-with-the-text"> ----------------
  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      try {
        await navigator.clipboard.writeText(text);
        return true;
      } catch (_) {
        // fall through to the selection
      }
    }
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "offscreen";
    document.body.appendChild(area);
    area.select();
    let done = false;
    try {
      done = document.execCommand("copy");
    } catch (_) {
      done = false;
    }
    area.remove();
    return done;
  }

  for (const button of document.querySelectorAll("button.copy[data-copy]")) {
    button.addEventListener("click", async () => {
      const source = document.querySelector(button.dataset.copy);
      if (!source) return;
      const label = button.textContent;
      const copied = await copyText(source.textContent.trim());
      button.textContent = copied ? "Copied" : "Select and copy";
      button.classList.toggle("copied", copied);
      if (!copied) window.getSelection().selectAllChildren(source);
      setTimeout(() => {
        button.textContent = label;
        button.classList.remove("copied");
      }, 2000);
    });
  }

  // --- The study form: pool, places and people as the numbers change ---------------------------
  const form = document.querySelector("form.study-form");
  const staffing = document.getElementById("staffing");
  if (form && staffing) {
    const field = (name) => form.elements.namedItem(name);
    const number = (name) => {
      const input = field(name);
      const value = input && input.value.trim() !== "" ? Number(input.value) : null;
      return Number.isFinite(value) ? value : null;
    };
    const rows = [...form.querySelectorAll("#types tbody tr[data-type]")];
    const available = (row, split) => {
      for (const pair of row.dataset.available.split(",")) {
        const [name, n] = pair.split(":");
        if (name === split) return Number(n);
      }
      return 0;
    };

    function update() {
      const split = field("split").value;
      const perType = number("per_type");
      const ticked = rows.filter((row) => row.querySelector("input[type=checkbox]").checked);
      const chosen = ticked.length ? ticked : rows;
      let pool = 0;
      let types = 0;
      const short = [];
      for (const row of chosen) {
        const quota = row.querySelector("input[type=number]");
        const typed = quota && quota.value.trim() !== "" ? Number(quota.value) : null;
        const have = available(row, split);
        const want = typed !== null ? typed : perType !== null ? perType : have;
        if (want <= 0 || (have === 0 && typed === null && perType === null)) continue;
        if (want > have) short.push(`${row.dataset.type} has ${have}`);
        pool += Math.min(want, have);
        types += 1;
      }
      const overlap = number("overlap") || 1;
      const each = number("puzzles_per_annotator") || 0;
      const places = pool * overlap;
      const people = each ? Math.ceil(places / each) : 0;
      const parts = [
        `Pool: ${pool} puzzle${pool === 1 ? "" : "s"} of ${types} type${types === 1 ? "" : "s"}`,
        `${places} places (× overlap ${overlap})`,
        each ? `${people} ${people === 1 ? "person" : "people"} needed at ${each} each` : "",
      ].filter(Boolean);
      const warnings = [];
      if (short.length) warnings.push(`too few replay-verified puzzles in ${split}: ${short.join("; ")}`);
      if (each > pool) warnings.push(`${each} per person, but only ${pool} in the pool`);
      else if (each && places % each) warnings.push(`the last person would find only ${places % each} puzzles`);
      if (field("dataset").value) warnings.push("counts are over every dataset of the split");
      staffing.textContent = parts.join(" · ") + (warnings.length ? ". Note: " + warnings.join("; ") + "." : ".");
      staffing.classList.toggle("has-warning", warnings.length > 0 && !warnings.every((w) => w.startsWith("counts")));
      staffing.hidden = false;
    }

    // A number typed beside a type includes it.
    for (const row of rows) {
      const quota = row.querySelector("input[type=number]");
      const box = row.querySelector("input[type=checkbox]");
      if (quota && box) {
        quota.addEventListener("input", () => {
          const anyTicked = rows.some((r) => r.querySelector("input[type=checkbox]").checked);
          if (quota.value.trim() !== "" && Number(quota.value) > 0 && anyTicked) {
            box.checked = true;
          }
        });
      }
    }
    form.addEventListener("input", update);
    form.addEventListener("change", update);
    update();

    // Picker: a puzzle is practice or gold, not both; the summary counts what is picked.
    for (const thumb of form.querySelectorAll(".thumb")) {
      const practice = thumb.querySelector("input[name=practice]");
      const gold = thumb.querySelector("input[name=gold]");
      const sync = (changed, other) => () => {
        if (changed.checked) other.checked = false;
        thumb.classList.toggle("is-practice", practice.checked);
        thumb.classList.toggle("is-gold", gold.checked);
        const group = thumb.closest("details");
        const count = group.querySelectorAll("input[name=practice]:checked, input[name=gold]:checked").length;
        const label = group.querySelector(".picked-count");
        if (label) label.textContent = count ? `${count} picked` : "";
      };
      if (practice && gold) {
        practice.addEventListener("change", sync(practice, gold));
        gold.addEventListener("change", sync(gold, practice));
      }
    }
  }

  // --- Review page: click the image to set a point truth ---------------------------------------
  const pointX = document.querySelector("input[data-point=x]");
  const pointY = document.querySelector("input[data-point=y]");
  const figure = document.querySelector(".review .review-image");
  const svg = figure && figure.querySelector("svg");
  if (pointX && pointY && figure && svg) {
    figure.classList.add("pickable");
    const [, , w, h] = svg.getAttribute("viewBox").split(" ").map(Number);
    const marker = document.createElementNS("http://www.w3.org/2000/svg", "circle");
    marker.setAttribute("r", "9");
    marker.setAttribute("class", "truth-marker");
    svg.appendChild(marker);
    const place = () => {
      marker.setAttribute("cx", pointX.value);
      marker.setAttribute("cy", pointY.value);
    };
    figure.addEventListener("click", (event) => {
      const box = figure.getBoundingClientRect();
      pointX.value = Math.round(((event.clientX - box.left) / box.width) * w);
      pointY.value = Math.round(((event.clientY - box.top) / box.height) * h);
      place();
    });
    pointX.addEventListener("input", place);
    pointY.addEventListener("input", place);
    place();
  }
})();

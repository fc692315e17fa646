// The Jobs page, live: each job's progress from /ws/jobs/ as the workers move it, drawn in place.
// What it cannot draw in place (a new job, a job that ended, a new failure or error) reloads the
// page. While the socket is down and a job runs, the page reloads every few seconds instead.
const RELOAD_MS = 3000;
const REFUSED = 4403; // not staff: reloading would not help

const cards = () => document.querySelectorAll(".job[data-job]");
const running = () => Array.from(cards()).some((card) => card.dataset.state === "running");

/** Whether the card shows this job as it is now, but for its count of items done. */
function drawable(card, job) {
  return card.dataset.state === job.state && card.dataset.failed === String(job.failed)
    && card.dataset.cancelling === String(job.cancel_requested) && card.dataset.error === job.error;
}

function draw(card, job) {
  card.querySelector("progress").value = job.done;
  card.querySelector(".job-progress").textContent = `${job.done}/${job.total}`;
  const percent = job.total ? Math.floor((100 * job.done) / job.total) : 100;
  card.querySelector(".job-percent").textContent = `(${percent}%)`;
}

function show(frame) {
  if (frame.type !== "jobs") return;
  const newest = Number(document.querySelector(".jobs")?.dataset.newest || 0);
  for (const job of frame.jobs) {
    const card = document.getElementById(`job-${job.pk}`);
    if ((!card && job.pk > newest) || (card && !drawable(card, job))) {
      location.reload();
      return;
    }
    if (card) draw(card, job);
  }
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/ws/jobs/`);
  socket.addEventListener("message", (event) => show(JSON.parse(event.data)));
  socket.addEventListener("close", (event) => {
    if (event.code !== REFUSED && running()) setTimeout(() => location.reload(), RELOAD_MS);
  });
}

connect();

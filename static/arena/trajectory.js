// The staff's rollout replay: one turn at a time (the buttons or the arrow keys), from the turn the
// address names. Without this script every turn shows, one under the other.
const steps = [...document.querySelectorAll(".steps > .step")];
const nav = document.querySelector(".stepper");

if (steps.length > 1 && nav) {
  const where = nav.querySelector(".where");
  let at = 0;
  const show = (index) => {
    at = Math.max(0, Math.min(steps.length - 1, index));
    steps.forEach((step, i) => (step.hidden = i !== at));
    where.textContent = `${at + 1} / ${steps.length}`;
    history.replaceState(null, "", `#${steps[at].id}`);
  };
  nav.hidden = false;
  nav.addEventListener("click", (event) => {
    const move = event.target.dataset?.step;
    if (move) show(at + (move === "next" ? 1 : -1));
  });
  addEventListener("keydown", (event) => {
    if (event.key === "ArrowRight") show(at + 1);
    if (event.key === "ArrowLeft") show(at - 1);
  });
  show(Math.max(0, steps.findIndex((step) => `#${step.id}` === location.hash)));
}

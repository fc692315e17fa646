// Signed out, or a study's end page: every attempt's saved copy of its batches is dropped (the
// page keeps them in localStorage until acknowledged: typed answers must not outlive the person
// on a shared browser).
import { forgetAll } from "./events.js";

forgetAll();

//! The `spine` binary end to end: real processes, real files, a scripted model.

mod support;

mod cancel;
mod providers;
mod hooks;
mod run;
mod trace;

//! The `spine` binary end to end: real processes, real files, a scripted model.

mod support;

mod cancel;
mod hooks;
mod providers;
mod run;
mod tools;
mod trace;
mod trust;
mod worker;

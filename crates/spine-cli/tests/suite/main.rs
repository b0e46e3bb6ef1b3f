//! The `spine` binary end to end: real processes, real files, a scripted model.

mod support;

mod cancel;
mod hooks;
mod load;
mod pipes;
mod providers;
mod run;
mod shell_rules;
mod tools;
mod trace;
mod trust;
mod web;
mod worker;

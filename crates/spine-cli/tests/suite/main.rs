//! The `spine` binary end to end: real processes, real files, a scripted model.

mod support;

mod run;
mod trace;
